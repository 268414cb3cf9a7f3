/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Interval times across steps of the wall clock, with the clocks' readings
 * made up: lengths follow the monotonic clock, end >= start always, and a
 * step is told from the clocks' jitter. */
#include <stdbool.h>
#include <stdlib.h>

#include "interval-clock.h"
#include "tests.h"

#define S INT64_C(1000000000)
#define T0 (INT64_C(1795550400) * S) /* the wall clock when the first interval begins */

TEST(no_step) {
        IntervalClock c;
        double start, end;

        interval_clock_begin(&c, 100 * S, T0);
        ASSERT_EQ(interval_clock_step(&c, 160 * S, T0 + 60 * S), 0);
        interval_clock_times(&c, 160 * S, &start, &end);
        ASSERT_TRUE(start == 1795550400.0 && end == 1795550460.0);
        /* NTP's slewing and the clocks' reading jitter are no step */
        ASSERT_EQ(interval_clock_step(&c, 160 * S, T0 + 60 * S + S / 2), 0);
        ASSERT_EQ(interval_clock_step(&c, 160 * S, T0 + 60 * S - S), 0);
}

/* The 7,205 s batch of issue 33: a +7,200 s step 5 s into an interval, then
 * the step back. */
TEST(steps_forward_and_back) {
        IntervalClock c;
        double start, end;

        interval_clock_begin(&c, 100 * S, T0);
        ASSERT_EQ(interval_clock_step(&c, 105 * S, T0 + 5 * S + 7200 * S), 7200 * S);
        /* the interval ends at the step with its own 5 s, in its own time */
        interval_clock_times(&c, 105 * S, &start, &end);
        ASSERT_TRUE(start == 1795550400.0 && end == 1795550405.0);
        /* the next one begins at the new time */
        interval_clock_begin(&c, 105 * S, T0 + 7205 * S);
        ASSERT_EQ(interval_clock_step(&c, 160 * S, T0 + 7260 * S), 0);
        ASSERT_EQ(interval_clock_step(&c, 161 * S, T0 + 61 * S), -7200 * S);
        interval_clock_times(&c, 161 * S, &start, &end);
        ASSERT_TRUE(start == 1795557605.0 && end == 1795557661.0);
        interval_clock_begin(&c, 161 * S, T0 + 61 * S);
        interval_clock_times(&c, 221 * S, &start, &end);
        ASSERT_TRUE(start == 1795550461.0 && end == 1795550521.0);
}

/* Whatever the wall clock does, end >= start and the length is the
 * monotonic clock's; no interval spans a step. The pipeline's loop
 * (push-pipeline.c) in small: a check before every tick, a flush every 60
 * ticks or at a step. */
TEST(random_steps) {
        unsigned seed = 33;
        uint64_t mono = 5 * (uint64_t) S, begun;
        int64_t offset = T0 - 5 * S, steps = 0;
        IntervalClock c;
        double start, end;

        interval_clock_begin(&c, mono, (int64_t) mono + offset);
        begun = mono;
        for (int tick = 0; tick < 100000; tick++) {
                int64_t step = 0;
                bool flush = tick % 60 == 59;

                mono += (uint64_t) S / 2 + (uint64_t) rand_r(&seed) % (uint64_t) S;
                if (rand_r(&seed) % 500 == 0) {
                        /* a step of up to +-2 h, and sometimes one within the tolerance */
                        step = rand_r(&seed) % 2 ? (int64_t) (rand_r(&seed) % 7200) * S : -(S / 2);
                        if (rand_r(&seed) % 2)
                                step = -step;
                        offset += step;
                        steps++;
                }
                if (interval_clock_step(&c, mono, (int64_t) mono + offset) != 0)
                        flush = true;
                else
                        /* one within the tolerance, or a big one not yet seen: neither goes unseen */
                        ASSERT_TRUE(step > -CLOCK_STEP_TOLERANCE_NS && step < CLOCK_STEP_TOLERANCE_NS);
                if (!flush)
                        continue;
                interval_clock_times(&c, mono, &start, &end);
                ASSERT_TRUE(end >= start);
                ASSERT_TRUE(end - start > (double) (mono - begun) / 1e9 - 1e-3 &&
                            end - start < (double) (mono - begun) / 1e9 + 1e-3);
                ASSERT_TRUE(end - start < 91); /* 60 ticks of at most 1.5 s: no step inside */
                interval_clock_begin(&c, mono, (int64_t) mono + offset);
                begun = mono;
        }
        ASSERT_TRUE(steps > 100);
}

int main(void) {
        RUN(no_step);
        RUN(steps_forward_and_back);
        RUN(random_steps);
        return 0;
}
