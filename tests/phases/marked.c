/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The phase tests' workload: THREADS threads each run timesteps of
 * "solve" (50% of their CPU time), "io" (25%), both inside "timestep", and
 * unmarked work (25%), in rounds of random length so that no round beats
 * with the sampling period. It reports the CPU time it really spent in each.
 *
 *   lmk-marked THREADS SECONDS [hot | io=N]
 *
 * With "hot", each thread also calls a marker "hot" in a tight loop, which
 * liblmk must switch off while the program goes on. With "io=N" each
 * round spends N times as long in "io" (the same in the others): a run of
 * the same code with one phase slower, for comparing two runs.
 */
#include <errno.h>
#include <inttypes.h>
#include <lmk.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../sampler/spin.h"

struct worker {
        pthread_t thread;
        uint64_t seconds_ns;
        uint64_t solve, io, unmarked;
        unsigned seed;
        int hot;
        unsigned io_factor;
};

static uint64_t spin(uint64_t ns) {
        SPIN_BODY(ns);
}

static void hot_loop(void) {
        volatile int x = 0;

        for (int i = 0; i < 200000; i++) {
                LMK_BEGIN("hot");
                x++;
                LMK_END("hot");
        }
}

static void *run(void *arg) {
        struct worker *w = arg;

        while (w->solve + w->io + w->unmarked < w->seconds_ns) {
                uint64_t unit = 250000 + (uint64_t) rand_r(&w->seed) % 500000;

                LMK_BEGIN("timestep");
                LMK_BEGIN("solve");
                w->solve += spin(4 * unit);
                LMK_END("solve");
                LMK_BEGIN("io");
                w->io += spin(2 * unit * w->io_factor);
                LMK_END("io");
                LMK_END("timestep");
                w->unmarked += spin(2 * unit);
                if (w->hot)
                        hot_loop();
        }
        return NULL;
}

int main(int argc, char **argv) {
        struct worker w[64];
        unsigned long threads, seconds, io_factor = 1;
        uint64_t solve = 0, io = 0, unmarked = 0;
        int hot = 0;
        char *end;

        if (argc < 3 || argc > 4)
                goto usage;
        errno = 0;
        threads = strtoul(argv[1], &end, 10);
        if (errno || *end || threads < 1 || threads > 64)
                goto usage;
        seconds = strtoul(argv[2], &end, 10);
        if (errno || *end || seconds < 1)
                goto usage;
        if (argc == 4 && strcmp(argv[3], "hot") == 0)
                hot = 1;
        else if (argc == 4 && strncmp(argv[3], "io=", 3) == 0) {
                io_factor = strtoul(argv[3] + 3, &end, 10);
                if (errno || *end || io_factor < 1 || io_factor > 100)
                        goto usage;
        } else if (argc == 4)
                goto usage;

        memset(w, 0, sizeof(w));
        for (unsigned long i = 0; i < threads; i++) {
                w[i].seconds_ns = seconds * 1000000000u;
                w[i].seed = (unsigned) (i * 7919 + 17);
                w[i].hot = hot;
                w[i].io_factor = (unsigned) io_factor;
                if (pthread_create(&w[i].thread, NULL, run, &w[i]) != 0)
                        return 1;
        }
        for (unsigned long i = 0; i < threads; i++) {
                pthread_join(w[i].thread, NULL);
                solve += w[i].solve;
                io += w[i].io;
                unmarked += w[i].unmarked;
        }
        printf("{\"pid\": %d, \"solve_ns\": %" PRIu64 ", \"io_ns\": %" PRIu64 ", \"unmarked_ns\": %" PRIu64
               ", \"hot_state\": %d}\n",
               (int) getpid(), solve, io, unmarked, lmk_region_state("hot"));
        return 0;
usage:
        fprintf(stderr, "usage: %s THREADS SECONDS [hot | io=N]\n", argv[0]);
        return 2;
}
