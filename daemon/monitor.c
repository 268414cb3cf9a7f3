/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>

#include "jobs.h"
#include "log.h"
#include "markers.h"
#include "monitor.h"
#include "util.h"

/* Samples and records younger than this stay queued until the next tick: a
 * record of an earlier mmap may still be on its way from another CPU. */
#define ORDER_MARGIN_NS (20 * UINT64_C(1000000))
/* An exited process stays this long for samples taken during its exit. */
#define EXIT_GRACE_NS (UINT64_C(1000000000))
/* A process is re-read from /proc after a miss at most this often. */
#define RESCAN_INTERVAL_NS (UINT64_C(1000000000))

/* Exact totals are read every few ticks; a process forgotten meanwhile
 * leaves its name and job here for them. */
typedef struct GoneIdent {
        char comm[COMM_LEN];
        char job[JOB_ID_SIZE];
        char step[JOB_STEP_SIZE];
} GoneIdent;

#define ACCT_EVERY_TICKS 5

typedef union PendingEvent {
        struct lmk_event_header h;
        struct lmk_sample s;
        struct lmk_region_event r;
} PendingEvent;

/* A region switched off in this interval, for the report. */
typedef struct MarkerOff {
        char job[JOB_ID_SIZE];          /* "" outside jobs */
        char comm[COMM_LEN];
        char name[LMK_REGION_NAME_LEN];
        uint32_t uid;
        uint32_t reason;
} MarkerOff;

struct Monitor {
        MonitorConfig cfg;
        ObjectTable *objects;
        ProcessTable procs;
        Sideband sb;
        Sampler *sampler;
        Histogram *hist;

        PendingEvent *pending;          /* samples and region events, sorted by time at each tick */
        size_t n_pending, alloc_pending;

        unsigned n_possible;
        uint64_t *online;               /* bitmap of CPUs we sample */
        uint64_t *seen;                 /* per CPU: samples attributed so far */
        uint64_t *synth;                /* per CPU: idle samples synthesized so far */
        struct lmk_sample_stats *bpf_stats;
        uint64_t last_order_point;      /* everything up to here is attributed */
        uint64_t sideband_lost_seen;
        MonitorStats stats;
        int epoll_fd;                   /* the rings' wakeups */
        Hashmap *acct_prev;             /* tgid → TaskTotals: what we accounted so far */
        uint64_t acct_epoch;            /* exact totals count from here (CLOCK_MONOTONIC) */
        uint32_t *abi_pending;          /* processes whose liblmk descriptor is to be read */
        size_t n_abi_pending, alloc_abi_pending;
        MarkerOff *markers_off;
        size_t n_markers_off, alloc_markers_off;
        uint32_t *acct_gone;            /* tgids to forget after this walk */
        size_t n_acct_gone, alloc_acct_gone;
        JobTable jobs;
        int64_t real_offset_ns;         /* CLOCK_REALTIME - CLOCK_MONOTONIC, for job times */
        Histogram *cumulative;          /* all intervals, for a report at the end */
        Hashmap *gone_idents;           /* tgid → GoneIdent: forgotten processes not yet accounted */
        unsigned ticks;
        int online_fd;                  /* /sys/devices/system/cpu/online, re-read every tick */
};

static int attribute(Monitor *m, const struct lmk_sample *s, uint64_t now);

static double wall_time(Monitor *m, uint64_t mono_ns) {
        return (double) ((int64_t) mono_ns + m->real_offset_ns) / 1e9;
}
static void queue_abi_read(Monitor *m, uint32_t pid);
static void read_pending_abis(Monitor *m, uint64_t now);
static void evict_process(void *owner, Process *p);
static void account_tasks(Monitor *m);

static int queue_event(const struct lmk_event_header *e, size_t size, void *userdata) {
        Monitor *m = userdata;
        PendingEvent *slot;

        if (((e->type == LMK_EVENT_SAMPLE || e->type == LMK_EVENT_BURST) && size < sizeof(struct lmk_sample)) ||
            ((e->type == LMK_EVENT_REGION || e->type == LMK_EVENT_REGION_OFF) && size < sizeof(struct lmk_region_event)) ||
            (e->type < LMK_EVENT_SAMPLE || e->type > LMK_EVENT_BURST))
                return 0;
        if (m->n_pending == m->alloc_pending) {
                size_t na = MAX(m->alloc_pending * 2, (size_t) 1024);
                PendingEvent *v = realloc(m->pending, na * sizeof(*v));

                if (!v)
                        return -ENOMEM;
                m->pending = v;
                m->alloc_pending = na;
        }
        slot = &m->pending[m->n_pending++];
        memcpy(slot, e, MIN(size, sizeof(*slot)));
        return 0;
}

