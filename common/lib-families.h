/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* Library families: which software an object (an executable or shared
 * library path, as lmkd reports it) belongs to and what it is for.
 * "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3" is family
 * "openblas", purpose "blas"; "…/openmpi/lib/openmpi3/mca_btl_vader.so" is
 * family "openmpi", purpose "comm". lmkd uses the table to tell a rank's
 * communication from its computation; lmk-store uses it for findings (time
 * in communication libraries, reference BLAS) and site answers.
 *
 * lmkd reports the file that is really mapped (from /proc/<pid>/maps), so a
 * name reached through Debian's alternatives or a symlink already arrives
 * resolved; the patterns describe real files.
 *
 * A site extends or overrides the built-in table with a file of lines
 *
 *     # purpose  family       pattern...
 *     comm       cray-mpich   libmpi_cray.so*  libxpmem.so*
 *
 * A pattern with a '/' is matched (fnmatch, '*' crossing '/') against the
 * whole path, else against the file name. The site's lines are tried
 * before the built-in ones, in file order; the first match wins. Purpose
 * and family are [a-z0-9_.+-]{1,32}; at most 64 patterns per line,
 * 256 bytes each, 1,024 lines. docs/lib-families.md lists the built-in table.
 *
 * Purposes lmk gives meaning to: "comm" (communication: MPI libraries and
 * their transports), "blas" (optimised BLAS/LAPACK), "blas-reference" (the
 * unoptimised reference implementation); others ("fft", "openmp",
 * "python", …) are reported as they are. */

#include <stdbool.h>
#include <stddef.h>

#define LIB_FAMILY_NAME_MAX 32
#define LIB_FAMILY_PATTERNS_MAX 64
#define LIB_FAMILY_PATTERN_MAX 256
#define LIB_FAMILY_LINES_MAX 1024

typedef struct LibFamily {
        char purpose[LIB_FAMILY_NAME_MAX + 1];
        char family[LIB_FAMILY_NAME_MAX + 1];
        size_t n_patterns;
        char **patterns;
} LibFamily;

typedef struct LibFamilies {
        size_t n;
        LibFamily *v;   /* site lines first, then the built-in ones */
        size_t n_site;
} LibFamilies;

/* The built-in table. -ENOMEM. */
int lib_families_init(LibFamilies *ret);
void lib_families_done(LibFamilies *t);

/* Parses a site table (text, len bytes) and puts its lines before those
 * already in t. On a malformed line returns -EINVAL, changes nothing, and
 * sets *ret_error (when not NULL) to a message naming the line (to free). */
int lib_families_add_text(LibFamilies *t, const char *text, size_t len, char **ret_error);
/* The same from a file (at most 1 MiB); -errno when it cannot be read. */
int lib_families_add_file(LibFamilies *t, const char *path, char **ret_error);

/* The first family whose pattern matches path, or NULL. Pseudo-objects
 * ("[kernel]", "[idle]", …) match nothing. */
const LibFamily *lib_families_match(const LibFamilies *t, const char *path);

/* Whether path belongs to a family of this purpose. */
bool lib_families_is(const LibFamilies *t, const char *path, const char *purpose);
