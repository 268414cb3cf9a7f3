/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lmk-bench-exit0: does nothing. Linked statically where the toolchain can,
 * so that an exec storm's rate is bounded by fork+exec, not by ld.so. */
int main(void) {
        return 0;
}
