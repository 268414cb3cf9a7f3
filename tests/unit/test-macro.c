/* SPDX-License-Identifier: GPL-2.0-or-later */
/* common/macro.h's CMP(), which the comparators of qsort() calls share: the
 * order of values whose difference would overflow, and of unsigned ones. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "macro.h"
#include "tests.h"

static int cmp_i64(const void *a, const void *b) {
        return CMP(*(const int64_t *) a, *(const int64_t *) b);
}

TEST(cmp) {
        int64_t v[] = { INT64_MAX, 0, INT64_MIN, -1, 1, INT64_MIN + 1 };
        uint64_t big = UINT64_MAX, small = 1;

        ASSERT_EQ(CMP(1, 2), -1);
        ASSERT_EQ(CMP(2, 2), 0);
        ASSERT_EQ(CMP(3, 2), 1);
        /* where a - b overflows (int64_t) or wraps (uint64_t) */
        ASSERT_EQ(CMP(INT64_MIN, INT64_MAX), -1);
        ASSERT_EQ(CMP(INT64_MAX, INT64_MIN), 1);
        ASSERT_EQ(CMP(big, small), 1);
        ASSERT_EQ(CMP(small, big), -1);
        /* a NaN is neither below nor above */
        ASSERT_EQ(CMP(NAN, 1.0), 0);
        ASSERT_EQ(CMP(-0.5, 0.25), -1);
        qsort(v, ELEMENTSOF(v), sizeof(v[0]), cmp_i64);
        for (size_t i = 1; i < ELEMENTSOF(v); i++)
                ASSERT_TRUE(v[i - 1] < v[i]);
}

int main(void) {
        RUN(cmp);
        return 0;
}
