/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "macro.h"
#include "perf-ring.h"
#include "sampler-load.h"
#include "sampler.h"

typedef struct SamplerCpu {
        int fd;                 /* the sampling event */
        int link_fd;            /* lmk_sample on it */
        int burst_fd, burst_link_fd; /* the 1 kHz burst event, when bursts are on */
        int counter_fd[LMK_MAX_COUNTERS];
        uint64_t counter_base[LMK_MAX_COUNTERS][3]; /* count, enabled, running of closed opens */
        uint64_t enabled_base;  /* enabled ns accumulated by earlier opens */
        uint64_t enabled_last;  /* last reading of the open event */
} SamplerCpu;

struct Sampler {
        SamplerObjects *objects;
        SamplerFds fds;         /* owned by objects */
        /* the links of the programs that are not per CPU (-EBADF: none) */
        int switch_link, exit_link, iter_link, fork_link, exec_link;
        struct ring_buffer *rb;
        SamplerConfig cfg;
        SampleEvent event;      /* resolved: never AUTO */
        unsigned n_cpus;
        SamplerCpu *cpus;
        sampler_cb_t cb;
        void *userdata;
        uint64_t base_period;   /* cpu-clock: ns between samples */
        unsigned rand_state;
        struct lmk_thread_acct *threads; /* the task iterator's last read */
        size_t alloc_threads;
        /* task_acct as last read: walking a hash map costs every bucket,
         * so it is read again only after threads exited or entries went */
        uint32_t *exited_keys;
        struct lmk_task_acct *exited_values;
        size_t n_exited, alloc_exited;
        uint64_t exits_seen;
        bool exited_stale;
        struct lmk_sample_stats *stats_buf;
        struct {
                char *path;
                struct bpf_link *links[3];
        } *liblmk;
        size_t n_liblmk;
        EventSpec events[LMK_MAX_COUNTERS];
        size_t n_events;
        uint8_t thread_field[LMK_MAX_COUNTERS]; /* enum lmk_thread_field */
        uint32_t thread_counted;        /* bit i: thread_field[i] is one */
        CounterState counters[LMK_MAX_COUNTERS];
};

/* The thread's own field that counts what a software event counts, for
 * both the kernel's and the user's side (no :u or :k modifier). */
static uint8_t thread_field_of(const EventSpec *e) {
        const struct perf_event_attr *a = &e->attr;

        if (!e->resolved || a->type != PERF_TYPE_SOFTWARE || a->exclude_user || a->exclude_kernel)
                return LMK_FIELD_NONE;
        switch (a->config) {
        case PERF_COUNT_SW_TASK_CLOCK:
        case PERF_COUNT_SW_CPU_CLOCK:
                return LMK_FIELD_CPU_TIME;
        case PERF_COUNT_SW_PAGE_FAULTS:
                return LMK_FIELD_FAULTS;
        case PERF_COUNT_SW_PAGE_FAULTS_MIN:
                return LMK_FIELD_MIN_FAULTS;
        case PERF_COUNT_SW_PAGE_FAULTS_MAJ:
                return LMK_FIELD_MAJ_FAULTS;
        case PERF_COUNT_SW_CONTEXT_SWITCHES:
                return LMK_FIELD_SWITCHES;
        case PERF_COUNT_SW_CPU_MIGRATIONS:
                return LMK_FIELD_MIGRATIONS;
        }
        return LMK_FIELD_NONE;
}

static int ring_cb(void *ctx, void *data, size_t size) {
        Sampler *s = ctx;

        if (size < sizeof(struct lmk_event_header))
                return 0;
        return s->cb(data, size, s->userdata);
}

