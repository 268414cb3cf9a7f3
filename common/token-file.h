/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Files that hold bearer tokens: lmkd's node token, lmk-store's token list,
 * the lmk CLI's admin token. One policy for all three, so a file one of them
 * accepts is not refused by another:
 *
 *   - a regular file, owned by the reading user or root;
 *   - neither readable nor writable by group or others (a token others can
 *     read is no secret; a file others can write lets them add tokens):
 *     mode 0600 or 0400;
 *   - at most TOKEN_FILE_MAX bytes (lmk-store's file has a line per node:
 *     about 100 bytes each, so this fits tens of thousands of nodes);
 *   - text: UTF-8 (comments may hold any), no NUL, no control character but
 *     tab and newline, so no CRLF line endings.
 *
 * The callers parse their own formats from the text. */

#define TOKEN_FILE_MAX (8u * 1024u * 1024u)

/* What a token may be, wherever it is read: printable ASCII, no spaces. */
#define TOKEN_MIN_LENGTH 16
#define TOKEN_MAX_LENGTH 512

/* Reads the file at path into a NUL-terminated string. On failure returns a
 * negative errno and, when ret_error is not NULL, sets *ret_error to a
 * sentence naming the file, what is wrong and how to fix it (free() it; NULL
 * when out of memory). -EACCES/-EPERM: permissions or owner; -EFBIG: too
 * large; -EBADMSG: not text as above; -ENODATA: empty or only blank. */
int token_file_read(const char *path, char **ret, char **ret_error);

/* Validation of the text alone (what token_file_read applies after reading);
 * returns the same codes and message, naming path. */
int token_text_check(const char *path, const char *text, size_t n, char **ret_error);

/* True for a token of TOKEN_MIN_LENGTH..TOKEN_MAX_LENGTH printable ASCII
 * characters other than space. */
bool token_is_valid(const char *t);

/* Wipes a token's text before it is freed. */
void token_erase(char *s);
