/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "hashmap.h"
#include "histogram.h"
#include "job-table.h"
#include "lmk-bpf.h"
#include "process.h"

/* Exact totals: each process's CPU time, context switches and counter
 * counts since lmkd started, from the kernel's own figures (not from
 * samples), filed under the process's job, user and command. */

/* One process's figures as the sampler reads them: its live threads plus
 * the threads that exited since lmkd started. CPU time and switches count
 * from each thread's start; counters from when lmkd opened them. A figure
 * can dip for a moment while a thread exits (it leaves the live threads
 * just before its exit is recorded). */
typedef struct TaskTotals {
        uint64_t cpu_time_ns;
        uint64_t switches;
        uint64_t counts[LMK_MAX_COUNTERS];
        uint64_t start_ns;      /* the process's start, CLOCK_MONOTONIC; 0 if only exited threads */
        uint32_t uid;
        char comm[LMK_COMM_LEN];
} TaskTotals;

typedef void (*task_totals_cb_t)(uint32_t tgid, const TaskTotals *t, void *userdata);

/* Where the figures come from: the sampler, or a test. */
typedef struct TotalsSource {
        int (*read)(void *userdata, task_totals_cb_t cb, void *cb_userdata);
        /* the process is done: its figures may go */
        void (*forget)(void *userdata, uint32_t tgid);
        void *userdata;
} TotalsSource;

typedef struct ExactTotals {
        TotalsSource source;
        ProcessTable *procs;
        JobTable *jobs;
        Histogram *hist;
        uint64_t epoch;                 /* CLOCK_MONOTONIC: processes older than this count from here */
        Hashmap *prev;                  /* tgid → TaskTotals: what was accounted so far */
        Hashmap *gone;                  /* tgid → GoneIdent: left the process table, not yet accounted */
        uint32_t *forget;               /* tgids to forget after this walk */
        size_t n_forget, alloc_forget;
        /* set by the caller before each walk */
        uint64_t order_point;           /* everything up to here is attributed (CLOCK_MONOTONIC) */
        int64_t real_offset_ns;         /* CLOCK_REALTIME - CLOCK_MONOTONIC */
} ExactTotals;

int exact_totals_init(ExactTotals *x, const TotalsSource *source, ProcessTable *procs, JobTable *jobs,
                      Histogram *hist);
void exact_totals_done(ExactTotals *x);
/* Every process's figures from the source: what is new since the last walk
 * goes into the histogram's totals. The first walk sets the baselines. */
void exact_totals_account(ExactTotals *x);
/* Whether processes left since the last walk: their figures and names wait
 * for one. Without any, walks can wait for the interval's end. */
static inline bool exact_totals_pending(const ExactTotals *x) {
        return hashmap_size(x->gone) > 0;
}

/* p leaves the process table before its last figures are read: remember
 * its command and job for them. */
void exact_totals_process_gone(ExactTotals *x, const Process *p);
