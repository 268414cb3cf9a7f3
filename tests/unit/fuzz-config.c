/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lmkd-config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        LmkdConfig c;
        char *text, *err = NULL;

        text = malloc(size + 1);
        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        config_init(&c);
        if (config_load_string(&c, text, &err) < 0 && !err)
                abort(); /* every rejection says why */
        if (c.frequency <= 0 || c.n_events > EVENT_MAX || c.poll_ms < 10)
                abort();
        free(err);
        config_done(&c);
        free(text);
        return 0;
}
