/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* What the MPI referees (tests/pop, tests/scaling) share: a clock in
 * seconds, and a unit of work that is work, not time (a dependent chain of
 * floating-point operations), so that a rank slowed by a busy machine
 * takes longer for the same work. */

#include <time.h>

static inline double referee_clock(clockid_t clock) {
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static volatile double referee_sink;

static inline void referee_compute(long loops) {
        double x = 1.0;

        for (long i = 0; i < loops; i++)
                x = x * 1.0000001 + 1e-9;
        referee_sink = x;
}
