/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Strict UTF-8 as the Unicode Standard defines it (chapter 3, table 3-7,
 * "Well-Formed UTF-8 Byte Sequences"): no overlong forms, no surrogates
 * (U+D800..U+DFFF), nothing above U+10FFFF, no C0, C1 or F5..FF lead bytes.
 * Every string lmk takes from outside (pushed batches, query parameters,
 * token files, configuration) passes through this one check before it is
 * stored or compared, so what the store serves back is valid JSON text.
 *
 * Returns the byte offset of the first ill-formed sequence, or -1 when all
 * n bytes are well-formed. A NUL byte is well-formed UTF-8; callers that
 * need C strings refuse it separately. */
long utf8_find_invalid(const char *s, size_t n);

static inline bool utf8_is_valid(const char *s, size_t n) {
        return utf8_find_invalid(s, n) < 0;
}

/* The length (1 to 4) of the well-formed sequence that starts s (n bytes
 * at most), 0 when none does: the step of every walk over UTF-8 text. */
size_t utf8_char_len(const char *s, size_t n);

/* A copy of s (n bytes) with every ill-formed sequence replaced by U+FFFD,
 * for names lmkd reports but does not choose (commands, paths, phases): the
 * store refuses ill-formed text, and one odd file name must not cost a
 * node its whole batch. NULL when out of memory. */
char *utf8_make_valid(const char *s, size_t n);

/* True when s (n bytes) holds a C0 control character (U+0000..U+001F) or
 * DEL, which no name, path segment or parameter lmk accepts. */
bool string_has_control(const char *s, size_t n);
