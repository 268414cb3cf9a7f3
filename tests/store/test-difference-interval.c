/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <math.h>

#include "analysis/difference-interval.h"
#include "analysis/share-interval.h"
#include "tests.h"

static Estimate wilson(int64_t k, int64_t n, double scale) {
        ShareInterval s = {};

        ASSERT_OK(share_interval(k, n, SHARE_Z95, &s));
        return (Estimate) { s.share * scale, s.low * scale, s.high * scale };
}

static void check_difference(int64_t k1, int64_t n1, int64_t k2, int64_t n2, double d, double low, double high) {
        Estimate e = estimate_difference(wilson(k2, n2, 1), wilson(k1, n1, 1));

        if (fabs(e.value - d) > 0.00005 || fabs(e.low - low) > 0.00005 || fabs(e.high - high) > 0.00005)
                test_fail("%" PRId64 "/%" PRId64 " - %" PRId64 "/%" PRId64 ": expected %.4f (%.4f, %.4f), "
                          "got %.4f (%.4f, %.4f)", k1, n1, k2, n2, d, low, high, e.value, e.low, e.high);
}

/* Newcombe, Statistics in Medicine 17:873 (1998), table II, method 10
 * (the score method from Wilson's intervals, no continuity correction),
 * printed to four decimals: the difference of two shares is p1 − p2 =
 * b − a with b the first. */
TEST(newcombe_table_2) {
        check_difference(56, 70, 48, 80, 0.2000, 0.0524, 0.3339);
        check_difference(9, 10, 3, 10, 0.6000, 0.1705, 0.8090);
        check_difference(6, 7, 2, 7, 0.5714, 0.0582, 0.8062);
        check_difference(5, 56, 0, 29, 0.0893, -0.0381, 0.1926);
        check_difference(0, 10, 0, 20, 0.0, -0.1611, 0.2775);
        check_difference(10, 10, 0, 20, 1.0, 0.6791, 1.0);
}

/* The ratio's limits by their definition, found by bisection: the r at
 * which the interval of b − r·a (r·a's interval r times a's) touches 0. */
static double touch(Estimate a, Estimate b, double lo, double hi, bool lower) {
        for (int i = 0; i < 200; i++) {
                double r = (lo + hi) / 2;
                Estimate d = estimate_difference((Estimate) { r * a.value, r * a.low, r * a.high }, b);
                bool inside = d.low <= 0 && d.high >= 0;

                /* below the lower limit b − r·a is above 0 with its interval */
                if (lower == inside)
                        hi = r;
                else
                        lo = r;
        }
        return (lo + hi) / 2;
}

static void check_ratio_by_definition(Estimate a, Estimate b) {
        Estimate r = estimate_ratio(a, b);
        double low = touch(a, b, 0, b.value / a.value, true), high = touch(a, b, b.value / a.value, 1e6, false);

        if (fabs(r.value - b.value / a.value) > 1e-9 || fabs(r.low - low) > 1e-6 * (1 + low) ||
            fabs(r.high - high) > 1e-6 * (1 + high))
                test_fail("ratio of %.3f (%.3f-%.3f) over %.3f (%.3f-%.3f): got %.6f-%.6f, by definition %.6f-%.6f",
                          b.value, b.low, b.high, a.value, a.low, a.high, r.low, r.high, low, high);
}

TEST(ratio_limits) {
        /* CPU time as a share of a run's: 2 s of 3 against 4 s of 5, and more */
        check_ratio_by_definition(wilson(200, 300, 3), wilson(400, 500, 5));
        check_ratio_by_definition(wilson(100, 300, 3), wilson(100, 500, 5));
        check_ratio_by_definition(wilson(3, 40, 40), wilson(30, 40, 40));
        check_ratio_by_definition(wilson(81, 263, 1), wilson(15, 148, 1));
        check_ratio_by_definition(wilson(1, 29, 29), wilson(0, 29, 29));
        check_ratio_by_definition(wilson(5000, 100000, 1000), wilson(5100, 100000, 1000));
}

