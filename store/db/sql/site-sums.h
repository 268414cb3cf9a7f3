/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "db/sql/rollup.h"

/* The site's function sums (schema/0024) that batches add to, in memory:
 * what one batch adds (ingest-functions.c), kept as one row of
 * function_sums_pending (schema/0027) in the batch's own transaction, and
 * what a fold sums from many such rows (site-sums-fold.c) before it
 * upserts each distinct row of the tables once.
 *
 * The parts, as Acc keys (rollup.h) and the tables they go to:
 *   SITE_FUNCTION  (function, 0, 0)              function_days, _weeks
 *   SITE_KEY       (function, mix key, node type) function_key_days, _weeks
 *   SITE_SCOPE     (mix key, node type, 0)       function_scope_days, _weeks
 *   SITE_TOTAL     (0, 0, 0)                     function_total_days, _weeks
 *   SITE_USER      (function, name, 0)           function_users
 *   SITE_APP       (function, name, 0)           function_apps
 * where a name is an index into the sums' names (user and application
 * names share them). FUNCTION and KEY carry samples, CPU seconds, cycles,
 * instructions (STORAGE_NULL: none) and jobs; SCOPE and TOTAL samples and
 * CPU seconds; USER and APP samples. */
typedef enum SitePart {
        SITE_FUNCTION,
        SITE_KEY,
        SITE_SCOPE,
        SITE_TOTAL,
        SITE_USER,
        SITE_APP,
        _SITE_PARTS,
} SitePart;

typedef struct SiteSums {
        int64_t day;            /* the UTC day they are of (the start, in seconds) */
        AccMap parts[_SITE_PARTS];
        Hashmap *name_index;    /* name → its index + 1 */
        char **names;           /* owned */
        size_t n_names, max_names;
} SiteSums;

/* Sums of day with room for max[part] keys and max_names names. */
int site_sums_init(SiteSums *s, int64_t day, const size_t max[_SITE_PARTS], size_t max_names);
void site_sums_done(SiteSums *s);
/* The index of name in s->names, added when new (-ENOBUFS past max_names). */
int site_sums_name(SiteSums *s, const char *name, int64_t *ret);

/* One row of function_sums_pending as read back: what one batch (or
 * several summed) added, decoded, each part's keys in increasing (a, b, c)
 * order, each once. */
typedef struct SiteSumsRow {
        int64_t day;
        Acc *items;             /* the parts, one after the other */
        size_t n[_SITE_PARTS];
        char **names;
        size_t n_names;
} SiteSumsRow;

void site_sums_row_done(SiteSumsRow *r);
/* The entries of part p of r. */
static inline const Acc *site_sums_row_part(const SiteSumsRow *r, SitePart p, size_t *ret_n) {
        size_t offset = 0;

        for (int k = 0; k < (int) p; k++)
                offset += r->n[k];
        *ret_n = r->n[p];
        /* a row without entries has no items */
        return r->items ? r->items + offset : NULL;
}

/* The value of function_sums_pending.body. Format, version 1:
 *
 *   byte 0        1, the version
 *   day           varint, ≥ 0, a multiple of 86400
 *   names         varint: how many; each a varint length (1 … 4096) and
 *                 that many bytes (UTF-8 as the batch had it, no NUL)
 *   then for each part in SitePart order: a varint count, then its
 *   entries in increasing (a, b, c) order, each key once:
 *     the key's ids        varints: FUNCTION a; KEY a, b, c; SCOPE a, b;
 *                          TOTAL none; USER and APP a, b (the name's index)
 *     samples              varint
 *     cpu_seconds          FUNCTION, KEY, SCOPE, TOTAL: 8 bytes, an IEEE
 *                          754 double, little-endian, finite, ≥ 0
 *     counters             FUNCTION, KEY: one byte, bit 0 cycles, bit 1
 *                          instructions follow (varints), the others NULL
 *     jobs                 FUNCTION, KEY: varint
 *
 * Varints as in varint.h (LEB128 of the int64 as uint64); every value is
 * ≥ 0. */
#define SITE_SUMS_VERSION 1

/* CPU seconds a sum may hold: far above any site's (2^63 samples at
 * 0.01 Hz), far below where adding sums up could leave the finite range. */
#define SITE_SUMS_CPU_MAX 1e300

/* Packs s into a new value of *ret_len bytes; -EOVERFLOW when a sum of CPU
 * seconds is negative, not finite or past SITE_SUMS_CPU_MAX. */
int site_sums_encode(const SiteSums *s, uint8_t **ret, size_t *ret_len);
/* Reads a value. -EBADMSG, *ret empty, for one that is not a value of this
 * version: cut short, out of order, a name index past the names, a
 * negative number, CPU seconds as encode refuses them, bytes past its end. */
int site_sums_decode(const uint8_t *data, size_t len, SiteSumsRow *ret);

/* Adds row (of s->day) into s: all of it, or nothing and -EOVERFLOW when
 * a sum of samples, jobs, cycles or instructions would pass 2^63 - 1, or
 * one of CPU seconds SITE_SUMS_CPU_MAX (-ENOBUFS: s has no room for its
 * keys or names). */
int site_sums_add(SiteSums *s, const SiteSumsRow *row);

/* The order to write a part's sums in, a new array of indexes into its
 * pool: their table's key order, so that each upsert descends the B-tree
 * to the pages the one before it touched (and the order encode keeps).
 * by_key: (b, c, a), the tables keyed (mix key, bucket, node type,
 * function); else (a, b, c). NULL: out of memory. */
size_t *site_sums_order(const AccMap *m, bool by_key);
