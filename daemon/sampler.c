/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The sampling itself: one time-based perf event per online CPU with the
 * sampling program attached, the counters read with every sample, and the
 * ring buffer the program fills. liblmk's probes are sampler-usdt.c's, the
 * exact totals per process task-accounting.c's. */
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
#include "ring-size.h"
#include "sampler-internal.h"

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

int sampler_new(const SamplerConfig *cfg, unsigned n_possible_cpus, sampler_cb_t cb, void *userdata,
                Sampler **ret) {
        _cleanup_(sampler_freep) Sampler *s = NULL;
        SamplerParams params;
        RingSize ring;
        int r;

        if (cfg->frequency <= 0 || cfg->frequency > 100000 || cfg->jitter < 0 || cfg->jitter > 0.5 ||
            cfg->burst < 0 || cfg->burst > 1)
                return -EINVAL;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->switch_link = -EBADF;
        sampler_usdt_init(&s->usdt);
        task_accounting_init(&s->acct);
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
        task_accounting_pick_fields(&s->acct, s->events, s->n_events);
        s->cpus = calloc(n_possible_cpus, sizeof(*s->cpus));
        if (!s->cpus)
                return -ENOMEM;
        for (unsigned c = 0; c < n_possible_cpus; c++) {
                s->cpus[c].fd = s->cpus[c].link_fd = -EBADF;
                s->cpus[c].burst_fd = s->cpus[c].burst_link_fd = -EBADF;
                for (unsigned i = 0; i < LMK_MAX_COUNTERS; i++)
                        s->cpus[c].counter_fd[i] = -EBADF;
        }

        ring = ring_size(cfg, n_possible_cpus);
        params = (SamplerParams) {
                .ring_bytes = ring.bytes,
                .wakeup_bytes = ring.wakeup_bytes,
                .new_process_wake_ns = (uint64_t) cfg->new_process_wake_ms * 1000000,
                .n_counters = (uint32_t) s->n_events,
                .n_cpus = n_possible_cpus,
                .burst_threshold = (uint32_t) llround(cfg->burst * (double) UINT32_MAX),
                .max_tasks = cfg->max_tasks ?: 65536,
                .exact_counters = cfg->exact_counters,
                .use_libbpf = cfg->use_libbpf,
        };
        memcpy(params.thread_field, s->acct.thread_field, sizeof(params.thread_field));
        r = sampler_objects_load(&params, &s->objects, &s->fds);
        if (r < 0)
                return r;
        r = task_accounting_start(s);
        if (r < 0)
                return r;
        r = sampler_usdt_start(s);
        if (r < 0)
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
        task_accounting_done(&s->acct);
        sampler_usdt_done(&s->usdt);
        ring_buffer__free(s->rb);
        safe_close(s->switch_link);
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

/* Whether the event counts on the CPU's PMU: everything but the kernel's
 * software events (task-clock, page-faults, ...) and tracepoints. */
static bool uses_pmu(const struct perf_event_attr *attr) {
        return attr->type != PERF_TYPE_SOFTWARE && attr->type != PERF_TYPE_TRACEPOINT;
}

/* The event that samples now: cpu-clock while the PMU is a user's. */
static SampleEvent sample_event(const Sampler *s) {
        return s->pmu_released ? SAMPLE_EVENT_CPU_CLOCK : s->event;
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
                if (s->pmu_released && uses_pmu(&attr))
                        continue;
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
                                s->switch_link = sampler_link_tracing(s->fds.lmk_switch, false);
                                break;
                        }
}

bool sampler_switch_hook_attached(const Sampler *s) {
        return s->switch_link >= 0;
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
        event_attr(s, sample_event(s), &attr);
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

int sampler_release_pmu(Sampler *s, bool release) {
        int r = 0;

        if (s->pmu_released == release)
                return 0;
        s->pmu_released = release;
        for (unsigned i = 0; i < s->n_cpus; i++) {
                int k;

                if (s->cpus[i].link_fd < 0)
                        continue;
                /* closed and opened again: counters by the new rule, and the
                 * sampling event (hardware ref-cycles or cpu-clock) anew */
                sampler_cpu_close(s, (int) i);
                k = sampler_cpu_open(s, (int) i);
                if (k < 0 && r == 0)
                        r = k;
        }
        return r;
}

bool sampler_pmu_released(const Sampler *s) {
        return s->pmu_released;
}

void sampler_rejitter(Sampler *s) {
        if (s->cfg.jitter <= 0 || sample_event(s) != SAMPLE_EVENT_CPU_CLOCK)
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

int sampler_set_known(Sampler *s, uint32_t tgid) {
        uint8_t one = 1;

        if (s->cfg.new_process_wake_ms == 0)
                return 0;
        if (bpf_map_update_elem(s->fds.known_tgids, &tgid, &one, BPF_ANY) < 0)
                return -errno;
        return 0;
}

void sampler_forget_known(Sampler *s, uint32_t tgid) {
        if (s->cfg.new_process_wake_ms > 0)
                (void) bpf_map_delete_elem(s->fds.known_tgids, &tgid);
}

int sampler_fd(const Sampler *s) {
        return s->fds.events;
}

const char *sampler_event_name(const Sampler *s) {
        return sample_event(s) == SAMPLE_EVENT_REF_CYCLES ? "ref-cycles" : "cpu-clock";
}

double sampler_frequency(const Sampler *s) {
        return s->cfg.frequency;
}

int sampler_light_skeleton_error(const Sampler *s) {
        return sampler_objects_light_error(s->objects);
}

int sampler_stats(Sampler *s, struct lmk_sample_stats *ret) {
        return sampler_stats_read(s->fds.stats, s->n_cpus, ret);
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

