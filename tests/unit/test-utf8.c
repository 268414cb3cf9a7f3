/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdbool.h>
#include <stdint.h>

#include "tests.h"
#include "utf8.h"

/* Table 3-7 of the Unicode Standard (Well-Formed UTF-8 Byte Sequences), as
 * data: code points, first byte range, second byte range, length. */
static const struct {
        unsigned first_lo, first_hi, second_lo, second_hi, len;
} table_3_7[] = {
        { 0x00, 0x7F, 0, 0, 1 },
        { 0xC2, 0xDF, 0x80, 0xBF, 2 },
        { 0xE0, 0xE0, 0xA0, 0xBF, 3 },
        { 0xE1, 0xEC, 0x80, 0xBF, 3 },
        { 0xED, 0xED, 0x80, 0x9F, 3 },
        { 0xEE, 0xEF, 0x80, 0xBF, 3 },
        { 0xF0, 0xF0, 0x90, 0xBF, 4 },
        { 0xF1, 0xF3, 0x80, 0xBF, 4 },
        { 0xF4, 0xF4, 0x80, 0x8F, 4 },
};

static unsigned table_len(unsigned first, unsigned second) {
        for (size_t i = 0; i < sizeof(table_3_7) / sizeof(table_3_7[0]); i++) {
                if (first < table_3_7[i].first_lo || first > table_3_7[i].first_hi)
                        continue;
                if (table_3_7[i].len == 1)
                        return 1;
                return second >= table_3_7[i].second_lo && second <= table_3_7[i].second_hi ? table_3_7[i].len : 0;
        }
        return 0;
}

/* Every first/second byte pair, followed by valid continuation bytes:
 * well-formed exactly where the table says so, and the error is reported
 * at the lead byte. */
TEST(table_rows) {
        for (unsigned a = 0; a < 256; a++)
                for (unsigned b = 0; b < 256; b++) {
                        char s[4] = { (char) a, (char) b, (char) 0x80, (char) 0x80 };
                        unsigned len = table_len(a, b);
                        long bad;

                        if (len == 1)
                                continue;       /* second byte starts its own sequence */
                        bad = utf8_find_invalid(s, len ?: 4);
                        if (len)
                                ASSERT_EQ(bad, -1);
                        else
                                ASSERT_EQ(bad, 0);
                        ASSERT_EQ(utf8_char_len(s, 4), len);
                        /* cut short, no sequence is whole */
                        if (len)
                                ASSERT_EQ(utf8_char_len(s, len - 1), 0);
                }
        for (unsigned a = 0; a < 0x80; a++) {
                char c = (char) a;
                ASSERT_TRUE(utf8_is_valid(&c, 1));
                ASSERT_EQ(utf8_char_len(&c, 1), 1);
        }
}

static size_t encode(uint32_t cp, char *out) {
        if (cp < 0x80) {
                out[0] = (char) cp;
                return 1;
        }
        if (cp < 0x800) {
                out[0] = (char) (0xC0 | cp >> 6);
                out[1] = (char) (0x80 | (cp & 0x3F));
                return 2;
        }
        if (cp < 0x10000) {
                out[0] = (char) (0xE0 | cp >> 12);
                out[1] = (char) (0x80 | (cp >> 6 & 0x3F));
                out[2] = (char) (0x80 | (cp & 0x3F));
                return 3;
        }
        out[0] = (char) (0xF0 | cp >> 18);
        out[1] = (char) (0x80 | (cp >> 12 & 0x3F));
        out[2] = (char) (0x80 | (cp >> 6 & 0x3F));
        out[3] = (char) (0x80 | (cp & 0x3F));
        return 4;
}

/* Every Unicode scalar value, canonically encoded, is accepted; every
 * surrogate code point encoded the same way, and every truncation of a
 * multi-byte sequence, is refused. */
TEST(all_scalar_values) {
        for (uint32_t cp = 0; cp <= 0x10FFFF; cp++) {
                char s[8] = "x";
                size_t n = encode(cp, s + 1);
                bool surrogate = cp >= 0xD800 && cp <= 0xDFFF;

                s[n + 1] = 'y';
                if (surrogate)
                        ASSERT_EQ(utf8_find_invalid(s, n + 2), 1);
                else
                        ASSERT_EQ(utf8_find_invalid(s, n + 2), -1);
                if (!surrogate && n > 1)
                        for (size_t k = 1; k < n; k++)
                                ASSERT_EQ(utf8_find_invalid(s, 1 + k), 1);
        }
}

/* The forms the issue found stored and served back raw. */
TEST(hostile_examples) {
        static const struct {
                const char *s;
                long bad;
        } cases[] = {
                { "ok\xC0\xAF", 2 },                    /* overlong '/' */
                { "\xE0\x80\xAF", 0 },                  /* overlong, 3 bytes */
                { "\xF0\x80\x80\xAF", 0 },              /* overlong, 4 bytes */
                { "a\xED\xA0\x80", 1 },                 /* high surrogate */
                { "\xED\xBF\xBF", 0 },                  /* low surrogate */
                { "\xF4\x90\x80\x80", 0 },              /* U+110000 */
                { "\xF5\x80\x80\x80", 0 },
                { "\xFE", 0 },
                { "\xFF", 0 },
                { "abc\x80", 3 },                       /* lone continuation */
                { "\xC3", 0 },                          /* truncated */
                { "\xE2\x82", 0 },
                { "\xE2\x82\xAC\xE2\x82", 3 },
                { "\xC3\xA9t\xC3\xA9", -1 },            /* été */
                { "\xF0\x9F\x98\x80", -1 },             /* U+1F600 */
                { "\xF4\x8F\xBF\xBF", -1 },             /* U+10FFFF */
                { "\xEF\xBF\xBF", -1 },                 /* U+FFFF is a scalar value */
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                ASSERT_EQ(utf8_find_invalid(cases[i].s, strlen(cases[i].s)), cases[i].bad);
        ASSERT_EQ(utf8_find_invalid("", 0), -1);
}

TEST(controls) {
        ASSERT_FALSE(string_has_control("job 4711 \xC3\xA9", 11));
        ASSERT_TRUE(string_has_control("4711\0", 5));
        ASSERT_TRUE(string_has_control("a\tb", 3));
        ASSERT_TRUE(string_has_control("a\x1b[31m", 7));
        ASSERT_TRUE(string_has_control("\x7f", 1));
}

TEST(make_valid) {
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "ok", "ok" },
                { "\xC3\xA9t\xC3\xA9", "\xC3\xA9t\xC3\xA9" },
                { "a\xFF" "b", "a\xEF\xBF\xBD" "b" },
                { "\xC0\xAF", "\xEF\xBF\xBD\xEF\xBF\xBD" },
                { "x\xED\xA0\x80", "x\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD" },
                { "\xE2\x82", "\xEF\xBF\xBD\xEF\xBF\xBD" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char *v = utf8_make_valid(cases[i].in, strlen(cases[i].in));

                ASSERT_STREQ(v, cases[i].out);
                ASSERT_TRUE(utf8_is_valid(v, strlen(v)));
                free(v);
        }
        /* every byte string of two bytes comes out well-formed */
        for (unsigned a = 1; a < 256; a++)
                for (unsigned b = 1; b < 256; b++) {
                        char in[2] = { (char) a, (char) b }, *v = utf8_make_valid(in, 2);

                        ASSERT_TRUE(utf8_is_valid(v, strlen(v)));
                        free(v);
                }
}

int main(void) {
        RUN(table_rows);
        RUN(all_scalar_values);
        RUN(hostile_examples);
        RUN(controls);
        RUN(make_valid);
        return 0;
}
