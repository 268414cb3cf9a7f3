/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The POP referee: an MPI program with a known imbalance that measures
 * its own time in MPI and reports its own load balance and communication
 * efficiency.
 *
 * Every iteration, rank 0 computes 1.0 units and every other rank 0.3,
 * then all meet in MPI_Allreduce (the others wait 0.7 units there); then
 * rank 1 computes another 0.3 units while rank 0 waits for its result in
 * MPI_Recv. So useful work is 1.0 on rank 0 and 0.6 on rank 1 (0.3 on
 * others), and an iteration takes about 1.3 units: with two ranks load
 * balance = 0.8 / 1.0 = 0.8, communication efficiency = 1.0 / 1.3.
 * A unit is a fixed amount of work (a dependent chain of floating-point
 * operations), not a time, so a rank slowed by a busy machine takes longer.
 *
 * Each rank measures with clock_gettime (CLOCK_MONOTONIC) from before
 * MPI_Init to the end of the last iteration (elapsed), and with MPI_Wtime
 * around every MPI call, MPI_Init included (time in MPI); useful =
 * elapsed - MPI. The same split is also measured in the thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID), which is what samples see when the machine
 * takes CPU time away from the ranks. Rank 0 writes the figures as JSON.
 *
 * Usage: lmk-mpi-imbalance ITERATIONS LOOPS_PER_UNIT OUTPUT.json */
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "referee-work.h"

static double mpi_wall, mpi_cpu;
static double t_wall, t_cpu;

static void enter(void) {
        t_wall = MPI_Wtime();
        t_cpu = referee_clock(CLOCK_THREAD_CPUTIME_ID);
}

static void leave(void) {
        mpi_wall += MPI_Wtime() - t_wall;
        mpi_cpu += referee_clock(CLOCK_THREAD_CPUTIME_ID) - t_cpu;
}

static long parse_long(const char *s) {
        char *end;
        long v;

        errno = 0;
        v = strtol(s, &end, 10);
        if (errno || end == s || *end || v <= 0) {
                fprintf(stderr, "not a positive number: %s\n", s);
                exit(2);
        }
        return v;
}

int main(int argc, char **argv) {
        double w0 = referee_clock(CLOCK_MONOTONIC), c0 = referee_clock(CLOCK_THREAD_CPUTIME_ID), init_wall, init_cpu;
        double fig[4], *all = NULL, in = 1.0, out;
        long iterations, unit;
        int rank, size;

        if (argc != 4) {
                fprintf(stderr, "usage: %s ITERATIONS LOOPS_PER_UNIT OUTPUT.json\n", argv[0]);
                return 2;
        }
        iterations = parse_long(argv[1]);
        unit = parse_long(argv[2]);

        MPI_Init(&argc, &argv);
        /* MPI_Init is time in MPI; MPI_Wtime is only valid after it */
        init_wall = referee_clock(CLOCK_MONOTONIC) - w0;
        init_cpu = referee_clock(CLOCK_THREAD_CPUTIME_ID) - c0;
        mpi_wall = init_wall;
        mpi_cpu = init_cpu;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);

        for (long it = 0; it < iterations; it++) {
                referee_compute(rank == 0 ? unit : unit * 3 / 10);
                enter();
                MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                leave();
                if (size > 1) {
                        if (rank == 1) {
                                referee_compute(unit * 3 / 10);
                                enter();
                                MPI_Send(&in, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
                                leave();
                        } else if (rank == 0) {
                                enter();
                                MPI_Recv(&out, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                                leave();
                        }
                }
        }
        fig[0] = referee_clock(CLOCK_MONOTONIC) - w0;
        fig[1] = mpi_wall;
        fig[2] = referee_clock(CLOCK_THREAD_CPUTIME_ID) - c0;
        fig[3] = mpi_cpu;

        if (rank == 0 && !(all = malloc(sizeof(fig) * (size_t) size)))
                MPI_Abort(MPI_COMM_WORLD, 1);
        MPI_Gather(fig, 4, MPI_DOUBLE, all, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (rank == 0) {
                double max_u = 0, sum_u = 0, max_e = 0, max_uc = 0, sum_uc = 0, max_ec = 0;
                FILE *f = fopen(argv[3], "we");

                if (!f) {
                        perror(argv[3]);
                        MPI_Abort(MPI_COMM_WORLD, 1);
                }
                fprintf(f, "{\"ranks\": [");
                for (int r = 0; r < size; r++) {
                        double *x = all + 4 * r, u = x[0] - x[1], uc = x[2] - x[3];

                        fprintf(f, "%s{\"rank\": %d, \"elapsed\": %.6f, \"mpi\": %.6f, \"useful\": %.6f, "
                                   "\"cpu\": %.6f, \"mpi_cpu\": %.6f, \"useful_cpu\": %.6f}",
                                r ? ", " : "", r, x[0], x[1], u, x[2], x[3], uc);
                        sum_u += u;
                        max_u = u > max_u ? u : max_u;
                        max_e = x[0] > max_e ? x[0] : max_e;
                        sum_uc += uc;
                        max_uc = uc > max_uc ? uc : max_uc;
                        max_ec = x[2] > max_ec ? x[2] : max_ec;
                }
                fprintf(f, "],\n \"load_balance\": %.6f, \"communication_efficiency\": %.6f,\n"
                           " \"load_balance_cpu\": %.6f, \"communication_efficiency_cpu\": %.6f,\n"
                           " \"init_seconds\": %.6f}\n",
                        sum_u / size / max_u, max_u / max_e, sum_uc / size / max_uc, max_uc / max_ec, init_wall);
                if (fclose(f) != 0) {
                        perror(argv[3]);
                        MPI_Abort(MPI_COMM_WORLD, 1);
                }
        }
        free(all);
        MPI_Finalize();
        return 0;
}
