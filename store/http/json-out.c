/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <math.h>
#include <stdio.h>

#include "http/json-out.h"

/* json-c has no "null object": a JSON null is a NULL json_object. This marker
 * tells json_add() that the NULL is meant and not an allocation failure. */
static json_object *const null_marker = (json_object *) &null_marker;

int json_append(json_object *a, json_object *val) {
        if (!val)
                return -ENOMEM;
        if (val == null_marker)
                val = NULL;
        if (json_object_array_add(a, val) < 0) {
                json_object_put(val);
                return -ENOMEM;
        }
        return 0;
}

json_object *json_null(void) {
        return null_marker;
}

json_object *json_number(double v, int decimals) {
        char buf[64];

        if (!isfinite(v))
                return json_null();
        snprintf(buf, sizeof(buf), "%.*f", decimals, v);
        /* Trailing zeros carry nothing: "0.500000" is "0.5", "12.000" is "12". */
        if (decimals > 0) {
                char *e = buf + strlen(buf) - 1;

                while (*e == '0')
                        *e-- = '\0';
                if (*e == '.')
                        *e = '\0';
        }
        if (streq(buf, "-0"))
                strcpy(buf, "0");
        return json_object_new_double_s(v, buf);
}

json_object *json_int_or_null(int64_t v) {
        return v < 0 ? json_null() : json_object_new_int64(v);
}

json_object *json_string_or_null(const char *s) {
        return s ? json_object_new_string(s) : json_null();
}

json_object *json_ratio(int64_t a, int64_t b, int decimals) {
        if (a < 0 || b <= 0)
                return json_null();
        return json_number((double) a / (double) b, decimals);
}

int json_add(json_object *o, const char *key, json_object *val) {
        if (!val)
                return -ENOMEM;
        if (val == null_marker)
                val = NULL;
        if (json_object_object_add(o, key, val) < 0) {
                json_object_put(val);
                return -ENOMEM;
        }
        return 0;
}
