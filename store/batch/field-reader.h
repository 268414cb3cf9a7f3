/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "batch/batch-parse.h"
#include "batch/json-tree.h"
#include "macro.h"

/* Reading the members of a JSON object the way the batch parser checks
 * them (batch-parse.c, batch-inventory.c): by type, range and length, with
 * absent and null told apart, and every refusal naming the field
 * ("rows[17].samples") and saying what is wrong, for the 400 answer. */

/* Where in the batch a member is, so that errors can name it without a
 * path string built for every one of 100,000 valid rows. */
typedef struct Where {
        const char *parent; /* "batch", "rows", ... or NULL at top level */
        long index;         /* element of the parent array, or -1 */
} Where;

#define TOP ((Where) { NULL, -1 })
#define IN(p) ((Where) { (p), -1 })
#define AT(p, i) ((Where) { (p), (long) (i) })

/* Fills err with the field (w and key) and the message; returns r. */
int field_fail(BatchError *err, int r, Where w, const char *key, const char *fmt, ...) _printf_(5, 6);

/* The members of one object that the checks read, looked up once
 * (json_object_bind()): each kind of object has a table of names and an
 * enum of indices into it, and the checks name a member by its index. */
#define FIELDS_MAX 24

typedef struct Fields {
        const char *const *names;
        const JsonValue *v[FIELDS_MAX];
} Fields;

#define BIND(o, table, f)                                                               \
        ({                                                                              \
                _Static_assert(ELEMENTSOF(table) <= FIELDS_MAX, "too many fields");     \
                (f)->names = (table);                                                   \
                json_object_bind((o), (table), ELEMENTSOF(table), (f)->v);              \
        })

/* Member i is there and not null. */
static inline bool field_has(const Fields *f, unsigned i) {
        return f->v[i] && !json_is_type(f->v[i], JSON_NULL);
}

enum {
        OPTIONAL = 0,
        REQUIRED = 1 << 0,
        NULLABLE = 1 << 1,
        /* An identifier (node, job, user, ...): no control characters. Free
         * text (paths, phases, job names, comm) may hold them: JSON escapes
         * them on the way out, and lmkd cannot choose what processes call
         * themselves. */
        IDENT = 1 << 2,
};

/* A string of len bytes that the store can keep and serve back as valid
 * JSON text: strict UTF-8 (common/utf8.h), no NUL (C strings end there),
 * and with IDENT in flags no control characters. */
int field_check_text(const char *s, size_t len, unsigned flags, Where w, const char *key, BatchError *err);

/* Each reads member i of f: absent is an error with REQUIRED in flags
 * (required), null is one without NULLABLE; otherwise either gives the
 * "none" value named. ret is written on success only. */

/* A string of min..max bytes, checked by field_check_text(); none: NULL. */
int field_string(const Fields *f, unsigned i, Where w, unsigned flags, size_t min, size_t max, const char **ret,
                 BatchError *err);
/* An integer in min..max (numbers with a fraction or exponent are not
 * integers); none: BATCH_NULL. */
int field_int(const Fields *f, unsigned i, Where w, unsigned flags, int64_t min, int64_t max, int64_t *ret,
              BatchError *err);
/* A finite number in min..max, integer or not; none: NAN. */
int field_double(const Fields *f, unsigned i, Where w, unsigned flags, double min, double max, double *ret,
                 BatchError *err);
/* true or false; absent or null: false. */
int field_bool(const Fields *f, unsigned i, Where w, bool *ret, BatchError *err);
/* An object (null is not one); absent: NULL. */
int field_object(const Fields *f, unsigned i, Where w, bool required, const JsonValue **ret, BatchError *err);
/* An array of at most max elements (more: -E2BIG); absent or null: NULL
 * and 0. */
int field_array(const Fields *f, unsigned i, Where w, bool required, size_t max, const JsonValue **ret,
                size_t *ret_n, BatchError *err);
