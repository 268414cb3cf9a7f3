/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

/* Table 3-7 of the Unicode Standard, row by row: the lead byte fixes the
 * length and the range of the second byte; later bytes are 80..BF. */
size_t utf8_char_len(const char *str, size_t n) {
        const unsigned char *s = (const unsigned char *) str;
        unsigned char c, lo = 0x80, hi = 0xBF;
        size_t len;

        if (n == 0)
                return 0;
        c = s[0];
        if (c < 0x80)
                return 1;
        if (c >= 0xC2 && c <= 0xDF)
                len = 2;
        else if (c >= 0xE0 && c <= 0xEF) {
                len = 3;
                if (c == 0xE0)
                        lo = 0xA0;      /* overlong below U+0800 */
                else if (c == 0xED)
                        hi = 0x9F;      /* surrogates U+D800..U+DFFF */
        } else if (c >= 0xF0 && c <= 0xF4) {
                len = 4;
                if (c == 0xF0)
                        lo = 0x90;      /* overlong below U+10000 */
                else if (c == 0xF4)
                        hi = 0x8F;      /* above U+10FFFF */
        } else
                return 0;               /* 80..C1 and F5..FF never lead */

        if (n < len || s[1] < lo || s[1] > hi)
                return 0;
        for (size_t k = 2; k < len; k++)
                if (s[k] < 0x80 || s[k] > 0xBF)
                        return 0;
        return len;
}

long utf8_find_invalid(const char *s, size_t n) {
        size_t i = 0;

        while (i < n) {
                size_t len;

                if ((unsigned char) s[i] < 0x80) {
                        i++;
                        continue;
                }
                len = utf8_char_len(s + i, n - i);
                if (len == 0)
                        return (long) i;
                i += len;
        }
        return -1;
}

bool string_has_control(const char *str, size_t n) {
        const unsigned char *s = (const unsigned char *) str;

        for (size_t i = 0; i < n; i++)
                if (s[i] < 0x20 || s[i] == 0x7F)
                        return true;
        return false;
}

char *utf8_make_valid(const char *s, size_t n) {
        /* each bad byte becomes 3 bytes at most */
        char *out = malloc(n * 3 + 1), *o = out;
        size_t i = 0;

        if (!out)
                return NULL;
        while (i < n) {
                long bad = utf8_find_invalid(s + i, n - i);
                size_t good = bad < 0 ? n - i : (size_t) bad;

                memcpy(o, s + i, good);
                o += good;
                i += good;
                if (bad < 0)
                        break;
                /* U+FFFD for the one byte that cannot start a sequence here */
                memcpy(o, "\xEF\xBF\xBD", 3);
                o += 3;
                i++;
        }
        *o = '\0';
        return out;
}
