/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "cpu-set.h"
#include "events.h"
#include "hashmap.h"
#include "job-table.h"
#include "lmk-bpf.h"

/* Exact counts per job from per-cgroup perf events: for each Slurm job with
 * a cgroup v2 directory, the configured counters that the threads do not
 * keep themselves (hardware ones; sampler_thread_counted()) are opened on that
 * directory (PERF_FLAG_PID_CGROUP), once per CPU of the job's cpuset. The
 * kernel then counts exactly the job's tasks and switches the events only
 * when a CPU passes from one cgroup to another: no program runs at context
 * switches, and switches inside a job cost nothing extra. Jobs in cgroup v1
 * only (no perf_event controller there) are not counted this way; lmkd's
 * --exact-counters switch program is their way to exact counts. */

typedef struct JobCounterSet JobCounterSet;

typedef struct JobCounters {
        int root_fd;                    /* the unified hierarchy's root; -EBADF: off */
        EventSpec events[LMK_MAX_COUNTERS]; /* the configured counters; unusable ones unresolved */
        size_t n_events;
        unsigned n_possible;
        const CpuSet *online;           /* the CPUs lmkd samples (the monitor's) */
        Hashmap *sets;                  /* job id → JobCounterSet* */
        size_t n_fds, max_fds;          /* open events, and their bound */
        uint64_t jobs_counted;          /* since the start */
        uint64_t jobs_refused;          /* not counted: max_fds reached */
        bool said_refused;
} JobCounters;

/* By default at most this many events are open for jobs: a 128-CPU node
 * with one job per core and four counters needs 512. */
#define JOB_COUNTERS_MAX_FDS 16384

/* Starts counting jobs below the unified hierarchy at root_fd (taken over,
 * closed by job_counters_done()) with the events whose bit is set in
 * usable (those that opened per CPU). online must outlive jc. Without
 * root_fd (negative) or any usable event, jc stays off and every call is a
 * no-op. */
int job_counters_init(JobCounters *jc, int root_fd, const EventSpec *events, size_t n_events, uint32_t usable,
                      unsigned n_possible, const CpuSet *online, size_t max_fds);
void job_counters_done(JobCounters *jc);
static inline bool job_counters_on(const JobCounters *jc) {
        return jc->root_fd >= 0;
}

/* The jobs whose directories exist already. */
int job_counters_scan(JobCounters *jc, JobTable *jobs, double now);
/* A cgroup was made (the kernel's cgroup record): its path relative to the
 * root and its id. A job's directory or anything below it starts the job's
 * counting if it is not counted yet. */
void job_counters_cgroup_made(JobCounters *jc, JobTable *jobs, const char *path, uint64_t id, double now);

/* CPU hotplug: the CPU's events of every job opened or closed (a closed
 * CPU's counts so far are kept). */
void job_counters_cpu_open(JobCounters *jc, unsigned cpu);
void job_counters_cpu_close(JobCounters *jc, unsigned cpu);

/* Reads every job's events and files what they counted since the last read
 * in its Job (Job.counted); a job whose directory is gone gets its last
 * counts, its events are closed and the job is over on this node. */
void job_counters_collect(JobCounters *jc, JobTable *jobs, double now);

/* Open events now (lmkd's metrics). */
static inline size_t job_counters_fds(const JobCounters *jc) {
        return jc->n_fds;
}