int monitor_new(const MonitorConfig *cfg, Monitor **ret) {
        _cleanup_(monitor_freep) Monitor *m = NULL;
        int n, r;

        n = libbpf_num_possible_cpus();
        if (n <= 0)
                return n < 0 ? n : -EINVAL;
        if (n > LMK_MAX_CPUS)
                return -E2BIG;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->epoll_fd = -EBADF;
        m->online_fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);
        if (m->online_fd < 0)
                return -errno;
        m->cfg = *cfg;
        m->n_possible = (unsigned) n;
        m->online = calloc(ALIGN_TO((size_t) n, 64) / 64, sizeof(uint64_t));
        m->seen = calloc((size_t) n, sizeof(uint64_t));
        m->synth = calloc((size_t) n, sizeof(uint64_t));
        m->bpf_stats = calloc((size_t) n, sizeof(*m->bpf_stats));
        m->objects = object_table_new();
        m->acct_prev = hashmap_new(&uint64_hash_ops);
        m->gone_idents = hashmap_new(&uint64_hash_ops);
        if (!m->online || !m->seen || !m->synth || !m->bpf_stats || !m->objects || !m->acct_prev ||
            !m->gone_idents)
                return -ENOMEM;
        m->hist = histogram_new(m->objects, cfg->max_rows ?: 100000);
        if (!m->hist)
                return -ENOMEM;
        r = process_table_init(&m->procs, m->objects, cfg->proc_root);
        if (r < 0)
                return r;
        r = jobs_init(&m->jobs);
        if (r < 0)
                return r;
        m->procs.release = markers_release;
        m->procs.inherit = markers_inherit;
        m->procs.evict = evict_process;
        m->procs.owner = m;
        m->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
        if (m->epoll_fd < 0)
                return -errno;
        r = sideband_init(&m->sb, m->n_possible, cfg->sideband_ring_order ?: 7, m->epoll_fd);
        if (r < 0)
                return r;
        r = sampler_new(&cfg->sampler, m->n_possible, queue_event, m, &m->sampler);
        if (r < 0)
                return r;
        if (epoll_ctl(m->epoll_fd, EPOLL_CTL_ADD, sampler_fd(m->sampler),
                      &(struct epoll_event) { .events = EPOLLIN | EPOLLET }) < 0)
                return -errno;
        *ret = TAKE_PTR(m);
        return 0;
}

Monitor *monitor_free(Monitor *m) {
        if (!m)
                return NULL;
        /* processes first: forgetting them talks to the sampler */
        if (m->procs.procs)
                process_table_done(&m->procs);
        sampler_free(m->sampler);
        sideband_done(&m->sb);
        histogram_free(m->hist);
        histogram_free(m->cumulative);
        jobs_done(&m->jobs);
        object_table_free(m->objects);
        free(m->pending);
        free(m->online);
        free(m->seen);
        free(m->synth);
        free(m->bpf_stats);
        if (m->acct_prev) {
                TaskTotals *a;
                size_t i;

                HASHMAP_FOREACH(a, m->acct_prev, i)
                        free(a);
                hashmap_free(m->acct_prev);
        }
        free(m->acct_gone);
        if (m->gone_idents) {
                GoneIdent *g;
                size_t i;

                HASHMAP_FOREACH(g, m->gone_idents, i)
                        free(g);
                hashmap_free(m->gone_idents);
        }
        free(m->abi_pending);
        free(m->markers_off);
        safe_close(m->epoll_fd);
        safe_close(m->online_fd);
        free(m);
        return NULL;
}

static bool cpu_bit(const uint64_t *set, unsigned cpu) {
        return set[cpu / 64] & (UINT64_C(1) << (cpu % 64));
}

int monitor_sync_cpus(Monitor *m) {
        _cleanup_free_ uint64_t *now_online = NULL;
        char line[4096];
        ssize_t k;
        int r, n_open = 0;

        now_online = calloc(ALIGN_TO((size_t) m->n_possible, 64) / 64, sizeof(uint64_t));
        if (!now_online)
                return -ENOMEM;
        /* sysfs renders the file anew at offset 0: one pread a tick, no open */
        k = pread(m->online_fd, line, sizeof(line) - 1, 0);
        if (k < 0)
                return log_error_errno(-errno, "Failed to read /sys/devices/system/cpu/online: %m");
        line[k] = '\0';
        r = parse_cpu_list(line, now_online, m->n_possible);
        if (r < 0)
                return log_error_errno(r, "Failed to parse online CPU list \"%s\": %m", line);

        for (unsigned c = 0; c < m->n_possible; c++) {
                bool want = cpu_bit(now_online, c), have = cpu_bit(m->online, c);

                if (want && !have) {
                        r = sideband_cpu_open(&m->sb, (int) c);
                        if (r >= 0)
                                r = sampler_cpu_open(m->sampler, (int) c);
                        if (r == -ENODEV) /* went offline again meanwhile */
                                continue;
                        if (r < 0) {
                                sideband_cpu_close(&m->sb, (int) c);
                                return log_error_errno(r, "Failed to open perf events on CPU %u: %m", c);
                        }
                        m->online[c / 64] |= UINT64_C(1) << (c % 64);
                        log_debug("Sampling CPU %u.", c);
                } else if (!want && have) {
                        sampler_cpu_close(m->sampler, (int) c);
                        sideband_cpu_close(&m->sb, (int) c);
                        m->online[c / 64] &= ~(UINT64_C(1) << (c % 64));
                        log_info("CPU %u went offline, stopped sampling it.", c);
                }
        }
        for (unsigned c = 0; c < m->n_possible; c++)
                n_open += cpu_bit(m->online, c);
        return n_open;
}

