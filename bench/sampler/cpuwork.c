/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A fixed amount of CPU-bound work on N threads; prints the wall time it
 * took, so a sampler's slowdown of applications can be measured. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static unsigned long iterations;

static void *work(void *arg) {
        volatile double x = 1.0;

        for (unsigned long i = 0; i < iterations; i++)
                x = x * 1.0000001 + 1e-9;
        return NULL;
}

int main(int argc, char **argv) {
        struct timespec a, b;
        pthread_t t[64];
        int n;

        char *e1 = NULL, *e2 = NULL;

        if (argc == 3) {
                n = (int) strtol(argv[1], &e1, 10);
                iterations = strtoul(argv[2], &e2, 10);
        }
        if (argc != 3 || *e1 || *e2 || n < 1 || n > 64 || iterations == 0) {
                fprintf(stderr, "usage: %s THREADS ITERATIONS\n", argv[0]);
                return 2;
        }
        clock_gettime(CLOCK_MONOTONIC, &a);
        for (int i = 0; i < n; i++)
                pthread_create(&t[i], NULL, work, NULL);
        for (int i = 0; i < n; i++)
                pthread_join(t[i], NULL);
        clock_gettime(CLOCK_MONOTONIC, &b);
        printf("%.6f\n", (double) (b.tv_sec - a.tv_sec) + (double) (b.tv_nsec - a.tv_nsec) / 1e9);
        return 0;
}
