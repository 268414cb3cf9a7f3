/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The Wilson score interval (E. B. Wilson, JASA 22:209, 1927) for a share of
 * samples. Unlike the textbook p ± z·sqrt(p(1-p)/n) it never leaves [0, 1],
 * is not empty at k = 0 or k = n, and keeps close to its nominal coverage
 * for small n and shares near 0 or 1 (Newcombe, Stat. Med. 17:857, 1998),
 * which is where a library's share of a short job lives. */
#include <errno.h>
#include <math.h>

#include "analysis/share-interval.h"

int share_interval(int64_t k, int64_t n, double z, ShareInterval *ret) {
        double p, nn, z2, centre, half, denom, low, high;

        if (k < 0 || n < 0 || k > n || !(z > 0) || !isfinite(z))
                return -EINVAL;
        if (n == 0) {
                *ret = (ShareInterval) { .share = 0, .low = 0, .high = 1, .n = 0, .reliable = false };
                return 0;
        }

        nn = (double) n;
        p = (double) k / nn;
        z2 = z * z;
        denom = 1.0 + z2 / nn;
        centre = p + z2 / (2.0 * nn);
        half = z * sqrt(p * (1.0 - p) / nn + z2 / (4.0 * nn * nn));
        low = (centre - half) / denom;
        high = (centre + half) / denom;

        /* At k = 0 and k = n the bound is exactly 0 (1) on paper; rounding
         * must not put it a hair beside, nor a bound past the share. */
        if (k == 0)
                low = 0;
        if (k == n)
                high = 1;
        *ret = (ShareInterval) {
                .share = p,
                .low = fmax(0.0, fmin(low, p)),
                .high = fmin(1.0, fmax(high, p)),
                .n = n,
                .reliable = n >= SHARE_MIN_SAMPLES,
        };
        return 0;
}
