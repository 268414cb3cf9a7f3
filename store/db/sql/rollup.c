/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A batch's rows summed per rollup key in memory, so that each rollup row
 * is written once per batch, not once per input row. */
#include <errno.h>
#include <stdlib.h>

#include "db/sql/rollup.h"

static uint64_t acc_hash(const void *k) {
        const Acc *x = k;

        return hash_u64(((uint64_t) x->a * UINT64_C(0x9e3779b97f4a7c15) ^ (uint64_t) x->b) *
                        UINT64_C(0x9e3779b97f4a7c15) ^ (uint64_t) x->c);
}

static bool acc_equal(const void *p, const void *q) {
        const Acc *x = p, *y = q;

        return x->a == y->a && x->b == y->b && x->c == y->c;
}

static const HashOps acc_hash_ops = { acc_hash, acc_equal };

void acc_map_done(AccMap *m) {
        hashmap_free(m->map);
        free(m->pool);
}

int acc_map_init(AccMap *m, size_t max) {
        *m = (AccMap) { .max = MAX(max, (size_t) 1) };
        m->map = hashmap_new(&acc_hash_ops);
        m->pool = calloc(m->max, sizeof(Acc));
        return m->map && m->pool ? 0 : -ENOMEM;
}

void acc_map_reset(AccMap *m) {
        hashmap_clear(m->map);
        m->n = 0;
}

void add_counter(int64_t *sum, int64_t v) {
        if (v == STORAGE_NULL)
                return;
        *sum = *sum == STORAGE_NULL ? v : *sum + v;
}

/* The sums of the key, empty when new; -ENOBUFS beyond the map's keys. */
static int acc_get(AccMap *m, int64_t a, int64_t b, int64_t c, Acc **ret) {
        Acc key = { .a = a, .b = b, .c = c }, *x;
        int r;

        x = hashmap_get(m->map, &key);
        if (!x) {
                if (m->n >= m->max)
                        return -ENOBUFS;
                x = &m->pool[m->n++];
                *x = (Acc) { .a = a, .b = b, .c = c, .cpu_time_ns = STORAGE_NULL, .cycles = STORAGE_NULL,
                             .instructions = STORAGE_NULL };
                r = hashmap_put(m->map, x, x);
                if (r < 0)
                        return r;
        }
        *ret = x;
        return 0;
}

int acc_add(AccMap *m, int64_t a, int64_t b, const BatchRow *row, double cpu_seconds) {
        Acc *x;
        int r = acc_get(m, a, b, 0, &x);

        if (r < 0)
                return r;
        x->samples += row->samples;
        x->multiplexed_samples += row->multiplexed_samples;
        x->cpu_seconds += cpu_seconds;
        add_counter(&x->cpu_time_ns, row->cpu_time_ns);
        add_counter(&x->cycles, row->cycles);
        add_counter(&x->instructions, row->instructions);
        return 0;
}

int acc_add_function(AccMap *m, int64_t a, int64_t b, int64_t c, const BatchFunction *f, double cpu_seconds,
                     Acc **ret) {
        Acc *x;
        int r = acc_get(m, a, b, c, &x);

        if (r < 0)
                return r;
        /* within the batch's totals, which fit (batch-parse.c) */
        x->samples += f->samples;
        x->cpu_seconds += cpu_seconds;
        add_counter(&x->cycles, f->cycles);
        add_counter(&x->instructions, f->instructions);
        if (ret)
                *ret = x;
        return 0;
}

const Acc *acc_find(const AccMap *m, int64_t a, int64_t b, int64_t c) {
        Acc key = { .a = a, .b = b, .c = c };

        return hashmap_get(m->map, &key);
}

int acc_add_sums(AccMap *m, int64_t a, int64_t b, int64_t c, const Acc *x) {
        Acc *sum;
        int r = acc_get(m, a, b, c, &sum);

        if (r < 0)
                return r;
        sum->samples += x->samples;
        sum->cpu_seconds += x->cpu_seconds;
        add_counter(&sum->cycles, x->cycles);
        add_counter(&sum->instructions, x->instructions);
        sum->jobs += x->jobs;
        return 0;
}
