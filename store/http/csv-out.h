/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* A list answer of the API as CSV (RFC 4180, ?format=csv, docs/api.md):
 * the handler builds its JSON as always, and the list in it becomes the
 * rows. The columns are declared beside the handler that builds the rows,
 * so that the header is the same whether the list is empty or not; a test
 * (tests/store/test-csv.py) holds the declaration to the JSON rows. */

typedef struct CsvColumn {
        const char *name;       /* the header */
        /* Where in a row the value is: a key, "key.key" into objects,
         * "key[N]" into an array, "../key" in the parent row of a sublist;
         * NULL: the name. */
        const char *path;
} CsvColumn;

typedef struct CsvTable {
        const char *list;       /* the answer's array of rows ("jobs") */
        const char *sublist;    /* NULL, or an array in each row whose elements are the rows */
        const char *disposition; /* Content-Disposition: attachment; filename="…" */
        const CsvColumn *columns;
        size_t n_columns;
} CsvTable;

#define CSV_TABLE(list_, sublist_, filename_, ...)                                              \
        {                                                                                       \
                .list = (list_), .sublist = (sublist_),                                         \
                .disposition = "attachment; filename=\"" filename_ "\"",                      \
                .columns = (const CsvColumn[]) { __VA_ARGS__ },                                 \
                .n_columns = sizeof((const CsvColumn[]) { __VA_ARGS__ }) / sizeof(CsvColumn),   \
        }

/* One field: quoted when it holds a comma, a quote, CR or LF (quotes
 * doubled). A text that a spreadsheet would take for a formula (it starts
 * with = + - @, TAB or CR) gets a leading apostrophe, as OWASP advises:
 * job names, commands and notes come from every user of the cluster, and
 * the file is opened by admins. Numbers are written as they are. */
void csv_write_field(FILE *f, const char *s, bool text);

/* The rows of o under t as CSV text (malloc'd), CRLF line ends, header
 * first. -EINVAL when o has no such list; -ENOMEM. */
int csv_from_json(json_object *o, const CsvTable *t, char **ret, size_t *ret_size);
