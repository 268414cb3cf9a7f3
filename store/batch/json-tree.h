/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "batch/arena.h"

/* A JSON text parsed in one pass into a read-only tree in an arena: the
 * batch parser reads pushed batches with it (about a tenth of the
 * instructions json-c's DOM took, and no malloc() per value).
 *
 * It reads I-JSON (RFC 7493), strictly, so that what the store keeps is
 * what was sent, and one text cannot mean two things:
 *   - JSON's grammar (RFC 8259): only ' ', '\t', '\n', '\r' are
 *     whitespace, and only whitespace may follow the value; no NaN or
 *     Infinity, no leading zeros, no "1." or ".5"; member names in double
 *     quotes; no raw control characters in strings;
 *   - an integer (no fraction, no exponent) must fit an int64 and a double
 *     must be finite: nothing is rounded to fit or saturated;
 *   - an escaped surrogate must be half of a pair;
 *   - a member name may not be given twice in one object, nor hold NUL;
 *   - a value nested max_depth deep is an error (the top value is at 0).
 * Strings may hold \u0000 (a NUL byte within the string) and, raw,
 * ill-formed UTF-8: the caller checks the strings it keeps (common/utf8.h). */

typedef enum JsonType {
        JSON_NULL,
        JSON_BOOL,
        JSON_INT,       /* no fraction, no exponent */
        JSON_DOUBLE,
        JSON_STRING,
        JSON_ARRAY,
        JSON_OBJECT,
} JsonType;

typedef struct JsonMember JsonMember;

typedef struct JsonValue {
        uint8_t type;                   /* JsonType */
        bool plain;                     /* a string of printable ASCII only (0x20..0x7e) */
        uint32_t n;                     /* bytes of a string, elements of an array, members of an object */
        union {
                bool boolean;
                int64_t integer;
                double number;
                const char *string;     /* NUL-terminated; n bytes, which may hold NULs */
                const struct JsonValue *elements;
                const JsonMember *members; /* as they came, duplicates too: see json_object_bind() */
        };
} JsonValue;

struct JsonMember {
        const char *key;                /* up to its first NUL, as json-c kept keys */
        JsonValue value;
};

static inline bool json_is_type(const JsonValue *v, JsonType t) {
        return v->type == t;
}

/* A number, integer or not, as a double. */
static inline double json_number(const JsonValue *v) {
        return json_is_type(v, JSON_INT) ? (double) v->integer : v->number;
}

/* Why a text is not JSON: what, and at which byte (offset is SIZE_MAX for
 * the end of the input). */
typedef struct JsonError {
        const char *reason;
        size_t offset;
} JsonError;

/* Parses size bytes of JSON text (need not be NUL-terminated; at most
 * UINT32_MAX - 1). The tree and its strings are allocated from arena and
 * live as long as it does. Returns 0 and the top value, -EBADMSG with err
 * filled in when the text is not JSON, or -ENOMEM. */
int json_parse(Arena *arena, const char *data, size_t size, unsigned max_depth, const JsonValue **ret,
               JsonError *err);

/* The values of the members of object o named names[0..n), NULL for those
 * not there: ret[i] is the value of the last member named names[i]. One
 * pass over o, fastest when its keys come in the order of names. */
void json_object_bind(const JsonValue *o, const char *const *names, size_t n, const JsonValue **ret);

/* The members of object o as json-c iterated them: each key once, in the
 * place it first had, with the value it last had. Fills ret with at most
 * max of them and returns how many there are, or max + 1 when there are
 * more than max. */
size_t json_object_unique(const JsonValue *o, JsonMember *ret, size_t max);
