/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <math.h>
#include <stdbool.h>

#include "macro.h"
#include "analysis/scaling-fit.h"
#include "tests.h"

#define ASSERT_NEAR(a, b, eps)                                                          \
        do {                                                                            \
                double _a_ = (a), _b_ = (b);                                            \
                if (!(fabs(_a_ - _b_) <= (eps)))                                        \
                        test_fail("%s == %s: %.9g != %.9g (±%g)", #a, #b, _a_, _b_, (double) (eps)); \
        } while (0)

static const double cores[] = { 1, 2, 4, 8, 16, 32 };

/* Runs on a known curve: T = 100/p + 2, C = 0.5 + 0.3 log2 p. */
static size_t known(ScalingPoint *v, size_t n_cores) {
        for (size_t i = 0; i < n_cores; i++)
                v[i] = (ScalingPoint) { cores[i], 100 / cores[i] + 2, 0.5 + 0.3 * log2(cores[i]) };
        return n_cores;
}

TEST(exact_curve) {
        ScalingPoint v[6];
        size_t n = known(v, 6);
        ScalingPrediction x;
        ScalingFit f;
        bool off[6];

        ASSERT_OK(scaling_fit(v, n, &f));
        ASSERT_EQ(f.n, 6);
        ASSERT_EQ(f.distinct, 6);
        ASSERT_NEAR(f.a, 100, 1e-9);
        ASSERT_NEAR(f.b, 2, 1e-9);
        /* a constant predicts a left-out core count badly, log2 exactly,
         * and more terms cannot do better than exactly */
        ASSERT_EQ(f.comm_terms, 2);
        ASSERT_NEAR(f.c[COMM_CONST], 0.5, 1e-9);
        ASSERT_NEAR(f.c[COMM_LOG2], 0.3, 1e-9);
        ASSERT_NEAR(f.loo_error, 0, 1e-9);
        scaling_predict(&f, v, n, 64, &x);
        ASSERT_NEAR(x.computation, 100.0 / 64 + 2, 1e-9);
        ASSERT_NEAR(x.communication, 0.5 + 0.3 * 6, 1e-9);
        ASSERT_NEAR(x.elapsed, 100.0 / 64 + 2 + 0.5 + 1.8, 1e-9);
        /* no spread, no width */
        ASSERT_NEAR(x.low, x.elapsed, 1e-6);
        ASSERT_NEAR(x.high, x.elapsed, 1e-6);
        ASSERT_OK(scaling_off_curve(&f, v, n, off));
        for (size_t i = 0; i < n; i++)
                ASSERT_FALSE(off[i]);
}

/* C = 1 + 0.002 p^2 needs all four terms of the nested form: chosen when
 * there are five or more core counts, and the fit is exact. */
TEST(square_communication) {
        ScalingPoint v[6];
        ScalingFit f;

        for (size_t i = 0; i < 6; i++)
                v[i] = (ScalingPoint) { cores[i], 50 / cores[i], 1 + 0.002 * cores[i] * cores[i] };
        ASSERT_OK(scaling_fit(v, 6, &f));
        ASSERT_EQ(f.comm_terms, 4);
        ASSERT_NEAR(f.c[COMM_SQUARE], 0.002, 1e-9);
        ASSERT_NEAR(f.c[COMM_LINEAR], 0, 1e-8);
        ASSERT_NEAR(f.c[COMM_LOG2], 0, 1e-8);
        ASSERT_NEAR(f.c[COMM_CONST], 1, 1e-8);
        ASSERT_NEAR(f.a, 50, 1e-9);
        ASSERT_NEAR(f.b, 0, 1e-9);

        /* with three core counts, at most log2 p + constant */
        ASSERT_OK(scaling_fit(v, 3, &f));
        ASSERT_TRUE(f.comm_terms <= 2);
        /* with two, a constant */
        ASSERT_OK(scaling_fit(v, 2, &f));
        ASSERT_EQ(f.comm_terms, 1);
        ASSERT_TRUE(isnan(f.loo_error));
}

/* Computation that grows with p would want a < 0: the constraint holds
 * it at 0 and b is the mean. */
TEST(non_negative) {
        ScalingPoint v[] = { { 1, 1, 0 }, { 2, 2, 0 }, { 4, 3, 0 } };
        ScalingFit f;

        ASSERT_OK(scaling_fit(v, ELEMENTSOF(v), &f));
        ASSERT_EQ(f.a, 0);
        /* weighted by 1/y^2: b = sum(1/y) / sum(1/y^2) */
        ASSERT_NEAR(f.b, (1 + 1 / 2.0 + 1 / 3.0) / (1 + 1 / 4.0 + 1 / 9.0), 1e-12);
        ASSERT_EQ(f.comp_free, 2);

        /* superlinear: b would be < 0, so b = 0 and a alone */
        ScalingPoint w[] = { { 1, 10, 0 }, { 2, 4, 0 }, { 4, 1, 0 } };
        ASSERT_OK(scaling_fit(w, ELEMENTSOF(w), &f));
        ASSERT_EQ(f.b, 0);
        ASSERT_EQ(f.comp_free, 1);
        /* a = sum(w y/p) / sum(w/p^2), w = 1/y^2 */
        ASSERT_NEAR(f.a, (1 / 10.0 + 1 / 8.0 + 1 / 4.0) / (1 / 100.0 + 1 / 64.0 + 1 / 16.0), 1e-12);
}

/* Noisy runs, several per core count: the interval covers the truth, a
 * run 50% off is flagged, the others are not. */
TEST(noise_and_outlier) {
        static const double noise[] = { 0.01, -0.02, 0.015, -0.01, 0.02, -0.015 };
        ScalingPoint v[13];
        ScalingPrediction x;
        ScalingFit f;
        bool off[13];
        size_t n = 0;

        for (size_t rep = 0; rep < 2; rep++)
                for (size_t i = 0; i < 6; i++) {
                        double e = 1 + noise[(i + rep * 3) % 6];

                        v[n++] = (ScalingPoint) { cores[i], (100 / cores[i] + 2) * e, (0.5 + 0.3 * log2(cores[i])) * e };
                }
        v[n++] = (ScalingPoint) { 4, (100.0 / 4 + 2) * 1.5, 1.1 * 1.5 };
        ASSERT_OK(scaling_fit(v, n, &f));
        ASSERT_OK(scaling_off_curve(&f, v, n, off));
        for (size_t i = 0; i < n - 1; i++)
                if (off[i])
                        test_fail("run %zu (p=%g) flagged", i, v[i].p);
        ASSERT_TRUE(off[n - 1]);

        /* without the outlier: the prediction at p = 64 is within 3% and
         * its interval holds the truth */
        ASSERT_OK(scaling_fit(v, n - 1, &f));
        scaling_predict(&f, v, n - 1, 64, &x);
        double truth = 100.0 / 64 + 2 + 0.5 + 1.8;
        ASSERT_TRUE(fabs(x.elapsed - truth) / truth < 0.03);
        ASSERT_TRUE(x.low < truth && truth < x.high);
        ASSERT_TRUE(x.high - x.low < truth);
        ASSERT_TRUE(isfinite(f.loo_error) && f.loo_error < 0.05);
}

/* One core count: all of it is ideal scaling (a/p), no interval. */
TEST(one_core_count) {
        ScalingPoint v[] = { { 4, 10, 1 }, { 4, 12, 1 } };
        /* a/4 is the weighted mean of 10 and 12, weights 1/11^2 and 1/13^2 */
        double mean = (10 / 121.0 + 12 / 169.0) / (1 / 121.0 + 1 / 169.0);
        ScalingPrediction x;
        ScalingFit f;

        ASSERT_OK(scaling_fit(v, ELEMENTSOF(v), &f));
        ASSERT_NEAR(f.a, 4 * mean, 1e-9);
        ASSERT_EQ(f.b, 0);
        ASSERT_EQ(f.comm_terms, 1);
        scaling_predict(&f, v, ELEMENTSOF(v), 8, &x);
        ASSERT_NEAR(x.elapsed, mean / 2 + 1, 1e-9);
        ASSERT_TRUE(isnan(x.low) && isnan(x.high));
}

TEST(bad_input) {
        ScalingPoint v[] = { { 1, 1, 1 }, { 2, 1, 1 } };
        ScalingFit f;

        ASSERT_ERROR(scaling_fit(v, 0, &f), EINVAL);
        v[1].p = 0;
        ASSERT_ERROR(scaling_fit(v, 2, &f), EINVAL);
        v[1].p = 2;
        v[1].computation = NAN;
        ASSERT_ERROR(scaling_fit(v, 2, &f), EINVAL);
        v[1].computation = INFINITY;
        ASSERT_ERROR(scaling_fit(v, 2, &f), EINVAL);
        v[1].computation = 1;
        v[1].communication = -1;
        ASSERT_ERROR(scaling_fit(v, 2, &f), EINVAL);
}

/* Huge core counts: p^2 is 1e12, the columns still solve, all finite. */
TEST(large_core_counts) {
        static const double big[] = { 1024, 4096, 16384, 65536, 262144, 1048576 };
        ScalingPoint v[6];
        ScalingPrediction x;
        ScalingFit f;

        for (size_t i = 0; i < 6; i++)
                v[i] = (ScalingPoint) { big[i], 1e6 / big[i] + 1, 1e-3 * log2(big[i]) + 1e-12 * big[i] * big[i] };
        ASSERT_OK(scaling_fit(v, 6, &f));
        ASSERT_NEAR(f.a, 1e6, 1e-3);
        scaling_predict(&f, v, 6, 2097152, &x);
        ASSERT_TRUE(isfinite(x.elapsed) && x.elapsed > 0);
        for (unsigned t = 0; t < _COMM_TERM_MAX; t++)
                ASSERT_TRUE(isfinite(f.c[t]));
}

TEST(t_quantiles) {
        ASSERT_NEAR(scaling_t95(1), 12.706, 1e-9);
        ASSERT_NEAR(scaling_t95(10), 2.228, 1e-9);
        ASSERT_NEAR(scaling_t95(30), 2.042, 1e-9);
        ASSERT_NEAR(scaling_t95(60), 2.000, 0.002);
        ASSERT_NEAR(scaling_t95(120), 1.980, 0.002);
        ASSERT_TRUE(isnan(scaling_t95(0)));
}

int main(void) {
        RUN(exact_curve);
        RUN(square_communication);
        RUN(non_negative);
        RUN(noise_and_outlier);
        RUN(one_core_count);
        RUN(bad_input);
        RUN(large_core_counts);
        RUN(t_quantiles);
        return 0;
}
