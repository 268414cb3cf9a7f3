/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "interval-clock.h"

void interval_clock_begin(IntervalClock *c, uint64_t mono_ns, int64_t real_ns) {
        *c = (IntervalClock) {
                .mono_start = mono_ns,
                .offset = real_ns - (int64_t) mono_ns,
        };
}

int64_t interval_clock_step(const IntervalClock *c, uint64_t mono_ns, int64_t real_ns) {
        int64_t d = real_ns - (int64_t) mono_ns - c->offset;

        return d > CLOCK_STEP_TOLERANCE_NS || d < -CLOCK_STEP_TOLERANCE_NS ? d : 0;
}

void interval_clock_times(const IntervalClock *c, uint64_t mono_ns, double *ret_start, double *ret_end) {
        /* a reading taken before begin() (another thread's) counts as none */
        uint64_t length = mono_ns > c->mono_start ? mono_ns - c->mono_start : 0;
        int64_t start = (int64_t) c->mono_start + c->offset;

        *ret_start = (double) start / 1e9;
        *ret_end = (double) (start + (int64_t) length) / 1e9;
}
