/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The attribution tests' workload: threads that split their CPU time between
 * liblmktest-a (60%), liblmktest-b (30%) and the executable itself (10%),
 * measuring what they really spent where. It prints that truth as JSON, so
 * tests compare lmkd against the workload's own accounting.
 *
 *   lmk-workload THREADS SECONDS     run, then print {"pid":…, "a_ns":…, …}
 *   lmk-shortproc MILLISECONDS       (same source) burn that much CPU in libA and exit
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spin.h"

static uint64_t exe_spin(uint64_t ns) {
        SPIN_BODY(ns);
}

struct share {
        uint64_t seconds_ns;
        uint64_t a, b, exe;
        unsigned seed;
};

static void *worker(void *arg) {
        struct share *s = arg;

        /* Rounds of 6 + 3 + 1 ms, each scaled by a random factor in
         * [0.5, 1.5): a fixed round length would beat with the sampling
         * period and bias every sampler the same way. */
        while (s->a + s->b + s->exe < s->seconds_ns) {
                uint64_t unit = 500000 + (uint64_t) rand_r(&s->seed) % 1000000;

                s->a += liba_spin(6 * unit);
                s->b += libb_spin(3 * unit);
                s->exe += exe_spin(unit);
        }
        return NULL;
}

static int parse_positive(const char *s, unsigned long *ret) {
        char *end;

        errno = 0;
        *ret = strtoul(s, &end, 10);
        return errno == 0 && *end == '\0' && end != s && *ret > 0 ? 0 : -EINVAL;
}

int main(int argc, char **argv) {
        unsigned long threads, seconds, ms;
        struct share *sh;
        pthread_t *tids;
        uint64_t a = 0, b = 0, exe = 0;

#ifdef SHORTPROC
        if (argc != 2 || parse_positive(argv[1], &ms) < 0) {
                fprintf(stderr, "usage: %s MILLISECONDS\n", argv[0]);
                return 2;
        }
        liba_spin(ms * 1000000u);
        return 0;
#endif
        (void) ms;
        if (argc != 3 || parse_positive(argv[1], &threads) < 0 || parse_positive(argv[2], &seconds) < 0 ||
            threads > 256) {
                fprintf(stderr, "usage: %s THREADS SECONDS\n", argv[0]);
                return 2;
        }
        sh = calloc(threads, sizeof(*sh));
        tids = calloc(threads, sizeof(*tids));
        if (!sh || !tids)
                return 1;
        for (unsigned long i = 0; i < threads; i++) {
                sh[i].seconds_ns = seconds * 1000000000u;
                sh[i].seed = (unsigned) (getpid() * 31 + i);
                if (pthread_create(&tids[i], NULL, worker, &sh[i]) != 0)
                        return 1;
        }
        for (unsigned long i = 0; i < threads; i++) {
                pthread_join(tids[i], NULL);
                a += sh[i].a;
                b += sh[i].b;
                exe += sh[i].exe;
        }
        printf("{\"pid\": %d, \"a_ns\": %" PRIu64 ", \"b_ns\": %" PRIu64 ", \"exe_ns\": %" PRIu64 "}\n", (int) getpid(),
               a, b, exe);
        free(sh);
        free(tids);
        return 0;
}
