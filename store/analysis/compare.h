/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/difference-interval.h"
#include "analysis/share-interval.h"
#include "db/storage.h"

/* Two runs side by side (docs/api.md, "Compare two runs"): for each
 * dimension of a job's time, the items of either run paired by name, each
 * side's share of its run's samples and CPU time with their 95% intervals,
 * and the difference b − a with its own (docs/uncertainty.md, "Two
 * runs"). Pure: the caller reads both summaries and keeps them while it
 * uses the rows, whose names point into them. */

/* An item of a dimension as both runs name it: by its name, and a
 * function also by its object and, unnamed, the offset of its page. */
typedef struct CompareItem {
        const char *name;       /* a function's NULL when unnamed or "other" */
        const char *kind;       /* an object's or a function's kind; else NULL */
        const char *object;     /* a function's object; else NULL */
        int64_t offset;         /* an unnamed function's file offset; else STORAGE_NULL */
        bool other;             /* a function: the rest of its object's samples */
        int64_t samples;
        double cpu_seconds;
        int64_t cycles, instructions; /* STORAGE_NULL: not counted */
} CompareItem;

/* A way to break a job's time down: its name, and the items of a summary
 * in it. Adding one is an entry in compare.c. */
typedef struct CompareDimension {
        const char *name;       /* "kind", "object", "phase", "function" */
        size_t (*count)(const JobSummary *js);
        CompareItem (*item)(const JobSummary *js, size_t i);
        /* the summary lists only its largest items: one it leaves out is
         * not known to be 0 */
        bool (*truncated)(const JobSummary *js);
} CompareDimension;

/* One run's side of a row. */
typedef struct CompareSide {
        bool known;             /* false: the run's list left the item out (truncated) */
        CompareItem item;       /* samples 0 where the run had none */
        ShareInterval share;    /* of the run's samples */
        Estimate cpu_seconds;   /* the share's interval in the run's CPU time */
} CompareSide;

typedef struct CompareRow {
        const CompareDimension *dimension;
        CompareItem id;         /* name, kind, object, offset, other; no figures */
        CompareSide a, b;
        /* b − a and b / a; meaningless unless both sides are known */
        Estimate cpu_difference, cpu_ratio, share_difference;
} CompareRow;

typedef struct CompareRows {
        CompareRow *items;      /* by dimension, then the larger CPU time of the two, then name */
        size_t n;
} CompareRows;

/* The rows of a and b in every dimension, items without a sample in
 * either run left out. -ENOMEM. */
int compare_runs(const JobSummary *a, const JobSummary *b, CompareRows *ret);
void compare_rows_free(CompareRows *r);