/* Processes that started before lmkd: their liblmk announced itself to no
 * one, so its descriptor is read from their memory. */
static void find_marked_processes(Monitor *m, uint64_t now) {
        Process *p;
        size_t i;
        int n = 0;

        for (const char *const *path = m->cfg.liblmk_paths; path && *path; path++) {
                int r = sampler_attach_liblmk(m->sampler, *path);

                if (r < 0 && r != -ENOENT)
                        log_warning_errno(r, "Failed to attach to the marker probes of %s: %m", *path);
        }
        HASHMAP_FOREACH(p, m->procs.procs, i)
                for (size_t k = 0; k < p->map.n; k++) {
                        uint64_t addr;

                        if (process_table_abi_address(&m->procs, p, &p->map.v[k], &addr) < 0)
                                continue;
                        if (p->map.v[k].obj->has_probes)
                                (void) sampler_attach_liblmk(m->sampler, p->map.v[k].obj->path);
                        queue_abi_read(m, p->pid);
                        n++;
                        break;
                }
        if (n > 0)
                log_info("%d running processes use markers.", n);
        read_pending_abis(m, now);
}

int monitor_start(Monitor *m) {
        _cleanup_free_ char *line = NULL;
        uint64_t now;
        int r;

        /* Side-band records first, /proc second: a process that changes
         * while we read /proc is then corrected by its records. Sampling
         * starts last, when every running process is known. */
        r = read_one_line("/sys/devices/system/cpu/online", &line);
        if (r < 0)
                return log_error_errno(r, "Failed to read /sys/devices/system/cpu/online: %m");
        r = parse_cpu_list(line, m->online, m->n_possible);
        if (r < 0)
                return log_error_errno(r, "Failed to parse online CPU list \"%s\": %m", line);
        for (unsigned c = 0; c < m->n_possible; c++) {
                if (!cpu_bit(m->online, c))
                        continue;
                r = sideband_cpu_open(&m->sb, (int) c);
                if (r < 0)
                        return log_error_errno(r, "Failed to open the process-event perf event on CPU %u: %m", c);
        }

        now = now_ns(CLOCK_MONOTONIC);
        m->real_offset_ns = (int64_t) now_ns(CLOCK_REALTIME) - (int64_t) now;
        r = process_table_scan_all(&m->procs, now);
        if (r < 0)
                return log_error_errno(r, "Failed to read processes from %s: %m", m->procs.proc_root);
        log_debug("Read %d running processes from %s.", r, m->procs.proc_root);
        find_marked_processes(m, now);

        for (unsigned c = 0; c < m->n_possible; c++) {
                if (!cpu_bit(m->online, c))
                        continue;
                r = sampler_cpu_open(m->sampler, (int) c);
                if (r < 0)
                        return log_error_errno(r, "Failed to start the %s sampling event on CPU %u: %m",
                                               sampler_event_name(m->sampler), c);
        }
        m->last_order_point = now;
        /* the baselines of every process that runs already */
        m->acct_epoch = now_ns(CLOCK_MONOTONIC);
        account_tasks(m);
        return 0;
}

static RowKind row_kind(const Process *p, const Object *o) {
        switch (o->kind) {
        case OBJECT_FILE:
                return p && p->exe == o ? ROW_EXE : ROW_LIB;
        case OBJECT_VDSO:
                return ROW_LIB;
        case OBJECT_ANON:
                return ROW_ANON;
        case OBJECT_KERNEL:
                return ROW_KERNEL;
        case OBJECT_IDLE:
                return ROW_IDLE;
        default:
                return ROW_UNKNOWN;
        }
}

/* A process we have no entry for (records lost, or it predates us and
 * escaped the scan): read it now, or remember that it is gone. */
static Process *process_for_sample(Monitor *m, const struct lmk_sample *s, uint64_t now) {
        Process *p = process_table_get(&m->procs, s->pid);
        char comm[COMM_LEN];

        if (p)
                return p;
        m->stats.rescans++;
        if (process_table_scan(&m->procs, s->pid, s->tid, now, &p) >= 0)
                return p;
        memcpy(comm, s->comm, sizeof(comm));
        comm[sizeof(comm) - 1] = '\0';
        return process_table_add_gone(&m->procs, s->pid, comm, now);
}

