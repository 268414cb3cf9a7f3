/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "batch/field-reader.h"
#include "utf8.h"

int field_fail(BatchError *err, int r, Where w, const char *key, const char *fmt, ...) {
        va_list ap;

        if (!w.parent)
                snprintf(err->field, sizeof(err->field), "%s", key);
        else if (w.index < 0)
                snprintf(err->field, sizeof(err->field), "%s%s%s", w.parent, key ? "." : "", key ?: "");
        else
                snprintf(err->field, sizeof(err->field), "%s[%ld]%s%s", w.parent, w.index, key ? "." : "", key ?: "");
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof(err->message), fmt, ap);
        va_end(ap);
        return r;
}

static int get_member(const Fields *f, unsigned i, Where w, bool required, const JsonValue **ret, BatchError *err) {
        if (!f->v[i] && required)
                return field_fail(err, -EINVAL, w, f->names[i], "missing");
        *ret = f->v[i];
        return 0;
}

/* Member i for a reader of type t (JSON_DOUBLE: any number): NULL where
 * there is none to read (absent, or null with NULLABLE), else a value of
 * that type, or an error saying it must be what. */
static int get_typed(const Fields *f, unsigned i, Where w, unsigned flags, JsonType t, const char *what,
                     const JsonValue **ret, BatchError *err) {
        const char *key = f->names[i];
        const JsonValue *v;
        int r;

        r = get_member(f, i, w, flags & REQUIRED, &v, err);
        if (r < 0)
                return r;
        if (!v || ((flags & NULLABLE) && json_is_type(v, JSON_NULL))) {
                *ret = NULL;
                return 0;
        }
        /* a number says only that it must be one */
        if (json_is_type(v, JSON_NULL) && t != JSON_DOUBLE)
                return field_fail(err, -EINVAL, w, key, "must be %s, not null", what);
        if (!json_is_type(v, t) && !(t == JSON_DOUBLE && json_is_type(v, JSON_INT)))
                return field_fail(err, -EINVAL, w, key, "must be %s", what);
        *ret = v;
        return 0;
}

int field_check_text(const char *s, size_t len, unsigned flags, Where w, const char *key, BatchError *err) {
        long bad = utf8_find_invalid(s, len);

        if (bad >= 0)
                return field_fail(err, -EINVAL, w, key, "is not valid UTF-8 at byte %ld", bad);
        if (memchr(s, 0, len))
                return field_fail(err, -EINVAL, w, key, "must not contain NUL bytes (at byte %zu)",
                                  (size_t) ((const char *) memchr(s, 0, len) - s));
        if ((flags & IDENT) && string_has_control(s, len)) {
                size_t i = 0;

                while (i < len && (unsigned char) s[i] >= 0x20 && s[i] != 0x7f)
                        i++;
                return field_fail(err, -EINVAL, w, key, "must not contain control characters (at byte %zu)", i);
        }
        return 0;
}

int field_string(const Fields *f, unsigned i, Where w, unsigned flags, size_t min, size_t max, const char **ret,
                 BatchError *err) {
        const char *key = f->names[i];
        const JsonValue *v;
        int r;

        r = get_typed(f, i, w, flags, JSON_STRING, "a string", &v, err);
        if (r < 0)
                return r;
        if (!v) {
                *ret = NULL;
                return 0;
        }
        if (v->n < min || v->n > max)
                return field_fail(err, -EINVAL, w, key, "must be %zu to %zu bytes long, is %" PRIu32, min, max, v->n);
        /* printable ASCII passes field_check_text() */
        if (!v->plain) {
                r = field_check_text(v->string, v->n, flags, w, key, err);
                if (r < 0)
                        return r;
        }
        *ret = v->string;
        return 0;
}

int field_int(const Fields *f, unsigned i, Where w, unsigned flags, int64_t min, int64_t max, int64_t *ret,
              BatchError *err) {
        const char *key = f->names[i];
        const JsonValue *v;
        int r;

        r = get_typed(f, i, w, flags, JSON_INT, "an integer", &v, err);
        if (r < 0)
                return r;
        if (!v) {
                *ret = BATCH_NULL;
                return 0;
        }
        if (v->integer < min || v->integer > max)
                return field_fail(err, -EINVAL, w, key, "must be between %" PRId64 " and %" PRId64, min, max);
        *ret = v->integer;
        return 0;
}

int field_double(const Fields *f, unsigned i, Where w, unsigned flags, double min, double max, double *ret,
                 BatchError *err) {
        const char *key = f->names[i];
        const JsonValue *v;
        double d;
        int r;

        r = get_typed(f, i, w, flags, JSON_DOUBLE, "a number", &v, err);
        if (r < 0)
                return r;
        if (!v) {
                *ret = NAN;
                return 0;
        }
        d = json_number(v);
        if (!isfinite(d) || d < min || d > max)
                return field_fail(err, -EINVAL, w, key, "must be a number between %g and %g", min, max);
        *ret = d;
        return 0;
}

int field_bool(const Fields *f, unsigned i, Where w, bool *ret, BatchError *err) {
        const JsonValue *v = f->v[i];

        if (!v || json_is_type(v, JSON_NULL)) {
                *ret = false;
                return 0;
        }
        if (!json_is_type(v, JSON_BOOL))
                return field_fail(err, -EINVAL, w, f->names[i], "must be true or false");
        *ret = v->boolean;
        return 0;
}

int field_object(const Fields *f, unsigned i, Where w, bool required, const JsonValue **ret, BatchError *err) {
        const JsonValue *v;
        int r;

        r = get_member(f, i, w, required, &v, err);
        if (r < 0)
                return r;
        if (v && !json_is_type(v, JSON_OBJECT))
                return field_fail(err, -EINVAL, w, f->names[i], "must be an object");
        *ret = v;
        return 0;
}

int field_array(const Fields *f, unsigned i, Where w, bool required, size_t max, const JsonValue **ret,
                size_t *ret_n, BatchError *err) {
        const char *key = f->names[i];
        const JsonValue *v;
        int r;

        r = get_member(f, i, w, required, &v, err);
        if (r < 0)
                return r;
        if (!v || json_is_type(v, JSON_NULL)) {
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        if (!json_is_type(v, JSON_ARRAY))
                return field_fail(err, -EINVAL, w, key, "must be an array");
        if (v->n > max)
                return field_fail(err, -E2BIG, w, key, "has %" PRIu32 " elements, at most %zu are allowed", v->n, max);
        *ret = v;
        *ret_n = v->n;
        return 0;
}
