/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "histogram.h"
#include "macro.h"

struct Histogram {
        ObjectTable *objects;
        Hashmap *rows;          /* HistKey* (inside the row) → HistRow* */
        Hashmap *totals;        /* TotalKey* → TotalRow* */
        Hashmap *strings;       /* interned strings */
        Hashmap *ranks;         /* RankKey* → RankRow* */
        uint64_t ranks_overflowed; /* rank samples not recorded: too many rank rows */
        Hashmap *offsets;       /* OffsetKey* → OffsetRow* */
        size_t n_offsets;       /* of them, at an offset (not HISTOGRAM_OFFSET_OTHER) */
        size_t max_offsets;
        uint64_t offsets_overflowed;
        size_t max_rows;
        uint64_t samples;
        uint64_t overflowed;    /* samples that went to overflow rows */
};

static uint64_t key_hash(const void *k) {
        const HistKey *x = k;
        uint64_t h = hash_u64((uintptr_t) x->job ^ ((uint64_t) (uintptr_t) x->step << 1));

        h = hash_u64(h ^ (uintptr_t) x->comm);
        h = hash_u64(h ^ (uintptr_t) x->phase);
        h = hash_u64(h ^ (uintptr_t) x->obj);
        return hash_u64(h ^ ((uint64_t) x->uid << 8 | (uint64_t) x->kind));
}

static bool key_equal(const void *a, const void *b) {
        const HistKey *x = a, *y = b;
        return x->job == y->job && x->step == y->step && x->comm == y->comm && x->phase == y->phase &&
               x->obj == y->obj && x->uid == y->uid && x->kind == y->kind;
}

static const HashOps key_ops = { key_hash, key_equal };


static uint64_t total_hash(const void *k) {
        const TotalKey *x = k;
        uint64_t h = hash_u64((uintptr_t) x->job ^ ((uint64_t) (uintptr_t) x->step << 1));

        h = hash_u64(h ^ (uintptr_t) x->comm);
        return hash_u64(h ^ x->uid);
}

static bool total_equal(const void *a, const void *b) {
        const TotalKey *x = a, *y = b;
        return x->job == y->job && x->step == y->step && x->comm == y->comm && x->uid == y->uid;
}

static const HashOps total_ops = { total_hash, total_equal };

static uint64_t rank_hash(const void *k) {
        const RankKey *x = k;
        uint64_t h = hash_u64((uintptr_t) x->job ^ ((uint64_t) (uintptr_t) x->step << 1));

        h = hash_u64(h ^ (uintptr_t) x->phase);
        return hash_u64(h ^ x->rank);
}

static bool rank_equal(const void *a, const void *b) {
        const RankKey *x = a, *y = b;
        return x->job == y->job && x->step == y->step && x->phase == y->phase && x->rank == y->rank;
}

static const HashOps rank_ops = { rank_hash, rank_equal };

static uint64_t offset_hash(const void *k) {
        const OffsetKey *x = k;
        uint64_t h = hash_u64((uintptr_t) x->job ^ ((uint64_t) (uintptr_t) x->step << 1));

        h = hash_u64(h ^ (uintptr_t) x->phase);
        h = hash_u64(h ^ (uintptr_t) x->obj);
        return hash_u64(h ^ x->offset);
}

static bool offset_equal(const void *a, const void *b) {
        const OffsetKey *x = a, *y = b;
        return x->offset == y->offset && x->obj == y->obj && x->job == y->job && x->step == y->step &&
               x->phase == y->phase;
}

static const HashOps offset_ops = { offset_hash, offset_equal };

Histogram *histogram_new(ObjectTable *objects, size_t max_rows, size_t max_offsets) {
        Histogram *h = calloc(1, sizeof(*h));

        if (!h)
                return NULL;
        h->objects = objects;
        h->max_rows = max_rows;
        h->max_offsets = max_offsets;
        h->rows = hashmap_new(&key_ops);
        h->totals = hashmap_new(&total_ops);
        h->strings = hashmap_new(&string_hash_ops);
        h->ranks = hashmap_new(&rank_ops);
        h->offsets = hashmap_new(&offset_ops);
        if (!h->rows || !h->totals || !h->strings || !h->ranks || !h->offsets)
                return histogram_free(h);
        return h;
}

