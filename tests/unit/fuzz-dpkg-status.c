/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dpkg's status file: any bytes, fed whole or in pieces cut anywhere, give
 * the same entries, and every entry handed out is one dpkg could write. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-cuts.h"
#include "hashmap.h"
#include "inventory/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int check(const DpkgEntry *e, void *userdata) {
        uint64_t *h = userdata;

        if (!dpkg_name_is_valid(e->package) || !dpkg_version_is_valid(e->version) ||
            !dpkg_arch_is_valid(e->arch) || strlen(e->package) > DPKG_NAME_MAX ||
            strlen(e->version) > DPKG_VERSION_MAX || strlen(e->arch) > DPKG_ARCH_MAX ||
            e->installed_size % 1024 != 0)
                abort();
        *h = hash_bytes(e->package, strlen(e->package) + 1, *h);
        *h = hash_bytes(e->version, strlen(e->version) + 1, *h);
        *h = hash_bytes(e->arch, strlen(e->arch) + 1, *h);
        *h = hash_bytes(&e->installed_size, sizeof(e->installed_size), *h);
        return 0;
}

/* Feeds data in pieces cut at the given points (ascending). */
static void parse(const uint8_t *data, size_t size, const size_t *cuts, size_t n_cuts, DpkgStatus *p, uint64_t *h) {
        size_t at = 0;

        dpkg_status_init(p, check, h);
        for (size_t i = 0; i <= n_cuts; i++) {
                size_t end = i < n_cuts ? cuts[i] : size;

                if (dpkg_status_feed(p, (const char *) data + at, end - at) < 0)
                        abort();
                at = end;
        }
        if (dpkg_status_finish(p) < 0)
                abort();
        if (p->installed + p->malformed > p->entries || (p->malformed > 0) != (p->first_bad != NULL))
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        DpkgStatus *whole, *pieces;
        uint64_t h1 = 0, h2 = 0;
        size_t cuts[3];

        if (size == 0)
                return 0;
        whole = malloc(sizeof(*whole));
        pieces = malloc(sizeof(*pieces));
        if (!whole || !pieces) {
                free(whole);
                free(pieces);
                return 0;
        }
        fuzz_cut_points(data, size, cuts);
        parse(data, size, NULL, 0, whole, &h1);
        parse(data, size, cuts, 3, pieces, &h2);
        if (h1 != h2 || whole->entries != pieces->entries || whole->installed != pieces->installed ||
            whole->malformed != pieces->malformed || whole->truncated != pieces->truncated ||
            whole->lines.line != pieces->lines.line)
                abort();
        free(whole);
        free(pieces);
        return 0;
}