static void event_attr(const Sampler *s, SampleEvent ev, struct perf_event_attr *attr) {
        *attr = (struct perf_event_attr) {
                .size = sizeof(*attr),
                .read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING,
                .disabled = 0,
        };
        if (ev == SAMPLE_EVENT_REF_CYCLES) {
                /* The reference clock's rate is not known here: let the
                 * kernel adapt the period to the requested frequency. */
                attr->type = PERF_TYPE_HARDWARE;
                attr->config = PERF_COUNT_HW_REF_CPU_CYCLES;
                attr->freq = 1;
                attr->sample_freq = (uint64_t) llround(s->cfg.frequency);
        } else {
                attr->type = PERF_TYPE_SOFTWARE;
                attr->config = PERF_COUNT_SW_CPU_CLOCK;
                attr->sample_period = s->base_period;
        }
}

static size_t ring_size(const SamplerConfig *cfg, unsigned n_possible_cpus) {
        /* One drain interval of samples from every CPU: the
         * program wakes lmkd when a quarter is full, so only a lmkd kept
         * from running for most of an interval loses samples (counted).
         * The kernel maps the data twice (for wrap-around), and resident
         * memory counts both: a larger ring costs lmkd's RSS twice over.
         * A power of two of at least 64 KiB. */
        double bytes = cfg->frequency * n_possible_cpus * (cfg->poll_ms / 1000.0) *
                       (sizeof(struct lmk_sample) + 8) * (1.0 + cfg->burst * LMK_BURST_SAMPLES);
        size_t sz = 64 * 1024;

        while (sz < bytes && sz < (size_t) 256 * 1024 * 1024)
                sz <<= 1;
        return sz;
}

/* Attaches a tp_btf or iter program: returns the link's fd. */
static int attach_tracing(int prog_fd, bool iter) {
        int fd = iter ? bpf_link_create(prog_fd, 0, BPF_TRACE_ITER, NULL) : bpf_raw_tracepoint_open(NULL, prog_fd);

        return fd < 0 ? -errno : fd;
}

int sampler_new(const SamplerConfig *cfg, unsigned n_possible_cpus, sampler_cb_t cb, void *userdata,
                Sampler **ret) {
        _cleanup_(sampler_freep) Sampler *s = NULL;
        SamplerParams params;
        const char *env;
        size_t rsz;
        int r;

        if (cfg->frequency <= 0 || cfg->frequency > 100000 || cfg->jitter < 0 || cfg->jitter > 0.5 ||
            cfg->burst < 0 || cfg->burst > 1)
                return -EINVAL;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->cfg = *cfg;
        s->cb = cb;
        s->userdata = userdata;
        s->n_cpus = n_possible_cpus;
        s->base_period = (uint64_t) llround(1e9 / cfg->frequency);
        s->rand_state = (unsigned) getpid();
        if (cfg->n_events > LMK_MAX_COUNTERS)
                return -E2BIG;
        memcpy(s->events, cfg->events, cfg->n_events * sizeof(*cfg->events));
        s->n_events = cfg->n_events;
        /* LMK_THREAD_FIELDS=0 counts them with perf events as hardware
         * counters are: the tests' way to the per-job cgroup events on
         * machines without hardware counters */
        env = getenv("LMK_THREAD_FIELDS");
        for (size_t i = 0; i < s->n_events && !(env && streq(env, "0")); i++) {
                s->thread_field[i] = thread_field_of(&s->events[i]);
                if (s->thread_field[i] != LMK_FIELD_NONE)
                        s->thread_counted |= UINT32_C(1) << i;
        }
        s->cpus = calloc(n_possible_cpus, sizeof(*s->cpus));
        if (!s->cpus)
                return -ENOMEM;
        for (unsigned c = 0; c < n_possible_cpus; c++) {
                s->cpus[c].fd = s->cpus[c].link_fd = -EBADF;
                s->cpus[c].burst_fd = s->cpus[c].burst_link_fd = -EBADF;
                for (unsigned i = 0; i < LMK_MAX_COUNTERS; i++)
                        s->cpus[c].counter_fd[i] = -EBADF;
        }

        s->switch_link = s->exit_link = s->iter_link = s->fork_link = s->exec_link = -EBADF;
        s->exited_stale = true;
        rsz = ring_size(cfg, n_possible_cpus);
        params = (SamplerParams) {
                .ring_bytes = rsz,
                .wakeup_bytes = rsz / 4,
                .n_counters = (uint32_t) s->n_events,
                .n_cpus = n_possible_cpus,
                .burst_threshold = (uint32_t) llround(cfg->burst * (double) UINT32_MAX),
                .max_tasks = cfg->max_tasks ?: 65536,
                .exact_counters = cfg->exact_counters,
                .use_libbpf = cfg->use_libbpf,
        };
        memcpy(params.thread_field, s->thread_field, sizeof(params.thread_field));
        r = sampler_objects_load(&params, &s->objects, &s->fds);
        if (r < 0)
                return r;
        /* exact totals from now on, before any sampling: threads that exit
         * leave their figures in task_acct, the live ones are iterated */
        if ((r = s->exit_link = attach_tracing(s->fds.lmk_exit, false)) < 0 ||
            (r = s->iter_link = attach_tracing(s->fds.lmk_tasks, true)) < 0)
                return r;
        /* markers: forked children inherit their parent's liblmk state */
        if ((r = s->fork_link = attach_tracing(s->fds.lmk_fork, false)) < 0 ||
            (r = s->exec_link = attach_tracing(s->fds.lmk_exec, false)) < 0)
                return r;
        for (size_t i = 0; i < s->n_events; i++)
                s->counters[i].error = -ENODEV;
        s->rb = ring_buffer__new(s->fds.events, ring_cb, s, NULL);
        if (!s->rb)
                return -errno ?: -ENOMEM;

        s->event = cfg->event;
        if (s->event == SAMPLE_EVENT_AUTO) {
                struct perf_event_attr attr;
                int fd;

                /* Probe on CPU 0 (always online on Linux) whether the PMU
                 * has unhalted reference cycles; virtual machines often don't. */
                event_attr(s, SAMPLE_EVENT_REF_CYCLES, &attr);
                attr.disabled = 1;
                fd = perf_event_open_cpu(&attr, 0, -1);
                s->event = fd >= 0 ? SAMPLE_EVENT_REF_CYCLES : SAMPLE_EVENT_CPU_CLOCK;
                safe_close(fd);
        }
        *ret = TAKE_PTR(s);
        return 0;
}

