/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "json-text.h"
#include "macro.h"
#include "utf8.h"

json_object *json_text_new(const char *s) {
        size_t n = strlen(s);
        _cleanup_free_ char *fixed = NULL;

        if (utf8_is_valid(s, n))
                return json_object_new_string_len(s, (int) n);
        fixed = utf8_make_valid(s, n);
        return fixed ? json_object_new_string(fixed) : NULL;
}