void histogram_reset(Histogram *h) {
        OffsetRow *o;
        HistRow *row;
        size_t i;

        /* a row holds a reference to its object, and so does an offset */
        HASHMAP_FOREACH(row, h->rows, i)
                object_unref(h->objects, row->key.obj);
        hashmap_clear_free(h->rows, NULL);
        HASHMAP_FOREACH(o, h->offsets, i)
                object_unref(h->objects, o->key.obj);
        hashmap_clear_free(h->offsets, NULL);
        h->n_offsets = 0;
        h->offsets_overflowed = 0;
        hashmap_clear_free(h->totals, NULL);
        hashmap_clear_free(h->ranks, NULL);
        h->ranks_overflowed = 0;
        hashmap_clear_free(h->strings, NULL);
        h->samples = 0;
        h->overflowed = 0;
}

Histogram *histogram_free(Histogram *h) {
        if (!h)
                return NULL;
        if (h->rows && h->totals && h->strings && h->ranks && h->offsets)
                histogram_reset(h);
        hashmap_free(h->offsets);
        hashmap_free(h->ranks);
        hashmap_free(h->rows);
        hashmap_free(h->totals);
        hashmap_free(h->strings);
        free(h);
        return NULL;
}

static const char *intern(Histogram *h, const char *s) {
        char *p;

        if (!s)
                return NULL;
        p = hashmap_get(h->strings, s);
        if (p)
                return p;
        p = strdup(s);
        if (!p || hashmap_put(h->strings, p, p) < 0) {
                free(p);
                return NULL;
        }
        return p;
}

HistRow *histogram_add(Histogram *h, const HistKey *key, uint64_t n) {
        HistKey k = *key;
        HistRow *row;

        k.job = intern(h, key->job);
        k.step = intern(h, key->step);
        k.comm = intern(h, key->comm ?: "");
        k.phase = intern(h, key->phase ?: "");
        if ((key->job && !k.job) || (key->step && !k.step) || !k.comm || !k.phase)
                return NULL;

        row = hashmap_get(h->rows, &k);
        if (!row && hashmap_size(h->rows) >= h->max_rows) {
                /* Bounded memory under process storms: fold new keys into
                 * one row per kind instead of growing. */
                k = (HistKey) {
                        .comm = intern(h, "[other]"),
                        .phase = intern(h, ""),
                        .obj = object_table_get_special(h->objects, OBJECT_UNKNOWN),
                        .kind = key->kind,
                };
                if (!k.comm || !k.phase)
                        return NULL;
                h->overflowed += n;
                row = hashmap_get(h->rows, &k);
        }
        if (!row) {
                row = calloc(1, sizeof(*row));
                if (!row)
                        return NULL;
                row->key = k;
                row->key.obj = object_ref(k.obj);
                if (hashmap_put(h->rows, &row->key, row) < 0) {
                        object_unref(h->objects, row->key.obj);
                        free(row);
                        return NULL;
                }
        }
        row->samples += n;
        h->samples += n;
        return row;
}

void histogram_add_window(HistRow *row, const struct lmk_sample *s) {
        if (!(s->flags & LMK_SAMPLE_WINDOW))
                return;
        row->window_ns += s->window_ns;
        row->window_samples++;
        for (unsigned i = 0; i < LMK_MAX_COUNTERS; i++)
                if (s->counts_valid & (1u << i)) {
                        row->counts[i] += s->counts[i];
                        row->counted[i]++;
                }
        if (s->flags & LMK_SAMPLE_MULTIPLEXED)
                row->multiplexed++;
}

void histogram_add_burst(HistRow *row, const struct lmk_sample *s) {
        row->burst_samples++;
        row->burst_ns += s->window_ns;
        for (unsigned i = 0; i < LMK_MAX_COUNTERS; i++)
                if (s->counts_valid & (1u << i)) {
                        row->burst_counts[i] += s->counts[i];
                        row->burst_counted[i]++;
                }
}

/* The entry of key (its strings interned in h), made where missing; NULL
 * when out of memory. A new offset beyond max_offsets goes to
 * HISTOGRAM_OFFSET_OTHER of its (job, step, object, phase). */
static OffsetRow *offset_row(Histogram *h, OffsetKey k, uint64_t n) {
        OffsetRow *o = hashmap_get(h->offsets, &k);

        if (o)
                return o;
        if (k.offset != HISTOGRAM_OFFSET_OTHER && h->n_offsets >= h->max_offsets) {
                h->offsets_overflowed += n;
                k.offset = HISTOGRAM_OFFSET_OTHER;
                o = hashmap_get(h->offsets, &k);
                if (o)
                        return o;
        }
        o = calloc(1, sizeof(*o));
        if (!o)
                return NULL;
        o->key = k;
        o->key.obj = object_ref(k.obj);
        if (hashmap_put(h->offsets, &o->key, o) < 0) {
                object_unref(h->objects, o->key.obj);
                free(o);
                return NULL;
        }
        if (k.offset != HISTOGRAM_OFFSET_OTHER)
                h->n_offsets++;
        return o;
}

