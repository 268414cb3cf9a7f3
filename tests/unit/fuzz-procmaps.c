/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "procmaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int check(const ProcMapsEntry *e, void *userdata) {
        size_t *n = userdata;

        /* what the parser hands out must be consistent */
        if (e->end <= e->start || !e->path)
                abort();
        *n += strlen(e->path);
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *buf = malloc(size + 1);
        size_t n = 0;

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        buf[size] = '\0';
        (void) procmaps_parse(buf, size, check, &n);
        free(buf);
        return 0;
}
