/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rpm -qa's output as lmkd asks for it: any bytes, fed whole or in pieces
 * cut anywhere, give the same packages and files, and every package
 * handed out has a name, version and arch rpm could have written. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-cuts.h"
#include "hashmap.h"
#include "inventory/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char ALLOWED[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

static bool only(const char *s, size_t max, const char *extra) {
        size_t n = strlen(s);

        if (n == 0 || n > max)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!strchr(ALLOWED, s[i]) && !strchr(extra, s[i]))
                        return false;
        return true;
}

static int package(const RpmEntry *e, void *userdata) {
        uint64_t *h = userdata;

        if (!only(e->name, RPM_NAME_MAX, "._+-~^") || !only(e->version, RPM_VERSION_MAX, "._+~^:-") ||
            !strchr(e->version, '-') || !only(e->arch, RPM_ARCH_MAX, "_"))
                abort();
        *h = hash_bytes(e->name, strlen(e->name) + 1, *h);
        *h = hash_bytes(e->version, strlen(e->version) + 1, *h);
        *h = hash_bytes(e->arch, strlen(e->arch) + 1, *h);
        *h = hash_bytes(&e->size, sizeof(e->size), *h);
        return 0;
}

static int file(unsigned mode, const char *path, size_t n, void *userdata) {
        uint64_t *h = userdata;

        if (path[0] != '/' || strlen(path) != n || mode > 07777777)
                abort();
        *h = hash_bytes(path, n + 1, *h);
        *h = hash_bytes(&mode, sizeof(mode), *h);
        return 0;
}

static void parse(const uint8_t *data, size_t size, const size_t *cuts, size_t n_cuts, RpmQuery *q, uint64_t *h) {
        size_t at = 0;

        rpm_query_init(q, package, file, h);
        for (size_t i = 0; i <= n_cuts; i++) {
                size_t end = i < n_cuts ? cuts[i] : size;

                if (rpm_query_feed(q, (const char *) data + at, end - at) < 0)
                        abort();
                at = end;
        }
        if (rpm_query_finish(q) < 0)
                abort();
        if ((q->malformed > 0) != (q->first_bad != NULL))
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        RpmQuery *whole, *pieces;
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
        if (h1 != h2 || whole->packages != pieces->packages || whole->files != pieces->files ||
            whole->malformed != pieces->malformed || whole->pseudo != pieces->pseudo ||
            whole->truncated != pieces->truncated || whole->lines.line != pieces->lines.line)
                abort();
        free(whole);
        free(pieces);
        return 0;
}