int histogram_add_offset(Histogram *h, const HistRow *row, uint64_t offset, const struct lmk_sample *s) {
        OffsetRow *o;

        if (h->max_offsets == 0)
                return 0;
        /* the row's strings are interned in h already */
        o = offset_row(h, (OffsetKey) { .job = row->key.job, .step = row->key.step, .phase = row->key.phase,
                                        .obj = row->key.obj, .offset = offset }, 1);
        if (!o)
                return -ENOMEM;
        o->samples++;
        if (s->flags & LMK_SAMPLE_WINDOW) {
                o->window_ns += s->window_ns;
                for (unsigned i = 0; i < LMK_MAX_COUNTERS; i++)
                        if (s->counts_valid & (1u << i)) {
                                o->counts[i] += s->counts[i];
                                o->counted |= UINT32_C(1) << i;
                        }
        }
        return 0;
}

OffsetRow **histogram_offsets(const Histogram *h, size_t *ret_n) {
        size_t n = hashmap_size(h->offsets), i, k = 0;
        OffsetRow **v, *o;

        v = malloc((n ? n : 1) * sizeof(*v));
        if (!v)
                return NULL;
        HASHMAP_FOREACH(o, h->offsets, i)
                v[k++] = o;
        *ret_n = n;
        return v;
}

uint64_t histogram_offsets_overflowed(const Histogram *h) {
        return h->offsets_overflowed;
}

TotalRow *histogram_add_total(Histogram *h, const TotalKey *key, uint64_t cpu_time_ns, const uint64_t *counts,
                              uint64_t switches) {
        TotalKey k = *key;
        TotalRow *t;

        k.job = intern(h, key->job);
        k.step = intern(h, key->step);
        k.comm = intern(h, key->comm ?: "");
        if ((key->job && !k.job) || (key->step && !k.step) || !k.comm)
                return NULL;
        t = hashmap_get(h->totals, &k);
        if (!t) {
                t = calloc(1, sizeof(*t));
                if (!t)
                        return NULL;
                t->key = k;
                if (hashmap_put(h->totals, &t->key, t) < 0) {
                        free(t);
                        return NULL;
                }
        }
        t->cpu_time_ns += cpu_time_ns;
        for (unsigned i = 0; i < LMK_MAX_COUNTERS; i++)
                t->counts[i] += counts[i];
        t->switches += switches;
        return t;
}

static int total_cmp(const void *a, const void *b) {
        const TotalRow *x = *(TotalRow *const *) a, *y = *(TotalRow *const *) b;
        int c;

        if (x->cpu_time_ns != y->cpu_time_ns)
                return CMP(y->cpu_time_ns, x->cpu_time_ns);
        if ((c = strcmp_null(x->key.job, y->key.job)) || (c = strcmp(x->key.comm, y->key.comm)))
                return c;
        return CMP(x->key.uid, y->key.uid);
}

TotalRow **histogram_sorted_totals(const Histogram *h, size_t *ret_n) {
        size_t n = hashmap_size(h->totals), i, k = 0;
        TotalRow **v, *t;

        v = malloc((n ? n : 1) * sizeof(*v));
        if (!v)
                return NULL;
        HASHMAP_FOREACH(t, h->totals, i)
                v[k++] = t;
        qsort(v, n, sizeof(*v), total_cmp);
        *ret_n = n;
        return v;
}

RankRow *histogram_add_rank(Histogram *h, const RankKey *key, uint64_t n, uint64_t comm, double first, double last) {
        RankKey k = *key;
        RankRow *r;

        k.job = intern(h, key->job);
        k.step = intern(h, key->step);
        k.phase = intern(h, key->phase ?: "");
        if (!k.job || (key->step && !k.step) || !k.phase)
                return NULL;
        r = hashmap_get(h->ranks, &k);
        if (!r) {
                if (hashmap_size(h->ranks) >= HISTOGRAM_MAX_RANK_ROWS) {
                        h->ranks_overflowed += n;
                        return NULL;
                }
                r = calloc(1, sizeof(*r));
                if (!r)
                        return NULL;
                r->key = k;
                r->first = first;
                r->last = last;
                if (hashmap_put(h->ranks, &r->key, r) < 0) {
                        free(r);
                        return NULL;
                }
        }
        r->samples += n;
        r->comm_samples += comm;
        r->first = MIN(r->first, first);
        r->last = MAX(r->last, last);
        return r;
}

