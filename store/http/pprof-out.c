/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pprof's profile.proto, written by hand: a profile is a few messages of
 * varints and length-delimited fields, which does not need a protobuf
 * library. The field numbers are those of profile.proto's messages
 * Profile, ValueType, Sample, Label, Mapping, Location, Line and
 * Function (github.com/google/pprof, proto/profile.proto). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "hashmap.h"
#include "http/pprof-out.h"
#include "util.h"

enum {
        WIRE_VARINT = 0,
        WIRE_BYTES = 2,
};

enum {
        PROFILE_SAMPLE_TYPE = 1,
        PROFILE_SAMPLE = 2,
        PROFILE_MAPPING = 3,
        PROFILE_LOCATION = 4,
        PROFILE_FUNCTION = 5,
        PROFILE_STRING_TABLE = 6,
        PROFILE_TIME_NANOS = 9,
        PROFILE_DURATION_NANOS = 10,
        PROFILE_PERIOD_TYPE = 11,
        PROFILE_PERIOD = 12,
        PROFILE_COMMENT = 13,
        VALUE_TYPE_TYPE = 1,
        VALUE_TYPE_UNIT = 2,
        SAMPLE_LOCATION_ID = 1,
        SAMPLE_VALUE = 2,
        SAMPLE_LABEL = 3,
        LABEL_KEY = 1,
        LABEL_STR = 2,
        MAPPING_ID = 1,
        MAPPING_MEMORY_START = 2,
        MAPPING_MEMORY_LIMIT = 3,
        MAPPING_FILE_OFFSET = 4,
        MAPPING_FILENAME = 5,
        MAPPING_BUILD_ID = 6,
        MAPPING_HAS_FUNCTIONS = 7,
        LOCATION_ID = 1,
        LOCATION_MAPPING_ID = 2,
        LOCATION_ADDRESS = 3,
        LOCATION_LINE = 4,
        LINE_FUNCTION_ID = 1,
        FUNCTION_ID = 1,
        FUNCTION_NAME = 2,
};

/* Each object gets an address range of its own, from here on, a page
 * apart. Its mapping starts at the lowest file offset of its unnamed
 * functions (file_offset) and an unnamed function's address is the
 * mapping's start plus its distance from there, so that pprof finds the
 * file offset again, as for a process's mapping of the file's code:
 * pprof picks the program header to read by the mapping's file offset, and
 * one at 0 would be the ELF header's segment, which it takes for data and
 * does not name. Nothing sits at 0, which pprof reads as "no address". */
#define FIRST_ADDRESS 0x10000u
#define PAGE 4096u

/* Room for need items of size bytes in *items, doubling. */
static int reserve(void **items, size_t need, size_t *alloc, size_t size) {
        size_t na = *alloc ? *alloc : 16;
        void *p;

        if (need <= *alloc)
                return 0;
        while (na < need) {
                if (na > SIZE_MAX / 2)
                        return -ENOMEM;
                na *= 2;
        }
        p = reallocarray(*items, na, size);
        if (!p)
                return -ENOMEM;
        *items = p;
        *alloc = na;
        return 0;
}

typedef struct Buf {
        uint8_t *data;
        size_t n, alloc;
        bool oom;
} Buf;

static void buf_put(Buf *b, const void *p, size_t n) {
        if (b->oom || n == 0)
                return;
        if (n > SIZE_MAX - b->n || reserve((void **) &b->data, b->n + n, &b->alloc, 1) < 0) {
                b->oom = true;
                return;
        }
        memcpy(b->data + b->n, p, n);
        b->n += n;
}