static const Mapping *find_mapping(Monitor *m, Process **pp, const struct lmk_sample *s, uint64_t now) {
        Process *p = *pp;
        const Mapping *map = addrmap_find(&p->map, s->ip);

        if (map || p->exit_time != 0)
                return map;
        if (p->scan_time != 0 && now - p->scan_time < RESCAN_INTERVAL_NS)
                return NULL;
        /* An address we have no record of: mappings were missed (lost
         * records, or a process from before we started). Re-read it. */
        m->stats.rescans++;
        if (process_table_scan(&m->procs, s->pid, s->tid, now, pp) < 0) {
                p->scan_time = now;
                return NULL;
        }
        return addrmap_find(&(*pp)->map, s->ip);
}

/* A sample counts once in its row; a burst sample adds only its ~1 ms
 * window to the row's burst rates. */
static int add_sample(Monitor *m, const HistKey *key, const struct lmk_sample *s) {
        HistRow *row = histogram_add(m->hist, key, s->type == LMK_EVENT_SAMPLE ? 1 : 0);

        if (!row)
                return -ENOMEM;
        if (s->type == LMK_EVENT_SAMPLE)
                histogram_add_window(row, s);
        else
                histogram_add_burst(row, s);
        return 0;
}

/* Reads liblmk's descriptor of the process (found through its mappings) and
 * with it the TLS offset and region names. Rate-limited per process. */
static int read_markers(Monitor *m, Process *p, uint64_t now) {
        MarkerState *ms = markers_of(p, true);
        LmkAbiV1 abi;
        int r;

        if (!ms)
                return -ENOMEM;
        if (ms->last_read != 0 && now - ms->last_read < RESCAN_INTERVAL_NS)
                return -EAGAIN;
        ms->last_read = now;
        if (ms->abi_addr == 0)
                for (size_t i = 0; i < p->map.n && ms->abi_addr == 0; i++) {
                        uint64_t addr;

                        if (process_table_abi_address(&m->procs, p, &p->map.v[i], &addr) >= 0)
                                ms->abi_addr = addr;
                }
        if (ms->abi_addr == 0)
                return -ENOENT;
        r = markers_read_abi((pid_t) p->pid, ms->abi_addr, &abi);
        if (r < 0)
                return r;
        if (abi.tls_offset == 0)
                return -EAGAIN; /* its constructor has not run yet */
        if (!ms->marked) {
                r = sampler_set_marked(m->sampler, p->pid, abi.tls_offset);
                if (r < 0)
                        return r;
                ms->marked = true;
        }
        return markers_read_regions(ms, (pid_t) p->pid, &abi);
}

static const char *sample_phase(Monitor *m, Process *p, const struct lmk_sample *s, uint64_t now, char *buf,
                                size_t size) {
        MarkerState *ms = markers_of(p, true);
        uint32_t depth = MIN(s->phase_depth, (uint32_t) LMK_PHASE_DEPTH);

        if (!ms)
                return "";
        /* an id we never heard of: registered before lmkd started, or its
         * probe event was lost; the process's own table has it */
        for (uint32_t i = 0; i < depth; i++)
                if (!markers_name(ms, s->phase_stack[i]) && p->exit_time == 0) {
                        (void) read_markers(m, p, now);
                        break;
                }
        markers_path(ms, s->phase_stack, depth, buf, size);
        return buf;
}

static void note_region_off(Monitor *m, Process *p, const char *name, uint32_t uid, uint32_t reason) {
        Job *j = jobs_resolve(&m->jobs, p, uid, (double) now_ns(CLOCK_REALTIME) / 1e9);
        const char *job = j ? j->display : "";
        MarkerOff *x;

        for (size_t i = 0; i < m->n_markers_off; i++) {
                x = &m->markers_off[i];
                if (streq(x->job, job) && streq(x->comm, p->comm) && streq(x->name, name) && x->reason == reason)
                        return;
        }
        if (m->n_markers_off == m->alloc_markers_off) {
                size_t na = MAX(m->alloc_markers_off * 2, (size_t) 16);

                if (na > 4096) /* a bounded report: one storm of regions is enough to see */
                        return;
                x = realloc(m->markers_off, na * sizeof(*x));
                if (!x)
                        return;
                m->markers_off = x;
                m->alloc_markers_off = na;
        }
        x = &m->markers_off[m->n_markers_off++];
        snprintf(x->job, sizeof(x->job), "%s", job);
        snprintf(x->comm, sizeof(x->comm), "%s", p->comm);
        snprintf(x->name, sizeof(x->name), "%s", name);
        x->uid = uid;
        x->reason = reason;
}

static void apply_region(Monitor *m, const struct lmk_region_event *e, uint64_t now) {
        Process *p = process_table_get(&m->procs, e->pid);
        MarkerState *ms;
        char name[LMK_REGION_NAME_LEN];

        if (!p || p->exit_time != 0) {
                /* the process's records are lost or not read yet: ask /proc */
                if (process_table_scan(&m->procs, e->pid, 0, now, &p) < 0)
                        return;
        }
        ms = markers_of(p, true);
        if (!ms)
                return;
        /* the probe fired, so the sampling program knows its TLS offset */
        ms->marked = true;
        if (e->type == LMK_EVENT_REGION) {
                memcpy(name, e->name, sizeof(name));
                name[sizeof(name) - 1] = '\0';
                (void) markers_set_name(ms, e->id, name);
                m->stats.regions++;
        } else {
                const char *n = markers_name(ms, e->id);

                (void) markers_set_off(ms, e->id, e->reason);
                note_region_off(m, p, n ?: "?", 0, e->reason);
        }
}