static int rank_cmp(const void *a, const void *b) {
        const RankRow *x = *(RankRow *const *) a, *y = *(RankRow *const *) b;
        int c;

        if ((c = strcmp(x->key.job, y->key.job)) || (c = strcmp_null(x->key.step, y->key.step)))
                return c;
        if (x->key.rank != y->key.rank)
                return CMP(x->key.rank, y->key.rank);
        return strcmp(x->key.phase, y->key.phase);
}

RankRow **histogram_sorted_ranks(const Histogram *h, size_t *ret_n) {
        size_t n = hashmap_size(h->ranks), i, k = 0;
        RankRow **v, *r;

        v = malloc((n ? n : 1) * sizeof(*v));
        if (!v)
                return NULL;
        HASHMAP_FOREACH(r, h->ranks, i)
                v[k++] = r;
        qsort(v, n, sizeof(*v), rank_cmp);
        *ret_n = n;
        return v;
}

uint64_t histogram_ranks_overflowed(const Histogram *h) {
        return h->ranks_overflowed;
}

int histogram_merge(Histogram *dst, const Histogram *src) {
        OffsetRow *o;
        HistRow *row;
        TotalRow *t;
        RankRow *r;
        size_t i;

        HASHMAP_FOREACH(row, src->rows, i) {
                HistRow *d = histogram_add(dst, &row->key, row->samples);

                if (!d)
                        return -ENOMEM;
                d->window_ns += row->window_ns;
                d->window_samples += row->window_samples;
                d->multiplexed += row->multiplexed;
                d->burst_samples += row->burst_samples;
                d->burst_ns += row->burst_ns;
                for (unsigned c = 0; c < LMK_MAX_COUNTERS; c++) {
                        d->counts[c] += row->counts[c];
                        d->counted[c] += row->counted[c];
                        d->burst_counts[c] += row->burst_counts[c];
                        d->burst_counted[c] += row->burst_counted[c];
                }
        }
        HASHMAP_FOREACH(o, src->offsets, i) {
                OffsetKey k = o->key;
                OffsetRow *d;

                if (dst->max_offsets == 0)
                        break;
                k.job = intern(dst, o->key.job);
                k.step = intern(dst, o->key.step);
                k.phase = intern(dst, o->key.phase);
                if ((o->key.job && !k.job) || (o->key.step && !k.step) || !k.phase)
                        return -ENOMEM;
                d = offset_row(dst, k, o->samples);
                if (!d)
                        return -ENOMEM;
                d->samples += o->samples;
                d->window_ns += o->window_ns;
                d->counted |= o->counted;
                for (unsigned c = 0; c < LMK_MAX_COUNTERS; c++)
                        d->counts[c] += o->counts[c];
        }
        dst->offsets_overflowed += src->offsets_overflowed;
        HASHMAP_FOREACH(t, src->totals, i)
                if (!histogram_add_total(dst, &t->key, t->cpu_time_ns, t->counts, t->switches))
                        return -ENOMEM;
        HASHMAP_FOREACH(r, src->ranks, i)
                if (!histogram_add_rank(dst, &r->key, r->samples, r->comm_samples, r->first, r->last) &&
                    hashmap_size(dst->ranks) < HISTOGRAM_MAX_RANK_ROWS)
                        return -ENOMEM;
        dst->ranks_overflowed += src->ranks_overflowed;
        return 0;
}

size_t histogram_rows(const Histogram *h) {
        return hashmap_size(h->rows);
}

uint64_t histogram_samples(const Histogram *h) {
        return h->samples;
}

uint64_t histogram_overflowed(const Histogram *h) {
        return h->overflowed;
}

static int row_cmp(const void *a, const void *b) {
        const HistRow *x = *(HistRow *const *) a, *y = *(HistRow *const *) b;
        int c;

        if (x->samples != y->samples)
                return CMP(y->samples, x->samples);
        if ((c = strcmp_null(x->key.job, y->key.job)) || (c = strcmp_null(x->key.step, y->key.step)) ||
            (c = strcmp(x->key.comm, y->key.comm)) || (c = strcmp(x->key.obj->path, y->key.obj->path)) ||
            (c = strcmp(x->key.phase, y->key.phase)))
                return c;
        if (x->key.uid != y->key.uid)
                return CMP(x->key.uid, y->key.uid);
        return (int) x->key.kind - (int) y->key.kind;
}

HistRow **histogram_sorted(const Histogram *h) {
        size_t n = hashmap_size(h->rows), i, k = 0;
        HistRow **v, *row;

        v = malloc((n ? n : 1) * sizeof(*v));
        if (!v)
                return NULL;
        HASHMAP_FOREACH(row, h->rows, i)
                v[k++] = row;
        qsort(v, n, sizeof(*v), row_cmp);
        return v;
}

