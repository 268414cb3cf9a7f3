/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A modulefile, which whoever installs software may write: any bytes, read
 * as Tcl and as Lua, give at most MODULE_PATHS_MAX absolute paths without
 * repeated or trailing slashes, and nothing else happens. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "inventory/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const uint8_t *data, size_t size, bool lua) {
        ModuleInfo m;
        int r;

        r = modulefile_parse((const char *) data, size, lua, "Core/fftw", "3.3.10", &m);
        if (r == -ENOMEM)
                return;
        if (r < 0) {
                if (r != -EFBIG || size <= MODULEFILE_MAX)
                        abort();
                return;
        }
        if (m.n_paths > MODULE_PATHS_MAX)
                abort();
        for (size_t i = 0; i < m.n_paths; i++) {
                const char *p = m.paths[i];
                size_t n = strlen(p);

                if (p[0] != '/' || n >= PATH_MAX || strstr(p, "//") || (n > 1 && p[n - 1] == '/') ||
                    (m.kinds[i] != MODULE_PATH_DIR && m.kinds[i] != MODULE_PATH_ROOT))
                        abort();
                for (size_t k = 0; k < i; k++)
                        if (m.kinds[k] == m.kinds[i] && strcmp(m.paths[k], p) == 0)
                                abort();
        }
        module_info_done(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        check(data, size, false);
        check(data, size, true);
        return 0;
}
