/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib-families.h"
#include "macro.h"
#include "utf8.h"
#include "util.h"

/* The built-in table: order matters (first match wins), so the optimised
 * BLAS builds that also ship a libblas.so.3 come before the reference
 * implementation's plain names. docs/lib-families.md shows the same table. */
static const char builtin_table[] =
        /* communication: MPI libraries and the transports below them */
        "comm openmpi libmpi.so* libmpi_*.so* libopen-pal.so* libopen-rte.so* libmca_common_*.so* mca_*.so\n"
        "comm mpich libmpich*.so* libmpl.so* libmpifort.so* libmpicxx.so* libmpi_cray.so*\n"
        "comm pmix libpmix.so* mca_pmix_*.so\n"
        "comm ucx libucp.so* libuct.so* libucs.so* libucm.so* libuct_*.so* libucs_*.so* libucc.so*\n"
        "comm libfabric libfabric.so* lib*-fi.so */libfabric/*\n"
        "comm psm libpsm2.so* libpsm_infinipath.so* libpsm3*.so*\n"
        "comm verbs libibverbs.so* librdmacm.so* libmlx4.so* libmlx5.so* lib*-rdmav*.so */libibverbs/*\n"
        "comm hcoll libhcoll.so* libsharp*.so* libxpmem.so* libknem*.so*\n"
        "comm nccl libnccl.so* librccl.so*\n"
        /* optimised BLAS and LAPACK */
        "blas openblas libopenblas*.so* */openblas*/libblas.so* */openblas*/liblapack.so* */openblas*/libcblas.so*\n"
        "blas mkl libmkl_*.so*\n"
        "blas blis libblis*.so* */blis*/libblas.so* */blis*/liblapack.so* libflame*.so*\n"
        "blas atlas libatlas.so* libsatlas.so* libtatlas.so* */atlas/libblas.so* */atlas/liblapack.so*\n"
        "blas armpl libarmpl*.so*\n"
        "blas nvpl libnvpl_blas*.so* libnvpl_lapack*.so*\n"
        /* the reference implementation: Debian's blas/ and lapack/ folders and
         * any other plain libblas/liblapack left */
        "blas-reference netlib */blas/libblas.so* */lapack/liblapack.so* librefblas.so* libreflapack.so* "
        "libblas.so* liblapack.so* libcblas.so* liblapacke.so*\n"
        "linear-algebra scalapack libscalapack*.so* libblacs*.so*\n"
        "fft fftw libfftw3*.so*\n"
        "openmp gnu-openmp libgomp.so*\n"
        "openmp llvm-openmp libomp.so* libiomp5.so* libomptarget*.so*\n"
        "runtime gcc libgfortran.so* libquadmath.so* libstdc++.so* libgcc_s.so*\n"
        "runtime intel-compiler libifcore*.so* libifport.so* libimf.so* libsvml.so* libintlc.so* libirng.so*\n"
        "libc glibc libc.so* libm.so* libmvec.so* libpthread.so* libdl.so* librt.so* ld-linux*.so*\n"
        "python numpy */numpy/*\n"
        "python cpython libpython*.so* python python3*\n"
        "gpu cuda libcuda.so* libcudart.so* libcublas*.so* libcufft*.so* libcusparse*.so* libcusolver*.so*\n"
        "io hdf5 libhdf5*.so*\n"
        "io netcdf libnetcdf*.so* libpnetcdf*.so*\n"
        "malloc jemalloc libjemalloc.so*\n"
        "malloc tcmalloc libtcmalloc*.so*\n";

static void family_done(LibFamily *f) {
        for (size_t i = 0; i < f->n_patterns; i++)
                free(f->patterns[i]);
        free(f->patterns);
        *f = (LibFamily) {};
}

void lib_families_done(LibFamilies *t) {
        if (!t)
                return;
        for (size_t i = 0; i < t->n; i++)
                family_done(&t->v[i]);
        free(t->v);
        *t = (LibFamilies) {};
}

static bool name_ok(const char *s, size_t n) {
        if (n == 0 || n > LIB_FAMILY_NAME_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!strchr("abcdefghijklmnopqrstuvwxyz0123456789_.+-", s[i]) || s[i] == '\0')
                        return false;
        return true;
}

static int error_at(char **ret_error, const char *what, size_t line, const char *why) {
        if (ret_error) {
                free(*ret_error);
                if (asprintf(ret_error, "%s, line %zu: %s", what, line, why) < 0)
                        *ret_error = NULL;
        }
        return -EINVAL;
}

/* Splits text into words at blanks; a word is [start, end). */
static const char *next_word(const char *p, const char *end, size_t *ret_len) {
        while (p < end && (*p == ' ' || *p == '\t'))
                p++;
        const char *w = p;
        while (p < end && *p != ' ' && *p != '\t')
                p++;
        *ret_len = (size_t) (p - w);
        return w;
}

