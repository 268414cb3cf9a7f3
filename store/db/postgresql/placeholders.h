/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* The storage code writes SQLite's parameters: '?' and numbered '?NNN';
 * PostgreSQL spells them $1, $2, ... */

/* Copies sql with each parameter in PostgreSQL's spelling, numbered as
 * SQLite numbers them: '?NNN' is parameter NNN (1 to 65535), and a bare '?'
 * is one more than the largest number given so far ("?2, ?" is $2, $3).
 * ret_n_params is the largest number. A '?' inside a string literal ('...', E'...'
 * with backslash escapes, $tag$...$tag$), a quoted identifier ("...") or a
 * comment (-- to the end of the line, nested slash-star) is text and left
 * alone. -E2BIG above 65535 parameters (the protocol's limit); -EINVAL for
 * a number that starts with 0 (?0 is no parameter; ?01 is not written). */
int pg_rewrite_placeholders(const char *sql, char **ret_sql, unsigned *ret_n_params);
