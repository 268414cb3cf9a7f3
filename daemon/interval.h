/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "events.h"
#include "functions.h"
#include "histogram.h"
#include "job-table.h"
#include "lmk-bpf.h"
#include "phases.h"
#include "powercap.h"
#include "process.h"

/* A closed interval of one node's sampling: everything a batch or a report
 * says about it, taken from the monitor once, when the interval closes.
 * The batch (batch-build.c) and the one-shot report (report.c) are both
 * written from this value, and its JSON rows in one place
 * (interval-json.c). */

/* What lmkd knows about one configured counter. */
typedef struct CounterState {
        bool available;         /* opened on at least one CPU */
        int error;              /* the first perf_event_open error, negative errno */
        uint64_t total;         /* sum over CPUs of the count since each was opened */
        uint64_t enabled_ns;    /* sum over CPUs */
        uint64_t running_ns;    /* less than enabled_ns: the PMU multiplexed it */
} CounterState;

/* The sampling pipeline's own counts, since lmkd started. */
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

typedef struct Interval {
        double start, end;              /* Unix time, seconds */
        const char *event;              /* the sampling event: "cpu-clock", "ref-cycles" */
        double frequency_hz;            /* per CPU */
        unsigned cpus;                  /* online */
        bool switch_program;            /* a program ran on every context switch (counters open) */
        uint32_t thread_counted;        /* bit i: role i counted from the threads' own fields */
        Histogram *hist;                /* rows and exact totals */
        MonitorStats stats;
        ProcessTableStats procs;
        const EventSpec *events;        /* configured counters, by role */
        size_t n_events;
        CounterState counters[LMK_MAX_COUNTERS];
        uint64_t window_counts[LMK_MAX_COUNTERS]; /* counted inside sample windows, all CPUs */
        uint64_t gap_counts[LMK_MAX_COUNTERS];    /* counted between a window and a switch */
        const MarkerOff *markers_off;   /* regions switched off in the interval */
        size_t n_markers_off;
        const JobTable *jobs;
        /* The node's energy (energy.h): its counters with the interval's
         * joules per zone, and the part while no job ran. NULL: no
         * counters. A cumulative report (energy_since_start) has the
         * zones' joules since the start and no job's. */
        const Powercap *energy;
        double energy_unattributed_joules;
        bool energy_since_start;
        /* The interval's functions, named when it closed (functions.h);
         * NULL: none named (lmkd.conf functions = 0). */
        const Functions *functions;
        /* a job's user had the hardware counters (--lmk=nocounters) at
         * some time in the interval: none read, sampling on cpu-clock */
        bool pmu_released;
} Interval;
