/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "hashmap.h"
#include "object.h"

/* The per-interval aggregate: sample counts (and counter sums) per
 * (job, step, user, command, object, phase). Strings are interned in the
 * histogram, so a key compares by pointer; everything is released when the
 * interval is flushed, which bounds memory to one interval's distinct rows. */

typedef enum RowKind {
        ROW_EXE,
        ROW_LIB,
        ROW_KERNEL,
        ROW_IDLE,
        ROW_ANON,
        ROW_UNKNOWN,
        _ROW_KIND_MAX,
} RowKind;

typedef struct HistKey {
        const char *job;        /* NULL: not in a job */
        const char *step;       /* NULL: no step */
        const char *comm;
        const char *phase;      /* "" outside markers */
        Object *obj;
        uint32_t uid;
        RowKind kind;
} HistKey;

typedef struct HistRow {
        HistKey key;
        uint64_t samples;
} HistRow;

typedef struct Histogram Histogram;

Histogram *histogram_new(ObjectTable *objects, size_t max_rows);
Histogram *histogram_free(Histogram *h);
/* Drops all rows (and their object references). */
void histogram_reset(Histogram *h);

/* Adds n samples to the key's row, creating it. When max_rows is reached,
 * new keys go to one overflow row per kind (comm "[other]"), so nothing is
 * dropped. Returns the row or NULL on allocation failure. */
HistRow *histogram_add(Histogram *h, const HistKey *key, uint64_t n);

size_t histogram_rows(const Histogram *h);
uint64_t histogram_samples(const Histogram *h);
uint64_t histogram_overflowed(const Histogram *h);
/* The rows, sorted by samples (descending), then by key; valid until the
 * next change. The caller frees the array, not the rows. */
HistRow **histogram_sorted(const Histogram *h);

const char *row_kind_name(RowKind k);
