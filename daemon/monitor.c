/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "attribution.h"
#include "cpu-set.h"
#include "exact-totals.h"
#include "idle.h"
#include "job-cgroup2.h"
#include "job-counters.h"
#include "log.h"
#include "energy.h"
#include "event-order.h"
#include "monitor.h"
#include "functions.h"
#include "phases.h"
#include "util.h"

/* An exited process stays this long for samples taken during its exit. */
#define EXIT_GRACE_NS (UINT64_C(1000000000))
/* Distinct file offsets kept per interval for naming functions (about
 * 150 bytes each): beyond, samples count in their object's "other". */
#define MAX_OFFSETS 16384
/* The exact totals are read when an interval closes, and every few ticks
 * while processes that left wait for their last figures (their names and
 * jobs are kept until then): a walk visits every thread on the node, which
 * costs more than a tick's samples at low rates. */
#define TOTALS_EVERY_TICKS 5

struct Monitor {
        MonitorConfig cfg;
        ObjectTable *objects;
        ProcessTable procs;
        JobTable jobs;
        Sideband sb;
        Sampler *sampler;
        /* hardware counters were a user's at some time in it: set where
         * update_pmu() releases them, and at the reset while they still are */
        bool pmu_released_in_interval;
        Histogram *hist;
        Histogram *cumulative;          /* all intervals, for a report at the end */
        Functions functions;            /* of the closed interval, until it is reset */

        Phases phases;
        Attribution attribution;
        ExactTotals totals;
        IdleSynth idle;
        Energy energy;
        JobCounters job_counters;

        EventQueue events;              /* samples and region events from the ring (event-order.h) */

        unsigned n_possible;
        CpuSet online;                  /* the CPUs we sample */
        int online_fd;                  /* /sys/devices/system/cpu/online, re-read every tick */
        char *online_text;              /* its text when online was last made to match it */
        struct lmk_sample_stats *bpf_stats;
        uint64_t last_order_point;      /* everything up to here is attributed */
        uint64_t sideband_lost_seen;
        MonitorStats stats;
        int epoll_fd;                   /* the rings' wakeups */
        int64_t real_offset_ns;         /* CLOCK_REALTIME - CLOCK_MONOTONIC, for job times */
        unsigned ticks;
};

static double wall_time(Monitor *m, uint64_t mono_ns) {
        return (double) ((int64_t) mono_ns + m->real_offset_ns) / 1e9;
}

/* The sampler behind the phases' and exact totals' hooks. */
static int hook_attach_probes(void *userdata, const char *path) {
        Monitor *m = userdata;
        return m->sampler ? sampler_attach_liblmk(m->sampler, path) : -ENODEV;
}

static int hook_set_marked(void *userdata, uint32_t pid, int64_t tls_offset) {
        Monitor *m = userdata;
        return m->sampler ? sampler_set_marked(m->sampler, pid, tls_offset) : -ENODEV;
}

static void hook_forget_marked(void *userdata, uint32_t pid) {
        Monitor *m = userdata;
        if (m->sampler)
                sampler_forget_marked(m->sampler, pid);
}

static int hook_read_totals(void *userdata, task_totals_cb_t cb, void *cb_userdata) {
        Monitor *m = userdata;
        return sampler_read_task_acct(m->sampler, cb, cb_userdata);
}

static void hook_forget_totals(void *userdata, uint32_t tgid) {
        Monitor *m = userdata;
        sampler_forget_task(m->sampler, tgid);
}

