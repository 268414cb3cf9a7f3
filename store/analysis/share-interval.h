/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* The uncertainty of a share of samples: k of n samples fell on a part, so
 * the part's share of the time is about k / n, and the Wilson score
 * interval says how far from k / n the true share may plausibly be.
 * docs/uncertainty.md argues the method and reports its measured coverage. */

/* The normal quantile for a two-sided 95% interval. */
#define SHARE_Z95 1.959964

/* Below this many samples in the denominator a share is only a rough
 * figure: its 95% interval is at least ±15 points wide at 50%, and the
 * normal approximation behind the score interval starts to fail. */
#define SHARE_MIN_SAMPLES 30

typedef struct ShareInterval {
        double share;   /* k / n, 0 when n is 0 */
        double low;     /* 95% interval, 0 ≤ low ≤ share ≤ high ≤ 1 */
        double high;
        int64_t n;      /* the samples the share rests on */
        bool reliable;  /* n ≥ SHARE_MIN_SAMPLES */
} ShareInterval;

/* The share k / n with its Wilson score interval at z (SHARE_Z95 for 95%).
 * n = 0 gives share 0, the interval [0, 1] and reliable false: nothing is
 * known. -EINVAL if k < 0, n < 0, k > n or z is not positive. */
int share_interval(int64_t k, int64_t n, double z, ShareInterval *ret);