static int apply_event(Monitor *m, const PendingEvent *e, uint64_t now) {
        if (e->h.type == LMK_EVENT_SAMPLE || e->h.type == LMK_EVENT_BURST)
                return attribute(m, &e->s, now);
        apply_region(m, &e->r, now);
        return 0;
}

static int attribute(Monitor *m, const struct lmk_sample *s, uint64_t now) {
        HistKey key = { .phase = "" };
        const Mapping *map = NULL;
        char comm[COMM_LEN], phase[1024];
        Process *p = NULL;

        if (s->type == LMK_EVENT_SAMPLE) {
                if (s->cpu < m->n_possible)
                        m->seen[s->cpu]++;
                m->stats.samples++;
        } else
                m->stats.burst_samples++;

        if (s->pid == 0) {
                /* the per-CPU idle tasks are all "swapper/N" */
                key.comm = "swapper";
                key.obj = object_table_get_special(m->objects, OBJECT_IDLE);
                key.kind = ROW_IDLE;
                return add_sample(m, &key, s);
        }

        p = process_for_sample(m, s, now);
        if (s->flags & LMK_SAMPLE_KERNEL)
                key.obj = object_table_get_special(m->objects, OBJECT_KERNEL);
        else if (p && (map = find_mapping(m, &p, s, now))) {
                key.obj = map->obj;
                if (key.obj->kind == OBJECT_FILE)
                        process_table_load_build_id(&m->procs, p, map);
        } else {
                key.obj = object_table_get_special(m->objects, OBJECT_UNKNOWN);
                m->stats.unknown++;
        }
        key.kind = row_kind(p, key.obj);

        if (p && p->comm[0])
                key.comm = p->comm;
        else {
                memcpy(comm, s->comm, sizeof(comm));
                comm[sizeof(comm) - 1] = '\0';
                key.comm = comm;
        }
        key.uid = s->uid;
        if ((s->flags & LMK_SAMPLE_PHASE) && s->phase_depth > 0 && p)
                key.phase = sample_phase(m, p, s, now, phase, sizeof(phase));
        if (p) {
                Job *j = jobs_resolve(&m->jobs, p, s->uid, wall_time(m, s->time_ns));

                if (j) {
                        key.job = j->display;
                        key.step = p->job.step[0] ? p->job.step : NULL;
                }
        }
        return add_sample(m, &key, s);
}

static bool pid_alive(uint32_t pid) {
        return kill((pid_t) pid, 0) == 0 || errno != ESRCH;
}

static uint64_t advance(uint64_t *prev, uint64_t cur) {
        uint64_t d = cur > *prev ? cur - *prev : 0;

        /* a figure that dips (a thread between the iterator's view and its
         * exit hook) is not counted again when it comes back */
        *prev = MAX(*prev, cur);
        return d;
}

static void account_task(uint32_t tgid, const TaskTotals *a, void *userdata) {
        Monitor *m = userdata;
        TaskTotals *prev = hashmap_get(m->acct_prev, INT_TO_KEY(tgid));
        Process *p = process_table_get(&m->procs, tgid);
        const GoneIdent *g = p ? NULL : hashmap_get(m->gone_idents, INT_TO_KEY(tgid));
        uint64_t d[LMK_MAX_COUNTERS], dcpu, dsw;
        char comm[COMM_LEN];
        TotalKey key;
        bool gone;

        if (!prev) {
                prev = calloc(1, sizeof(*prev));
                if (!prev || hashmap_put(m->acct_prev, INT_TO_KEY(tgid), prev) < 0) {
                        free(prev);
                        return;
                }
                /* A process older than lmkd counts from lmkd's start: its
                 * first reading (taken at the start) is the baseline. */
                if (a->start_ns != 0 && a->start_ns < m->acct_epoch)
                        *prev = *a;
        }
        dcpu = advance(&prev->cpu_time_ns, a->cpu_time_ns);
        dsw = advance(&prev->switches, a->switches);
        for (unsigned i = 0; i < LMK_MAX_COUNTERS; i++)
                d[i] = advance(&prev->counts[i], a->counts[i]);

        if (dcpu || dsw) {
                Job *j = p ? jobs_resolve(&m->jobs, p, a->uid, wall_time(m, now_ns(CLOCK_MONOTONIC))) : NULL;

                memcpy(comm, a->comm, sizeof(comm));
                comm[sizeof(comm) - 1] = '\0';
                key = (TotalKey) { .comm = p && p->comm[0] ? p->comm : g && g->comm[0] ? g->comm : comm,
                                   .uid = a->uid };
                if (j) {
                        key.job = j->display;
                        key.step = p->job.step[0] ? p->job.step : NULL;
                } else if (g && g->job[0]) {
                        key.job = g->job;
                        key.step = g->step[0] ? g->step : NULL;
                }
                (void) histogram_add_total(m->hist, &key, dcpu, d, dsw);
        }

        /* Forget a process once it is surely done switching: gone from
         * /proc, or its exit lies beyond the grace period. */
        gone = p ? p->exit_time != 0 && p->exit_time + EXIT_GRACE_NS < m->last_order_point : g || !pid_alive(tgid);
        if (gone && m->n_acct_gone < 4096) {
                if (m->n_acct_gone == m->alloc_acct_gone) {
                        size_t na = MAX(m->alloc_acct_gone * 2, (size_t) 64);
                        uint32_t *v = realloc(m->acct_gone, na * sizeof(*v));

                        if (!v)
                                return;
                        m->acct_gone = v;
                        m->alloc_acct_gone = na;
                }
                m->acct_gone[m->n_acct_gone++] = tgid;
        }
}

