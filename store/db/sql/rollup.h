/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "batch/batch-parse.h"
#include "hashmap.h"
#include "db/storage.h"

/* Sums for one rollup key, accumulated in memory over a batch so that each
 * rollup row is written once per batch, not once per input row. */
typedef struct Acc {
        /* the key: (job, object, 0), (job, phase, 0), (object, 0, 0), (job,
         * function, 0), (job, phase, function) */
        int64_t a, b, c;
        int64_t samples;
        double cpu_seconds;
        int64_t cpu_time_ns, cycles, instructions;
        int64_t multiplexed_samples;
        /* the site's functions (c: node type): the jobs that had the
         * function for the first time in this batch */
        int64_t jobs;
} Acc;

/* The keys of a batch, at most max (its rows). */
typedef struct AccMap {
        Hashmap *map;
        Acc *pool;
        size_t n, max;
} AccMap;

int acc_map_init(AccMap *m, size_t max);
void acc_map_done(AccMap *m);
/* Forgets the sums, for the batch to be summed again. */
void acc_map_reset(AccMap *m);
int acc_add(AccMap *m, int64_t a, int64_t b, const BatchRow *row, double cpu_seconds);
/* The same of a function (functions[]), which has no counted CPU time
 * and no multiplexed samples; ret (if not NULL): the key's sums. */
int acc_add_function(AccMap *m, int64_t a, int64_t b, int64_t c, const BatchFunction *f, double cpu_seconds,
                     Acc **ret);
/* The sums of a key, or NULL. */
const Acc *acc_find(const AccMap *m, int64_t a, int64_t b, int64_t c);
/* Adds x's sums (samples, CPU seconds, counters, jobs) to those of the
 * key, unchecked (site-sums.c checks first). */
int acc_add_sums(AccMap *m, int64_t a, int64_t b, int64_t c, const Acc *x);
/* Adds a nullable counter (STORAGE_NULL) to a nullable sum. */
void add_counter(int64_t *sum, int64_t v);