static void put_varint(Buf *b, uint64_t v) {
        uint8_t x[10];
        size_t n = 0;

        do {
                x[n++] = (uint8_t) ((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
                v >>= 7;
        } while (v > 0);
        buf_put(b, x, n);
}

/* A number field; 0 is the default and left out, as protobuf does. */
static void put_uint(Buf *b, unsigned field, uint64_t v) {
        if (v == 0)
                return;
        put_varint(b, (uint64_t) field << 3 | WIRE_VARINT);
        put_varint(b, v);
}

static void put_bytes(Buf *b, unsigned field, const void *p, size_t n) {
        put_varint(b, (uint64_t) field << 3 | WIRE_BYTES);
        put_varint(b, n);
        buf_put(b, p, n);
}

/* m as a field of b; m is emptied for the next message. */
static void put_message(Buf *b, unsigned field, Buf *m) {
        if (m->oom)
                b->oom = true;
        put_bytes(b, field, m->data, m->n);
        m->n = 0;
}

typedef struct Mapping {
        const char *object, *build_id;
        uint64_t start, limit;
        uint64_t offset;        /* the file offset at start */
        bool unnamed;           /* has an unnamed function: pprof may name it */
} Mapping;

typedef struct Encoder {
        Buf out, msg, sub;
        Hashmap *strings;       /* a string of the table → its index + 1 */
        const char **table;
        size_t n_table, alloc_table;
        Hashmap *ids;           /* a mapping's, function's or location's key → its id */
        char **keys;            /* those keys, owned */
        size_t n_keys, alloc_keys;
        Mapping *mappings;
        size_t n_mappings, alloc_mappings;
        uint64_t n_functions, n_locations;
} Encoder;

static void encoder_done(Encoder *e) {
        free(e->out.data);
        free(e->msg.data);
        free(e->sub.data);
        hashmap_free(e->strings);
        free(e->table);
        hashmap_free(e->ids);
        for (size_t i = 0; i < e->n_keys; i++)
                free(e->keys[i]);
        free(e->keys);
        free(e->mappings);
}

/* The index of s in the string table; s must outlive the encoder. */
static int string_index(Encoder *e, const char *s, uint64_t *ret) {
        void *v = hashmap_get(e->strings, s ?: "");
        int r;

        if (v) {
                *ret = KEY_TO_INT(v) - 1;
                return 0;
        }
        r = reserve((void **) &e->table, e->n_table + 1, &e->alloc_table, sizeof(char *));
        if (r < 0)
                return r;
        e->table[e->n_table] = s ?: "";
        r = hashmap_put(e->strings, e->table[e->n_table], (void *) INT_TO_KEY(e->n_table + 1));
        if (r < 0)
                return r;
        *ret = e->n_table++;
        return 0;
}

/* The id of the thing a formatted key names, *ret_new when it is made
 * now (ids count from 1 in each kind, *counter the last one). */
_printf_(5, 6)
static int key_id(Encoder *e, uint64_t *counter, uint64_t *ret, bool *ret_new, const char *fmt, ...) {
        char *key;
        va_list ap;
        void *v;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&key, fmt, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        v = hashmap_get(e->ids, key);
        if (v) {
                free(key);
                *ret = KEY_TO_INT(v);
                *ret_new = false;
                return 0;
        }
        r = reserve((void **) &e->keys, e->n_keys + 1, &e->alloc_keys, sizeof(char *));
        if (r < 0) {
                free(key);
                return r;
        }
        e->keys[e->n_keys++] = key;
        r = hashmap_put(e->ids, key, (void *) INT_TO_KEY(*counter + 1));
        if (r < 0)
                return r;
        *ret = ++*counter;
        *ret_new = true;
        return 0;
}

/* The mapping of each entry (by file and build), each laid out after the
 * one before with room for its highest unnamed offset. */
static int layout_mappings(Encoder *e, const PprofProfile *p, size_t *ret_of) {
        uint64_t next = FIRST_ADDRESS, n = 0;
        int r;

        for (size_t i = 0; i < p->n_entries; i++) {
                const PprofEntry *x = &p->entries[i];
                uint64_t id;
                bool made;
                Mapping *m;

                r = key_id(e, &n, &id, &made, "m\n%s\n%s", x->build_id ?: "", x->object);
                if (r < 0)
                        return r;
                if (made) {
                        r = reserve((void **) &e->mappings, e->n_mappings + 1, &e->alloc_mappings, sizeof(Mapping));
                        if (r < 0)
                                return r;
                        e->mappings[e->n_mappings++] = (Mapping) { x->object, x->build_id };
                }
                ret_of[i] = id - 1;
                m = &e->mappings[id - 1];
                if (!x->function) {
                        if (x->offset > UINT64_MAX - PAGE)
                                return -EOVERFLOW;
                        /* the lowest offset in offset, the highest in limit, for now */
                        m->offset = m->unnamed ? MIN(m->offset, x->offset) : x->offset;
                        m->limit = m->unnamed ? MAX(m->limit, x->offset) : x->offset;
                        m->unnamed = true;
                }
        }
        for (size_t i = 0; i < e->n_mappings; i++) {
                Mapping *m = &e->mappings[i];
                uint64_t size = m->unnamed ? m->limit - m->offset + PAGE : PAGE;

                if (next > UINT64_MAX - size - PAGE)
                        return -EOVERFLOW;
                m->start = next;
                m->limit = next + size;
                next = m->limit + PAGE;
        }
        return 0;
}

static int put_value_type(Encoder *e, Buf *b, unsigned field, const char *type, const char *unit) {
        uint64_t t, u;
        int r;

        if ((r = string_index(e, type, &t)) < 0 || (r = string_index(e, unit, &u)) < 0)
                return r;
        put_uint(&e->sub, VALUE_TYPE_TYPE, t);
        put_uint(&e->sub, VALUE_TYPE_UNIT, u);
        put_message(b, field, &e->sub);
        return 0;
}

/* An entry's location (its function's, or its address's when unnamed),
 * written with its function when new. */
static int put_location(Encoder *e, const PprofEntry *x, size_t mapping, uint64_t *ret) {
        const Mapping *m = &e->mappings[mapping];
        uint64_t fid = 0, name;
        bool made;
        int r;

        if (!x->function) {
                r = key_id(e, &e->n_locations, ret, &made, "a\n%zu\n%" PRIu64, mapping, x->offset);
                if (r < 0 || !made)
                        return r;
                /* no line: pprof names it from the binary, if it finds it */
                put_uint(&e->msg, LOCATION_ID, *ret);
                put_uint(&e->msg, LOCATION_MAPPING_ID, mapping + 1);
                put_uint(&e->msg, LOCATION_ADDRESS, m->start + (x->offset - m->offset));
                put_message(&e->out, PROFILE_LOCATION, &e->msg);
                return 0;
        }
        r = key_id(e, &e->n_functions, &fid, &made, "f\n%zu\n%s", mapping, x->function);
        if (r < 0)
                return r;
        if (made) {
                if ((r = string_index(e, x->function, &name)) < 0)
                        return r;
                put_uint(&e->msg, FUNCTION_ID, fid);
                put_uint(&e->msg, FUNCTION_NAME, name);
                put_message(&e->out, PROFILE_FUNCTION, &e->msg);
        }
        r = key_id(e, &e->n_locations, ret, &made, "l\n%zu\n%" PRIu64, mapping, fid);
        if (r < 0 || !made)
                return r;
        put_uint(&e->msg, LOCATION_ID, *ret);
        put_uint(&e->msg, LOCATION_MAPPING_ID, mapping + 1);
        put_uint(&e->sub, LINE_FUNCTION_ID, fid);
        put_message(&e->msg, LOCATION_LINE, &e->sub);
        put_message(&e->out, PROFILE_LOCATION, &e->msg);
        return 0;
}

static int put_sample(Encoder *e, const PprofEntry *x, size_t mapping) {
        uint64_t loc, key, value;
        Buf packed = {};
        int r;

        r = put_location(e, x, mapping, &loc);
        if (r < 0)
                return r;
        put_uint(&e->msg, SAMPLE_LOCATION_ID, loc);
        put_varint(&packed, (uint64_t) x->samples);
        put_varint(&packed, (uint64_t) x->cpu);
        put_message(&e->msg, SAMPLE_VALUE, &packed);
        free(packed.data);
        if (x->phase && *x->phase) {
                if ((r = string_index(e, "phase", &key)) < 0 || (r = string_index(e, x->phase, &value)) < 0)
                        return r;
                put_uint(&e->sub, LABEL_KEY, key);
                put_uint(&e->sub, LABEL_STR, value);
                put_message(&e->msg, SAMPLE_LABEL, &e->sub);
        }
        put_message(&e->out, PROFILE_SAMPLE, &e->msg);
        return 0;
}

static int put_mappings(Encoder *e) {
        for (size_t i = 0; i < e->n_mappings; i++) {
                const Mapping *m = &e->mappings[i];
                uint64_t file, build_id;
                int r;

                if ((r = string_index(e, m->object, &file)) < 0 || (r = string_index(e, m->build_id, &build_id)) < 0)
                        return r;
                put_uint(&e->msg, MAPPING_ID, i + 1);
                put_uint(&e->msg, MAPPING_MEMORY_START, m->start);
                put_uint(&e->msg, MAPPING_MEMORY_LIMIT, m->limit);
                put_uint(&e->msg, MAPPING_FILE_OFFSET, m->offset);
                put_uint(&e->msg, MAPPING_FILENAME, file);
                put_uint(&e->msg, MAPPING_BUILD_ID, build_id);
                /* false asks pprof to name its unnamed addresses from the binary */
                put_uint(&e->msg, MAPPING_HAS_FUNCTIONS, !m->unnamed);
                put_message(&e->out, PROFILE_MAPPING, &e->msg);
        }
        return 0;
}

static int gzip_buf(const Buf *b, char **ret, size_t *ret_size) {
        z_stream z = {};
        uLong bound;
        char *out;

        /* 16 + 15: a gzip header around a full window */
        if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
                return -ENOMEM;
        bound = deflateBound(&z, b->n);
        out = malloc(bound);
        if (!out) {
                deflateEnd(&z);
                return -ENOMEM;
        }
        z.next_in = b->data;
        z.avail_in = (uInt) b->n;
        z.next_out = (Bytef *) out;
        z.avail_out = (uInt) bound;
        if (b->n > UINT32_MAX || deflate(&z, Z_FINISH) != Z_STREAM_END) {
                deflateEnd(&z);
                free(out);
                return -ENOMEM;
        }
        *ret_size = z.total_out;
        deflateEnd(&z);
        *ret = out;
        return 0;
}

int pprof_write(const PprofProfile *p, char **ret, size_t *ret_size) {
        _cleanup_free_ size_t *mapping_of = NULL;
        Encoder e = {};
        uint64_t i64;
        int r;

        e.strings = hashmap_new(&string_hash_ops);
        e.ids = hashmap_new(&string_hash_ops);
        mapping_of = calloc(MAX(p->n_entries, 1u), sizeof(size_t));
        /* the table's first string is "", as profile.proto asks */
        if (!e.strings || !e.ids || !mapping_of || string_index(&e, "", &i64) < 0) {
                r = -ENOMEM;
                goto finish;
        }
        if ((r = layout_mappings(&e, p, mapping_of)) < 0 ||
            (r = put_value_type(&e, &e.out, PROFILE_SAMPLE_TYPE, "samples", "count")) < 0 ||
            (r = put_value_type(&e, &e.out, PROFILE_SAMPLE_TYPE, "cpu", p->cpu_unit ?: "nanoseconds")) < 0)
                goto finish;
        for (size_t i = 0; i < p->n_entries; i++)
                if ((r = put_sample(&e, &p->entries[i], mapping_of[i])) < 0)
                        goto finish;
        if ((r = put_mappings(&e)) < 0 ||
            (r = put_value_type(&e, &e.out, PROFILE_PERIOD_TYPE, "cpu", p->cpu_unit ?: "nanoseconds")) < 0)
                goto finish;
        put_uint(&e.out, PROFILE_TIME_NANOS, (uint64_t) p->time_ns);
        put_uint(&e.out, PROFILE_DURATION_NANOS, (uint64_t) p->duration_ns);
        put_uint(&e.out, PROFILE_PERIOD, (uint64_t) p->period);
        for (const char *const *c = p->comments; c && *c; c++) {
                if ((r = string_index(&e, *c, &i64)) < 0)
                        goto finish;
                put_uint(&e.out, PROFILE_COMMENT, i64);
        }
        /* last: every string is in the table by now */
        for (size_t i = 0; i < e.n_table; i++)
                put_bytes(&e.out, PROFILE_STRING_TABLE, e.table[i], strlen(e.table[i]));
        r = e.out.oom || e.msg.oom || e.sub.oom ? -ENOMEM : gzip_buf(&e.out, ret, ret_size);
finish:
        encoder_done(&e);
        return r;
}