static void account_tasks(Monitor *m) {
        GoneIdent *g;
        size_t it;

        m->n_acct_gone = 0;
        (void) sampler_read_task_acct(m->sampler, account_task, m);
        for (size_t i = 0; i < m->n_acct_gone; i++) {
                sampler_forget_task(m->sampler, m->acct_gone[i]);
                free(hashmap_remove(m->acct_prev, INT_TO_KEY(m->acct_gone[i])));
        }
        HASHMAP_FOREACH(g, m->gone_idents, it)
                free(g);
        hashmap_clear(m->gone_idents);
}

static void queue_abi_read(Monitor *m, uint32_t pid) {
        for (size_t i = 0; i < m->n_abi_pending; i++)
                if (m->abi_pending[i] == pid)
                        return;
        if (m->n_abi_pending == m->alloc_abi_pending) {
                size_t na = MAX(m->alloc_abi_pending * 2, (size_t) 16);
                uint32_t *v;

                if (na > 65536)
                        return;
                v = realloc(m->abi_pending, na * sizeof(*v));
                if (!v)
                        return;
                m->abi_pending = v;
                m->alloc_abi_pending = na;
        }
        m->abi_pending[m->n_abi_pending++] = pid;
}

/* A file was mapped executable: if it carries liblmk (a shared liblmk, or
 * an executable that links it in), attach its probes so every later process
 * announces itself, and read this process's descriptor after its
 * constructor ran (it may have run before the probes were attached). */
static void check_liblmk(Monitor *m, uint32_t pid, uint64_t addr) {
        Process *p = process_table_get(&m->procs, pid);
        const Mapping *map;
        uint64_t abi;
        int r;

        if (!p || !(map = addrmap_find(&p->map, addr)) || map->obj->kind != OBJECT_FILE)
                return;
        if (map->obj->abi_tried && map->obj->abi_vaddr == 0)
                return;
        if (process_table_abi_address(&m->procs, p, map, &abi) < 0)
                return;
        if (map->obj->has_probes) {
                r = sampler_attach_liblmk(m->sampler, map->obj->path);
                if (r > 0)
                        log_info("Attached to the marker probes of %s.", map->obj->path);
                else if (r < 0)
                        log_warning_errno(r, "Failed to attach to the marker probes of %s: %m", map->obj->path);
        }
        queue_abi_read(m, pid);
}

/* Descriptors of processes that mapped liblmk; kept until one is read
 * with a TLS offset or the process is gone. */
static void read_pending_abis(Monitor *m, uint64_t now) {
        size_t k = 0;

        for (size_t i = 0; i < m->n_abi_pending; i++) {
                Process *p = process_table_get(&m->procs, m->abi_pending[i]);
                MarkerState *ms = p ? markers_of(p, true) : NULL;
                int r;

                if (!p || !ms || p->exit_time != 0)
                        continue;
                if (ms->marked && ms->n_names > 0)
                        continue;
                ms->last_read = 0;
                r = read_markers(m, p, now);
                if (r == -EAGAIN || (r >= 0 && !ms->marked))
                        m->abi_pending[k++] = m->abi_pending[i];
        }
        m->n_abi_pending = k;
}

static void evict_process(void *owner, Process *p) {
        Monitor *m = owner;
        MarkerState *ms = p->userdata;
        GoneIdent *g;

        if (ms && ms->marked && m->sampler)
                sampler_forget_marked(m->sampler, p->pid);
        /* its exact totals are read later: keep what they are filed under */
        if (m->gone_idents && hashmap_size(m->gone_idents) < 65536 && (g = calloc(1, sizeof(*g)))) {
                Job *j = p->job.job[0] ? jobs_get(&m->jobs, p->job.job) : NULL;
                GoneIdent *old = NULL;

                memcpy(g->comm, p->comm, sizeof(g->comm));
                if (j) {
                        snprintf(g->job, sizeof(g->job), "%s", j->display);
                        snprintf(g->step, sizeof(g->step), "%s", p->job.step);
                }
                if (hashmap_replace(m->gone_idents, INT_TO_KEY(p->pid), g, (void **) &old) < 0)
                        free(g);
                else
                        free(old);
        }
        jobs_release(&m->jobs, p, wall_time(m, p->exit_time ?: now_ns(CLOCK_MONOTONIC)));
}

