/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* The family of a function by its name (docs/kernels.md lists the table):
 * what kind of kernel it is, whatever library holds it: "blas-level3"
 * for dgemm_, cblas_dgemm, OpenBLAS's dgemm_kernel_HASWELL and
 * dgemm_itcopy; "compression" for zlib's deflate_slow and longest_match;
 * "math" for libm's exp and __sin_fma. NULL when the table knows no
 * pattern of it (the caller may fall back on its library's family). */
const char *function_family(const char *name);

/* Whether s is one of the table's families. */
int function_family_is_known(const char *s);
