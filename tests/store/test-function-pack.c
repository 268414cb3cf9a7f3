/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A job's function sums of one object packed (store/db/sql/function-pack.h):
 * what goes in comes out, merging adds as the stored sums' upserts did and
 * refuses an overflow without changing anything, and what is not a whole
 * pack is refused, never read past its end. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "db/sql/function-pack.h"
#include "db/storage.h"
#include "tests.h"

static const JobFunctionSum entries[] = {
        { 0, 7, 60, 0.6, 600, 1200 },
        { 0, 300, 1, 0.01, STORAGE_NULL, STORAGE_NULL },
        { 1, 7, 20, 0.2, STORAGE_NULL, 400 },
        { 1, 16384, INT64_MAX, 1e300, INT64_MAX, 0 },
        { 200, 5, 0, 0, 0, STORAGE_NULL },
};

static void fill(JobFunctionSums *s, const JobFunctionSum *x, size_t n) {
        for (size_t i = 0; i < n; i++)
                ASSERT_OK(function_sums_append(s, &x[i]));
}

static void assert_same(const JobFunctionSum *x, const JobFunctionSum *y) {
        ASSERT_EQ(x->phase_id, y->phase_id);
        ASSERT_EQ(x->function_id, y->function_id);
        ASSERT_EQ(x->samples, y->samples);
        ASSERT_TRUE(memcmp(&x->cpu_seconds, &y->cpu_seconds, sizeof(double)) == 0);
        ASSERT_EQ(x->cycles, y->cycles);
        ASSERT_EQ(x->instructions, y->instructions);
}

TEST(round_trip) {
        JobFunctionSums s = {}, got = {};
        uint8_t *p = NULL;
        size_t len;

        /* appended out of order: sorting puts them in key order */
        for (size_t i = ELEMENTSOF(entries); i > 0; i--)
                ASSERT_OK(function_sums_append(&s, &entries[i - 1]));
        function_sums_sort(&s);
        ASSERT_OK(function_pack_encode(&s, &p, &len));
        ASSERT_OK(function_pack_decode(p, len, &got));
        ASSERT_EQ(got.n, ELEMENTSOF(entries));
        for (size_t i = 0; i < got.n; i++)
                assert_same(&got.items[i], &entries[i]);
        ASSERT_NOT_NULL(function_sums_find(&got, 1, 16384));
        ASSERT_NULL(function_sums_find(&got, 1, 300));
        ASSERT_NULL(function_sums_find(&got, 2, 7));
        free(p);

        /* no entries: the version alone */
        s.n = 0;
        ASSERT_OK(function_pack_encode(&s, &p, &len));
        ASSERT_EQ(len, 1);
        ASSERT_OK(function_pack_decode(p, len, &got));
        ASSERT_EQ(got.n, 0);
        free(p);
        function_sums_done(&s);
        function_sums_done(&got);
}

/* The bytes the header of function-pack.h describes. */
TEST(layout) {
        static const uint8_t want[] = {
                1,                                              /* version */
                0, 7, 60, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 3,      /* phase 0, function 7, 60, 1.0, both */
                0xd8, 0x04, 0xb0, 0x09,                         /* 600, 1200 */
                0, 0xa5, 0x02, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0,    /* phase 0, 7 + 293, 1, 0.0, none */
                2, 0x80, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, /* phase 2, function 128, 0, 0.0, instructions 0 */
        };
        const JobFunctionSum two[] = {
                { 0, 7, 60, 1.0, 600, 1200 },
                { 0, 300, 1, 0, STORAGE_NULL, STORAGE_NULL },
                { 2, 128, 0, 0, STORAGE_NULL, 0 },
        };
        JobFunctionSums s = {};
        uint8_t *p = NULL;
        size_t len;

        fill(&s, two, ELEMENTSOF(two));
        ASSERT_OK(function_pack_encode(&s, &p, &len));
        ASSERT_EQ(len, sizeof(want));
        ASSERT_TRUE(memcmp(p, want, sizeof(want)) == 0);
        free(p);
        function_sums_done(&s);
}

/* Same keys add up, new keys join in order; NULL counters stay NULL
 * only where both sides are. */
TEST(merge) {
        const JobFunctionSum stored[] = {
                { 0, 7, 10, 0.5, STORAGE_NULL, 100 },
                { 1, 7, 10, 0.5, 5, STORAGE_NULL },
        };
        const JobFunctionSum added[] = {
                { 0, 3, 1, 0.25, STORAGE_NULL, STORAGE_NULL },
                { 0, 7, 5, 0.25, 50, STORAGE_NULL },
                { 1, 7, 1, 0.125, 6, STORAGE_NULL },
                { 2, 7, 4, 1, STORAGE_NULL, STORAGE_NULL },
        };
        const JobFunctionSum want[] = {
                { 0, 3, 1, 0.25, STORAGE_NULL, STORAGE_NULL },
                { 0, 7, 15, 0.75, 50, 100 },
                { 1, 7, 11, 0.625, 11, STORAGE_NULL },
                { 2, 7, 4, 1, STORAGE_NULL, STORAGE_NULL },
        };
        JobFunctionSums s = {}, a = {};

        fill(&s, stored, ELEMENTSOF(stored));
        fill(&a, added, ELEMENTSOF(added));
        ASSERT_OK(function_sums_merge(&s, &a));
        ASSERT_EQ(s.n, ELEMENTSOF(want));
        for (size_t i = 0; i < s.n; i++)
                assert_same(&s.items[i], &want[i]);

        /* into nothing stored: the batch's own */
        function_sums_done(&s);
        ASSERT_OK(function_sums_merge(&s, &a));
        ASSERT_EQ(s.n, a.n);
        for (size_t i = 0; i < s.n; i++)
                assert_same(&s.items[i], &added[i]);
        function_sums_done(&s);
        function_sums_done(&a);
}

