/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A program with hot functions of its own, for the function tests
 * (tests/functions): rounds of work split about 35/25/20/12/8 between
 * five functions, each round's length drawn at random so that it never
 * beats with a sampling period.
 *
 *   lmk-func-hot SECONDS        rounds for that long (wall clock)
 *   lmk-func-hot --ms MS        the same for MS milliseconds: a short life
 *   lmk-func-hot SECONDS --then-sleep   then sleep until killed
 *
 * Built again with -DREBUILT (lmk-func-hot-rebuilt): other code and other
 * function names ("..._v2"), another build-id, as a user's rebuild. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef REBUILT
#define NAME(f) f##_v2
#define STEP 1.0000003
#else
#define NAME(f) f
#define STEP 1.0000001
#endif

static volatile double sink;

/* global, so that each keeps its own symbol whatever the optimiser does */
void NAME(kernel_alpha)(unsigned long n);
void NAME(kernel_beta)(unsigned long n);
void NAME(kernel_gamma)(unsigned long n);
void NAME(kernel_delta)(unsigned long n);
void NAME(kernel_epsilon)(unsigned long n);

/* Dependent chains of different lengths and constants: no two of them
 * the same code, so none is folded into another. */
__attribute__((noinline)) void NAME(kernel_alpha)(unsigned long n) {
        double x = 1.0;

        for (unsigned long i = 0; i < n; i++)
                x = x * STEP + 1e-9;
        sink = x;
}

__attribute__((noinline)) void NAME(kernel_beta)(unsigned long n) {
        double x = 2.0;

        for (unsigned long i = 0; i < n; i++)
                x = x * STEP - 2e-9;
        sink = x;
}

__attribute__((noinline)) void NAME(kernel_gamma)(unsigned long n) {
        double x = 3.0;

        for (unsigned long i = 0; i < n; i++)
                x = x * STEP + 3e-9;
        sink = x;
}

__attribute__((noinline)) void NAME(kernel_delta)(unsigned long n) {
        double x = 4.0;

        for (unsigned long i = 0; i < n; i++)
                x = x * STEP - 4e-9;
        sink = x;
}

__attribute__((noinline)) void NAME(kernel_epsilon)(unsigned long n) {
        double x = 5.0;

        for (unsigned long i = 0; i < n; i++)
                x = x * STEP + 5e-9;
        sink = x;
}

static double now(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
        unsigned seed = (unsigned) getpid() ^ (unsigned) time(NULL);
        bool then_sleep = argc == 3 && strcmp(argv[2], "--then-sleep") == 0;
        double seconds, end;
        char *e;

        if (argc == 3 && strcmp(argv[1], "--ms") == 0)
                seconds = strtod(argv[2], &e) / 1000.0;
        else if (argc == 2 || then_sleep)
                seconds = strtod(argv[1], &e);
        else {
                fprintf(stderr, "usage: lmk-func-hot SECONDS [--then-sleep] | --ms MS\n");
                return 2;
        }
        if (*e != '\0' || !(seconds > 0)) {
                fprintf(stderr, "lmk-func-hot: bad time\n");
                return 2;
        }
        end = now() + seconds;
        /* rounds of 100 units of work (well under a millisecond), each scaled by [0.5, 1.5) */
        do {
                unsigned long unit = 500 + (unsigned long) rand_r(&seed) % 1000;

                NAME(kernel_alpha)(35 * unit);
                NAME(kernel_beta)(25 * unit);
                NAME(kernel_gamma)(20 * unit);
                NAME(kernel_delta)(12 * unit);
                NAME(kernel_epsilon)(8 * unit);
        } while (now() < end);
        while (then_sleep)
                pause();
        return 0;
}