Sampler *sampler_free(Sampler *s) {
        if (!s)
                return NULL;
        for (unsigned c = 0; s->cpus && c < s->n_cpus; c++)
                sampler_cpu_close(s, (int) c);
        free(s->threads);
        free(s->exited_keys);
        free(s->exited_values);
        free(s->stats_buf);
        for (size_t i = 0; i < s->n_liblmk; i++) {
                for (int k = 0; k < 3; k++)
                        bpf_link__destroy(s->liblmk[i].links[k]);
                free(s->liblmk[i].path);
        }
        free(s->liblmk);
        ring_buffer__free(s->rb);
        safe_close(s->switch_link);
        safe_close(s->exit_link);
        safe_close(s->iter_link);
        safe_close(s->fork_link);
        safe_close(s->exec_link);
        sampler_objects_free(s->objects);
        free(s->cpus);
        free(s);
        return NULL;
}

static uint64_t read_enabled(int fd) {
        uint64_t v[3];

        if (read(fd, v, sizeof(v)) != sizeof(v))
                return 0;
        return v[1];
}

static void open_counters(Sampler *s, int cpu) {
        SamplerCpu *c = &s->cpus[cpu];
        int map = s->fds.counters;

        for (size_t i = 0; i < s->n_events; i++) {
                struct perf_event_attr attr = s->events[i].attr;
                uint32_t idx = (uint32_t) (i * s->n_cpus + (unsigned) cpu);
                int fd;

                if (!s->events[i].resolved) {
                        s->counters[i].error = -EOPNOTSUPP;
                        continue;
                }
                attr.disabled = 0;
                attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
                fd = perf_event_open_cpu(&attr, cpu, -1);
                if (fd < 0) {
                        if (!s->counters[i].available)
                                s->counters[i].error = fd;
                        continue;
                }
                if (bpf_map_update_elem(map, &idx, &fd, BPF_ANY) < 0) {
                        if (!s->counters[i].available)
                                s->counters[i].error = -errno;
                        close(fd);
                        continue;
                }
                c->counter_fd[i] = fd;
                s->counters[i].available = true;
                s->counters[i].error = 0;
        }
        /* The switch program costs every task on every context switch: it
         * runs only when asked for, and once there is a counter to split
         * between tasks. */
        if (!sampler_switch_hook_attached(s) && s->cfg.exact_counters)
                for (size_t i = 0; i < s->n_events; i++)
                        if (c->counter_fd[i] >= 0) {
                                s->switch_link = attach_tracing(s->fds.lmk_switch, false);
                                break;
                        }
}

