/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A Spack prefix's .spack/spec.json (or spec.yaml, Spack before 0.17),
 * which anyone who can write the prefix controls: any bytes are read or
 * refused with a reason, and what is read is a name, version and hash
 * Spack could have written. Both readers get every input. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "inventory/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef int (*spec_parser)(const char *text, size_t n, const char *hash_hint, SpackSpec *ret, const char **ret_why);

static void check(spec_parser parse, const uint8_t *data, size_t size, const char *hint) {
        SpackSpec s;
        const char *why = NULL;
        int r;

        memset(&s, 0xaa, sizeof(s));
        r = parse((const char *) data, size, hint, &s, &why);
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
        check(spack_spec_parse, data, size, NULL);
        check(spack_spec_parse, data, size, "abcdefgh");
        check(spack_spec_yaml_parse, data, size, NULL);
        check(spack_spec_yaml_parse, data, size, "abcdefgh");
        return 0;
}
