/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "macro.h"
#include "api/timeparam.h"
#include "util.h"

/* Far enough for any question about stored data (about 3000 years), small
 * enough that now - age and multiplications cannot overflow. */
#define MAX_SECONDS (INT64_C(100000000000))

int time_param_parse(const char *s, int64_t now, int64_t *ret) {
        static const struct {
                char suffix;
                int64_t seconds;
        } units[] = {
                { 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 }, { 'w', 7 * 86400 },
        };
        char digits[24];
        uint64_t v;
        size_t n;
        int r;

        if (!s || !*s)
                return -EINVAL;
        if (streq(s, "now")) {
                *ret = now;
                return 0;
        }
        n = strlen(s);
        if (n >= sizeof(digits))
                return -ERANGE;
        for (size_t i = 0; i < ELEMENTSOF(units); i++) {
                if (s[n - 1] != units[i].suffix)
                        continue;
                if (n < 2 || !isdigit((unsigned char) s[0]))
                        return -EINVAL;
                memcpy(digits, s, n - 1);
                digits[n - 1] = '\0';
                r = safe_atou64(digits, 10, &v);
                if (r < 0)
                        return r;
                if (v > (uint64_t) (MAX_SECONDS / units[i].seconds))
                        return -ERANGE;
                *ret = now - (int64_t) v * units[i].seconds;
                return 0;
        }
        if (!isdigit((unsigned char) s[0]))
                return -EINVAL;
        r = safe_atou64(s, 10, &v);
        if (r < 0)
                return r;
        if (v > (uint64_t) MAX_SECONDS)
                return -ERANGE;
        *ret = (int64_t) v;
        return 0;
}