static void evict_process(void *owner, Process *p) {
        Monitor *m = owner;

        phases_forget(&m->phases, p);
        if (p->sampler_knows && m->sampler)
                sampler_forget_known(m->sampler, p->pid);
        /* its exact totals are read later: keep what they are filed under */
        exact_totals_process_gone(&m->totals, p);
        jobs_release(&m->jobs, p, wall_time(m, p->exit_time ?: now_ns(CLOCK_MONOTONIC)));
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
        r = cpu_set_init(&m->online, m->n_possible);
        if (r < 0)
                return r;
        r = idle_init(&m->idle, m->n_possible);
        if (r < 0)
                return r;
        m->bpf_stats = calloc((size_t) n, sizeof(*m->bpf_stats));
        m->objects = object_table_new();
        if (!m->bpf_stats || !m->objects)
                return -ENOMEM;
        m->hist = histogram_new(m->objects, cfg->max_rows ?: 100000, cfg->functions > 0 ? MAX_OFFSETS : 0);
        if (!m->hist)
                return -ENOMEM;
        r = process_table_init(&m->procs, m->objects, cfg->proc_root);
        if (r < 0)
                return r;
        r = jobs_init(&m->jobs);
        if (r < 0)
                return r;
        m->jobs.opt_out_forbidden = cfg->opt_out_forbidden;
        phases_init(&m->phases, &m->procs, &m->jobs, &(const PhaseHooks) {
                .attach_probes = hook_attach_probes,
                .set_marked = hook_set_marked,
                .forget_marked = hook_forget_marked,
                .userdata = m,
        });
        m->attribution = (Attribution) {
                .objects = m->objects,
                .procs = &m->procs,
                .jobs = &m->jobs,
                .phases = &m->phases,
                .families = cfg->families,
        };
        r = exact_totals_init(&m->totals, &(const TotalsSource) {
                .read = hook_read_totals,
                .forget = hook_forget_totals,
                .userdata = m,
        }, &m->procs, &m->jobs, m->hist);
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
        r = sampler_new(&cfg->sampler, m->n_possible, event_queue_add, &m->events, &m->sampler);
        if (r < 0)
                return r;
        if (epoll_ctl(m->epoll_fd, EPOLL_CTL_ADD, sampler_fd(m->sampler),
                      &(struct epoll_event) { .events = EPOLLIN | EPOLLET }) < 0)
                return -errno;
        m->job_counters = (JobCounters) { .root_fd = -EBADF };
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
        m->sampler = NULL;
        sideband_done(&m->sb);
        exact_totals_done(&m->totals);
        phases_done(&m->phases);
        functions_done(&m->functions);
        histogram_free(m->hist);
        histogram_free(m->cumulative);
        jobs_done(&m->jobs);
        object_table_free(m->objects);
        idle_done(&m->idle);
        energy_done(&m->energy);
        job_counters_done(&m->job_counters);
        cpu_set_done(&m->online);
        event_queue_done(&m->events);
        free(m->bpf_stats);
        safe_close(m->epoll_fd);
        safe_close(m->online_fd);
        free(m->online_text);
        free(m);
        return NULL;
}

int monitor_sync_cpus(Monitor *m) {
        _cleanup_(cpu_set_done) CpuSet now_online = {};
        bool all_sampled = true;
        char line[4096];
        ssize_t k;
        int r;

        /* sysfs renders the file anew at offset 0: one pread a tick, no open */
        k = pread(m->online_fd, line, sizeof(line) - 1, 0);
        if (k < 0)
                return log_error_errno(-errno, "Failed to read /sys/devices/system/cpu/online: %m");
        line[k] = '\0';
        /* the list of the last tick, every CPU of it sampled: nothing to
         * parse or compare (at 1 Hz each tick's code runs from cold caches) */
        if (m->online_text && streq(line, m->online_text))
                return (int) cpu_set_count(&m->online);
        r = cpu_set_init(&now_online, m->n_possible);
        if (r < 0)
                return log_oom();
        r = cpu_set_parse(&now_online, line);
        if (r < 0)
                return log_error_errno(r, "Failed to parse online CPU list \"%s\": %m", line);

        for (unsigned c = 0; c < m->n_possible; c++) {
                bool want = cpu_set_has(&now_online, c), have = cpu_set_has(&m->online, c);

                if (want && !have) {
                        r = sideband_cpu_open(&m->sb, (int) c);
                        if (r >= 0)
                                r = sampler_cpu_open(m->sampler, (int) c);
                        if (r == -ENODEV) { /* went offline again meanwhile */
                                all_sampled = false;
                                continue;
                        }
                        if (r < 0) {
                                sideband_cpu_close(&m->sb, (int) c);
                                return log_error_errno(r, "Failed to open perf events on CPU %u: %m", c);
                        }
                        cpu_set_put(&m->online, c, true);
                        job_counters_cpu_open(&m->job_counters, c);
                        log_debug("Sampling CPU %u.", c);
                } else if (!want && have) {
                        job_counters_cpu_close(&m->job_counters, c);
                        sampler_cpu_close(m->sampler, (int) c);
                        sideband_cpu_close(&m->sb, (int) c);
                        cpu_set_put(&m->online, c, false);
                        log_info("CPU %u went offline, stopped sampling it.", c);
                }
        }
        free(m->online_text);
        m->online_text = all_sampled ? strdup(line) : NULL;
        return (int) cpu_set_count(&m->online);
}

