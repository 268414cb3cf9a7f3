/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A row of function_sums_pending as a damaged database may hold it
 * (store/db/sql/site-sums.h): refused with -EBADMSG, or decoded into parts
 * in key order that sum into empty sums and pack into a value that decodes
 * to the same counts. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "db/sql/site-sums.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        SiteSumsRow row, again;
        SiteSums sums;
        uint8_t *p = NULL;
        size_t len;
        int r;

        r = site_sums_decode(data, size, &row);
        if (r == -ENOMEM)
                return 0;
        if (r < 0) {
                if (r != -EBADMSG || row.items || row.names)
                        abort();
                return 0;
        }
        for (SitePart k = 0; k < _SITE_PARTS; k++) {
                size_t n;
                const Acc *x = site_sums_row_part(&row, k, &n);

                for (size_t i = 1; i < n; i++)
                        if (x[i - 1].a > x[i].a || (x[i - 1].a == x[i].a && (x[i - 1].b > x[i].b ||
                            (x[i - 1].b == x[i].b && x[i - 1].c >= x[i].c))))
                                abort(); /* out of key order */
        }
        /* summed into nothing: the same keys; packed: the same again */
        if (site_sums_init(&sums, row.day, row.n, row.n_names) >= 0) {
                r = site_sums_add(&sums, &row);
                if (r < 0 && r != -ENOMEM)
                        abort();
                if (r >= 0 && site_sums_encode(&sums, &p, &len) >= 0) {
                        if (site_sums_decode(p, len, &again) < 0 || memcmp(again.n, row.n, sizeof(row.n)) != 0 ||
                            again.day != row.day)
                                abort();
                        site_sums_row_done(&again);
                        free(p);
                }
        }
        site_sums_done(&sums);
        site_sums_row_done(&row);
        return 0;
}
