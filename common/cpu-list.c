/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cpu-list.h"
#include "macro.h"

/* Past any kernel's NR_CPUS, and small enough for a bitmap (128 KiB). */
#define CPU_LIST_MAX (UINT32_C(1) << 20)

typedef struct CpuListWalk {
        const char *p, *end;
        size_t nbits;
} CpuListWalk;

/* A CPU number at w->p. A number at or past nbits is read to its end, for
 * -ERANGE rather than -EINVAL. */
static int read_cpu(CpuListWalk *w, unsigned *ret) {
        uint64_t v = 0;

        if (w->p >= w->end || *w->p < '0' || *w->p > '9')
                return -EINVAL;
        for (; w->p < w->end && *w->p >= '0' && *w->p <= '9'; w->p++)
                if (v < w->nbits)
                        v = v * 10 + (unsigned) (*w->p - '0');
        if (v >= w->nbits)
                return -ERANGE;
        *ret = (unsigned) v;
        return 0;
}

/* The next item of the list: 1 and its first and last CPU, 0 at the end.
 * Every caller of the grammar goes through here. */
static int next_range(CpuListWalk *w, unsigned *ret_first, unsigned *ret_last) {
        unsigned first, last;
        int r;

        if (w->p == w->end)
                return 0;
        r = read_cpu(w, &first);
        if (r < 0)
                return r;
        last = first;
        if (w->p < w->end && *w->p == '-') {
                w->p++;
                r = read_cpu(w, &last);
                if (r < 0)
                        return r;
                if (last < first)
                        return -EINVAL;
        }
        if (w->p < w->end) {
                if (*w->p != ',' || w->p + 1 == w->end)
                        return -EINVAL;
                w->p++;
        }
        *ret_first = first;
        *ret_last = last;
        return 1;
}

static CpuListWalk walk_start(const char *s, size_t len, size_t nbits) {
        while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == ' '))
                len--;
        return (CpuListWalk) { .p = s, .end = s + len, .nbits = nbits };
}

int cpu_list_parse(const char *s, size_t len, uint64_t *bits, size_t nbits) {
        CpuListWalk w = walk_start(s, len, nbits);
        unsigned first, last;
        int n = 0, r;

        memset(bits, 0, ALIGN_TO(nbits, 64) / 8);
        while ((r = next_range(&w, &first, &last)) > 0)
                for (unsigned c = first; c <= last; c++) {
                        uint64_t bit = UINT64_C(1) << (c % 64);

                        n += !(bits[c / 64] & bit);
                        bits[c / 64] |= bit;
                }
        return r < 0 ? r : n;
}

int cpu_list_count(const char *s, size_t len, unsigned *ret) {
        _cleanup_free_ uint64_t *bits = NULL;
        CpuListWalk w = walk_start(s, len, CPU_LIST_MAX);
        unsigned first, last, max = 0;
        int r;

        if (w.p == w.end)
                return -EINVAL;
        /* the bitmap as large as the highest CPU needs */
        while ((r = next_range(&w, &first, &last)) > 0)
                max = MAX(max, last);
        if (r < 0)
                return r;
        bits = calloc(max / 64 + 1, sizeof(uint64_t));
        if (!bits)
                return -ENOMEM;
        r = cpu_list_parse(s, len, bits, (size_t) max + 1);
        if (r < 0)
                return r;
        *ret = (unsigned) r;
        return 0;
}
