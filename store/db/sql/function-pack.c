/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A job's function sums of one object, packed (function-pack.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "db/sql/function-pack.h"
#include "db/sql/varint.h"
#include "db/storage.h"

/* phase, function, samples, counters as varints, the double, the byte */
#define ENTRY_MAX_BYTES (5 * VARINT_MAX_BYTES + 8 + 1)

enum {
        HAS_CYCLES = 1 << 0,
        HAS_INSTRUCTIONS = 1 << 1,
};

void function_sums_done(JobFunctionSums *s) {
        free(s->items);
        *s = (JobFunctionSums) {};
}

static int reserve(JobFunctionSums *s, size_t n) {
        JobFunctionSum *items;
        size_t want;

        if (s->alloc >= n)
                return 0;
        want = MAX(n, MAX(s->alloc * 2, (size_t) 16));
        items = reallocarray(s->items, want, sizeof(JobFunctionSum));
        if (!items)
                return -ENOMEM;
        s->items = items;
        s->alloc = want;
        return 0;
}

int function_sums_append(JobFunctionSums *s, const JobFunctionSum *x) {
        int r = reserve(s, s->n + 1);

        if (r < 0)
                return r;
        s->items[s->n++] = *x;
        return 0;
}

static int compare_key(int64_t phase_id, int64_t function_id, const JobFunctionSum *y) {
        if (phase_id != y->phase_id)
                return phase_id < y->phase_id ? -1 : 1;
        return (function_id > y->function_id) - (function_id < y->function_id);
}

static int compare_sums(const void *a, const void *b) {
        const JobFunctionSum *x = a;

        return compare_key(x->phase_id, x->function_id, b);
}

/* A counter's sum as the stored sums' upserts add it (ADD_NULLABLE in
 * statements.c); false when it would overflow (FITS: NULL counts as 0). */
static bool add_counter(int64_t *sum, int64_t added) {
        if (added == STORAGE_NULL)
                return true;
        if (*sum == STORAGE_NULL) {
                *sum = added;
                return true;
        }
        return !__builtin_add_overflow(*sum, added, sum);
}

static bool add_sums(JobFunctionSum *x, const JobFunctionSum *y) {
        x->cpu_seconds += y->cpu_seconds;
        return !__builtin_add_overflow(x->samples, y->samples, &x->samples) &&
               add_counter(&x->cycles, y->cycles) && add_counter(&x->instructions, y->instructions);
}

void function_sums_sort(JobFunctionSums *s) {
        size_t n = 0;

        if (s->n == 0)
                return;
        qsort(s->items, s->n, sizeof(JobFunctionSum), compare_sums);
        /* within one batch's totals, which fit (batch-parse.c) */
        for (size_t i = 0; i < s->n; i++)
                if (n > 0 && compare_sums(&s->items[n - 1], &s->items[i]) == 0)
                        (void) add_sums(&s->items[n - 1], &s->items[i]);
                else
                        s->items[n++] = s->items[i];
        s->n = n;
}

const JobFunctionSum *function_sums_find(const JobFunctionSums *s, int64_t phase_id, int64_t function_id) {
        size_t lo = 0, hi = s->n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = compare_key(phase_id, function_id, &s->items[mid]);

                if (c == 0)
                        return &s->items[mid];
                if (c < 0)
                        hi = mid;
                else
                        lo = mid + 1;
        }
        return NULL;
}

int function_sums_merge(JobFunctionSums *stored, const JobFunctionSums *added) {
        JobFunctionSums m = {};
        size_t i = 0, j = 0;
        int r;

        r = reserve(&m, stored->n + added->n);
        if (r < 0)
                return r;
        while (i < stored->n || j < added->n) {
                int c = i == stored->n ? 1 : j == added->n ? -1 : compare_sums(&stored->items[i], &added->items[j]);

                if (c < 0)
                        m.items[m.n++] = stored->items[i++];
                else if (c > 0)
                        m.items[m.n++] = added->items[j++];
                else {
                        m.items[m.n] = stored->items[i++];
                        if (!add_sums(&m.items[m.n++], &added->items[j++])) {
                                function_sums_done(&m);
                                return -EOVERFLOW;
                        }
                }
        }
        function_sums_done(stored);
        *stored = m;
        return 0;
}

