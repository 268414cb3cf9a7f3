/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The scaling referee: an MPI program whose computation and communication
 * scale with the number of ranks p in a known way, and that measures both
 * itself.
 *
 * Every rank computes (A/p + B) units in total, in ITERATIONS equal parts
 * (a dependent chain of floating-point operations in this executable: a
 * unit is work, not time). After each part it communicates: round(C log2 p)
 * reductions of a vector of doubles inside the MPI library
 * (MPI_Reduce_local, CPU work in libmpi and its op plugins, independent of
 * how the ranks are scheduled), then an MPI_Iallreduce that keeps the
 * ranks in step, waited for by MPI_Test every 200 µs with the rank asleep
 * in between. So per rank computation ~ a/p + b and communication ~
 * c3 log2 p + c4 (MPI_Init and the polls). The waits sleep on purpose: with
 * more ranks than CPUs, a rank that spins for a partner without a CPU burns
 * time that depends on the scheduler, not on p, and no form can predict it
 * (docs/scaling.md).
 *
 * Samples see each rank's CPU time, all its threads, so the program
 * measures CPU time: useful = the main thread's CPU time outside MPI calls
 * (CLOCK_THREAD_CPUTIME_ID around each call), elapsed = the process's CPU
 * time (CLOCK_PROCESS_CPUTIME_ID, from its start, so the loading of the
 * MPI libraries and MPI_Init's helper threads count) after MPI_Finalize;
 * communication = elapsed - useful. Each rank writes its figures, with its
 * wall-clock time, as JSON to OUTPUT-RANK.json.
 *
 * Usage: lmk-mpi-scaling A B C ITERATIONS LOOPS_PER_UNIT OUTPUT
 *        (A, B: units; C: reductions per part per doubling of p) */
#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "referee-work.h"

#define VECTOR 16384

static double parse(const char *s) {
        char *end;
        double v;

        errno = 0;
        v = strtod(s, &end);
        if (errno || end == s || *end || !(v >= 0) || !isfinite(v)) {
                fprintf(stderr, "not a number >= 0: %s\n", s);
                exit(2);
        }
        return v;
}

int main(int argc, char **argv) {
        static double in[VECTOR], inout[VECTOR];
        double w0 = referee_clock(CLOCK_MONOTONIC), mpi_cpu = 0, t, useful, process, one = 1, sum;
        char path[4096];
        FILE *f;
        double a, b, c, iterations, unit;
        MPI_Request req;
        long reductions;
        int rank, size;

        if (argc != 7) {
                fprintf(stderr, "usage: %s A B C ITERATIONS LOOPS_PER_UNIT OUTPUT.json\n", argv[0]);
                return 2;
        }
        a = parse(argv[1]);
        b = parse(argv[2]);
        c = parse(argv[3]);
        iterations = parse(argv[4]);
        unit = parse(argv[5]);
        if (iterations < 1) {
                fprintf(stderr, "ITERATIONS must be at least 1\n");
                return 2;
        }

        t = referee_clock(CLOCK_THREAD_CPUTIME_ID);
        MPI_Init(&argc, &argv);
        mpi_cpu += referee_clock(CLOCK_THREAD_CPUTIME_ID) - t;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        reductions = lround(c * log2((double) size));
        for (int i = 0; i < VECTOR; i++)
                in[i] = 1e-6 * i;

        for (long it = 0; it < (long) iterations; it++) {
                referee_compute((long) ((a / size + b) * unit / iterations));
                t = referee_clock(CLOCK_THREAD_CPUTIME_ID);
                for (long k = 0; k < reductions; k++)
                        MPI_Reduce_local(in, inout, VECTOR, MPI_DOUBLE, MPI_SUM);
                MPI_Iallreduce(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
                for (int done = 0;;) {
                        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
                        if (done)
                                break;
                        nanosleep(&(struct timespec) { .tv_nsec = 200000 }, NULL);
                }
                mpi_cpu += referee_clock(CLOCK_THREAD_CPUTIME_ID) - t;
        }
        t = referee_clock(CLOCK_THREAD_CPUTIME_ID);
        useful = t - mpi_cpu; /* the main thread outside MPI */
        referee_sink += inout[VECTOR - 1] + sum;
        MPI_Finalize();
        mpi_cpu += referee_clock(CLOCK_THREAD_CPUTIME_ID) - t;
        /* MPI_Finalize's work counts: samples see it */
        process = referee_clock(CLOCK_PROCESS_CPUTIME_ID);

        if (snprintf(path, sizeof(path), "%s-%d.json", argv[6], rank) >= (int) sizeof(path)) {
                fprintf(stderr, "output path too long: %s\n", argv[6]);
                return 1;
        }
        f = fopen(path, "we");
        if (!f) {
                perror(path);
                return 1;
        }
        fprintf(f, "{\"p\": %d, \"reductions_per_part\": %ld, \"rank\": %d, \"useful_cpu\": %.6f, "
                   "\"process_cpu\": %.6f, \"communication_cpu\": %.6f, \"mpi_thread_cpu\": %.6f, "
                   "\"wall\": %.6f}\n",
                size, reductions, rank, useful, process, process - useful, mpi_cpu, referee_clock(CLOCK_MONOTONIC) - w0);
        if (fclose(f) != 0) {
                perror(path);
                return 1;
        }
        return 0;
}