static void apply_record(Monitor *m, const SbRecord *r) {
        switch (r->type) {
        case SB_MMAP:
                (void) process_table_mmap(&m->procs, r->pid, r->addr, r->len, r->pgoff, r->maj, r->min, r->ino,
                                          r->str);
                check_liblmk(m, r->pid, r->addr);
                break;
        case SB_COMM:
                (void) process_table_comm(&m->procs, r->pid, r->tid, r->str, r->exec);
                break;
        case SB_FORK:
                (void) process_table_fork(&m->procs, r->pid, r->ppid, r->tid);
                break;
        case SB_EXIT:
                process_table_exit(&m->procs, r->pid, r->tid, r->time);
                break;
        default:
                break;
        }
}

static int event_cmp(const void *a, const void *b) {
        const struct lmk_event_header *x = a, *y = b;

        if (x->time_ns != y->time_ns)
                return x->time_ns < y->time_ns ? -1 : 1;
        return (int) x->cpu - (int) y->cpu;
}

static int record_cmp(const void *a, const void *b) {
        const SbRecord *x = a, *y = b;

        if (x->time != y->time)
                return x->time < y->time ? -1 : 1;
        return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int monitor_tick(Monitor *m, bool final) {
        uint64_t now = now_ns(CLOCK_MONOTONIC), point;
        size_t i = 0, j = 0, k;
        int r;

        m->real_offset_ns = (int64_t) now_ns(CLOCK_REALTIME) - (int64_t) now;
        point = final ? UINT64_MAX : (now > ORDER_MARGIN_NS ? now - ORDER_MARGIN_NS : 0);

        /* Samples first: every record that precedes a drained sample is in
         * its ring by the time we drain the records. */
        r = sampler_drain(m->sampler);
        if (r < 0)
                return log_error_errno(r, "Failed to drain the sample ring buffer: %m");
        r = sideband_drain(&m->sb);
        if (r < 0)
                return log_error_errno(r, "Failed to drain the process-event rings: %m");

        if (m->sb.lost != m->sideband_lost_seen) {
                Process *p;
                size_t it;

                /* Some mmap/exec records are gone: any process may have
                 * mappings we do not know, so let misses re-read /proc. */
                log_warning("The kernel dropped %" PRIu64 " process records; re-reading /proc on misses.",
                            m->sb.lost - m->sideband_lost_seen);
                m->stats.sideband_lost = m->sb.lost;
                m->sideband_lost_seen = m->sb.lost;
                HASHMAP_FOREACH(p, m->procs.procs, it) {
                        p->partial = true;
                        p->scan_time = 0;
                }
        }

        /* qsort() wants a valid pointer even for nothing: the queues start empty and NULL */
        if (m->n_pending > 0)
                qsort(m->pending, m->n_pending, sizeof(*m->pending), event_cmp);
        if (m->sb.n_pending > 0)
                qsort(m->sb.pending, m->sb.n_pending, sizeof(*m->sb.pending), record_cmp);

        for (;;) {
                bool rec_ready = i < m->sb.n_pending && m->sb.pending[i].time <= point;
                bool smp_ready = j < m->n_pending && m->pending[j].h.time_ns <= point;

                if (!rec_ready && !smp_ready)
                        break;
                if (rec_ready && (!smp_ready || m->sb.pending[i].time <= m->pending[j].h.time_ns)) {
                        apply_record(m, &m->sb.pending[i]);
                        sb_record_done(&m->sb.pending[i]);
                        i++;
                } else {
                        r = apply_event(m, &m->pending[j], now);
                        j++;
                        if (r < 0)
                                return log_error_errno(r, "Failed to attribute a sample: %m");
                }
        }

        k = m->sb.n_pending - i;
        if (k > 0 && i > 0)
                memmove(m->sb.pending, m->sb.pending + i, k * sizeof(*m->sb.pending));
        m->sb.n_pending = k;
        k = m->n_pending - j;
        if (k > 0 && j > 0)
                memmove(m->pending, m->pending + j, k * sizeof(*m->pending));
        m->n_pending = k;

        if (!final)
                sampler_rejitter(m->sampler);
        m->last_order_point = final ? now : point;
        /* the map walk costs more than a tick's samples at low rates */
        if (final || ++m->ticks % ACCT_EVERY_TICKS == 0)
                account_tasks(m);
        if (m->n_abi_pending > 0)
                read_pending_abis(m, now);
        if (m->last_order_point > EXIT_GRACE_NS)
                process_table_evict(&m->procs, final ? UINT64_MAX : m->last_order_point - EXIT_GRACE_NS);
        return 0;
}

void monitor_account_idle(Monitor *m, bool final) {
        double hz = sampler_frequency(m->sampler);
        uint64_t now = now_ns(CLOCK_MONOTONIC);
        /* The events ran until now, but samples are attributed only up to
         * the order point: leave out the expected samples of that gap. */
        double gap = final || now < m->last_order_point ? 0.0 : (double) (now - m->last_order_point) * hz / 1e9;
        HistKey key = {
                .comm = "swapper",
                .phase = "",
                .obj = object_table_get_special(m->objects, OBJECT_IDLE),
                .kind = ROW_IDLE,
        };
        bool have_stats = sampler_stats(m->sampler, m->bpf_stats) >= 0;

        /* a report or batch is due: bring the exact totals up to date too */
        account_tasks(m);

        m->stats.samples_lost = 0;
        m->stats.phase_faults = 0;
        for (unsigned c = 0; c < m->n_possible; c++) {
                double expected = (double) sampler_cpu_enabled_ns(m->sampler, (int) c) * hz / 1e9;
                uint64_t lost = have_stats ? m->bpf_stats[c].lost : 0;
                double deficit;

                m->stats.samples_lost += lost;
                m->stats.phase_faults += have_stats ? m->bpf_stats[c].phase_faults : 0;
                if (cpu_bit(m->online, c))
                        expected -= gap;
                deficit = floor(expected - (double) (m->seen[c] + lost));
                if (deficit > (double) m->synth[c]) {
                        uint64_t add = (uint64_t) deficit - m->synth[c];

                        if (histogram_add(m->hist, &key, add)) {
                                m->synth[c] += add;
                                m->stats.idle_synthesized += add;
                        }
                }
        }
}

int monitor_stop(Monitor *m) {
        for (unsigned c = 0; c < m->n_possible; c++)
                if (cpu_bit(m->online, c))
                        sampler_cpu_close(m->sampler, (int) c);
        return monitor_tick(m, true);
}

int monitor_keep_cumulative(Monitor *m) {
        if (!m->cumulative)
                m->cumulative = histogram_new(m->objects, m->cfg.max_rows ?: 100000);
        return m->cumulative ? 0 : -ENOMEM;
}

void monitor_reset_interval(Monitor *m) {
        if (m->cumulative && histogram_merge(m->cumulative, m->hist) < 0)
                log_warning("Out of memory: the final report will lack an interval.");
        histogram_reset(m->hist);
        m->n_markers_off = 0;
        jobs_end_interval(&m->jobs);
}

JobTable *monitor_jobs(Monitor *m) {
        return &m->jobs;
}

void monitor_apply_notice(Monitor *m, const JobNotice *n) {
        jobs_apply_notice(&m->jobs, n, (double) now_ns(CLOCK_REALTIME) / 1e9);
}

size_t monitor_markers_off(Monitor *m, const char **ret_job, const char **ret_comm, const char **ret_name,
                           uint32_t *ret_reason, size_t i) {
        if (i >= m->n_markers_off)
                return m->n_markers_off;
        *ret_job = m->markers_off[i].job[0] ? m->markers_off[i].job : NULL;
        *ret_comm = m->markers_off[i].comm;
        *ret_name = m->markers_off[i].name;
        *ret_reason = m->markers_off[i].reason;
        return m->n_markers_off;
}

Histogram *monitor_histogram(Monitor *m) {
        return m->hist;
}

Histogram *monitor_report_histogram(Monitor *m) {
        if (m->cumulative) {
                /* what the last interval added since its flush */
                if (histogram_merge(m->cumulative, m->hist) < 0)
                        log_warning("Out of memory: the report lacks the last interval.");
                histogram_reset(m->hist);
                return m->cumulative;
        }
        return m->hist;
}

const MonitorStats *monitor_stats(Monitor *m) {
        return &m->stats;
}

const ProcessTableStats *monitor_process_stats(Monitor *m) {
        return &m->procs.stats;
}

unsigned monitor_online_cpus(Monitor *m) {
        unsigned n = 0;

        for (unsigned c = 0; c < m->n_possible; c++)
                n += cpu_bit(m->online, c);
        return n;
}

const char *monitor_event_name(Monitor *m) {
        return sampler_event_name(m->sampler);
}

double monitor_frequency(Monitor *m) {
        return sampler_frequency(m->sampler);
}

const EventSpec *monitor_events(Monitor *m, size_t *ret_n) {
        return sampler_events(m->sampler, ret_n);
}

const struct lmk_sample_stats *monitor_cpu_stats(Monitor *m, size_t *ret_n) {
        *ret_n = m->n_possible;
        return m->bpf_stats;
}

Sampler *monitor_sampler(Monitor *m) {
        return m->sampler;
}

int monitor_fd(Monitor *m) {
        return m->epoll_fd;
}

void monitor_clear_wakeups(Monitor *m) {
        struct epoll_event ev[16];

        /* The rings are registered edge-triggered: consuming the events
         * re-arms them for the next wakeup. */
        (void) epoll_wait(m->epoll_fd, ev, ELEMENTSOF(ev), 0);
}
