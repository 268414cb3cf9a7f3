/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The site's function sums in memory, their packed rows of
 * function_sums_pending, and their sums (site-sums.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db/sql/site-sums.h"
#include "db/sql/varint.h"
#include "db/storage.h"

#define NAME_MAX_BYTES 4096

enum {
        HAS_CYCLES = 1 << 0,
        HAS_INSTRUCTIONS = 1 << 1,
};

/* What an entry of each part holds (site-sums.h). */
static const struct {
        unsigned keys;          /* a; a, b; a, b, c */
        bool cpu, counters;     /* counters: and jobs */
} parts[_SITE_PARTS] = {
        [SITE_FUNCTION] = { 1, true, true },
        [SITE_KEY] = { 3, true, true },
        [SITE_SCOPE] = { 2, true, false },
        [SITE_TOTAL] = { 0, true, false },
        [SITE_USER] = { 2, false, false },
        [SITE_APP] = { 2, false, false },
};

/* the most bytes an entry takes: keys, samples, counters, jobs as
 * varints, the double, the byte */
#define ENTRY_MAX_BYTES (7 * VARINT_MAX_BYTES + 8 + 1)

int site_sums_init(SiteSums *s, int64_t day, const size_t max[_SITE_PARTS], size_t max_names) {
        int r;

        *s = (SiteSums) { .day = day, .max_names = max_names };
        for (size_t p = 0; p < _SITE_PARTS; p++)
                if ((r = acc_map_init(&s->parts[p], max[p])) < 0)
                        return r;
        s->name_index = hashmap_new(&string_hash_ops);
        s->names = calloc(MAX(max_names, (size_t) 1), sizeof(char *));
        return s->name_index && s->names ? 0 : -ENOMEM;
}

void site_sums_done(SiteSums *s) {
        for (size_t p = 0; p < _SITE_PARTS; p++)
                acc_map_done(&s->parts[p]);
        hashmap_free(s->name_index);
        for (size_t i = 0; s->names && i < s->n_names; i++)
                free(s->names[i]);
        free(s->names);
        *s = (SiteSums) {};
}

int site_sums_name(SiteSums *s, const char *name, int64_t *ret) {
        uintptr_t found = (uintptr_t) hashmap_get(s->name_index, name);
        char *copy;
        int r;

        if (found > 0) {
                *ret = (int64_t) (found - 1);
                return 0;
        }
        if (s->n_names >= s->max_names)
                return -ENOBUFS;
        copy = strdup(name);
        if (!copy)
                return -ENOMEM;
        r = hashmap_put(s->name_index, copy, (void *) (uintptr_t) (s->n_names + 1));
        if (r < 0) {
                free(copy);
                return r;
        }
        s->names[s->n_names] = copy;
        *ret = (int64_t) s->n_names++;
        return 0;
}

void site_sums_row_done(SiteSumsRow *r) {
        free(r->items);
        for (size_t i = 0; r->names && i < r->n_names; i++)
                free(r->names[i]);
        free(r->names);
        *r = (SiteSumsRow) {};
}

static int compare_keys(const Acc *p, const Acc *q) {
        return CMP(p->a, q->a) ?: CMP(p->b, q->b) ?: CMP(p->c, q->c);
}

static int compare_abc(const void *x, const void *y, void *userdata) {
        const Acc *pool = userdata;

        return compare_keys(&pool[*(const size_t *) x], &pool[*(const size_t *) y]);
}

static int compare_bca(const void *x, const void *y, void *userdata) {
        const Acc *pool = userdata, *p = &pool[*(const size_t *) x], *q = &pool[*(const size_t *) y];

        return CMP(p->b, q->b) ?: CMP(p->c, q->c) ?: CMP(p->a, q->a);
}

size_t *site_sums_order(const AccMap *m, bool by_key) {
        size_t *order = malloc(MAX(m->n, (size_t) 1) * sizeof(size_t));

        if (!order)
                return NULL;
        for (size_t i = 0; i < m->n; i++)
                order[i] = i;
        qsort_r(order, m->n, sizeof(size_t), by_key ? compare_bca : compare_abc, m->pool);
        return order;
}

static void put_double(uint8_t *p, size_t *len, double v) {
        uint64_t bits;

        memcpy(&bits, &v, sizeof(bits));
        for (int b = 0; b < 8; b++)
                p[(*len)++] = (uint8_t) (bits >> (8 * b));
}

static void put_entry(uint8_t *p, size_t *len, SitePart part, const Acc *a) {
        const int64_t keys[] = { a->a, a->b, a->c };

        for (unsigned k = 0; k < parts[part].keys; k++)
                varint_put(p, len, keys[k]);
        varint_put(p, len, a->samples);
        if (parts[part].cpu)
                put_double(p, len, a->cpu_seconds);
        if (parts[part].counters) {
                uint8_t which = (a->cycles != STORAGE_NULL ? HAS_CYCLES : 0) |
                                (a->instructions != STORAGE_NULL ? HAS_INSTRUCTIONS : 0);

                p[(*len)++] = which;
                if (which & HAS_CYCLES)
                        varint_put(p, len, a->cycles);
                if (which & HAS_INSTRUCTIONS)
                        varint_put(p, len, a->instructions);
                varint_put(p, len, a->jobs);
        }
}

static bool cpu_ok(double v) {
        return isfinite(v) && v >= 0 && v <= SITE_SUMS_CPU_MAX;
}

int site_sums_encode(const SiteSums *s, uint8_t **ret, size_t *ret_len) {
        size_t max = 1 + 2 * VARINT_MAX_BYTES, len = 0;
        _cleanup_free_ uint8_t *p = NULL;

        for (size_t i = 0; i < s->n_names; i++)
                max += VARINT_MAX_BYTES + strlen(s->names[i]);
        for (size_t k = 0; k < _SITE_PARTS; k++) {
                max += VARINT_MAX_BYTES + s->parts[k].n * ENTRY_MAX_BYTES;
                for (size_t i = 0; i < s->parts[k].n; i++)
                        if (!cpu_ok(s->parts[k].pool[i].cpu_seconds))
                                return -EOVERFLOW;
        }
        p = malloc(max);
        if (!p)
                return -ENOMEM;
        p[len++] = SITE_SUMS_VERSION;
        varint_put(p, &len, s->day);
        varint_put(p, &len, (int64_t) s->n_names);
        for (size_t i = 0; i < s->n_names; i++) {
                size_t n = strlen(s->names[i]);

                varint_put(p, &len, (int64_t) n);
                memcpy(p + len, s->names[i], n);
                len += n;
        }
        for (SitePart k = 0; k < _SITE_PARTS; k++) {
                const AccMap *m = &s->parts[k];
                /* in key order: what the decoder checks, and the order the
                 * fold merges them in */
                _cleanup_free_ size_t *order = site_sums_order(m, false);

                if (!order)
                        return -ENOMEM;
                varint_put(p, &len, (int64_t) m->n);
                for (size_t i = 0; i < m->n; i++)
                        put_entry(p, &len, k, &m->pool[order[i]]);
        }
        *ret_len = len;
        *ret = TAKE_PTR(p);
        return 0;
}

/* A varint that is a count or id: ≥ 0. */
static int get_value(const uint8_t *data, size_t len, size_t *offset, int64_t *ret) {
        int r = varint_get(data, len, offset, ret);

        if (r < 0)
                return r;
        return *ret < 0 ? -EBADMSG : 0;
}

static int get_entry(const uint8_t *data, size_t len, size_t *offset, SitePart part, size_t n_names, Acc *ret) {
        Acc x = { .cycles = STORAGE_NULL, .instructions = STORAGE_NULL, .cpu_time_ns = STORAGE_NULL };
        int64_t *keys[] = { &x.a, &x.b, &x.c };
        int r;

        for (unsigned k = 0; k < parts[part].keys; k++)
                if ((r = get_value(data, len, offset, keys[k])) < 0)
                        return r;
        if ((part == SITE_USER || part == SITE_APP) && (uint64_t) x.b >= n_names)
                return -EBADMSG;
        if ((r = get_value(data, len, offset, &x.samples)) < 0)
                return r;
        if (parts[part].cpu) {
                uint64_t bits = 0;

                if (len - *offset < 8)
                        return -EBADMSG;
                for (int b = 0; b < 8; b++)
                        bits |= (uint64_t) data[(*offset)++] << (8 * b);
                memcpy(&x.cpu_seconds, &bits, sizeof(bits));
                /* a sum that is not finite would make every sum it joins so
                 * (bind_sum() refuses it) */
                if (!cpu_ok(x.cpu_seconds))
                        return -EBADMSG;
        }
        if (parts[part].counters) {
                uint8_t which;

                if (*offset >= len)
                        return -EBADMSG;
                which = data[(*offset)++];
                if (which & ~(HAS_CYCLES | HAS_INSTRUCTIONS))
                        return -EBADMSG;
                if (((which & HAS_CYCLES) && (r = get_value(data, len, offset, &x.cycles)) < 0) ||
                    ((which & HAS_INSTRUCTIONS) && (r = get_value(data, len, offset, &x.instructions)) < 0) ||
                    (r = get_value(data, len, offset, &x.jobs)) < 0)
                        return r;
        }
        *ret = x;
        return 0;
}

static int decode(const uint8_t *data, size_t len, SiteSumsRow *ret) {
        size_t offset = 1, total = 0, n_items = 0;
        int64_t v;
        int r;

        if (len < 1 || data[0] != SITE_SUMS_VERSION)
                return -EBADMSG;
        if ((r = get_value(data, len, &offset, &ret->day)) < 0)
                return r;
        if (ret->day % 86400 != 0)
                return -EBADMSG;
        /* each name takes two bytes at least: no allocation past the value */
        if ((r = get_value(data, len, &offset, &v)) < 0)
                return r;
        if ((uint64_t) v > (len - offset) / 2)
                return -EBADMSG;
        ret->names = calloc(MAX((size_t) v, (size_t) 1), sizeof(char *));
        if (!ret->names)
                return -ENOMEM;
        for (int64_t i = 0; i < v; i++) {
                int64_t n;

                if ((r = get_value(data, len, &offset, &n)) < 0)
                        return r;
                if (n < 1 || n > NAME_MAX_BYTES || (uint64_t) n > len - offset || memchr(data + offset, 0, (size_t) n))
                        return -EBADMSG;
                ret->names[ret->n_names] = strndup((const char *) data + offset, (size_t) n);
                if (!ret->names[ret->n_names])
                        return -ENOMEM;
                ret->n_names++;
                offset += (size_t) n;
        }
        /* each entry takes a byte at least: the items allocated as the
         * counts come, never past the value's length */
        for (SitePart k = 0; k < _SITE_PARTS; k++) {
                int64_t n;

                if ((r = get_value(data, len, &offset, &n)) < 0)
                        return r;
                if ((uint64_t) n > len - offset)
                        return -EBADMSG;
                ret->n[k] = (size_t) n;
                if (n > 0) {
                        Acc *items = reallocarray(ret->items, total + (size_t) n, sizeof(Acc));

                        if (!items)
                                return -ENOMEM;
                        ret->items = items;
                        total += (size_t) n;
                }
                for (int64_t i = 0; i < n; i++) {
                        Acc *x = &ret->items[n_items];

                        if ((r = get_entry(data, len, &offset, k, ret->n_names, x)) < 0)
                                return r;
                        if (i > 0 && compare_keys(x - 1, x) >= 0)
                                return -EBADMSG;
                        n_items++;
                }
        }
        /* one total at most: it has no key */
        if (ret->n[SITE_TOTAL] > 1 || offset != len)
                return -EBADMSG;
        return 0;
}

int site_sums_decode(const uint8_t *data, size_t len, SiteSumsRow *ret) {
        int r;

        *ret = (SiteSumsRow) {};
        r = decode(data, len, ret);
        if (r < 0) {
                site_sums_row_done(ret);
                return r == -ENOMEM ? r : -EBADMSG;
        }
        return 0;
}

/* x's key in s: a name's index is s's, not the row's. */
static Acc key_in(SitePart part, const Acc *x, const int64_t *names) {
        Acc k = { .a = x->a, .b = x->b, .c = x->c };

        if (part == SITE_USER || part == SITE_APP)
                k.b = names[x->b];
        return k;
}

static bool counter_fits(int64_t sum, int64_t add) {
        int64_t t;

        return sum == STORAGE_NULL || add == STORAGE_NULL || !__builtin_add_overflow(sum, add, &t);
}

static bool fits(const Acc *sum, const Acc *add) {
        int64_t t;

        return cpu_ok(sum->cpu_seconds + add->cpu_seconds) &&
               !__builtin_add_overflow(sum->samples, add->samples, &t) &&
               !__builtin_add_overflow(sum->jobs, add->jobs, &t) && counter_fits(sum->cycles, add->cycles) &&
               counter_fits(sum->instructions, add->instructions);
}

int site_sums_add(SiteSums *s, const SiteSumsRow *row) {
        _cleanup_free_ int64_t *names = calloc(MAX(row->n_names, (size_t) 1), sizeof(int64_t));
        int r;

        if (!names)
                return -ENOMEM;
        for (size_t i = 0; i < row->n_names; i++)
                if ((r = site_sums_name(s, row->names[i], &names[i])) < 0)
                        return r;
        /* first whether all of it fits: a row's keys are distinct, so each
         * sum gets one addition at most */
        for (SitePart k = 0; k < _SITE_PARTS; k++) {
                AccMap *m = &s->parts[k];
                size_t n, added = 0;
                const Acc *items = site_sums_row_part(row, k, &n);

                for (size_t i = 0; i < n; i++) {
                        Acc key = key_in(k, &items[i], names);
                        const Acc *sum = acc_find(m, key.a, key.b, key.c);

                        if (!sum)
                                added++;
                        else if (!fits(sum, &items[i]))
                                return -EOVERFLOW;
                }
                if (m->n + added > m->max)
                        return -ENOBUFS;
        }
        for (SitePart k = 0; k < _SITE_PARTS; k++) {
                size_t n;
                const Acc *items = site_sums_row_part(row, k, &n);

                for (size_t i = 0; i < n; i++) {
                        Acc key = key_in(k, &items[i], names);

                        if ((r = acc_add_sums(&s->parts[k], key.a, key.b, key.c, &items[i])) < 0)
                                return r;
                }
        }
        return 0;
}
