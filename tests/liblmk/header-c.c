/* SPDX-License-Identifier: GPL-2.0-or-later */

/* Compiled by test-header.py as C89, C99 and C11 with -pedantic -Werror:
 * everything lmk.h offers a C program, used as a program would. */

#include <lmk.h>

int header_use(struct lmk_site *handle);

int header_use(struct lmk_site *handle)
{
        static struct lmk_site zero = LMK_SITE_INIT;
        int state;

        LMK_BEGIN("outer");
        LMK_BEGIN("inner");
        LMK_END("inner");
        LMK_END("outer");

        if (lmk_site_register(handle, "handle", 6, "header-c.c") < 0)
                return -1;
        lmk_site_begin(handle);
        lmk_site_end(&zero);
        state = lmk_region_state("outer");
        return state + (int) lmk_tls.depth + (int) lmk_abi.n_regions + LMK_MAX_DEPTH +
               LMK_REGION_OFF_RATE + LMK_REGION_OFF_ENV + LMK_REGION_OFF_FULL + LMK_ABI_VERSION;
}
