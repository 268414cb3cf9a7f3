/* SPDX-License-Identifier: GPL-2.0-or-later */

/* A plugin with marker sites, loaded and unloaded by test-dlopen. */

#include <lmk.h>

int plugin_run(const char *which);

/* Returns the depth seen inside the region: 1 when it is on. */
int plugin_run(const char *which) {
        int depth;

        if (which[0] == '1') {
                LMK_BEGIN("plugin-1");
                depth = (int) lmk_tls.depth;
                LMK_END("plugin-1");
        } else {
                LMK_BEGIN("plugin-2");
                depth = (int) lmk_tls.depth;
                LMK_END("plugin-2");
        }
        return depth;
}
