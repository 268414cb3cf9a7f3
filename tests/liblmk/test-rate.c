/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * The overhead control: a marker in a tight loop is switched off at its
 * next BEGIN, for all its sites and threads, without unbalancing any stack.
 *
 *   test-rate hot        LMK_MAX_RATE unset or unparsable: default limit
 *   test-rate window     LMK_MAX_RATE=100000: a region below the limit
 *                        stays on, the hot one goes off
 *   test-rate unlimited  LMK_MAX_RATE=0: nothing is ever switched off
 */

#include <pthread.h>
#include <time.h>

#include "lmk-test.h"

#define HOT_CALLS 1000000

static __attribute__((noinline)) void hot_loop(long n) {
        for (long i = 0; i < n; i++) {
                LMK_BEGIN("hot");
                LMK_END("hot");
        }
}

/* More sites of the same region, elsewhere in the program. */
static __attribute__((noinline)) void hot_elsewhere(void) {
        LMK_BEGIN("hot");
        LMK_END("hot");
}

static __attribute__((noinline)) void hot_begin_only(void) {
        LMK_BEGIN("hot");
}

static __attribute__((noinline)) void hot_end_only(void) {
        LMK_END("hot");
}

static pthread_barrier_t step;

/* Has "hot" open while the main thread switches it off, and closes it after. */
static void *holder(void *arg) {
        LMK_BEGIN("held");
        hot_begin_only();
        ASSERT_STACK("held", "hot");
        pthread_barrier_wait(&step);    /* open */
        pthread_barrier_wait(&step);    /* switched off */
        hot_end_only();
        ASSERT_STACK("held");
        LMK_END("held");
        ASSERT_STACK_EMPTY();
        return NULL;
}

static void check_switch_off(void) {
        struct test_counters before = test_counters_now();
        unsigned int calls;
        pthread_t t;

        hot_elsewhere();                /* registered while the region is on */
        ASSERT_EQ(pthread_barrier_init(&step, NULL, 2), 0);
        ASSERT_EQ(pthread_create(&t, NULL, holder, NULL), 0);
        pthread_barrier_wait(&step);

        LMK_BEGIN("timestep");
        calls = lmk_tls.calls;
        hot_loop(HOT_CALLS);

        ASSERT_EQ(lmk_region_state("hot"), LMK_REGION_OFF_RATE);
        ASSERT_EQ(test_region("hot")->flags, LMK_REGION_OFF_RATE);
        ASSERT_EQ(lmk_region_state("timestep"), 0);
        ASSERT_COUNTERS_MOVED(before, 0, 0, 0, 1);
        /* Switched off after a few rate checks (two, unless the machine
         * stalled the loop), after which the BEGINs stopped counting. */
        ASSERT_TRUE(lmk_tls.calls - calls <= 8 * LMK_RATE_PERIOD);
        ASSERT_STACK("timestep");

        /* Every site of "hot" is off, old or new, BEGIN or END. */
        calls = lmk_tls.calls;
        hot_elsewhere();
        hot_begin_only();
        ASSERT_STACK("timestep");
        hot_end_only();
        ASSERT_STACK("timestep");
        ASSERT_EQ(lmk_tls.calls, calls);

        /* The other thread closes what it opened before the switch-off. */
        pthread_barrier_wait(&step);
        ASSERT_EQ(pthread_join(t, NULL), 0);
        pthread_barrier_destroy(&step);

        LMK_END("timestep");
        ASSERT_STACK_EMPTY();
        ASSERT_COUNTERS_MOVED(before, 0, 0, 0, 1);
}

static void busy_wait_us(long us) {
        struct timespec a, b;

        clock_gettime(CLOCK_MONOTONIC, &a);
        do
                clock_gettime(CLOCK_MONOTONIC, &b);
        while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < us * 1000);
}

TEST(hot) {
        check_switch_off();
}

TEST(window) {
        /* 40,000 BEGINs/s at most: within LMK_MAX_RATE=100000 for four
         * rate checks in a row. */
        for (int i = 0; i < 4 * LMK_RATE_PERIOD; i++) {
                LMK_BEGIN("calm");
                busy_wait_us(25);
                LMK_END("calm");
        }
        ASSERT_EQ(lmk_region_state("calm"), 0);
        ASSERT_EQ(lmk_abi.n_disabled, 0);
        check_switch_off();
        ASSERT_EQ(lmk_region_state("calm"), 0);
}

TEST(unlimited) {
        unsigned int calls = lmk_tls.calls;

        hot_loop(HOT_CALLS);
        ASSERT_EQ(lmk_region_state("hot"), 0);
        ASSERT_EQ(lmk_abi.n_disabled, 0);
        ASSERT_EQ(lmk_tls.calls - calls, HOT_CALLS);
        ASSERT_STACK_EMPTY();
}

int main(int argc, char **argv) {
        const char *rate = getenv("LMK_MAX_RATE");

        if (argc != 2)
                test_fail("usage: test-rate hot|window|unlimited");
        if (strcmp(argv[1], "hot") == 0) {
                if (rate && strcmp(rate, "not-a-number") != 0)
                        test_skip("LMK_MAX_RATE=%s in the environment; this case needs the default", rate);
                RUN(hot);
        } else if (strcmp(argv[1], "window") == 0) {
                ASSERT_STREQ(rate, "100000");
                RUN(window);
        } else if (strcmp(argv[1], "unlimited") == 0) {
                ASSERT_STREQ(rate, "0");
                RUN(unlimited);
        } else
                test_fail("unknown case %s", argv[1]);
        return 0;
}
