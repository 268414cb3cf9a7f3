/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A packed value of job_function_packs as a damaged database may hold it
 * (store/db/sql/function-pack.h): refused with -EBADMSG or decoded into
 * entries in key order, which pack into a value that decodes the same, and
 * merge into themselves. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "db/sql/function-pack.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        JobFunctionSums s = {}, again = {};
        uint8_t *p = NULL;
        size_t len;
        int r;

        r = function_pack_decode(data, size, &s);
        if (r == -ENOMEM)
                return 0;
        if (r < 0) {
                if (r != -EBADMSG || s.n != 0)
                        abort();
                function_sums_done(&s);
                return 0;
        }
        for (size_t i = 1; i < s.n; i++)
                if (s.items[i - 1].phase_id > s.items[i].phase_id ||
                    (s.items[i - 1].phase_id == s.items[i].phase_id &&
                     s.items[i - 1].function_id >= s.items[i].function_id))
                        abort(); /* out of key order */
        /* what decodes, encodes into a pack that decodes the same */
        if (function_pack_encode(&s, &p, &len) >= 0) {
                if (len > size || function_pack_decode(p, len, &again) < 0 || again.n != s.n ||
                    (s.n > 0 && memcmp(again.items, s.items, s.n * sizeof(JobFunctionSum)) != 0))
                        abort();
                free(p);
        }
        if (function_pack_decode(data, size, &again) >= 0) {
                r = function_sums_merge(&again, &s);
                if (r >= 0 && again.n != s.n)
                        abort();
                if (r < 0 && r != -EOVERFLOW && r != -ENOMEM)
                        abort();
        }
        function_sums_done(&s);
        function_sums_done(&again);
        return 0;
}