/* stored <= 2^63 - 1 - added, as FITS in statements.c: up to the largest
 * integer is taken, one more is refused and leaves the stored sums alone. */
TEST(overflow) {
        static const int which[] = { 0, 1, 2 }; /* samples, cycles, instructions */

        for (size_t k = 0; k < ELEMENTSOF(which); k++) {
                JobFunctionSum x = { 1, 9, 1, 1, 1, 1 }, y = { 1, 9, 1, 1, 1, 1 };
                JobFunctionSums s = {}, a = {};
                int64_t *stored = k == 0 ? &x.samples : k == 1 ? &x.cycles : &x.instructions;
                int64_t *added = k == 0 ? &y.samples : k == 1 ? &y.cycles : &y.instructions;

                *stored = INT64_MAX - 10;
                *added = 10;
                fill(&s, &x, 1);
                fill(&a, &y, 1);
                ASSERT_OK(function_sums_merge(&s, &a));
                ASSERT_EQ(k == 0 ? s.items[0].samples : k == 1 ? s.items[0].cycles : s.items[0].instructions,
                          INT64_MAX);
                a.items[0] = (JobFunctionSum) { 1, 9, 0, 0, STORAGE_NULL, STORAGE_NULL };
                if (k == 0)
                        a.items[0].samples = 1;
                else if (k == 1)
                        a.items[0].cycles = 1;
                else
                        a.items[0].instructions = 1;
                ASSERT_ERROR(function_sums_merge(&s, &a), EOVERFLOW);
                ASSERT_EQ(s.n, 1);
                ASSERT_EQ(k == 0 ? s.items[0].samples : k == 1 ? s.items[0].cycles : s.items[0].instructions,
                          INT64_MAX);
                ASSERT_TRUE(s.items[0].cpu_seconds == 2);
                function_sums_done(&s);
                function_sums_done(&a);
        }
}

/* Every prefix of a pack but the whole is refused or whole entries; any
 * byte changed gives entries or -EBADMSG, never a read past the end. */
TEST(cut_and_damaged) {
        JobFunctionSums s = {}, got = {};
        uint8_t *p = NULL;
        size_t len;

        fill(&s, entries, ELEMENTSOF(entries));
        ASSERT_OK(function_pack_encode(&s, &p, &len));
        for (size_t cut = 0; cut < len; cut++) {
                uint8_t *q = malloc(MAX(cut, (size_t) 1));
                int r;

                ASSERT_NOT_NULL(q);
                memcpy(q, p, cut);
                r = function_pack_decode(q, cut, &got);
                if (r >= 0)
                        ASSERT_TRUE(cut > 0 && got.n < s.n);
                else {
                        ASSERT_EQ(r, -EBADMSG);
                        ASSERT_EQ(got.n, 0);
                }
                free(q);
        }
        for (size_t i = 0; i < len; i++)
                for (unsigned b = 0; b < 8; b++) {
                        int r;

                        p[i] ^= (uint8_t) (1u << b);
                        r = function_pack_decode(p, len, &got);
                        ASSERT_TRUE(r == 0 || r == -EBADMSG);
                        p[i] ^= (uint8_t) (1u << b);
                }
        free(p);
        function_sums_done(&s);
        function_sums_done(&got);
}

TEST(refused) {
        JobFunctionSums got = {};
        /* another version */
        const uint8_t v2[] = { 2 };
        /* a counters byte with an unknown bit */
        const uint8_t flags[] = { 1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 4 };
        /* the same key twice */
        const uint8_t twice[] = { 1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
        /* a varint of more than 64 bits */
        const uint8_t wide[] = { 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02 };
        /* a counter that says it is there and reads as NULL (-1) */
        const uint8_t null[] = { 1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1,
                                 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };

        ASSERT_ERROR(function_pack_decode(NULL, 0, &got), EBADMSG);
        ASSERT_ERROR(function_pack_decode(v2, sizeof(v2), &got), EBADMSG);
        ASSERT_ERROR(function_pack_decode(flags, sizeof(flags), &got), EBADMSG);
        ASSERT_ERROR(function_pack_decode(twice, sizeof(twice), &got), EBADMSG);
        ASSERT_OK(function_pack_decode(twice, sizeof(twice) - 12, &got));
        ASSERT_EQ(got.n, 1);
        ASSERT_ERROR(function_pack_decode(wide, sizeof(wide), &got), EBADMSG);
        ASSERT_ERROR(function_pack_decode(null, sizeof(null), &got), EBADMSG);
        function_sums_done(&got);
}

int main(void) {
        RUN(round_trip);
        RUN(layout);
        RUN(merge);
        RUN(overflow);
        RUN(cut_and_damaged);
        RUN(refused);
        return 0;
}
