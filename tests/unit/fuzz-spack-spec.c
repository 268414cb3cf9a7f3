/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A Spack prefix's .spack/spec.json, which anyone who can write the prefix
 * controls: any bytes are read or refused with a reason, and what is read
 * is a name, version and hash Spack could have written. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "inventory-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const uint8_t *data, size_t size, const char *hint) {
        SpackSpec s;
        const char *why = NULL;
        int r;

        memset(&s, 0xaa, sizeof(s));
        r = spack_spec_parse((const char *) data, size, hint, &s, &why);
        if (r == -ENOMEM)
                return;
        if (r < 0) {
                if (!why)
                        abort(); /* every refusal says why */
                return;
        }
        if (why || strnlen(s.name, sizeof(s.name)) == sizeof(s.name) ||
            strnlen(s.version, sizeof(s.version)) == sizeof(s.version) ||
            strnlen(s.hash, sizeof(s.hash)) == sizeof(s.hash) || !s.name[0] || !s.version[0] || !s.hash[0] ||
            strchr(s.name, '/') || strchr(s.version, '/') ||
            strspn(s.hash, "abcdefghijklmnopqrstuvwxyz0123456789") != strlen(s.hash))
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        check(data, size, NULL);
        check(data, size, "abcdefgh");
        return 0;
}