bool sampler_switch_hook_attached(const Sampler *s) {
        return s->switch_link >= 0;
}

uint32_t sampler_thread_counted(const Sampler *s) {
        return s->thread_counted;
}

static void close_counters(Sampler *s, int cpu) {
        SamplerCpu *c = &s->cpus[cpu];
        int map = s->fds.counters;

        for (size_t i = 0; i < s->n_events; i++) {
                uint32_t idx = (uint32_t) (i * s->n_cpus + (unsigned) cpu);
                uint64_t v[3];

                if (c->counter_fd[i] < 0)
                        continue;
                if (read(c->counter_fd[i], v, sizeof(v)) == sizeof(v))
                        for (int k = 0; k < 3; k++)
                                c->counter_base[i][k] += v[k];
                (void) bpf_map_delete_elem(map, &idx);
                c->counter_fd[i] = safe_close(c->counter_fd[i]);
        }
}

/* Runs the program prog_fd at every overflow of the perf event perf_fd, as
 * bpf_program__attach_perf_event() does: returns the link's fd. */
static int attach_perf_event(int prog_fd, int perf_fd) {
        _cleanup_close_ int link_fd = -EBADF;

        link_fd = bpf_link_create(prog_fd, perf_fd, BPF_PERF_EVENT, NULL);
        if (link_fd < 0)
                return -errno;
        if (ioctl(perf_fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
                return -errno;
        return TAKE_FD(link_fd);
}

static void detach_perf_event(int *link_fd, int *perf_fd) {
        if (*perf_fd >= 0)
                (void) ioctl(*perf_fd, PERF_EVENT_IOC_DISABLE, 0);
        *link_fd = safe_close(*link_fd);
        *perf_fd = safe_close(*perf_fd);
}

int sampler_cpu_open(Sampler *s, int cpu) {
        SamplerCpu *c;
        struct perf_event_attr attr;
        int fd, r;

        if (cpu < 0 || (unsigned) cpu >= s->n_cpus)
                return -EINVAL;
        c = &s->cpus[cpu];
        if (c->link_fd >= 0)
                return 0;
        open_counters(s, cpu);
        event_attr(s, s->event, &attr);
        fd = perf_event_open_cpu(&attr, cpu, -1);
        if (fd < 0) {
                close_counters(s, cpu);
                return fd;
        }
        r = attach_perf_event(s->fds.lmk_sample, fd);
        if (r < 0) {
                safe_close(fd);
                close_counters(s, cpu);
                return r;
        }
        c->fd = fd;
        c->link_fd = r;
        c->enabled_last = 0;
        if (s->cfg.burst > 0) {
                /* a burst takes its samples 1 ms apart; outside bursts this
                 * event's program returns at its first check */
                struct perf_event_attr battr = {
                        .size = sizeof(battr),
                        .type = PERF_TYPE_SOFTWARE,
                        .config = PERF_COUNT_SW_CPU_CLOCK,
                        .sample_period = 1000000,
                };
                int bfd = perf_event_open_cpu(&battr, cpu, -1);

                if (bfd >= 0) {
                        r = attach_perf_event(s->fds.lmk_burst, bfd);
                        if (r >= 0) {
                                c->burst_fd = bfd;
                                c->burst_link_fd = r;
                        } else
                                safe_close(bfd);
                }
        }
        return 0;
}

void sampler_cpu_close(Sampler *s, int cpu) {
        SamplerCpu *c = &s->cpus[cpu];

        if (c->link_fd < 0)
                return;
        /* an offline CPU's event may no longer answer: keep the last reading */
        c->enabled_base += MAX(read_enabled(c->fd), c->enabled_last);
        c->enabled_last = 0;
        detach_perf_event(&c->link_fd, &c->fd);
        detach_perf_event(&c->burst_link_fd, &c->burst_fd);
        close_counters(s, cpu);
}

uint64_t sampler_cpu_enabled_ns(Sampler *s, int cpu) {
        SamplerCpu *c = &s->cpus[cpu];

        if (c->link_fd >= 0) {
                uint64_t v = read_enabled(c->fd);
                if (v >= c->enabled_last)
                        c->enabled_last = v;
        }
        return c->enabled_base + c->enabled_last;
}

void sampler_rejitter(Sampler *s) {
        if (s->cfg.jitter <= 0 || s->event != SAMPLE_EVENT_CPU_CLOCK)
                return;
        for (unsigned i = 0; i < s->n_cpus; i++) {
                double u = (double) rand_r(&s->rand_state) / RAND_MAX * 2.0 - 1.0;
                uint64_t period = (uint64_t) llround((double) s->base_period * (1.0 + s->cfg.jitter * u));

                if (s->cpus[i].link_fd >= 0)
                        (void) ioctl(s->cpus[i].fd, PERF_EVENT_IOC_PERIOD, &period);
        }
}

int sampler_drain(Sampler *s) {
        int r = ring_buffer__consume(s->rb);
        return r < 0 ? r : 0;
}

int sampler_fd(const Sampler *s) {
        return s->fds.events;
}

const char *sampler_event_name(const Sampler *s) {
        return s->event == SAMPLE_EVENT_REF_CYCLES ? "ref-cycles" : "cpu-clock";
}

double sampler_frequency(const Sampler *s) {
        return s->cfg.frequency;
}

int sampler_light_skeleton_error(const Sampler *s) {
        return sampler_objects_light_error(s->objects);
}

int sampler_stats(Sampler *s, struct lmk_sample_stats *ret) {
        int n = libbpf_num_possible_cpus();
        uint32_t zero = 0;

        /* the kernel fills one value per possible CPU */
        if (n <= 0 || (unsigned) n != s->n_cpus)
                return -EINVAL;
        if (bpf_map_lookup_elem(s->fds.stats, &zero, ret) < 0)
                return -errno;
        return 0;
}

int sampler_attach_liblmk(Sampler *s, const char *path) {
        static const char *const probes[3] = { "init", "region", "region_off" };
        struct bpf_link *links[3] = {};
        void *v;
        int r;

        for (size_t i = 0; i < s->n_liblmk; i++)
                if (streq(s->liblmk[i].path, path))
                        return 0;
        /* libbpf would warn about a file that is not there; the caller
         * decides whether that is news (lmkd.c: check_liblmk_paths()) */
        if (access(path, F_OK) < 0)
                return -errno;
        for (int k = 0; k < 3; k++) {
                links[k] = bpf_program__attach_usdt(sampler_objects_liblmk_probe(s->objects, k), -1, path, "lmk",
                                                    probes[k], NULL);
                if (!links[k]) {
                        r = -errno ?: -EINVAL;
                        for (int j = 0; j < k; j++)
                                bpf_link__destroy(links[j]);
                        return r;
                }
        }
        v = realloc(s->liblmk, (s->n_liblmk + 1) * sizeof(*s->liblmk));
        if (!v)
                goto oom;
        s->liblmk = v;
        s->liblmk[s->n_liblmk].path = strdup(path);
        if (!s->liblmk[s->n_liblmk].path)
                goto oom;
        memcpy(s->liblmk[s->n_liblmk].links, links, sizeof(links));
        s->n_liblmk++;
        return 1;
oom:
        for (int k = 0; k < 3; k++)
                bpf_link__destroy(links[k]);
        return -ENOMEM;
}

int sampler_set_marked(Sampler *s, uint32_t pid, int64_t tls_offset) {
        if (bpf_map_update_elem(s->fds.marked, &pid, &tls_offset, BPF_ANY) < 0)
                return -errno;
        return 0;
}

void sampler_forget_marked(Sampler *s, uint32_t pid) {
        (void) bpf_map_delete_elem(s->fds.marked, &pid);
}

const EventSpec *sampler_events(const Sampler *s, size_t *ret_n) {
        *ret_n = s->n_events;
        return s->events;
}

const CounterState *sampler_counters(Sampler *s, size_t *ret_n) {
        for (size_t i = 0; i < s->n_events; i++) {
                CounterState *st = &s->counters[i];

                st->total = st->enabled_ns = st->running_ns = 0;
                for (unsigned c = 0; c < s->n_cpus; c++) {
                        uint64_t v[3] = {};
                        int fd = s->cpus[c].counter_fd[i];

                        if (fd >= 0 && read(fd, v, sizeof(v)) != sizeof(v))
                                memset(v, 0, sizeof(v));
                        st->total += s->cpus[c].counter_base[i][0] + v[0];
                        st->enabled_ns += s->cpus[c].counter_base[i][1] + v[1];
                        st->running_ns += s->cpus[c].counter_base[i][2] + v[2];
                }
        }
        *ret_n = s->n_events;
        return s->counters;
}

/* Reads every live thread's record from the task iterator into s->threads. */
static int read_threads(Sampler *s, size_t *ret_n) {
        /* A bound against a runaway read: far more threads than pid_max allows by default. */
        const size_t max_threads = (size_t) 4 << 20;
        _cleanup_close_ int fd = -EBADF;
        size_t off = 0;

        fd = bpf_iter_create(s->iter_link);
        if (fd < 0)
                return -errno;
        for (;;) {
                ssize_t k;

                /* room for at least one more record */
                if (s->alloc_threads * sizeof(*s->threads) - off < sizeof(*s->threads)) {
                        size_t na = MAX(s->alloc_threads * 2, (size_t) 1024);
                        void *v;

                        if (na > max_threads)
                                return -E2BIG;
                        v = realloc(s->threads, na * sizeof(*s->threads));
                        if (!v)
                                return -ENOMEM;
                        s->threads = v;
                        s->alloc_threads = na;
                }
                k = read(fd, (char *) s->threads + off, s->alloc_threads * sizeof(*s->threads) - off);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                off += (size_t) k;
        }
        *ret_n = off / sizeof(*s->threads);
        return 0;
}

static int thread_cmp(const void *a, const void *b) {
        const struct lmk_thread_acct *x = a, *y = b;

        return (x->tgid > y->tgid) - (x->tgid < y->tgid);
}

static int u64_cmp(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

        return (x > y) - (x < y);
}

static void add_exited(TaskTotals *t, const struct lmk_task_acct *a) {
        t->cpu_time_ns += a->cpu_time_ns;
        t->switches += a->switches;
        for (unsigned i = 0; i < LMK_MAX_COUNTERS; i++)
                t->counts[i] += a->counts[i];
        if (!t->comm[0]) {
                t->uid = a->uid;
                memcpy(t->comm, a->comm, sizeof(t->comm));
        }
}

static int read_exited(Sampler *s) {
        enum { CHUNK = 512 };
        int fd = s->fds.task_acct;
        uint32_t batch = 0, *in = NULL;
        uint64_t exits = 0;
        size_t n = 0;

        if (!s->stats_buf) {
                s->stats_buf = calloc(s->n_cpus, sizeof(*s->stats_buf));
                if (!s->stats_buf)
                        return -ENOMEM;
        }
        /* the count first: an exit during the walk makes the next read walk again */
        if (sampler_stats(s, s->stats_buf) >= 0) {
                for (unsigned c = 0; c < s->n_cpus; c++)
                        exits += s->stats_buf[c].thread_exits;
                if (!s->exited_stale && exits == s->exits_seen)
                        return 0;
        }
        for (;;) {
                uint32_t k = CHUNK;
                int r;

                if (n + CHUNK > s->alloc_exited) {
                        size_t na = MAX(s->alloc_exited * 2, (size_t) CHUNK);
                        void *v;

                        v = realloc(s->exited_keys, na * sizeof(*s->exited_keys));
                        if (!v)
                                return -ENOMEM;
                        s->exited_keys = v;
                        v = realloc(s->exited_values, na * sizeof(*s->exited_values));
                        if (!v)
                                return -ENOMEM;
                        s->exited_values = v;
                        s->alloc_exited = na;
                }
                r = bpf_map_lookup_batch(fd, in, &batch, s->exited_keys + n, s->exited_values + n, &k, NULL);
                if (r < 0 && errno != ENOENT)
                        return -errno;
                n += k;
                if (r < 0) /* ENOENT: that was the last chunk */
                        break;
                in = &batch;
        }
        s->n_exited = n;
        s->exits_seen = exits;
        s->exited_stale = false;
        return 0;
}

int sampler_read_task_acct(Sampler *s, task_totals_cb_t cb, void *userdata) {
        _cleanup_free_ uint64_t *order = NULL;
        size_t n_threads = 0, n_exited;
        uint32_t *keys;
        struct lmk_task_acct *values;
        int r;

        /* Exited threads first: a thread that exits between the two reads
         * is then missing from both (a dip the caller rides out) rather
         * than counted twice. */
        r = read_exited(s);
        if (r < 0)
                return r;
        keys = s->exited_keys;
        values = s->exited_values;
        n_exited = s->n_exited;
        r = read_threads(s, &n_threads);
        if (r < 0)
                return r;
        qsort(s->threads, n_threads, sizeof(*s->threads), thread_cmp);
        /* the exited entries in tgid order: (tgid, index) pairs packed in a u64 */
        order = calloc(MAX(n_exited, (size_t) 1), sizeof(*order));
        if (!order)
                return -ENOMEM;
        for (size_t i = 0; i < n_exited; i++)
                order[i] = (uint64_t) keys[i] << 32 | i;
        qsort(order, n_exited, sizeof(*order), u64_cmp);

        /* merge the two lists, both in tgid order */
        for (size_t i = 0, e = 0; i < n_threads || e < n_exited;) {
                uint32_t tgid = i < n_threads ? s->threads[i].tgid : UINT32_MAX;
                TaskTotals t = {};

                if (e < n_exited && (uint32_t) (order[e] >> 32) < tgid)
                        tgid = (uint32_t) (order[e] >> 32);
                for (; i < n_threads && s->threads[i].tgid == tgid; i++) {
                        const struct lmk_thread_acct *th = &s->threads[i];

                        if (!t.comm[0]) {
                                t.uid = th->uid;
                                t.start_ns = th->start_ns;
                                memcpy(t.comm, th->comm, sizeof(t.comm));
                        }
                        t.cpu_time_ns += th->cpu_time_ns;
                        t.switches += th->switches;
                        for (unsigned k = 0; k < LMK_MAX_COUNTERS; k++)
                                t.counts[k] += th->counts[k];
                }
                if (e < n_exited && (uint32_t) (order[e] >> 32) == tgid)
                        add_exited(&t, &values[(uint32_t) order[e++]]);
                t.comm[sizeof(t.comm) - 1] = '\0';
                cb(tgid, &t, userdata);
        }
        return 0;
}

void sampler_forget_task(Sampler *s, uint32_t tgid) {
        if (bpf_map_delete_elem(s->fds.task_acct, &tgid) >= 0)
                s->exited_stale = true;
}
