/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A batch's named events and burst windows summed per key in memory. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "db/sql/rollup-events.h"

static uint64_t event_acc_hash(const void *k) {
        const EventAcc *x = k;
        uint64_t h = 0;

        for (size_t i = 0; i < ELEMENTSOF(x->key); i++)
                h = (h ^ (uint64_t) x->key[i]) * UINT64_C(0x9e3779b97f4a7c15);
        return hash_u64(h);
}

static bool event_acc_equal(const void *p, const void *q) {
        return memcmp(((const EventAcc *) p)->key, ((const EventAcc *) q)->key, sizeof(((EventAcc *) 0)->key)) == 0;
}

static const HashOps event_acc_hash_ops = { event_acc_hash, event_acc_equal };

int event_map_init(EventMap *m, size_t max) {
        *m = (EventMap) { .max = max };
        if (max == 0)
                return 0;
        m->map = hashmap_new(&event_acc_hash_ops);
        m->pool = calloc(max, sizeof(EventAcc));
        return m->map && m->pool ? 0 : -ENOMEM;
}

void event_map_done(EventMap *m) {
        hashmap_free(m->map);
        free(m->pool);
        *m = (EventMap) {};
}

void event_map_reset(EventMap *m) {
        if (m->map)
                hashmap_clear(m->map);
        m->n = 0;
}

int event_map_get(EventMap *m, int64_t a, int64_t b, int64_t c, int64_t d, EventAcc **ret) {
        EventAcc key = { .key = { a, b, c, d } }, *x;
        int r;

        x = m->map ? hashmap_get(m->map, &key) : NULL;
        if (!x) {
                if (m->n >= m->max)
                        return -ENOBUFS;
                x = &m->pool[m->n++];
                *x = (EventAcc) { .key = { a, b, c, d }, .exact_count = STORAGE_NULL };
                r = hashmap_put(m->map, x, x);
                if (r < 0)
                        return r;
        }
        *ret = x;
        return 0;
}
