/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "http/csv-out.h"
#include "macro.h"

void csv_write_field(FILE *f, const char *s, bool text) {
        bool formula = text && s[0] && strchr("=+-@\t\r", s[0]);

        if (!formula && !s[strcspn(s, ",\"\r\n")]) {
                fputs(s, f);
                return;
        }
        fputc('"', f);
        if (formula)
                fputc('\'', f);
        for (const char *p = s; *p; p++) {
                if (*p == '"')
                        fputc('"', f);
                fputc(*p, f);
        }
        fputc('"', f);
}

/* One step of a column's path: "key" or "key[N]". */
static json_object *step(json_object *o, const char *seg, size_t len) {
        const char *br = memchr(seg, '[', len);
        char key[64];
        json_object *v;

        if ((br ? (size_t) (br - seg) : len) >= sizeof(key))
                return NULL;
        memcpy(key, seg, br ? (size_t) (br - seg) : len);
        key[br ? (size_t) (br - seg) : len] = '\0';
        if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v))
                return NULL;
        if (!br)
                return v;
        if (!json_object_is_type(v, json_type_array))
                return NULL;
        return json_object_array_get_idx(v, strtoul(br + 1, NULL, 10));
}

static json_object *resolve(json_object *row, json_object *parent, const char *path) {
        json_object *o = row;

        if (strncmp(path, "../", 3) == 0) {
                o = parent;
                path += 3;
        }
        while (o && *path) {
                size_t len = strcspn(path, ".");

                o = step(o, path, len);
                path += len;
                if (*path == '.')
                        path++;
        }
        return o;
}

static void write_value(FILE *f, json_object *v) {
        char buf[32];

        switch (json_object_get_type(v)) {
        case json_type_null:
                break;
        case json_type_boolean:
                fputs(json_object_get_boolean(v) ? "true" : "false", f);
                break;
        case json_type_int:
                snprintf(buf, sizeof(buf), "%" PRId64, json_object_get_int64(v));
                fputs(buf, f);
                break;
        case json_type_double:
                /* the text json-out.c gave it: "0.5", not "0.50000000000000000" */
                fputs(json_object_to_json_string(v), f);
                break;
        case json_type_string:
                csv_write_field(f, json_object_get_string(v), true);
                break;
        default:
                csv_write_field(f, json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN), true);
        }
}

static void write_row(FILE *f, const CsvTable *t, json_object *row, json_object *parent) {
        for (size_t c = 0; c < t->n_columns; c++) {
                if (c > 0)
                        fputc(',', f);
                write_value(f, resolve(row, parent, t->columns[c].path ?: t->columns[c].name));
        }
        fputs("\r\n", f);
}

int csv_from_json(json_object *o, const CsvTable *t, char **ret, size_t *ret_size) {
        _cleanup_free_ char *text = NULL;
        json_object *list;
        size_t size = 0;
        FILE *f;

        if (!json_object_object_get_ex(o, t->list, &list) || !json_object_is_type(list, json_type_array))
                return -EINVAL;
        f = open_memstream(&text, &size);
        if (!f)
                return -ENOMEM;
        for (size_t c = 0; c < t->n_columns; c++) {
                if (c > 0)
                        fputc(',', f);
                csv_write_field(f, t->columns[c].name, false);
        }
        fputs("\r\n", f);
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                json_object *row = json_object_array_get_idx(list, i), *sub;

                if (!t->sublist) {
                        write_row(f, t, row, NULL);
                        continue;
                }
                if (!json_object_object_get_ex(row, t->sublist, &sub) || !json_object_is_type(sub, json_type_array))
                        continue;
                for (size_t k = 0; k < json_object_array_length(sub); k++)
                        write_row(f, t, json_object_array_get_idx(sub, k), row);
        }
        if (fclose(f) != 0)
                return -ENOMEM;
        *ret = TAKE_PTR(text);
        *ret_size = size;
        return 0;
}
