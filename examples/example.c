/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * example-c SECONDS [THREADS]: liblmk's phase markers in a C time-stepping
 * loop. Every thread runs timesteps for SECONDS of wall time; each timestep
 * spends 2 ms of the thread's CPU time in "compute" and 1 ms in "io", both
 * inside "timestep", so lmkd reports timestep/compute and timestep/io at
 * 2:1. At the end it prints the CPU seconds it measured per phase as JSON.
 *
 *   cc -O2 example.c $(pkg-config --cflags --libs lmk) -pthread -o example-c
 */

#include <errno.h>
#include <lmk.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_THREADS 256

struct worker {
        pthread_t thread;
        double seconds;
        long timesteps;
        double compute_s, io_s;
};

static double now(clockid_t clock) {
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/* Floating-point work until the thread has used `seconds` more CPU time;
 * returns the CPU time it used. */
static double burn(double seconds) {
        double start = now(CLOCK_THREAD_CPUTIME_ID), t;
        volatile double x = 1.0;

        do {
                for (int i = 0; i < 2000; i++)
                        x = x * 1.0000001 + 1e-9;
                t = now(CLOCK_THREAD_CPUTIME_ID) - start;
        } while (t < seconds);
        return t;
}

static void *run(void *arg) {
        struct worker *w = arg;
        double end = now(CLOCK_MONOTONIC) + w->seconds;

        while (now(CLOCK_MONOTONIC) < end) {
                LMK_BEGIN("timestep");

                LMK_BEGIN("compute");
                w->compute_s += burn(0.002);
                LMK_END("compute");

                LMK_BEGIN("io");
                w->io_s += burn(0.001);
                LMK_END("io");

                LMK_END("timestep");
                w->timesteps++;
        }
        return NULL;
}

static int parse_double(const char *s, double *ret) {
        char *end;
        double v;

        errno = 0;
        v = strtod(s, &end);
        if (errno != 0 || end == s || *end != '\0' || !(v >= 0))
                return -EINVAL;
        *ret = v;
        return 0;
}

int main(int argc, char **argv) {
        static struct worker workers[MAX_THREADS];
        double seconds, threads = 1, compute_s = 0, io_s = 0;
        long timesteps = 0;
        int n, r;

        if (argc < 2 || argc > 3 || parse_double(argv[1], &seconds) < 0 ||
            (argc == 3 && (parse_double(argv[2], &threads) < 0 || threads < 1 || threads > MAX_THREADS))) {
                fprintf(stderr, "usage: %s SECONDS [THREADS]\n", argv[0]);
                return 2;
        }
        n = (int) threads;

        for (int i = 0; i < n; i++) {
                workers[i].seconds = seconds;
                r = pthread_create(&workers[i].thread, NULL, run, &workers[i]);
                if (r != 0) {
                        fprintf(stderr, "pthread_create: error %d\n", r);
                        return 1;
                }
        }
        for (int i = 0; i < n; i++) {
                pthread_join(workers[i].thread, NULL);
                timesteps += workers[i].timesteps;
                compute_s += workers[i].compute_s;
                io_s += workers[i].io_s;
        }

        printf("{\"threads\": %d, \"timesteps\": %ld, \"compute_s\": %.6f, \"io_s\": %.6f}\n",
               n, timesteps, compute_s, io_s);
        return 0;
}
