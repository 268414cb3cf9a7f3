/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The state lmkd reads (lmk_tls, lmk_abi and the region table it points
 * to), and publishing it: the table's address, the TLS offset and the
 * lmk:init probe. The layer below the rest of liblmk: it calls none of it. */

#include <errno.h>
#include <unistd.h>

#include "lmk-internal.h"
#include "probes.h"

/* lmkd reads both: their layouts are fixed, and checked at compile time,
 * in lmk-abi.h. */
_public_ __thread struct lmk_thread lmk_tls __attribute__((tls_model("initial-exec")));

_public_ struct lmk_abi lmk_abi = {
        .magic = LMK_ABI_MAGIC,
        .version = LMK_ABI_VERSION,
        .thread_size = sizeof(struct lmk_thread),
        .capacity = LMK_REGIONS_MAX,
};

struct lmk_region lmk_regions[LMK_REGIONS_MAX];

static int compute_tls_offset(int64_t *ret_offset) {
        const char *tp;

#if LMK_HAVE_BUILTIN_THREAD_POINTER
        tp = __builtin_thread_pointer();
#elif defined(__x86_64__)
        __asm__("mov %%fs:0, %0" : "=r"(tp));
#elif defined(__aarch64__)
        __asm__("mrs %0, tpidr_el0" : "=r"(tp));
#else
        return -EOPNOTSUPP;
#endif
        *ret_offset = (const char *) &lmk_tls - tp;
        return 0;
}

void lmk_abi_publish(void) {
        int64_t offset;

        lmk_abi.regions = (uint64_t) (uintptr_t) lmk_regions;
        if (compute_tls_offset(&offset) >= 0)
                __atomic_store_n(&lmk_abi.tls_offset, offset, __ATOMIC_RELEASE);
        else
                offset = 0;

        LMK_PROBE_INIT(getpid(), &lmk_abi, offset);
}
