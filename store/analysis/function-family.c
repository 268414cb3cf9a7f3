/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The families of functions: a table of name patterns (fnmatch), the first
 * match wins. BLAS and LAPACK routines are matched with their precision
 * letter ([sdcz]), with or without the CBLAS prefix, Fortran's trailing
 * underscore and OpenBLAS's kernel and copy suffixes (_kernel_HASWELL,
 * _itcopy, _nn, …). Kept as data: docs/kernels.md shows the same table
 * and tests/unit/test-function-family.c checks it name by name. */
#include <fnmatch.h>
#include <stddef.h>
#include <string.h>

#include "analysis/function-family.h"
#include "macro.h"

typedef struct FamilyPatterns {
        const char *family;
        const char *const *patterns;
} FamilyPatterns;

/* A BLAS or LAPACK routine of any precision: the name, the Fortran and
 * suffixed forms, and CBLAS's. */
#define ROUTINE(op) "[sdcz]" op, "[sdcz]" op "_*", "cblas_[sdcz]" op, "[sdcz]" op "[0-9]m*"

static const FamilyPatterns table[] = {
        { "blas-level3", (const char *const[]) {
                ROUTINE("gemm"), ROUTINE("gemmt"), ROUTINE("symm"), ROUTINE("hemm"), ROUTINE("syrk"),
                ROUTINE("herk"), ROUTINE("syr2k"), ROUTINE("her2k"), ROUTINE("trmm"), ROUTINE("trsm"),
                "gemm_*", "trsm_*", "syrk_*", NULL } },
        { "blas-level2", (const char *const[]) {
                ROUTINE("gemv"), ROUTINE("gbmv"), ROUTINE("hemv"), ROUTINE("hbmv"), ROUTINE("hpmv"),
                ROUTINE("symv"), ROUTINE("sbmv"), ROUTINE("spmv"), ROUTINE("trmv"), ROUTINE("tbmv"),
                ROUTINE("tpmv"), ROUTINE("trsv"), ROUTINE("tbsv"), ROUTINE("tpsv"), ROUTINE("ger"),
                ROUTINE("geru"), ROUTINE("gerc"), ROUTINE("her"), ROUTINE("hpr"), ROUTINE("her2"),
                ROUTINE("hpr2"), ROUTINE("syr"), ROUTINE("spr"), ROUTINE("syr2"), ROUTINE("spr2"), NULL } },
        { "blas-level1", (const char *const[]) {
                ROUTINE("axpy"), ROUTINE("axpby"), ROUTINE("dot"), ROUTINE("dotu"), ROUTINE("dotc"),
                ROUTINE("nrm2"), ROUTINE("asum"), ROUTINE("scal"), ROUTINE("copy"), ROUTINE("swap"),
                ROUTINE("rot"), ROUTINE("rotg"), ROUTINE("rotm"), ROUTINE("rotmg"),
                "i[sdcz]amax", "i[sdcz]amax_*", "cblas_i[sdcz]amax", "i[sdcz]amin", "i[sdcz]amin_*",
                "dsdot*", "sdsdot*", "[sd]znrm2*", "[sd]casum*", NULL } },
        { "lapack", (const char *const[]) {
                ROUTINE("getrf"), ROUTINE("getrf2"), ROUTINE("getf2"), ROUTINE("getrs"), ROUTINE("getri"),
                ROUTINE("gesv"), ROUTINE("potrf"), ROUTINE("potrf2"), ROUTINE("potf2"), ROUTINE("potrs"),
                ROUTINE("potri"), ROUTINE("posv"), ROUTINE("geqrf"), ROUTINE("geqr2"), ROUTINE("orgqr"),
                ROUTINE("ormqr"), ROUTINE("ungqr"), ROUTINE("unmqr"), ROUTINE("gelqf"), ROUTINE("gesvd"),
                ROUTINE("gesdd"), ROUTINE("syev"), ROUTINE("syevd"), ROUTINE("syevr"), ROUTINE("heev"),
                ROUTINE("heevd"), ROUTINE("geev"), ROUTINE("gels"), ROUTINE("trtri"), ROUTINE("laswp"),
                ROUTINE("lacpy"), ROUTINE("lange"), ROUTINE("lansy"), ROUTINE("larfb"), ROUTINE("larft"),
                ROUTINE("larfg"), ROUTINE("sytrf"), ROUTINE("hetrf"), ROUTINE("stedc"), ROUTINE("sytrd"),
                "LAPACKE_*", NULL } },
        { "fft", (const char *const[]) {
                "fftw_*", "fftwf_*", "fftwl_*", "fftwq_*", "*_fftw_*", "n1fv_*", "n1bv_*", "t1fv_*", "t1bv_*",
                "n2fv_*", "t2fv_*", "r2cf_*", "r2cb_*", "hc2cf_*", "DftiCompute*", "cufft*", NULL } },
        { "mpi", (const char *const[]) {
                "MPI_*", "PMPI_*", "mpi_*", "pmpi_*", "ompi_*", "mca_*", "opal_*", "MPIR_*", "MPID_*", "MPIDI_*",
                "ucp_*", "uct_*", "ucs_*", "fi_*", "psm2_*", NULL } },
        { "libc-memory", (const char *const[]) {
                "memcpy", "memmove", "memset", "memcmp", "bcmp", "memchr", "mempcpy", "__memcpy_*",
                "__memmove_*", "__memset_*", "__memcmp_*", "__memchr_*", "__mempcpy_*", "__nss_database_lookup",
                NULL } },
        { "libc-string", (const char *const[]) {
                "strlen", "strcmp", "strncmp", "strcpy", "strchr", "strstr", "__strlen_*", "__strcmp_*",
                "__strncmp_*", "__strchr_*", "__strcpy_*", "__strstr_*", "__strnlen_*", "__strrchr_*", NULL } },
        { "malloc", (const char *const[]) {
                "malloc", "free", "calloc", "realloc", "cfree", "_int_malloc", "_int_free", "_int_realloc",
                "malloc_consolidate", "unlink_chunk*", "tcache_*", "je_*", "tc_*", NULL } },
        { "compression", (const char *const[]) {
                "deflate*", "inflate*", "longest_match*", "fill_window*", "compress_block*", "_tr_*",
                "build_tree*", "pqdownheap*", "send_tree*", "scan_tree*", "adler32*", "crc32*", "compress",
                "compress2", "uncompress*", "ZSTD_*", "HUF_*", "FSE_*", "LZ4_*", "BZ2_*", "lzma_*", NULL } },
        { "math", (const char *const[]) {
                "exp", "expf", "expl", "exp2*", "exp10*", "expm1*", "__exp*", "log", "logf", "logl", "log2*",
                "log10*", "log1p*", "__log*", "pow", "powf", "powl", "__pow*", "sin", "sinf", "cos", "cosf",
                "sincos*", "__sin*", "__cos*", "tan", "tanf", "__tan*", "atan*", "__atan*", "asin*", "acos*",
                "sinh*", "cosh*", "tanh*", "__ieee754_*", "erf*", "cbrt*", "sqrt", "sqrtf", "hypot*",
                "__mpexp*", "__mplog*", "__dubsin*", "__docos*", "fma", "fmaf", "__svml_*", "__libm_*", NULL } },
        { "openmp-runtime", (const char *const[]) {
                "GOMP_*", "gomp_*", "omp_*", "__kmp_*", "__kmpc_*", NULL } },
};

const char *function_family(const char *name) {
        if (!name)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                for (const char *const *p = table[i].patterns; *p; p++)
                        if (fnmatch(*p, name, 0) == 0)
                                return table[i].family;
        return NULL;
}

int function_family_is_known(const char *s) {
        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (streq(table[i].family, s))
                        return 1;
        return 0;
}
