/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "histogram.h"
#include "jobs.h"
#include "lmk-bpf.h"
#include "object.h"
#include "process.h"
#include "sampler.h"
#include "sideband.h"

/* The node's view: the sampler, the kernel's process records, the process
 * table and the histogram of the current interval, kept in time order. */

typedef struct MonitorConfig {
        SamplerConfig sampler;
        const char *proc_root;
        size_t max_rows;
        unsigned sideband_ring_order;   /* 2^order pages per CPU */
        const char *const *liblmk_paths; /* liblmk copies whose probes to attach at start */
} MonitorConfig;

typedef struct MonitorStats {
        uint64_t samples;               /* attributed from the ring */
        uint64_t samples_lost;          /* the ring was full */
        uint64_t idle_synthesized;      /* expected but not taken: the CPU was idle */
        uint64_t unknown;               /* attributed to [unknown] */
        uint64_t rescans;               /* /proc re-reads after a miss */
        uint64_t sideband_lost;
        uint64_t regions;               /* region names learned from probes */
        uint64_t burst_samples;         /* taken in bursts (not counted as samples) */
        uint64_t phase_faults;          /* samples of marked threads whose state was unreadable */
} MonitorStats;

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
/* Stops sampling on all CPUs and attributes what is left. */
int monitor_stop(Monitor *m);
/* Settles the interval before a report or batch: adds the idle samples the
 * CPUs did not take (an idle CPU takes no time-based samples on some
 * kernels and none with cycle events) and reads the exact totals. */
void monitor_account_idle(Monitor *m, bool final);

Histogram *monitor_histogram(Monitor *m);
/* Keeps every interval's rows also in a histogram for a final report. */
int monitor_keep_cumulative(Monitor *m);
/* The histogram a report covers: all intervals when kept, else the current one. */
Histogram *monitor_report_histogram(Monitor *m);
/* Starts a new interval: the histogram (rows and totals) is emptied. */
void monitor_reset_interval(Monitor *m);
JobTable *monitor_jobs(Monitor *m);
/* A Prolog/Epilog notice arrived. */
void monitor_apply_notice(Monitor *m, const JobNotice *n);
/* The i-th region switched off in this interval; returns how many there are. */
size_t monitor_markers_off(Monitor *m, const char **ret_job, const char **ret_comm, const char **ret_name,
                           uint32_t *ret_reason, size_t i);
const MonitorStats *monitor_stats(Monitor *m);
const ProcessTableStats *monitor_process_stats(Monitor *m);
unsigned monitor_online_cpus(Monitor *m);
const char *monitor_event_name(Monitor *m);
double monitor_frequency(Monitor *m);
Sampler *monitor_sampler(Monitor *m);
const EventSpec *monitor_events(Monitor *m, size_t *ret_n);
/* The sampling program's counters of each possible CPU, as of the last
 * monitor_account_idle(). */
const struct lmk_sample_stats *monitor_cpu_stats(Monitor *m, size_t *ret_n);
/* Readable when a ring asks to be drained before the next tick. */
int monitor_fd(Monitor *m);
void monitor_clear_wakeups(Monitor *m);