/* The ratio's interval holds 1 exactly when the difference's holds 0. */
TEST(ratio_agrees_with_difference) {
        for (int64_t k1 = 1; k1 <= 60; k1 += 3)
                for (int64_t k2 = 0; k2 <= 60; k2 += 2) {
                        Estimate a = wilson(k1, 60, 60), b = wilson(k2, 80, 80);
                        Estimate d = estimate_difference(a, b), r = estimate_ratio(a, b);

                        if (estimate_excludes(d, 0) != estimate_excludes(r, 1))
                                test_fail("%" PRId64 "/60 against %" PRId64 "/80: difference %.4f-%.4f, ratio %.4f-%.4f",
                                          k1, k2, d.low, d.high, r.low, r.high);
                }
}

TEST(edges) {
        Estimate r, d;

        /* new in b: no ratio and no upper limit, but a lower one */
        r = estimate_ratio(wilson(0, 100, 100), wilson(20, 100, 100));
        ASSERT_TRUE(isnan(r.value) && isnan(r.high) && r.low > 1);
        /* gone in b: 0, down to 0 */
        r = estimate_ratio(wilson(20, 100, 100), wilson(0, 100, 100));
        ASSERT_TRUE(r.value == 0 && r.low == 0 && r.high > 0 && r.high < 1);
        /* nothing known of a (a run without samples): nothing of the ratio */
        r = estimate_ratio((Estimate) { 0, 0, 0 }, wilson(20, 100, 100));
        ASSERT_TRUE(isnan(r.value) && isnan(r.low) && isnan(r.high));
        /* equal figures: 0 and 1 inside */
        d = estimate_difference(wilson(30, 100, 1), wilson(30, 100, 1));
        r = estimate_ratio(wilson(30, 100, 1), wilson(30, 100, 1));
        ASSERT_TRUE(d.value == 0 && d.low < 0 && d.high > 0 && !estimate_excludes(d, 0));
        ASSERT_TRUE(r.value == 1 && !estimate_excludes(r, 1));
        /* the difference is antisymmetric */
        d = estimate_difference(wilson(56, 70, 1), wilson(48, 80, 1));
        ASSERT_TRUE(fabs(d.value + 0.2) < 1e-12 && fabs(d.low + 0.3339) < 0.00005 && fabs(d.high + 0.0524) < 0.00005);
}

/* xorshift64*: the same draws on every machine */
static uint64_t state = 0x9e3779b97f4a7c15u;

static double uniform(void) {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        return (double) ((state * 0x2545f4914f6cdd1du) >> 11) / 9007199254740992.0;
}

static int64_t binomial(int64_t n, double p) {
        int64_t k = 0;

        for (int64_t i = 0; i < n; i++)
                k += uniform() < p;
        return k;
}

/* Two runs of n1 and n2 samples (one second each) with true shares p1 and
 * p2 of a phase: the CPU time difference's interval holds the true one in
 * about 95% of draws, and with equal truths "beyond uncertainty" is said
 * about 5% of the time. */
static void coverage(int64_t n1, double p1, int64_t n2, double p2) {
        const int trials = 4000;
        double truth = p2 * (double) n2 - p1 * (double) n1;
        int covered = 0;

        for (int t = 0; t < trials; t++) {
                Estimate d = estimate_difference(wilson(binomial(n1, p1), n1, (double) n1),
                                                 wilson(binomial(n2, p2), n2, (double) n2));

                covered += !estimate_excludes(d, truth);
        }
        if (covered < 0.93 * trials || covered > 0.97 * trials)
                test_fail("%" PRId64 " x %.2f against %" PRId64 " x %.2f: %d of %d intervals held the truth",
                          n1, p1, n2, p2, covered, trials);
}

TEST(coverage) {
        coverage(500, 0.2, 700, 0.2);
        coverage(300, 0.33, 500, 0.4);
        coverage(2000, 0.05, 1500, 0.08);
        coverage(60, 0.5, 90, 0.3);
}

int main(void) {
        RUN(newcombe_table_2);
        RUN(ratio_limits);
        RUN(ratio_agrees_with_difference);
        RUN(edges);
        RUN(coverage);
        return 0;
}
