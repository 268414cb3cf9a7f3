/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The difference and ratio of two independent estimates from their own
 * intervals (MOVER). Each interval's distances below and above its value
 * stand for that side's spread in each direction, so that a lopsided
 * Wilson interval near 0 or 1 keeps its shape in the difference, which a
 * symmetric ± standard error would lose. */
#include <math.h>

#include "analysis/difference-interval.h"

Estimate estimate_difference(Estimate a, Estimate b) {
        double d = b.value - a.value;

        /* low: b as low and a as high as they plausibly are; high: the reverse */
        return (Estimate) {
                .value = d,
                .low = d - sqrt(pow(b.value - b.low, 2) + pow(a.high - a.value, 2)),
                .high = d + sqrt(pow(b.high - b.value, 2) + pow(a.value - a.low, 2)),
        };
}

/* The limits are the roots of (b − r·a)² = (b − b')² + r²·(a' − a)², with
 * b', a' the ends of the intervals that face each other: the r at which
 * the difference b − r·a touches 0 with its interval. Written as
 * c / (p + sqrt(p² − k·c)) and (p + sqrt(p² − k·c)) / k, the forms that stay
 * finite where the textbook quadratic formula divides by 0. */
static double lower_root(double p, double k, double c) {
        return c <= 0 ? 0 : c / (p + sqrt(fmax(p * p - k * c, 0)));
}

static double upper_root(double p, double k, double c) {
        return k <= 0 ? NAN : (p + sqrt(fmax(p * p - k * c, 0))) / k;
}

Estimate estimate_ratio(Estimate a, Estimate b) {
        double p = a.value * b.value;

        if (!(a.high > 0))
                return (Estimate) { NAN, NAN, NAN };
        return (Estimate) {
                .value = a.value > 0 ? b.value / a.value : NAN,
                .low = lower_root(p, a.high * (2 * a.value - a.high), b.low * (2 * b.value - b.low)),
                .high = upper_root(p, a.low * (2 * a.value - a.low), b.high * (2 * b.value - b.high)),
        };
}

bool estimate_excludes(Estimate e, double v) {
        return e.low > v || e.high < v;
}