/* Parses text into a new array (*ret_v, *ret_n). */
static int parse_table(const char *what, const char *text, size_t len, LibFamily **ret_v, size_t *ret_n,
                       char **ret_error) {
        LibFamily *v = NULL;
        size_t n = 0, line = 0;
        const char *p = text, *end = text + len;
        int r = 0;

        if (memchr(text, '\0', len))
                return error_at(ret_error, what, 1, "holds a NUL byte");
        if (!utf8_is_valid(text, len))
                return error_at(ret_error, what, 1, "is not valid UTF-8");

        while (p < end) {
                const char *eol = memchr(p, '\n', (size_t) (end - p)), *hash;
                const char *w;
                size_t wl;
                LibFamily f = {};

                if (!eol)
                        eol = end;
                line++;
                hash = memchr(p, '#', (size_t) (eol - p));
                const char *stop = hash ? hash : eol;
                if (stop > p && stop[-1] == '\r')
                        stop--;
                for (const char *c = p; c < stop; c++)
                        if (((unsigned char) *c < 0x20 && *c != '\t') || *c == 0x7f) {
                                r = error_at(ret_error, what, line, "holds a control character");
                                goto fail;
                        }
                w = next_word(p, stop, &wl);
                if (wl == 0) {
                        p = eol + 1;
                        continue;
                }
                if (n >= LIB_FAMILY_LINES_MAX) {
                        r = error_at(ret_error, what, line, "more than 1024 families");
                        goto fail;
                }
                if (!name_ok(w, wl)) {
                        r = error_at(ret_error, what, line,
                                     "the purpose must be 1-32 characters of a-z 0-9 _ . + -");
                        goto fail;
                }
                memcpy(f.purpose, w, wl);
                w = next_word(w + wl, stop, &wl);
                if (!name_ok(w, wl)) {
                        r = error_at(ret_error, what, line,
                                     "the family must be 1-32 characters of a-z 0-9 _ . + -");
                        goto fail;
                }
                memcpy(f.family, w, wl);
                for (;;) {
                        char **np;

                        w = next_word(w + wl, stop, &wl);
                        if (wl == 0)
                                break;
                        if (wl > LIB_FAMILY_PATTERN_MAX || f.n_patterns >= LIB_FAMILY_PATTERNS_MAX) {
                                family_done(&f);
                                r = error_at(ret_error, what, line,
                                             "at most 64 patterns of 256 bytes each");
                                goto fail;
                        }
                        np = reallocarray(f.patterns, f.n_patterns + 1, sizeof(*np));
                        if (!np) {
                                family_done(&f);
                                r = -ENOMEM;
                                goto fail;
                        }
                        f.patterns = np;
                        f.patterns[f.n_patterns] = strndup(w, wl);
                        if (!f.patterns[f.n_patterns]) {
                                family_done(&f);
                                r = -ENOMEM;
                                goto fail;
                        }
                        f.n_patterns++;
                }
                if (f.n_patterns == 0) {
                        family_done(&f);
                        r = error_at(ret_error, what, line, "a family needs at least one pattern");
                        goto fail;
                }
                LibFamily *nv = reallocarray(v, n + 1, sizeof(*nv));
                if (!nv) {
                        family_done(&f);
                        r = -ENOMEM;
                        goto fail;
                }
                v = nv;
                v[n++] = f;
                p = eol + 1;
        }
        *ret_v = v;
        *ret_n = n;
        return 0;
fail:
        for (size_t i = 0; i < n; i++)
                family_done(&v[i]);
        free(v);
        return r;
}

int lib_families_init(LibFamilies *ret) {
        LibFamilies t = {};
        int r;

        r = parse_table("built-in table", builtin_table, sizeof(builtin_table) - 1, &t.v, &t.n, NULL);
        if (r < 0)
                return r;
        *ret = t;
        return 0;
}

int lib_families_add_text(LibFamilies *t, const char *text, size_t len, char **ret_error) {
        LibFamily *v = NULL, *all;
        size_t n = 0;
        int r;

        r = parse_table("site table", text, len, &v, &n, ret_error);
        if (r < 0)
                return r;
        if (n == 0)
                return 0; /* comments only, or empty */
        all = reallocarray(NULL, t->n + n, sizeof(*all));
        if (!all) {
                for (size_t i = 0; i < n; i++)
                        family_done(&v[i]);
                free(v);
                return -ENOMEM;
        }
        /* a later file's lines go before earlier ones: the last word counts */
        memcpy(all, v, n * sizeof(*all));
        if (t->n)
                memcpy(all + n, t->v, t->n * sizeof(*all));
        free(v);
        free(t->v);
        t->v = all;
        t->n += n;
        t->n_site += n;
        return 0;
}

int lib_families_add_file(LibFamilies *t, const char *path, char **ret_error) {
        _cleanup_free_ char *buf = NULL, *why = NULL;
        size_t n;
        int r;

        r = read_full_file(path, 1024 * 1024, &buf, &n);
        if (r < 0)
                return r;
        r = lib_families_add_text(t, buf, n, &why);
        if (r < 0 && ret_error && why) {
                free(*ret_error);
                if (asprintf(ret_error, "%s: %s", path, why) < 0)
                        *ret_error = NULL;
        }
        return r;
}

const LibFamily *lib_families_match(const LibFamilies *t, const char *path) {
        const char *base;

        if (!t || !path || path[0] == '\0' || path[0] == '[')
                return NULL;
        base = strrchr(path, '/');
        base = base ? base + 1 : path;
        for (size_t i = 0; i < t->n; i++)
                for (size_t k = 0; k < t->v[i].n_patterns; k++) {
                        const char *pat = t->v[i].patterns[k];

                        if (fnmatch(pat, strchr(pat, '/') ? path : base, 0) == 0)
                                return &t->v[i];
                }
        return NULL;
}

bool lib_families_is(const LibFamilies *t, const char *path, const char *purpose) {
        const LibFamily *f = lib_families_match(t, path);

        return f && streq(f->purpose, purpose);
}
