/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The families of functions (store/analysis/function-family.c): names as
 * lmkd sends them from real libraries, and names that must match
 * nothing. */
#include <stddef.h>

#include "analysis/function-family.h"
#include "macro.h"
#include "tests.h"

static void check(const char *name, const char *family) {
        const char *got = function_family(name);

        if (!family ? got != NULL : !got || !streq(got, family))
                test_fail("%s: expected %s, got %s", name, family ?: "(none)", got ?: "(none)");
}

/* OpenBLAS's .dynsym (Debian 12's libopenblas0-pthread), the reference
 * BLAS's Fortran symbols, CBLAS. */
TEST(blas) {
        static const char *const level3[] = { "dgemm_", "dgemm_kernel_HASWELL", "dgemm_itcopy_HASWELL",
                                              "dgemm_oncopy_ZEN", "dgemm_beta_SKYLAKEX", "cblas_dgemm", "sgemm_nn",
                                              "zgemm3m_", "dtrsm_kernel_LN_HASWELL", "dsyrk_UN", "ztrmm_",
                                              "cblas_zherk", "dgemmt_" };
        static const char *const level2[] = { "dgemv_", "dgemv_t_HASWELL", "cblas_sgemv", "dger_k", "ztrsv_NUN",
                                              "zhemv_U", "dsymv_L" };
        static const char *const level1[] = { "daxpy_", "daxpy_k_HASWELL", "ddot_k", "cblas_ddot", "dnrm2_",
                                              "idamax_", "dscal_k", "zdotc_", "drot_k", "dcopy_" };

        for (size_t i = 0; i < ELEMENTSOF(level3); i++)
                check(level3[i], "blas-level3");
        for (size_t i = 0; i < ELEMENTSOF(level2); i++)
                check(level2[i], "blas-level2");
        for (size_t i = 0; i < ELEMENTSOF(level1); i++)
                check(level1[i], "blas-level1");
}

TEST(others) {
        check("dgetrf_", "lapack");
        check("dpotrf_U_single", "lapack");
        check("LAPACKE_dgesv", "lapack");
        check("fftw_execute", "fft");
        check("n1fv_32_avx2", "fft");
        check("MPI_Allreduce", "mpi");
        check("mca_btl_vader_component_progress", "mpi");
        check("ucp_worker_progress", "mpi");
        check("__memmove_avx_unaligned_erms", "libc-memory");
        check("memcpy", "libc-memory");
        check("__strlen_avx2", "libc-string");
        check("_int_malloc", "malloc");
        check("deflate_slow", "compression");
        check("longest_match", "compression");
        check("inflate_fast", "compression");
        check("crc32_z", "compression");
        check("ZSTD_compressBlock_fast", "compression");
        check("__exp_fma", "math");
        check("__ieee754_pow_fma", "math");
        check("exp", "math");
        check("sincos", "math");
        check("GOMP_parallel", "openmp-runtime");
        check("__kmp_fork_barrier", "openmp-runtime");
}

/* Names that only look alike: a user's own code, C++ and Fortran. */
TEST(none) {
        check(NULL, NULL);
        check("", NULL);
        check("main", NULL);
        check("solve_kernel", NULL);
        check("dgemm", "blas-level3");
        check("my_dgemm", NULL);
        check("agemm_", NULL);
        check("Matrix::dgemm(double*)", NULL);
        check("heat_mod::step", NULL);
        check("std::vector<int>::push_back(int const&)", NULL);
        check("experiment", NULL);
        check("logger_init", NULL);
        check("cosmology_step", NULL);
        check("expand_tree", NULL);
        check("free_list_push", NULL);
}

TEST(known) {
        ASSERT_TRUE(function_family_is_known("blas-level3"));
        ASSERT_TRUE(function_family_is_known("compression"));
        ASSERT_TRUE(!function_family_is_known("openblas"));
        ASSERT_TRUE(!function_family_is_known(""));
}

int main(void) {
        RUN(blas);
        RUN(others);
        RUN(none);
        RUN(known);
        return 0;
}
