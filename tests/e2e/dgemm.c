/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A program that spends its time in a BLAS it is told to load:
 *
 *   lmk-dgemm LIBRARY N SECONDS
 *
 * dlopen()s LIBRARY (a libblas.so.3 of some implementation, by its real
 * path) and multiplies two N×N matrices with dgemm_ until SECONDS have
 * passed. The findings test runs it with the reference BLAS and with an
 * optimised one; the library is named at run time so that one build works
 * with whichever the machine has. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef void dgemm_fn(const char *ta, const char *tb, const int *m, const int *n, const int *k,
                      const double *alpha, const double *a, const int *lda, const double *b, const int *ldb,
                      const double *beta, double *c, const int *ldc);

static double now(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
        double alpha = 1, beta = 0, *a, *b, *c, end;
        dgemm_fn *dgemm;
        unsigned long calls = 0;
        void *lib;
        int n;

        if (argc != 4 || (n = atoi(argv[2])) < 1 || n > 4096) {
                fprintf(stderr, "usage: lmk-dgemm LIBRARY N SECONDS\n");
                return 2;
        }
        lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
                fprintf(stderr, "lmk-dgemm: %s\n", dlerror());
                return 1;
        }
        dgemm = (dgemm_fn *) dlsym(lib, "dgemm_");
        if (!dgemm) {
                fprintf(stderr, "lmk-dgemm: %s has no dgemm_\n", argv[1]);
                return 1;
        }
        a = calloc((size_t) n * (size_t) n, sizeof(double));
        b = calloc((size_t) n * (size_t) n, sizeof(double));
        c = calloc((size_t) n * (size_t) n, sizeof(double));
        if (!a || !b || !c)
                return 1;
        for (int i = 0; i < n * n; i++) {
                a[i] = (double) (i % 7) / 7.0;
                b[i] = (double) (i % 5) / 5.0;
        }
        end = now() + atof(argv[3]);
        while (now() < end) {
                dgemm("N", "N", &n, &n, &n, &alpha, a, &n, b, &n, &beta, c, &n);
                calls++;
        }
        printf("{\"calls\": %lu, \"c0\": %g}\n", calls, c[0]);
        free(a);
        free(b);
        free(c);
        return 0;
}