int function_pack_encode(const JobFunctionSums *s, uint8_t **ret, size_t *ret_len) {
        uint8_t *p;
        size_t len = 0;

        if (s->n > (SIZE_MAX - 1) / ENTRY_MAX_BYTES)
                return -ENOMEM;
        p = malloc(1 + s->n * ENTRY_MAX_BYTES);
        if (!p)
                return -ENOMEM;
        p[len++] = FUNCTION_PACK_VERSION;
        for (size_t i = 0; i < s->n; i++) {
                const JobFunctionSum *x = &s->items[i], *prev = i > 0 ? &s->items[i - 1] : NULL;
                int64_t phase = prev ? x->phase_id - prev->phase_id : x->phase_id;
                uint8_t which = (x->cycles != STORAGE_NULL ? HAS_CYCLES : 0) |
                                (x->instructions != STORAGE_NULL ? HAS_INSTRUCTIONS : 0);
                uint64_t bits;

                varint_put(p, &len, phase);
                varint_put(p, &len, prev && phase == 0 ? x->function_id - prev->function_id : x->function_id);
                varint_put(p, &len, x->samples);
                memcpy(&bits, &x->cpu_seconds, sizeof(bits));
                for (int b = 0; b < 8; b++)
                        p[len++] = (uint8_t) (bits >> (8 * b));
                p[len++] = which;
                if (which & HAS_CYCLES)
                        varint_put(p, &len, x->cycles);
                if (which & HAS_INSTRUCTIONS)
                        varint_put(p, &len, x->instructions);
        }
        *ret = p;
        *ret_len = len;
        return 0;
}

static int decode_entries(const uint8_t *data, size_t len, JobFunctionSums *s) {
        size_t offset = 1;
        int r;

        if (len < 1 || data[0] != FUNCTION_PACK_VERSION)
                return -EBADMSG;
        while (offset < len) {
                JobFunctionSum x = { .cycles = STORAGE_NULL, .instructions = STORAGE_NULL };
                const JobFunctionSum *prev = s->n > 0 ? &s->items[s->n - 1] : NULL;
                int64_t phase, function;
                uint64_t bits = 0;
                uint8_t which;

                if ((r = varint_get(data, len, &offset, &phase)) < 0 ||
                    (r = varint_get(data, len, &offset, &function)) < 0 ||
                    (r = varint_get(data, len, &offset, &x.samples)) < 0)
                        return r;
                /* ids and their differences are ≥ 0, and the keys increase */
                if (phase < 0 || function < 0 || (prev && phase == 0 && function == 0))
                        return -EBADMSG;
                if (prev && (__builtin_add_overflow(prev->phase_id, phase, &x.phase_id) ||
                             (phase == 0 && __builtin_add_overflow(prev->function_id, function, &x.function_id))))
                        return -EBADMSG;
                if (!prev)
                        x.phase_id = phase;
                if (!prev || phase != 0)
                        x.function_id = function;
                if (len - offset < 9)
                        return -EBADMSG;
                for (int b = 0; b < 8; b++)
                        bits |= (uint64_t) data[offset++] << (8 * b);
                memcpy(&x.cpu_seconds, &bits, sizeof(bits));
                which = data[offset++];
                if (which & ~(HAS_CYCLES | HAS_INSTRUCTIONS))
                        return -EBADMSG;
                if (((which & HAS_CYCLES) && (r = varint_get(data, len, &offset, &x.cycles)) < 0) ||
                    ((which & HAS_INSTRUCTIONS) && (r = varint_get(data, len, &offset, &x.instructions)) < 0))
                        return r;
                /* STORAGE_NULL is a value no counter has */
                if (x.cycles == STORAGE_NULL && (which & HAS_CYCLES))
                        return -EBADMSG;
                if (x.instructions == STORAGE_NULL && (which & HAS_INSTRUCTIONS))
                        return -EBADMSG;
                r = function_sums_append(s, &x);
                if (r < 0)
                        return r;
        }
        return 0;
}

int function_pack_decode(const uint8_t *data, size_t len, JobFunctionSums *ret) {
        int r;

        ret->n = 0;
        r = decode_entries(data, len, ret);
        if (r < 0)
                ret->n = 0;
        return r;
}
