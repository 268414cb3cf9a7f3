/* SPDX-License-Identifier: GPL-2.0-or-later */

/* What test-fortran reads of lmk_tls, which Fortran cannot reach. */

#include <lmk.h>

int test_lmk_depth(void);
int test_lmk_stack(int i);

int test_lmk_depth(void) {
        return (int) lmk_tls.depth;
}

int test_lmk_stack(int i) {
        return i >= 0 && i < LMK_MAX_DEPTH ? (int) lmk_tls.stack[i] : -1;
}
