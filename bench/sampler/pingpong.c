/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lmk-bench-pingpong ITERATIONS: two MPI ranks send an 8-byte message back
 * and forth ITERATIONS times (Open MPI's shared-memory transport on one
 * node). Rank 0 prints "time S" for the loop alone (after a barrier, so
 * start-up is excluded); every rank prints "rusage RANK CPU_S FAULTS
 * SWITCHES" from getrusage just before it exits, for comparison with lmkd's
 * totals. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

int main(int argc, char **argv) {
        long iterations = argc == 2 ? strtol(argv[1], NULL, 10) : 0;
        double buf = 0, t0, t1;
        struct rusage ru;
        int rank, size;

        MPI_Init(&argc, &argv);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        if (iterations < 1 || size != 2) {
                if (rank == 0)
                        fprintf(stderr, "usage: mpirun -np 2 %s ITERATIONS\n", argv[0]);
                MPI_Finalize();
                return 2;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        for (long i = 0; i < iterations; i++) {
                if (rank == 0) {
                        MPI_Send(&buf, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
                        MPI_Recv(&buf, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else {
                        MPI_Recv(&buf, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                        buf += 1;
                        MPI_Send(&buf, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
                }
        }
        t1 = MPI_Wtime();
        if (rank == 0)
                printf("time %.6f\n", t1 - t0);
        MPI_Finalize();
        getrusage(RUSAGE_SELF, &ru);
        printf("rusage %d %.6f %ld %ld\n", rank,
               (double) ru.ru_utime.tv_sec + (double) ru.ru_utime.tv_usec / 1e6 + (double) ru.ru_stime.tv_sec +
                       (double) ru.ru_stime.tv_usec / 1e6,
               ru.ru_minflt + ru.ru_majflt, ru.ru_nvcsw + ru.ru_nivcsw);
        fflush(stdout);
        return 0;
}
