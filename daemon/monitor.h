/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "histogram.h"
#include "interval.h"
#include "job-table.h"
#include "lib-families.h"
#include "lmk-bpf.h"
#include "object.h"
#include "process.h"
#include "sampler.h"
#include "sideband.h"

/* The node's view, kept in time order: the sampler's samples and the
 * kernel's process records are merged by time (event-order.c) and handed
 * to attribution (attribution.c), phases (phases.c) and the process table;
 * exact totals (exact-totals.c) and idle time (idle.c) are settled when an
 * interval closes into an Interval (interval.h). */

typedef struct MonitorConfig {
        SamplerConfig sampler;
        const char *proc_root;
        bool opt_out_forbidden;         /* lmkd.conf opt_out = forbidden */
        size_t max_rows;
        unsigned sideband_ring_order;   /* 2^order pages per CPU */
        const char *const *liblmk_paths; /* liblmk copies whose probes to attach at start */
        const LibFamilies *families;    /* tells communication libraries (outlives the monitor) */
        const char *powercap_root;      /* energy counters (energy.h); NULL: /sys/class/powercap */
        bool job_counters;              /* count jobs in their cgroup v2 directories (job-counters.h) */
        unsigned functions;             /* top functions named per (job, step, object, phase); 0: none */
} MonitorConfig;

typedef struct Monitor Monitor;

int monitor_new(const MonitorConfig *cfg, Monitor **ret);
Monitor *monitor_free(Monitor *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(Monitor *, monitor_free);

/* Opens the side-band events, reads /proc, then starts sampling. */
int monitor_start(Monitor *m);
/* Opens/closes per-CPU events to follow CPU hotplug. */
int monitor_sync_cpus(Monitor *m);
/* Drains the rings and attributes everything older than the safety margin
 * (or everything, when final), in time order. */
int monitor_tick(Monitor *m, bool final);
/* A tick whose samples take their wall times from real_offset_ns
 * (CLOCK_REALTIME - CLOCK_MONOTONIC) rather than from the clocks now: the
 * samples drained when the wall clock is found to have stepped are of the
 * interval that ends there, in its time. */
int monitor_tick_in_frame(Monitor *m, int64_t real_offset_ns);
/* Stops sampling on all CPUs and attributes what is left. */
int monitor_stop(Monitor *m);

/* Keeps every interval's rows also in a histogram for a final report. */
int monitor_keep_cumulative(Monitor *m);
/* Closes the interval: settles idle time and exact totals, names the
 * functions of its samples (functions.h) and describes
 * the interval from start to end (Unix time, from an IntervalClock,
 * interval-clock.h). With cumulative, the description covers every interval
 * since the start (see monitor_keep_cumulative). Valid until
 * monitor_reset_interval(). */
void monitor_close_interval(Monitor *m, bool final, bool cumulative, double start, double end, Interval *ret);
/* Starts a new interval: the histogram (rows and totals) is emptied. */
void monitor_reset_interval(Monitor *m);

JobTable *monitor_jobs(Monitor *m);
/* A Prolog/Epilog notice arrived. */
void monitor_apply_notice(Monitor *m, const JobNotice *n);
/* Whether a job's user holds the hardware counters now (--lmk=nocounters). */
bool monitor_pmu_released(const Monitor *m);
const MonitorStats *monitor_stats(Monitor *m);
unsigned monitor_online_cpus(Monitor *m);
const char *monitor_event_name(Monitor *m);
Sampler *monitor_sampler(Monitor *m);
/* Readable when a ring asks to be drained before the next tick. */
int monitor_fd(Monitor *m);
void monitor_clear_wakeups(Monitor *m);
