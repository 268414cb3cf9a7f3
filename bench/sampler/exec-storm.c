/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lmk-bench-storm RATE SECONDS PROGRAM [ARG...]: starts PROGRAM RATE times
 * a second (fork+exec through posix_spawn, at evenly spaced deadlines,
 * catching up when behind) for SECONDS, reaps every child, and prints
 * "spawned N seconds S rate R" with the rate it achieved. */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static double now(void) {
        struct timespec t;

        clock_gettime(CLOCK_MONOTONIC, &t);
        return (double) t.tv_sec + (double) t.tv_nsec / 1e9;
}

static void reap(int flags, long *live) {
        while (*live > 0 && waitpid(-1, NULL, flags) > 0)
                (*live)--;
}

int main(int argc, char **argv) {
        char *e1 = NULL, *e2 = NULL;
        double rate = 0, seconds = 0, start, end, next;
        long spawned = 0, failed = 0, live = 0;

        if (argc >= 4) {
                rate = strtod(argv[1], &e1);
                seconds = strtod(argv[2], &e2);
        }
        if (argc < 4 || *e1 || *e2 || !(rate > 0 && rate <= 100000) || !(seconds > 0 && seconds <= 86400)) {
                fprintf(stderr, "usage: %s RATE SECONDS PROGRAM [ARG...]\n", argv[0]);
                return 2;
        }
        start = now();
        end = start + seconds;
        next = start;
        while (now() < end) {
                double t = now();
                pid_t pid;
                int r;

                if (t < next) {
                        struct timespec d;
                        double w = next - t;

                        d.tv_sec = (time_t) w;
                        d.tv_nsec = (long) ((w - (double) d.tv_sec) * 1e9);
                        nanosleep(&d, NULL);
                }
                next += 1.0 / rate;
                r = posix_spawn(&pid, argv[3], NULL, NULL, argv + 3, environ);
                if (r == 0) {
                        spawned++;
                        live++;
                } else if (failed++ == 0)
                        fprintf(stderr, "posix_spawn %s: %s\n", argv[3], strerror(r));
                reap(WNOHANG, &live);
        }
        reap(0, &live);
        printf("spawned %ld seconds %.3f rate %.1f failed %ld\n", spawned, now() - start,
               (double) spawned / (now() - start), failed);
        return failed > spawned ? 1 : 0;
}
