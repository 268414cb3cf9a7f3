/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* POP efficiency metrics of an MPI job from its ranks' sampled figures
 * (docs/pop.md): each rank's samples are useful computation, or
 * communication (in a library of purpose "comm"). Per set of ranks:
 *
 *   load balance               = mean useful / max useful
 *   communication efficiency   = max useful / elapsed
 *   parallel efficiency        = load balance × communication efficiency
 *
 * where elapsed is the busiest rank's sampled time (useful +
 * communication). Backend-neutral: computed from what storage returns. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db/storage.h"

typedef struct PopRank {
        int64_t rank;
        int64_t samples, comm_samples;
        double useful_seconds, communication_seconds;
} PopRank;

typedef struct PopMetrics {
        const char *phase;              /* NULL: the whole job, all phases */
        size_t ranks;
        int64_t samples, comm_samples;  /* what the metrics rest on */
        double useful_seconds;          /* sums over ranks */
        double communication_seconds;
        double mean_useful_seconds, max_useful_seconds;
        double elapsed_seconds;         /* the busiest rank's sampled seconds */
        double wall_seconds;            /* first to last sample of any rank */
        /* NAN where undefined (no useful samples at all) */
        double load_balance, communication_efficiency, parallel_efficiency;
} PopMetrics;

typedef struct PopReport {
        PopMetrics job;
        PopRank *per_rank;              /* the whole job, sorted by rank */
        size_t n_per_rank;
        PopMetrics *phases;             /* one per phase, in the order given */
        size_t n_phases;
} PopReport;

/* Computes the report from figures sorted by phase, then rank (as
 * JobSummary.ranks). Phase names point into v. n == 0 gives an empty
 * report (job.ranks == 0). -ENOMEM. */
int pop_compute(const RankFigures *v, size_t n, PopReport *ret);
void pop_report_free(PopReport *r);
