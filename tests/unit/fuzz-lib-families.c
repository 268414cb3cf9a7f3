/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A site's library families file: any bytes are parsed or refused with a
 * message, a refusal changes nothing, and what is accepted matches. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib-families.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        LibFamilies t;
        char *err = NULL;
        size_t before;
        int r;

        if (lib_families_init(&t) < 0)
                return 0;
        before = t.n;
        r = lib_families_add_text(&t, (const char *) data, size, &err);
        if (r == -EINVAL && !err)
                abort(); /* every refusal says why */
        if (r < 0 && t.n != before)
                abort();
        if (r >= 0 && t.n != before + t.n_site)
                abort();
        (void) lib_families_match(&t, "/usr/lib/x86_64-linux-gnu/openmpi/lib/libmpi.so.40");
        (void) lib_families_match(&t, "libx.so");
        free(err);
        lib_families_done(&t);
        return 0;
}
