/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* The storage code writes SQLite's positional '?' parameters; PostgreSQL
 * numbers them ($1, $2, ...). */

/* Copies sql with each '?' that stands for a parameter replaced by $1, $2,
 * ... in order of appearance. A '?' inside a string literal ('...', E'...'
 * with backslash escapes, $tag$...$tag$), a quoted identifier ("...") or a
 * comment (-- to the end of the line, nested slash-star) is text and left
 * alone. -E2BIG above 65535 parameters (the protocol's limit). */
int pg_rewrite_placeholders(const char *sql, char **ret_sql, unsigned *ret_n_params);
