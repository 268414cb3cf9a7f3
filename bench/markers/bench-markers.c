/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * bench-markers MODE: nanoseconds per BEGIN+END pair of one marker kind in
 * a tight loop, printed as "MODE NS STATE". bench/markers/run calls it for
 * every mode, several times, with the environment each mode needs:
 *
 *   empty      the loop alone (a compiler barrier per iteration)
 *   lmk        LMK_BEGIN/LMK_END (enabled: run with LMK_MAX_RATE=0;
 *              switched off: run with LMK_DISABLE=1)
 *   lmk-auto   the same sites after the rate control switched them off
 *   lmk-func   lmk_site_begin/lmk_site_end, the out-of-line API (Fortran)
 *   clock      a region timer as TALP/PaScal-style tools do it: two
 *              clock_gettime calls and an accumulation per pair, in a
 *              library function
 *
 * STATE is lmk_region_state() of the measured region afterwards, so the
 * runner can tell that "enabled" was enabled and "off" was off.
 */

#include <errno.h>
#include <lmk.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bench-loop.h"

static void loop_empty(uint64_t n) {
        for (uint64_t i = 0; i < n; i++)
                __asm__ __volatile__("" ::: "memory");
}

static void loop_lmk(uint64_t n) {
        for (uint64_t i = 0; i < n; i++) {
                LMK_BEGIN("bench");
                LMK_END("bench");
        }
}

static void loop_lmk_func(uint64_t n) {
        static struct lmk_site site;

        if (site.id == 0)
                lmk_site_register(&site, "bench", 5, "bench-markers.c loop_lmk_func");
        for (uint64_t i = 0; i < n; i++) {
                lmk_site_begin(&site);
                lmk_site_end(&site);
        }
}

struct clock_region {
        struct timespec start;
        uint64_t total_ns;
        uint64_t count;
};

/* noinline: such tools keep these in their library. */
static __attribute__((noinline)) void clock_begin(struct clock_region *r) {
        clock_gettime(CLOCK_MONOTONIC, &r->start);
}

static __attribute__((noinline)) void clock_end(struct clock_region *r) {
        struct timespec t;

        clock_gettime(CLOCK_MONOTONIC, &t);
        r->total_ns += (uint64_t) ((t.tv_sec - r->start.tv_sec) * 1000000000 + (t.tv_nsec - r->start.tv_nsec));
        r->count++;
}

static struct clock_region clock_region;

static void loop_clock(uint64_t n) {
        for (uint64_t i = 0; i < n; i++) {
                clock_begin(&clock_region);
                clock_end(&clock_region);
        }
}

/* Enough calls for the rate control's second check, which switches the
 * hot region off; bounded, in case LMK_MAX_RATE says otherwise. */
static int switch_off_by_rate(void) {
        for (int i = 0; i < 1000; i++) {
                loop_lmk(LMK_RATE_PERIOD);
                if (lmk_region_state("bench") & LMK_REGION_OFF_RATE)
                        return 0;
        }
        return -EBUSY;
}

int main(int argc, char **argv) {
        static const struct {
                const char *name;
                void (*loop)(uint64_t n);
        } modes[] = {
                { "empty", loop_empty },
                { "lmk", loop_lmk },
                { "lmk-auto", loop_lmk },
                { "lmk-func", loop_lmk_func },
                { "clock", loop_clock },
        };

        for (size_t i = 0; argc == 2 && i < sizeof(modes) / sizeof(modes[0]); i++) {
                double ns;

                if (strcmp(argv[1], modes[i].name) != 0)
                        continue;
                if (strcmp(argv[1], "lmk-auto") == 0 && switch_off_by_rate() < 0) {
                        fprintf(stderr, "the rate control did not switch the marker off (LMK_MAX_RATE=0?)\n");
                        return 1;
                }
                ns = bench_ns_per_iteration(modes[i].loop);
                printf("%s %.3f %d\n", argv[1], ns, lmk_region_state("bench"));
                return 0;
        }
        fprintf(stderr, "usage: %s empty|lmk|lmk-auto|lmk-func|clock\n", argv[0]);
        return 2;
}
