/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "cli.h"
#include "log.h"

int cli_error(const Cli *cli, int error, const char *fmt, ...) {
        char msg[1024];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (cli && cli->json) {
                json_object *o = json_object_new_object();

                json_object_object_add(o, "error", json_object_new_string(msg));
                printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
                                                                 JSON_C_TO_STRING_NOSLASHESCAPE));
                json_object_put(o);
        } else
                log_error("%s", msg);
        return error ? -abs(error) : -EINVAL;
}

/* Reading the store's answer: absent and null alike give the default. */
json_object *jget(json_object *o, const char *key) {
        json_object *v = NULL;

        if (!o || !json_object_object_get_ex(o, key, &v))
                return NULL;
        return v;
}

const char *jstr(json_object *o, const char *key) {
        json_object *v = jget(o, key);

        return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

int64_t jint(json_object *o, const char *key) {
        json_object *v = jget(o, key);

        return v && (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double))
                       ? json_object_get_int64(v) : -1;
}

double jnum(json_object *o, const char *key) {
        json_object *v = jget(o, key);

        return v && (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double))
                       ? json_object_get_double(v) : NAN;
}

const char *fmt_time(double t, char *buf, size_t size) {
        time_t tt = (time_t) t;
        struct tm tm;

        if (isnan(t) || !localtime_r(&tt, &tm) || strftime(buf, size, "%Y-%m-%d %H:%M", &tm) == 0)
                snprintf(buf, size, "-");
        return buf;
}

const char *fmt_duration(double s, char *buf, size_t size) {
        uint64_t n;

        if (isnan(s) || s < 0)
                snprintf(buf, size, "-");
        else if ((n = (uint64_t) llround(s)) < 60)
                snprintf(buf, size, "%" PRIu64 "s", n);
        else if (n < 3600)
                snprintf(buf, size, "%" PRIu64 "m%02" PRIu64 "s", n / 60, n % 60);
        else if (n < 86400)
                snprintf(buf, size, "%" PRIu64 "h%02" PRIu64 "m", n / 3600, n % 3600 / 60);
        else
                snprintf(buf, size, "%" PRIu64 "d%02" PRIu64 "h", n / 86400, n % 86400 / 3600);
        return buf;
}

const char *fmt_count(int64_t n, char *buf, size_t size) {
        char tmp[32];
        size_t len, out = 0;

        if (n < 0) {
                snprintf(buf, size, "-");
                return buf;
        }
        len = (size_t) snprintf(tmp, sizeof(tmp), "%" PRId64, n);
        for (size_t i = 0; i < len && out + 2 < size; i++) {
                if (i > 0 && (len - i) % 3 == 0)
                        buf[out++] = ',';
                buf[out++] = tmp[i];
        }
        buf[out] = '\0';
        return buf;
}

const char *fmt_si(double v, const char *unit, char *buf, size_t size) {
        static const char *const prefixes[] = { "", "k", "M", "G", "T", "P", "E" };
        size_t p = 0;

        if (isnan(v) || v < 0) {
                snprintf(buf, size, "-");
                return buf;
        }
        while (v >= 999.5 && p + 1 < ELEMENTSOF(prefixes)) {
                v /= 1000.0;
                p++;
        }
        snprintf(buf, size, p == 0 && v == floor(v) ? "%.0f %s%s" : v >= 99.95 ? "%.0f %s%s" :
                            v >= 9.995 ? "%.1f %s%s" : "%.2f %s%s", v, prefixes[p], unit);
        return buf;
}

/* The store flags shares resting on too few samples (docs/uncertainty.md):
 * those get one significant digit and a "~", never "41.7%". */
static bool share_rough(json_object *x) {
        json_object *v = jget(x, "share_reliable");

        return v && json_object_is_type(v, json_type_boolean) && !json_object_get_boolean(v);
}

const char *fmt_share(json_object *x, char *buf, size_t size) {
        double share = jnum(x, "share") * 100.0;

        if (isnan(share))
                snprintf(buf, size, "-");
        else if (share_rough(x))
                snprintf(buf, size, "~%.0f%%", share >= 10.0 ? round(share / 10.0) * 10.0 : round(share));
        else
                snprintf(buf, size, "%.1f%%", share);
        return buf;
}

const char *fmt_interval(json_object *x, bool long_form, char *buf, size_t size) {
        json_object *ci = jget(x, "share_ci95");

        if (share_rough(x))
                snprintf(buf, size, "(n=%" PRId64 ", too few%s)", jint(x, "share_of_samples"),
                         long_form ? " samples" : "");
        else if (ci && json_object_is_type(ci, json_type_array) && json_object_array_length(ci) == 2)
                snprintf(buf, size, "(%.1f-%.1f%%)",
                         json_object_get_double(json_object_array_get_idx(ci, 0)) * 100.0,
                         json_object_get_double(json_object_array_get_idx(ci, 1)) * 100.0);
        else
                snprintf(buf, size, "%s", ""); /* a store without intervals */
        return buf;
}

const char *fmt_ipc(json_object *v, char *buf, size_t size) {
        if (!v || json_object_is_type(v, json_type_null))
                snprintf(buf, size, "-");
        else
                snprintf(buf, size, "%.2f", json_object_get_double(v));
        return buf;
}

const char *fmt_fit(const char *s, size_t width, bool keep_end, char *buf, size_t size) {
        size_t n = strlen(s);

        if (n <= width || width < 4)
                snprintf(buf, size, "%s", s);
        else if (keep_end)
                snprintf(buf, size, "...%s", s + n - (width - 3));
        else
                snprintf(buf, size, "%.*s...", (int) (width - 3), s);
        return buf;
}

/* text, from column col on, wrapped at ", " to 78 columns with
 * continuation lines indented by indent. */
void print_wrapped_from(size_t col, size_t indent, const char *text) {
        bool first = true;

        while (*text) {
                const char *sep = strstr(text, ", ");
                size_t n = sep ? (size_t) (sep - text) : strlen(text);

                if (!first && col + 2 + n > 78) {
                        printf(",\n%*s", (int) indent, "");
                        col = indent;
                } else if (!first)
                        col += (size_t) printf(", ");
                col += (size_t) printf("%.*s", (int) n, text);
                first = false;
                text += n + (sep ? 2 : 0);
        }
        printf("\n");
}
