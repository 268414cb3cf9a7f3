/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A CPU list as a cpuset file or sysfs holds it: any bytes are a list or
 * refused, and the two ways of reading one (a count, a set) agree on every
 * input, as they share one parser. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "cpu-list.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        enum { NBITS = 1 << 20 };
        static uint64_t bits[NBITS / 64];
        const char *s = (const char *) data;
        unsigned n = 0, k = 0;
        int c, p;

        c = cpu_list_count(s, size, &n);
        p = cpu_list_parse(s, size, bits, NBITS);
        if (c == -ENOMEM)
                return 0;
        if (c < 0 && c != -EINVAL && c != -ERANGE)
                abort();
        /* an empty list is no count, and an empty set */
        if (c == -EINVAL && p == 0)
                return 0;
        if (c < 0 ? p != c : p != (int) n)
                abort();
        for (size_t i = 0; p > 0 && i < NBITS / 64; i++)
                k += (unsigned) __builtin_popcountll(bits[i]);
        if (p > 0 && k != n)
                abort();
        return 0;
}
