/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The leads file (who leads which account): any bytes are parsed or
 * refused with a message, and what is accepted answers lookups. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "auth/leads.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        Leads *l = NULL;
        char *err = NULL;
        int r;

        r = leads_parse((const char *) data, size, &l, &err);
        if (r == -EINVAL && !err)
                abort(); /* every refusal says why */
        if (r >= 0) {
                size_t n;
                const char *const *a = leads_accounts_of(l, "alice", &n);

                for (size_t i = 0; i < n; i++)
                        if (!a[i])
                                abort();
                leads_free(l);
        }
        free(err);
        return 0;
}
