/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The coverage benchmark's workload: one thread alternating slices of work
 * in libcov-a and libcov-b, timing each slice with its thread CPU clock, so
 * that it knows the true share of its CPU time spent in libcov-a. Prints
 * that truth as JSON:
 *
 *   lmk-cov-workload MODE SECONDS SHARE CYCLE_US SEED [LINGER]
 *
 * MODE random: each cycle is a slice in A then one in B, of lengths drawn
 *   uniformly from [0, 2·SHARE·CYCLE_US] and [0, 2·(1-SHARE)·CYCLE_US];
 * MODE periodic: A until SHARE·CYCLE_US into each cycle, then B to its
 *   end, the cycles paced by CLOCK_MONOTONIC as a time-stepped program
 *   would be: with CYCLE_US the sampling period, every sample of an
 *   unjittered sampler hits the same point of the cycle (aliasing).
 * SECONDS of CPU time in all. The truth is a_ns / the process's CPU time
 * at exit (start-up and exit included, as they are sampled too).
 * LINGER: seconds to sleep after printing, before exiting, so that lmkd
 *   drains its rings while the process still lives and reads its job from
 *   its environment (a run shorter than lmkd's drain is otherwise system
 *   work, not the job's: docs/uncertainty.md). Asleep, it is not sampled. */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cov-spin.h"

static uint64_t cpu_ns(clockid_t clock) {
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static double uniform(unsigned *seed) {
        return (double) rand_r(seed) / ((double) RAND_MAX + 1.0);
}

static int parse_double(const char *s, double min, double max, double *ret) {
        char *end;

        errno = 0;
        *ret = strtod(s, &end);
        return errno == 0 && *end == '\0' && end != s && *ret >= min && *ret <= max ? 0 : -EINVAL;
}

/* Iterations of the spin loop per ns of CPU time, measured in the
 * executable's own copy of the loop, so no library's share is touched. */
static double calibrate(void) {
        volatile double x = 1.0;
        uint64_t t0 = cpu_ns(CLOCK_THREAD_CPUTIME_ID), t;
        const uint64_t n = 2000000;

        for (uint64_t i = 0; i < n; i++)
                x = x * 1.0000001 + 1e-9;
        t = cpu_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
        return t > 0 ? (double) n / (double) t : 1.0;
}

/* Work in lib until the monotonic clock passes deadline, in chunks of
 * about 20 µs; the clock is read in the vDSO, without a system call. */
static void spin_until(void (*spin)(uint64_t), uint64_t deadline, double per_ns) {
        uint64_t chunk = (uint64_t) (20000 * per_ns) + 1;

        while (cpu_ns(CLOCK_MONOTONIC) < deadline)
                spin(chunk);
}

int main(int argc, char **argv) {
        double seconds, share, cycle_us, seed_d, per_ns, linger = 0;
        uint64_t a_ns = 0, b_ns = 0, slices = 0, budget, cycle_start, t0, t1, t2, total;
        unsigned seed;
        bool periodic;

        if ((argc != 6 && argc != 7) || (strcmp(argv[1], "random") != 0 && strcmp(argv[1], "periodic") != 0) ||
            parse_double(argv[2], 0.01, 3600, &seconds) < 0 || parse_double(argv[3], 0.0, 1.0, &share) < 0 ||
            parse_double(argv[4], 1, 10000000, &cycle_us) < 0 || parse_double(argv[5], 0, 4294967295.0, &seed_d) < 0 ||
            (argc == 7 && parse_double(argv[6], 0, 60, &linger) < 0)) {
                fprintf(stderr, "usage: %s random|periodic SECONDS SHARE CYCLE_US SEED [LINGER]\n", argv[0]);
                return 2;
        }
        periodic = strcmp(argv[1], "periodic") == 0;
        seed = (unsigned) seed_d;
        per_ns = calibrate();
        budget = (uint64_t) (seconds * 1e9);

        cycle_start = cpu_ns(CLOCK_MONOTONIC);
        t0 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
        while (a_ns + b_ns < budget) {
                double la = share * cycle_us * 1e3, lb = (1.0 - share) * cycle_us * 1e3;

                if (periodic) {
                        spin_until(cova_spin, cycle_start + (uint64_t) la, per_ns);
                        t1 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
                        cycle_start += (uint64_t) (cycle_us * 1e3);
                        spin_until(covb_spin, cycle_start, per_ns);
                } else {
                        cova_spin((uint64_t) (la * 2.0 * uniform(&seed) * per_ns));
                        t1 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
                        covb_spin((uint64_t) (lb * 2.0 * uniform(&seed) * per_ns));
                }
                t2 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
                a_ns += t1 - t0;
                b_ns += t2 - t1;
                t0 = t2;
                slices++;
        }
        total = cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
        printf("{\"a_ns\": %" PRIu64 ", \"b_ns\": %" PRIu64 ", \"process_ns\": %" PRIu64
               ", \"cycles\": %" PRIu64 ", \"truth\": %.6f}\n",
               a_ns, b_ns, total, slices, total > 0 ? (double) a_ns / (double) total : 0.0);
        if (fflush(stdout) != 0) {
                fprintf(stderr, "%s: writing the result failed: %s\n", argv[0], strerror(errno));
                return 1;
        }
        if (linger > 0) {
                struct timespec ts = { .tv_sec = (time_t) linger,
                                       .tv_nsec = (long) ((linger - (double) (time_t) linger) * 1e9) };

                while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                        ;
        }
        return 0;
}
