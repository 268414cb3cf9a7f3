/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The store's JSON reader (store/batch/json-tree.c) against json-c on the
 * same bytes. json-tree reads I-JSON (RFC 7493) strictly, where json-c is
 * lenient (NaN, single quotes, raw control characters, names twice,
 * unpaired surrogates, numbers beyond range): what json-tree refuses may
 * be anything to json-c. What it takes, json-c takes too and reads the
 * same, value by value: the same types, the same integers, the same
 * doubles to the bit, the same string bytes (NULs included), the same
 * members. Prints the first difference and aborts.
 *
 * The batch parser's own checks are fuzz-ingest's; this target holds
 * only the hand-written JSON reader beneath them to a reference. */
#include <json-c/json.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch/arena.h"
#include "batch/batch-parse.h"
#include "batch/json-tree.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

_noreturn_ static void differ(const char *what, const char *path) {
        fprintf(stderr, "fuzz-json-diff: json-tree and json-c differ at %s: %s\n", path[0] ? path : "the top",
                what);
        abort();
}

static void same(const JsonValue *v, json_object *o, const char *path);

static void same_array(const JsonValue *v, json_object *o, const char *path) {
        char sub[256];

        if (json_object_array_length(o) != v->n)
                differ("array length", path);
        for (uint32_t i = 0; i < v->n; i++) {
                snprintf(sub, sizeof(sub), "%s[%" PRIu32 "]", path, i);
                same(&v->elements[i], json_object_array_get_idx(o, i), sub);
        }
}

static void same_object(const JsonValue *v, json_object *o, const char *path) {
        char sub[256];

        /* json-tree refuses a name given twice: json-c's members are the same set */
        if ((size_t) json_object_object_length(o) != v->n)
                differ("number of members", path);
        for (uint32_t i = 0; i < v->n; i++) {
                const JsonMember *m = &v->members[i];
                json_object *mo;

                snprintf(sub, sizeof(sub), "%s.%.64s", path, m->key);
                if (!json_object_object_get_ex(o, m->key, &mo))
                        differ("a member json-c does not have", sub);
                same(&m->value, mo, sub);
        }
}

static void same(const JsonValue *v, json_object *o, const char *path) {
        switch ((JsonType) v->type) {
        case JSON_NULL:
                if (o)
                        differ("null", path);
                return;
        case JSON_BOOL:
                if (!json_object_is_type(o, json_type_boolean) || json_object_get_boolean(o) != v->boolean)
                        differ("boolean", path);
                return;
        case JSON_INT:
                if (!json_object_is_type(o, json_type_int) || json_object_get_int64(o) != v->integer)
                        differ("integer", path);
                return;
        case JSON_DOUBLE: {
                double d = json_object_get_double(o);

                if (!json_object_is_type(o, json_type_double) || memcmp(&d, &v->number, sizeof(d)) != 0)
                        differ("double", path);
                return;
        }
        case JSON_STRING:
                if (!json_object_is_type(o, json_type_string) || (uint32_t) json_object_get_string_len(o) != v->n ||
                    memcmp(json_object_get_string(o), v->string, v->n) != 0)
                        differ("string", path);
                return;
        case JSON_ARRAY:
                if (!json_object_is_type(o, json_type_array))
                        differ("array", path);
                same_array(v, o, path);
                return;
        case JSON_OBJECT:
                if (!json_object_is_type(o, json_type_object))
                        differ("object", path);
                same_object(v, o, path);
                return;
        }
        differ("type", path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(arena_freep) Arena *arena = NULL;
        _cleanup_free_ char *text = NULL;
        json_tokener *tok;
        const JsonValue *v;
        json_object *o;
        JsonError err;
        int r;

        arena = arena_new(size * 4 + 4096);
        if (!arena)
                return 0;
        /* the depth the store reads batches with */
        r = json_parse(arena, (const char *) data, size, BATCH_JSON_DEPTH, &v, &err);
        if (r < 0)
                return 0;
        /* Text json-tree takes has no raw NUL (control characters are
         * refused outside strings and in them): a C string holds it whole,
         * and its NUL tells json-c where it ends, after a bare number too. */
        text = strndup((const char *) data, size);
        tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
        if (!text || !tok) {
                json_tokener_free(tok);
                return 0;
        }
        o = json_tokener_parse_ex(tok, text, -1);
        if (json_tokener_get_error(tok) != json_tokener_success) {
                fprintf(stderr, "fuzz-json-diff: json-tree took it, json-c did not: %s at byte %zu\n",
                        json_tokener_error_desc(json_tokener_get_error(tok)), json_tokener_get_parse_end(tok));
                abort();
        }
        json_tokener_free(tok);
        same(v, o, "");
        json_object_put(o);
        return 0;
}
