/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <math.h>

#include "analysis/share-interval.h"
#include "tests.h"

static void check(int64_t k, int64_t n, double low, double high, double eps) {
        ShareInterval s = {};

        ASSERT_OK(share_interval(k, n, SHARE_Z95, &s));
        if (fabs(s.low - low) > eps || fabs(s.high - high) > eps)
                test_fail("%" PRId64 "/%" PRId64 ": expected %.6f-%.6f, got %.6f-%.6f", k, n, low, high,
                          s.low, s.high);
        ASSERT_TRUE(s.low <= s.share && s.share <= s.high);
        ASSERT_EQ(s.n, n);
}

/* Newcombe, Statistics in Medicine 17:857 (1998), table I, method 3 (Wilson
 * score without continuity correction), printed to four decimals. */
TEST(newcombe_table_1) {
        check(81, 263, 0.2553, 0.3662, 0.00005);
        check(15, 148, 0.0624, 0.1605, 0.00005);
        check(0, 20, 0.0, 0.1611, 0.00005);
        check(1, 29, 0.0061, 0.1718, 0.00005);
}

/* The same formula evaluated independently (Python, double precision). */
TEST(closed_form) {
        check(81, 263, 0.255289, 0.366210, 0.000001);
        check(30, 60, 0.377350, 0.622650, 0.000001);
        check(0, 1, 0.0, 0.793451, 0.000001);
        check(1, 1, 0.206549, 1.0, 0.000001);
}

TEST(edges) {
        ShareInterval s = {};

        /* k = n: the upper bound is exactly 1, the lower the mirror of k = 0 */
        ASSERT_OK(share_interval(29, 29, SHARE_Z95, &s));
        ASSERT_TRUE(s.share == 1.0 && s.high == 1.0);
        ASSERT_TRUE(fabs(s.low - 0.883030) < 0.000001);
        ASSERT_OK(share_interval(0, 29, SHARE_Z95, &s));
        ASSERT_TRUE(s.share == 0.0 && s.low == 0.0 && fabs(s.high - 0.116970) < 0.000001);
        ASSERT_FALSE(s.reliable);

        /* nothing sampled: nothing known */
        ASSERT_OK(share_interval(0, 0, SHARE_Z95, &s));
        ASSERT_TRUE(s.share == 0.0 && s.low == 0.0 && s.high == 1.0);
        ASSERT_EQ(s.n, 0);
        ASSERT_FALSE(s.reliable);

        /* the reliability rule's boundary */
        ASSERT_OK(share_interval(10, SHARE_MIN_SAMPLES - 1, SHARE_Z95, &s));
        ASSERT_FALSE(s.reliable);
        ASSERT_OK(share_interval(10, SHARE_MIN_SAMPLES, SHARE_Z95, &s));
        ASSERT_TRUE(s.reliable);

        /* a site's worth of samples: narrow, inside [0, 1], around k / n */
        ASSERT_OK(share_interval(INT64_C(1) << 52, INT64_C(1) << 53, SHARE_Z95, &s));
        ASSERT_TRUE(s.low < 0.5 && s.high > 0.5 && s.high - s.low < 1e-7);
        ASSERT_OK(share_interval(1, INT64_C(1) << 53, SHARE_Z95, &s));
        ASSERT_TRUE(s.low >= 0.0 && s.low <= s.share && s.high < 1e-14);
}

TEST(symmetry) {
        /* the interval of n - k is the mirror image of k's */
        for (int64_t n = 1; n <= 200; n += 7)
                for (int64_t k = 0; k <= n; k++) {
                        ShareInterval a = {}, b = {};

                        ASSERT_OK(share_interval(k, n, SHARE_Z95, &a));
                        ASSERT_OK(share_interval(n - k, n, SHARE_Z95, &b));
                        ASSERT_TRUE(fabs(a.low - (1.0 - b.high)) < 1e-12);
                        ASSERT_TRUE(fabs(a.high - (1.0 - b.low)) < 1e-12);
                        ASSERT_TRUE(0.0 <= a.low && a.low <= a.share && a.share <= a.high && a.high <= 1.0);
                }
}

TEST(invalid) {
        ShareInterval s = { .share = 42 };

        ASSERT_ERROR(share_interval(-1, 10, SHARE_Z95, &s), EINVAL);
        ASSERT_ERROR(share_interval(11, 10, SHARE_Z95, &s), EINVAL);
        ASSERT_ERROR(share_interval(0, -1, SHARE_Z95, &s), EINVAL);
        ASSERT_ERROR(share_interval(1, 10, 0, &s), EINVAL);
        ASSERT_ERROR(share_interval(1, 10, NAN, &s), EINVAL);
        ASSERT_TRUE(s.share == 42); /* untouched on failure */
}

int main(void) {
        RUN(newcombe_table_1);
        RUN(closed_form);
        RUN(edges);
        RUN(symmetry);
        RUN(invalid);
        return 0;
}
