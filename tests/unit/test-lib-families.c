/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Library families: real paths from Debian's packages land in the family a
 * site would name; a site's table goes first; malformed tables are refused
 * whole with the line named. */
#include <stdio.h>
#include <stdlib.h>

#include "lib-families.h"
#include "tests.h"
#include "util.h"

static LibFamilies t;

static void expect(const char *path, const char *purpose, const char *family) {
        const LibFamily *f = lib_families_match(&t, path);

        if (!purpose) {
                if (f)
                        test_fail("%s: expected no family, got %s/%s", path, f->purpose, f->family);
                return;
        }
        if (!f)
                test_fail("%s: expected %s/%s, got none", path, purpose, family);
        if (!streq(f->purpose, purpose) || !streq(f->family, family))
                test_fail("%s: expected %s/%s, got %s/%s", path, purpose, family, f->purpose, f->family);
}

TEST(builtin) {
        /* Debian bookworm's Open MPI, its transports and the BLAS choices
         * (the alternatives' libblas.so.3 resolved to the real file) */
        expect("/usr/lib/x86_64-linux-gnu/openmpi/lib/libmpi.so.40.30.5", "comm", "openmpi");
        expect("/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/mca_btl_vader.so", "comm", "openmpi");
        expect("/usr/lib/x86_64-linux-gnu/libopen-pal.so.40.30.3", "comm", "openmpi");
        expect("/usr/lib/x86_64-linux-gnu/pmix2/lib/libpmix.so.2.9.3", "comm", "pmix");
        expect("/usr/lib/x86_64-linux-gnu/libmpich.so.12.3.0", "comm", "mpich");
        expect("/usr/lib/x86_64-linux-gnu/libucp.so.0.0.0", "comm", "ucx");
        expect("/usr/lib/x86_64-linux-gnu/ucx/libuct_ib.so.0.0.0", "comm", "ucx");
        expect("/usr/lib/x86_64-linux-gnu/libfabric/libverbs-fi.so", "comm", "libfabric");
        expect("/usr/lib/x86_64-linux-gnu/libibverbs/libmlx5-rdmav34.so", "comm", "verbs");
        expect("/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3", "blas", "openblas");
        expect("/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblasp-r0.3.21.so", "blas", "openblas");
        expect("/usr/lib/x86_64-linux-gnu/blis-openmp/libblas.so.3", "blas", "blis");
        expect("/usr/lib/x86_64-linux-gnu/atlas/libblas.so.3.10.3", "blas", "atlas");
        expect("/opt/intel/oneapi/mkl/2024.0/lib/libmkl_avx512.so.2", "blas", "mkl");
        expect("/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0", "blas-reference", "netlib");
        expect("/usr/lib/x86_64-linux-gnu/lapack/liblapack.so.3.11.0", "blas-reference", "netlib");
        expect("/usr/lib/x86_64-linux-gnu/libgomp.so.1.0.0", "openmp", "gnu-openmp");
        expect("/usr/lib/x86_64-linux-gnu/libc.so.6", "libc", "glibc");
        expect("/usr/bin/python3.11", "python", "cpython");
        expect("/home/a/venv/lib/python3.11/site-packages/numpy/core/_multiarray_umath.so", "python", "numpy");
        /* not a library family: programs, pseudo-objects, near misses */
        expect("/home/alice/bin/lulesh2.0", NULL, NULL);
        expect("[kernel]", NULL, NULL);
        expect("[idle]", NULL, NULL);
        expect("", NULL, NULL);
        expect("/usr/lib/x86_64-linux-gnu/libmpfr.so.6", NULL, NULL);
        ASSERT_TRUE(lib_families_is(&t, "/usr/lib/x86_64-linux-gnu/libmpi.so.40", "comm"));
        ASSERT_FALSE(lib_families_is(&t, "/usr/lib/x86_64-linux-gnu/libmpi.so.40", "blas"));
}

TEST(site_first) {
        static const char site[] =
                "# a site's own MPI, and a BLAS it builds under /apps\n"
                "comm cray-mpich libmpi_cray.so* /opt/cray/pe/mpich/*\n"
                "\n"
                "blas site-blas\t/apps/blas/*/libblas.so*   # tuned by the centre\n";

        ASSERT_OK(lib_families_add_text(&t, site, sizeof(site) - 1, NULL));
        ASSERT_EQ(t.n_site, 2);
        expect("/opt/cray/pe/mpich/8.1/lib/libmpi_cray.so.12", "comm", "cray-mpich");
        expect("/apps/blas/3.1/libblas.so.3", "blas", "site-blas");
        /* the built-in table still answers the rest */
        expect("/usr/lib/x86_64-linux-gnu/blas/libblas.so.3", "blas-reference", "netlib");
}

static void refused(const char *text, const char *want) {
        _cleanup_free_ char *why = NULL;
        size_t before = t.n;

        ASSERT_ERROR(lib_families_add_text(&t, text, strlen(text), &why), EINVAL);
        ASSERT_NOT_NULL(why);
        if (!strstr(why, want))
                test_fail("message \"%s\" lacks \"%s\"", why, want);
        ASSERT_EQ(t.n, before);
}

TEST(malformed) {
        refused("comm mpi\n", "line 1: a family needs at least one pattern");
        refused("# ok\nComm mpi libmpi.so*\n", "line 2: the purpose");
        refused("comm m/p/i libmpi.so*\n", "line 1: the family");
        refused("comm mpi lib\x01mpi.so\n", "control character");
        refused("comm mpi lib\xc0\xafmpi.so\n", "UTF-8");
        {
                char big[400];
                memset(big, 'a', sizeof(big) - 1);
                big[sizeof(big) - 1] = '\0';
                char *line = NULL;
                ASSERT_TRUE(asprintf(&line, "comm mpi %s\n", big) > 0);
                refused(line, "256 bytes");
                free(line);
        }
        ASSERT_ERROR(lib_families_add_file(&t, "/nonexistent/families.conf", NULL), ENOENT);
}

int main(void) {
        ASSERT_OK(lib_families_init(&t));
        RUN(builtin);
        RUN(site_first);
        RUN(malformed);
        lib_families_done(&t);
        return 0;
}