static void settle_totals(Monitor *m) {
        m->totals.order_point = m->last_order_point;
        m->totals.real_offset_ns = m->real_offset_ns;
        exact_totals_account(&m->totals);
}

/* Exact counts per job from the jobs' cgroups, with the counters that
 * opened per CPU (an event the PMU lacks opens for no cgroup either) and
 * that the threads do not keep themselves: a per-cgroup perf event makes
 * the scheduler run perf's hooks at every context switch on its CPUs, so
 * a job pays for it (4 % on a pipe ping-pong here), while task-clock or
 * page-faults come at no cost from the exact totals. */
static int start_job_counters(Monitor *m) {
        const CounterState *cs;
        const EventSpec *ev;
        uint32_t usable = 0;
        size_t n, nc;
        int fd, r;

        if (!m->cfg.job_counters)
                return 0;
        ev = sampler_events(m->sampler, &n);
        cs = sampler_counters(m->sampler, &nc);
        for (size_t i = 0; i < MIN(n, nc); i++)
                if (cs[i].available)
                        usable |= UINT32_C(1) << i;
        usable &= ~sampler_thread_counted(m->sampler);
        if (!usable)
                return 0;
        fd = cgroup2_root_open("/sys/fs/cgroup");
        if (fd < 0) {
                log_info("Exact counts per job: no cgroup v2 hierarchy under /sys/fs/cgroup; jobs are counted "
                         "exactly only with --exact-counters.");
                return 0;
        }
        r = job_counters_init(&m->job_counters, fd, ev, n, usable, m->n_possible, &m->online, 0);
        if (r < 0)
                return log_error_errno(r, "Failed to set up counting per job: %m");
        r = job_counters_scan(&m->job_counters, &m->jobs, (double) now_ns(CLOCK_REALTIME) / 1e9);
        if (r < 0)
                log_warning_errno(r, "Failed to look for Slurm jobs in the cgroup v2 hierarchy: %m");
        else
                log_debug("Exact counts per job: from each job's cgroup v2 directory; %d jobs there now.", r);
        return 0;
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
        r = cpu_set_parse(&m->online, line);
        if (r < 0)
                return log_error_errno(r, "Failed to parse online CPU list \"%s\": %m", line);
        for (unsigned c = 0; c < m->n_possible; c++) {
                if (!cpu_set_has(&m->online, c))
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
        (void) phases_find_running(&m->phases, m->cfg.liblmk_paths, now);

        for (unsigned c = 0; c < m->n_possible; c++) {
                if (!cpu_set_has(&m->online, c))
                        continue;
                r = sampler_cpu_open(m->sampler, (int) c);
                if (r < 0)
                        return log_error_errno(r, "Failed to start the %s sampling event on CPU %u: %m",
                                               sampler_event_name(m->sampler), c);
        }
        m->last_order_point = now;
        r = start_job_counters(m);
        if (r < 0)
                return r;
        /* the energy counters' baselines, once; whether or not there are any is said once */
        {
                char why[512];

                r = energy_open(&m->energy, m->cfg.powercap_root, why, sizeof(why));
                if (r < 0)
                        return log_oom();
                log_info("Energy: %s.", why);
        }
        /* the baselines of every process that runs already */
        m->totals.epoch = now_ns(CLOCK_MONOTONIC);
        settle_totals(m);
        return 0;
}

/* What a tick hands to attribution: its monitor and its time. */
typedef struct Tick {
        Monitor *m;
        uint64_t now;
} Tick;

/* A live process whose job lmkd has read: its samples may wait for the
 * timer from now on (sampler.h, new_process_wake_ms). */
static void note_known(Monitor *m, Process *p) {
        if (!p || p->sampler_knows || p->exit_time != 0 || p->job_state != JOB_RESOLVED)
                return;
        p->sampler_knows = true; /* also when the map is full: then it keeps waking lmkd */
        (void) sampler_set_known(m->sampler, p->pid);
}

/* An exec: the new program is to be read again. The kernel forgot the
 * process at the exec itself; lmkd may have told it again since, for a
 * sample of the old program applied after the exec happened. */
static void forget_known(Monitor *m, Process *p) {
        if (!p || !p->sampler_knows)
                return;
        p->sampler_knows = false;
        sampler_forget_known(m->sampler, p->pid);
}

static int apply_event(void *userdata, const PendingEvent *e) {
        Tick *t = userdata;
        Monitor *m = t->m;
        uint64_t now = t->now;
        int r;

        if (e->h.type == LMK_EVENT_REGION || e->h.type == LMK_EVENT_REGION_OFF) {
                phases_apply_region(&m->phases, &e->r, now);
                return 0;
        }
        if (e->h.type == LMK_EVENT_SAMPLE) {
                idle_count_sample(&m->idle, e->s.cpu);
                m->stats.samples++;
        } else
                m->stats.burst_samples++;
        r = attribute_sample(&m->attribution, m->hist, &e->s, now, m->real_offset_ns);
        /* a lookup per sample, only where the kernel keeps the known set */
        if (r >= 0 && e->s.pid != 0 && m->cfg.sampler.new_process_wake_ms > 0)
                note_known(m, process_table_get(&m->procs, e->s.pid));
        return r;
}

static void apply_record(void *userdata, SbRecord *r) {
        Monitor *m = ((Tick *) userdata)->m;

        switch (r->type) {
        case SB_MMAP:
                (void) process_table_mmap(&m->procs, r->pid, r->addr, r->len, r->pgoff, r->maj, r->min, r->ino,
                                          r->str);
                phases_mapped(&m->phases, r->pid, r->addr);
                break;
        case SB_COMM:
                if (r->exec)
                        forget_known(m, process_table_get(&m->procs, r->pid));
                (void) process_table_comm(&m->procs, r->pid, r->tid, r->str, r->exec);
                if (r->exec)
                        jobs_learn_exec(&m->jobs, process_table_get(&m->procs, r->pid));
                break;
        case SB_FORK:
                (void) process_table_fork(&m->procs, r->pid, r->ppid, r->tid);
                if (r->pid != r->ppid)
                        jobs_learn_fork(&m->jobs, process_table_get(&m->procs, r->pid),
                                        process_table_get(&m->procs, r->ppid));
                break;
        case SB_EXIT:
                process_table_exit(&m->procs, r->pid, r->tid, r->time);
                break;
        case SB_CGROUP:
                job_counters_cgroup_made(&m->job_counters, &m->jobs, r->str, r->ino, wall_time(m, r->time));
                break;
        default:
                break;
        }
        sb_record_done(r);
}

/* frame: CLOCK_REALTIME - CLOCK_MONOTONIC for the tick's wall times, NULL
 * for the clocks' now */
static int tick_in_frame(Monitor *m, bool final, const int64_t *frame) {
        uint64_t now = now_ns(CLOCK_MONOTONIC), point;
        Tick tick = { .m = m, .now = now };
        int r;

        m->real_offset_ns = frame ? *frame : (int64_t) now_ns(CLOCK_REALTIME) - (int64_t) now;
        point = event_order_point(now, final);

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

        r = event_order_apply(&m->events, m->sb.pending, &m->sb.n_pending, point, &(const EventOrderHandler) {
                .record = apply_record,
                .event = apply_event,
                .userdata = &tick,
        });
        if (r < 0)
                return log_error_errno(r, "Failed to attribute a sample: %m");

        if (!final)
                sampler_rejitter(m->sampler);
        m->last_order_point = final ? now : point;
        if (final || (++m->ticks % TOTALS_EVERY_TICKS == 0 && exact_totals_pending(&m->totals)))
                settle_totals(m);
        /* jobs whose cgroup went: their last counts, and their events closed
         * (they hold the cgroup in the kernel until then) */
        if (!final && m->ticks % TOTALS_EVERY_TICKS == 0)
                job_counters_collect(&m->job_counters, &m->jobs, wall_time(m, now));
        phases_tick(&m->phases, now);
        energy_account(&m->energy, &m->jobs);
        if (m->last_order_point > EXIT_GRACE_NS)
                process_table_evict(&m->procs, final ? UINT64_MAX : m->last_order_point - EXIT_GRACE_NS);
        return 0;
}

int monitor_tick(Monitor *m, bool final) {
        return tick_in_frame(m, final, NULL);
}

int monitor_tick_in_frame(Monitor *m, int64_t real_offset_ns) {
        return tick_in_frame(m, false, &real_offset_ns);
}

/* Adds the idle samples the CPUs did not take and reads the exact totals. */
static void settle_interval(Monitor *m, bool final) {
        double hz = sampler_frequency(m->sampler);
        uint64_t now = now_ns(CLOCK_MONOTONIC);
        /* The events ran until now, but samples are attributed only up to
         * the order point: leave out the expected samples of that gap. */
        double gap = final || now < m->last_order_point ? 0.0 : (double) (now - m->last_order_point) * hz / 1e9;
        HistKey key = {
                .comm = "swapper",
                .phase = "",
                .obj = object_table_get_special(m->objects, OBJECT_IDLE),
                .kind = CODE_IDLE,
        };
        bool have_stats = sampler_stats(m->sampler, m->bpf_stats) >= 0;

        settle_totals(m);
        job_counters_collect(&m->job_counters, &m->jobs, (double) now_ns(CLOCK_REALTIME) / 1e9);
        m->stats.samples_lost = 0;
        m->stats.phase_faults = 0;
        for (unsigned c = 0; c < m->n_possible; c++) {
                double due = (double) sampler_cpu_enabled_ns(m->sampler, (int) c) * hz / 1e9;
                uint64_t lost = have_stats ? m->bpf_stats[c].lost : 0;

                m->stats.samples_lost += lost;
                m->stats.phase_faults += have_stats ? m->bpf_stats[c].phase_faults : 0;
                if (cpu_set_has(&m->online, c))
                        due -= gap;
                m->stats.idle_synthesized += idle_synthesize(&m->idle, c, due, lost, m->hist, &key);
        }
}

int monitor_stop(Monitor *m) {
        for (unsigned c = 0; c < m->n_possible; c++)
                if (cpu_set_has(&m->online, c))
                        sampler_cpu_close(m->sampler, (int) c);
        return monitor_tick(m, true);
}

int monitor_keep_cumulative(Monitor *m) {
        if (!m->cumulative)
                m->cumulative = histogram_new(m->objects, m->cfg.max_rows ?: 100000,
                                              m->cfg.functions > 0 ? MAX_OFFSETS : 0);
        return m->cumulative ? 0 : -ENOMEM;
}

void monitor_close_interval(Monitor *m, bool final, bool cumulative, double start, double end, Interval *ret) {
        const CounterState *cs;
        const EventSpec *ev;
        Histogram *h = m->hist;
        size_t n;
        int r;

        settle_interval(m, final);
        if (cumulative && m->cumulative) {
                /* what the last interval added since its flush */
                if (histogram_merge(m->cumulative, m->hist) < 0)
                        log_warning("Out of memory: the report lacks the last interval.");
                histogram_reset(m->hist);
                h = m->cumulative;
        }
        functions_done(&m->functions);
        r = functions_name(h, &m->procs, m->cfg.functions, &m->functions);
        if (r < 0)
                log_warning_errno(r, "Failed to name the interval's functions: %m; it has none.");
        else if (m->cfg.functions > 0)
                log_debug("Named the functions of %" PRIu64 " files in %.1f ms: %" PRIu64 " samples named, %" PRIu64
                          " left to the store, %" PRIu64 " in \"other\".", m->functions.stats.files,
                          (double) m->functions.stats.ns / 1e6, m->functions.stats.samples_named,
                          m->functions.stats.samples_unnamed, m->functions.stats.samples_other);
        *ret = (Interval) {
                .start = start,
                .end = end,
                .event = sampler_event_name(m->sampler),
                .frequency_hz = sampler_frequency(m->sampler),
                .cpus = cpu_set_count(&m->online),
                .switch_program = sampler_switch_hook_attached(m->sampler),
                .thread_counted = sampler_thread_counted(m->sampler),
                .hist = h,
                .stats = *monitor_stats(m),
                .procs = m->procs.stats,
                .markers_off = m->phases.off,
                .n_markers_off = m->phases.n_off,
                .jobs = &m->jobs,
                .energy = m->energy.powercap,
                /* a report over pushed intervals, each reset: the totals since the start */
                .energy_unattributed_joules = h == m->cumulative ? m->energy.unattributed_total
                                                                 : m->energy.unattributed_joules,
                .energy_since_start = h == m->cumulative,
                .functions = m->cfg.functions > 0 ? &m->functions : NULL,
                .pmu_released = m->pmu_released_in_interval,
        };
        ev = sampler_events(m->sampler, &n);
        ret->events = ev;
        ret->n_events = n;
        cs = sampler_counters(m->sampler, &n);
        memcpy(ret->counters, cs, MIN(n, (size_t) LMK_MAX_COUNTERS) * sizeof(*cs));
        for (unsigned c = 0; c < m->n_possible; c++)
                for (unsigned i = 0; i < LMK_MAX_COUNTERS; i++) {
                        ret->window_counts[i] += m->bpf_stats[c].window_counts[i];
                        ret->gap_counts[i] += m->bpf_stats[c].gap_counts[i];
                }
}

/* The PMU is the user's while a job here asked for it (sbatch
 * --lmk=nocounters) and has not ended: then lmkd reads no hardware
 * counter on any CPU of the node and samples with cpu-clock. A job's
 * cpuset may leave other CPUs free, but a job without one may run on
 * any CPU, and the user's profiler counts wherever its threads go. */
static void update_pmu(Monitor *m) {
        bool want = false;
        Job *j;
        size_t i;
        int r;

        HASHMAP_FOREACH(j, m->jobs.jobs, i)
                if (job_counters_released(j) && !j->ended)
                        want = true;
        if (!m->sampler || sampler_pmu_released(m->sampler) == want)
                return;
        r = sampler_release_pmu(m->sampler, want);
        if (r < 0)
                log_warning_errno(r, "Failed to reopen sampling after %s the hardware counters: %m",
                                  want ? "releasing" : "taking back");
        else
                log_info("Hardware counters %s: %s.", want ? "released" : "taken back",
                         want ? "a job here asked for them (--lmk=nocounters), sampling goes on with cpu-clock"
                              : "no job here holds them any more");
        m->pmu_released_in_interval |= want;
}

bool monitor_pmu_released(const Monitor *m) {
        return m->sampler && sampler_pmu_released(m->sampler);
}

void monitor_reset_interval(Monitor *m) {
        functions_done(&m->functions);
        if (m->cumulative && histogram_merge(m->cumulative, m->hist) < 0)
                log_warning("Out of memory: the final report will lack an interval.");
        histogram_reset(m->hist);
        phases_end_interval(&m->phases);
        jobs_end_interval(&m->jobs);
        energy_reset(&m->energy, &m->jobs);
        /* jobs that ended without an epilog notice give the PMU back here */
        update_pmu(m);
        m->pmu_released_in_interval = monitor_pmu_released(m);
}

JobTable *monitor_jobs(Monitor *m) {
        return &m->jobs;
}

void monitor_apply_notice(Monitor *m, const JobNotice *n) {
        /* a job starts or ends here: what the node used until now goes to the jobs before */
        energy_account(&m->energy, &m->jobs);
        jobs_apply_notice(&m->jobs, n, (double) now_ns(CLOCK_REALTIME) / 1e9);
        update_pmu(m);
}

const MonitorStats *monitor_stats(Monitor *m) {
        /* counted where they happen */
        m->stats.unknown = m->attribution.unknown;
        m->stats.rescans = m->attribution.rescans;
        m->stats.regions = m->phases.regions;
        return &m->stats;
}

unsigned monitor_online_cpus(Monitor *m) {
        return cpu_set_count(&m->online);
}

const char *monitor_event_name(Monitor *m) {
        return sampler_event_name(m->sampler);
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
