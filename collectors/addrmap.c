/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "addrmap.h"
#include "macro.h"

static int reserve(AddrMap *m, size_t extra) {
        Mapping *v;
        size_t na;

        if (m->n + extra <= m->alloc)
                return 0;
        na = MAX(m->alloc * 2, m->n + extra);
        na = MAX(na, (size_t) 8);
        v = realloc(m->v, na * sizeof(*v));
        if (!v)
                return -ENOMEM;
        m->v = v;
        m->alloc = na;
        return 0;
}

/* Index of the first mapping whose end is above addr. */
static size_t lower_bound(const AddrMap *m, uint64_t addr) {
        size_t lo = 0, hi = m->n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (m->v[mid].end <= addr)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

int addrmap_remove(ObjectTable *t, AddrMap *m, uint64_t start, uint64_t end) {
        size_t i;
        int r;

        if (end <= start)
                return -EINVAL;
        /* One split may add a mapping: reserve before changing anything. */
        r = reserve(m, 1);
        if (r < 0)
                return r;

        i = lower_bound(m, start);
        while (i < m->n && m->v[i].start < end) {
                Mapping *x = &m->v[i];

                if (x->start < start && x->end > end) {
                        /* the hole is inside x: split it in two */
                        Mapping tail = *x;

                        tail.pgoff += end - x->start;
                        tail.start = end;
                        object_ref(tail.obj);
                        x->end = start;
                        memmove(&m->v[i + 2], &m->v[i + 1], (m->n - i - 1) * sizeof(*x));
                        m->v[i + 1] = tail;
                        m->n++;
                        return 0;
                }
                if (x->start < start) {
                        x->end = start;         /* keep the head */
                        i++;
                } else if (x->end > end) {
                        x->pgoff += end - x->start; /* keep the tail */
                        x->start = end;
                        i++;
                } else {
                        object_unref(t, x->obj);
                        memmove(x, x + 1, (m->n - i - 1) * sizeof(*x));
                        m->n--;
                }
        }
        return 0;
}

int addrmap_insert(ObjectTable *t, AddrMap *m, uint64_t start, uint64_t end, uint64_t pgoff, Object *obj) {
        size_t i;
        int r;

        if (end <= start || !obj)
                return -EINVAL;
        r = addrmap_remove(t, m, start, end);
        if (r < 0)
                return r;
        r = reserve(m, 1);
        if (r < 0)
                return r;
        i = lower_bound(m, start);
        memmove(&m->v[i + 1], &m->v[i], (m->n - i) * sizeof(*m->v));
        m->v[i] = (Mapping) { start, end, pgoff, object_ref(obj) };
        m->n++;
        return 0;
}

const Mapping *addrmap_find(const AddrMap *m, uint64_t addr) {
        size_t i = lower_bound(m, addr);

        if (i < m->n && m->v[i].start <= addr)
                return &m->v[i];
        return NULL;
}

int addrmap_copy(AddrMap *dst, const AddrMap *src) {
        Mapping *v = NULL;

        if (src->n > 0) {
                v = malloc(src->n * sizeof(*v));
                if (!v)
                        return -ENOMEM;
                memcpy(v, src->v, src->n * sizeof(*v));
                for (size_t i = 0; i < src->n; i++)
                        object_ref(v[i].obj);
        }
        *dst = (AddrMap) { v, src->n, src->n };
        return 0;
}

void addrmap_clear(ObjectTable *t, AddrMap *m) {
        for (size_t i = 0; i < m->n; i++)
                object_unref(t, m->v[i].obj);
        free(m->v);
        *m = (AddrMap) {};
}
