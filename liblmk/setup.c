/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The once-per-process setup: settings from the environment, the region
 * table's fork handlers, and publishing the state lmkd reads (abi.c). */

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "lmk-internal.h"

static struct lmk_settings settings;
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;

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

        settings.disabled = s && *s && !(s[0] == '0' && s[1] == '\0');
        settings.rate_window_ns = rate_window_from_env();

        /* Without the fork handlers only a fork racing a first registration
         * in another thread could hang; nothing better to do than go on. */
        (void) lmk_regions_setup();

        lmk_abi_publish();
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
