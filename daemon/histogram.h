/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "batch-format.h"
#include "hashmap.h"
#include "lmk-bpf.h"
#include "object.h"

/* The per-interval aggregate: sample counts (and counter sums) per
 * (job, step, user, command, object, phase). Strings are interned in the
 * histogram, so a key compares by pointer; everything is released when the
 * interval is flushed, which bounds memory to one interval's distinct rows. */


typedef struct HistKey {
        const char *job;        /* NULL: not in a job */
        const char *step;       /* NULL: no step */
        const char *comm;
        const char *phase;      /* "" outside markers */
        Object *obj;
        uint32_t uid;
        CodeKind kind;
} HistKey;

typedef struct HistRow {
        HistKey key;
        uint64_t samples;
        /* Sums over the windows that ended in this row's samples: good for
         * ratios (IPC, rates), not totals; see lmkd(8). */
        uint64_t window_ns;
        uint64_t window_samples;        /* samples that closed a window */
        uint64_t counts[LMK_MAX_COUNTERS];
        uint64_t counted[LMK_MAX_COUNTERS]; /* samples whose window had counter i */
        uint64_t multiplexed;           /* samples whose window had a multiplexed counter */
        /* burst samples: ~1 ms windows right after a sample, for rates here */
        uint64_t burst_samples;
        uint64_t burst_ns;
        uint64_t burst_counts[LMK_MAX_COUNTERS];
        uint64_t burst_counted[LMK_MAX_COUNTERS];
} HistRow;

/* Exact totals per (job, step, user, command) from context-switch accounting. */
typedef struct TotalKey {
        const char *job;
        const char *step;
        const char *comm;
        uint32_t uid;
} TotalKey;

typedef struct TotalRow {
        TotalKey key;
        uint64_t cpu_time_ns;
        uint64_t counts[LMK_MAX_COUNTERS];
        uint64_t switches;
} TotalRow;

/* Per-rank figures for POP metrics, per (job, step, rank, phase): every
 * sample of an MPI rank (job-table.h) counts here too, split into samples
 * in communication libraries (lib-families.h) and the rest. At most
 * HISTOGRAM_MAX_RANK_ROWS per interval: samples for keys beyond are not
 * recorded (counted in histogram_ranks_overflowed()), since folding
 * ranks together would make up a rank nobody ran. */
#define HISTOGRAM_MAX_RANK_ROWS 4096

typedef struct RankKey {
        const char *job;
        const char *step;       /* NULL: no step */
        const char *phase;      /* "" outside markers */
        uint32_t rank;
} RankKey;

typedef struct RankRow {
        RankKey key;
        uint64_t samples;
        uint64_t comm_samples;          /* of samples, in communication libraries */
        double first, last;             /* Unix time of the first and last sample */
} RankRow;

/* Where in its file a sample ran, for naming functions (functions.h): per
 * (job, step, object, phase) of the rows and file offset, with the counter
 * sums of its samples. The key's strings and object are its row's.
 * Distinct offsets are bounded (histogram_new()'s max_offsets): samples at
 * new offsets beyond go to their (job, step, object, phase)'s entry at
 * HISTOGRAM_OFFSET_OTHER, counted in histogram_offsets_overflowed(). */
#define HISTOGRAM_OFFSET_OTHER UINT64_MAX

typedef struct OffsetKey {
        const char *job;
        const char *step;
        const char *phase;
        Object *obj;
        uint64_t offset;        /* in the file: ip - mapping start + its file offset */
} OffsetKey;

typedef struct OffsetRow {
        OffsetKey key;
        uint64_t samples;
        uint64_t window_ns;
        uint64_t counts[LMK_MAX_COUNTERS];
        uint32_t counted;       /* bit i: some window had counter i */
} OffsetRow;

typedef struct Histogram Histogram;

/* max_offsets: distinct file offsets kept per interval, 0 for none. */
Histogram *histogram_new(ObjectTable *objects, size_t max_rows, size_t max_offsets);
Histogram *histogram_free(Histogram *h);
/* Drops all rows (and their object references). */
void histogram_reset(Histogram *h);

/* Adds n samples to the key's row, creating it. When max_rows is reached,
 * new keys go to one overflow row per kind (comm "[other]"), so nothing is
 * dropped. Returns the row or NULL on allocation failure. */
HistRow *histogram_add(Histogram *h, const HistKey *key, uint64_t n);

/* Adds a sample at file offset offset of row's object (a file) to the
 * offsets of row's (job, step, object, phase). */
int histogram_add_offset(Histogram *h, const HistRow *row, uint64_t offset, const struct lmk_sample *s);
/* The offset rows in no order (valid until the next change); the caller
 * frees the array, not the rows. */
OffsetRow **histogram_offsets(const Histogram *h, size_t *ret_n);
/* Samples at offsets beyond max_offsets, folded into HISTOGRAM_OFFSET_OTHER. */
uint64_t histogram_offsets_overflowed(const Histogram *h);

/* Adds every row, offset and total of src to dst. */
int histogram_merge(Histogram *dst, const Histogram *src);

/* Adds a sample's counter window to its row. */
void histogram_add_window(HistRow *row, const struct lmk_sample *s);
/* Adds a burst sample's window to its row's burst rates. */
void histogram_add_burst(HistRow *row, const struct lmk_sample *s);

/* Adds exact counts to the (job, step, uid, comm) total. */
TotalRow *histogram_add_total(Histogram *h, const TotalKey *key, uint64_t cpu_time_ns, const uint64_t *counts,
                              uint64_t switches);
/* Totals sorted by CPU time (descending); the caller frees the array. */
TotalRow **histogram_sorted_totals(const Histogram *h, size_t *ret_n);

/* Adds n samples (comm of them in communication libraries), the first at
 * Unix time first and the last at last, to the rank's row. NULL on
 * allocation failure, and when the row would be one too many. */
RankRow *histogram_add_rank(Histogram *h, const RankKey *key, uint64_t n, uint64_t comm, double first, double last);
/* The rank rows sorted by job, step, rank, phase; the caller frees the array. */
RankRow **histogram_sorted_ranks(const Histogram *h, size_t *ret_n);
uint64_t histogram_ranks_overflowed(const Histogram *h);

size_t histogram_rows(const Histogram *h);
uint64_t histogram_samples(const Histogram *h);
uint64_t histogram_overflowed(const Histogram *h);
/* The rows, sorted by samples (descending), then by key; valid until the
 * next change. The caller frees the array, not the rows. */
HistRow **histogram_sorted(const Histogram *h);

const char *code_kind_to_string(CodeKind k);
