/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>

/* An interval's times. Its length comes from CLOCK_MONOTONIC, which no one
 * sets; its start is what the wall clock (CLOCK_REALTIME) said when it
 * began, and its end is start + length, so end >= start whatever the wall
 * clock does. A step of the wall clock (NTP correcting a drifted node, an
 * admin's date -s) shows as a change of realtime - monotonic: lmkd then
 * ends the interval and begins the next at the new wall time, so no
 * interval spans a step. The clocks' readings are passed in, for tests. */

/* Differences below this are the clocks' reading jitter and slewing, not a step. */
#define CLOCK_STEP_TOLERANCE_NS INT64_C(1000000000)

typedef struct IntervalClock {
        uint64_t mono_start;    /* CLOCK_MONOTONIC when the interval began, ns */
        int64_t offset;         /* CLOCK_REALTIME - CLOCK_MONOTONIC then, ns */
} IntervalClock;

void interval_clock_begin(IntervalClock *c, uint64_t mono_ns, int64_t real_ns);
/* How far the wall clock stepped since the interval began, in ns (forward
 * positive); 0 within CLOCK_STEP_TOLERANCE_NS. */
int64_t interval_clock_step(const IntervalClock *c, uint64_t mono_ns, int64_t real_ns);
/* The interval's start and end (Unix time, seconds) if it ends at mono_ns. */
void interval_clock_times(const IntervalClock *c, uint64_t mono_ns, double *ret_start, double *ret_end);
