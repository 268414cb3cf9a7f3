/* SPDX-License-Identifier: GPL-2.0-or-later */

/* Compiled by test-header.py with clang -target bpf: lmk-abi.h as lmkd's
 * BPF programs see it, without libc. Its asserts make the layouts there
 * the ones liblmk writes, also in builds without a BPF toolchain for lmkd. */

#include <lmk-abi.h>

int header_bpf_use(const struct lmk_thread *th, const struct lmk_region *r, const struct lmk_abi *abi);

int header_bpf_use(const struct lmk_thread *th, const struct lmk_region *r, const struct lmk_abi *abi)
{
        return (int) th->stack[LMK_MAX_DEPTH - 1] + r->name[LMK_REGION_NAME_SIZE - 1] +
               r->where[LMK_REGION_WHERE_SIZE - 1] + (int) abi->n_regions;
}
