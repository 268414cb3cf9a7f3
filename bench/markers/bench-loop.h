/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>
#include <time.h>

/* Runs loop(n) with n grown until one run takes 0.2 s, then returns the ns
 * per iteration of a 0.2 s run: long enough to average out timer ticks,
 * short enough that the runner can repeat it for a median. */
static inline double bench_ns_per_iteration(void (*loop)(uint64_t n)) {
        uint64_t n = 1000;

        for (;;) {
                struct timespec a, b;
                double ns;

                clock_gettime(CLOCK_MONOTONIC, &a);
                loop(n);
                clock_gettime(CLOCK_MONOTONIC, &b);
                ns = (double) (b.tv_sec - a.tv_sec) * 1e9 + (double) (b.tv_nsec - a.tv_nsec);
                if (ns >= 2e8)
                        return ns / (double) n;
                n = ns < 1e6 ? n * 10 : (uint64_t) ((double) n * 2.2e8 / ns);
        }
}
