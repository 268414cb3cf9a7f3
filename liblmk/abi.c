/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The state lmkd reads (lmk_tls, lmk_abi) and the once-per-process setup
 * that publishes it: settings from the environment, the TLS offset, and the
 * lmk:init probe. */

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
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

static struct lmk_settings settings;
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;

int lmk_compute_tls_offset(int64_t *ret_offset) {
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

/* A value liblmk cannot parse leaves the default: the library never logs
 * and never refuses to run. */
static uint64_t rate_window_from_env(void) {
        uint64_t rate = LMK_MAX_RATE_DEFAULT;
        const char *s = getenv("LMK_MAX_RATE");

        if (s && *s >= '0' && *s <= '9') {
                char *end;
                unsigned long long v;

                errno = 0;
                v = strtoull(s, &end, 10);
                if (errno == 0 && *end == '\0')
                        rate = v;
        }
        if (rate == 0)
                return 0;
        /* Limits above 1024 BEGINs per ns cannot be measured: no limit. */
        return LMK_RATE_PERIOD * UINT64_C(1000000000) / rate;
}

static void setup(void) {
        const char *s = getenv("LMK_DISABLE");
        int64_t offset;

        settings.disabled = s && *s && !(s[0] == '0' && s[1] == '\0');
        settings.rate_window_ns = rate_window_from_env();

        /* Without the fork handlers only a fork racing a first registration
         * in another thread could hang; nothing better to do than go on. */
        (void) lmk_regions_setup();

        lmk_abi.regions = (uint64_t) (uintptr_t) lmk_regions;
        if (lmk_compute_tls_offset(&offset) >= 0)
                __atomic_store_n(&lmk_abi.tls_offset, offset, __ATOMIC_RELEASE);
        else
                offset = 0;

        LMK_PROBE_INIT(getpid(), &lmk_abi, offset);
}

const struct lmk_settings *lmk_setup(void) {
        pthread_once(&setup_once, setup);
        return &settings;
}

/* Before main() for linked programs, inside dlopen() otherwise, so a daemon
 * learns about the process before its first marker. */
__attribute__((constructor)) static void lmk_constructor(void) {
        lmk_setup();
}
