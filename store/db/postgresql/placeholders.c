/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "db/postgresql/placeholders.h"

#define PG_MAX_PARAMS 65535

static bool is_ident_char(char ch) {
        return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
               ch == '_' || (unsigned char) ch >= 0x80;
}

/* The length of a dollar-quote opening tag at p ("$$" or "$tag$"), or 0
 * when p starts a parameter reference ($1) or nothing of the kind. */
static size_t dollar_tag_len(const char *p) {
        size_t n = 1;

        if (p[1] >= '0' && p[1] <= '9')
                return 0;
        while (p[n] && p[n] != '$') {
                if (!is_ident_char(p[n]))
                        return 0;
                n++;
        }
        return p[n] == '$' ? n + 1 : 0;
}

/* Where the token that starts at p (a literal, identifier or comment) ends:
 * the character after it, or p itself when p starts none of them. An
 * unterminated one runs to the end: the server reports it. */
static const char *skip_quoted(const char *sql, const char *p) {
        if (*p == '\'') {
                /* E'...' (also e'...') takes backslash escapes; a plain
                 * literal does not (standard_conforming_strings, the
                 * default since 9.1). An E that ends a longer word is not a
                 * prefix. */
                bool escapes = p > sql && (p[-1] == 'E' || p[-1] == 'e') &&
                               (p - 1 == sql || !is_ident_char(p[-2]));
                for (p++; *p; p++) {
                        if (escapes && *p == '\\' && p[1])
                                p++;
                        else if (*p == '\'') {
                                if (p[1] != '\'')
                                        return p + 1;
                                p++;
                        }
                }
                return p;
        }
        if (*p == '"') {
                for (p++; *p; p++)
                        if (*p == '"') {
                                if (p[1] != '"')
                                        return p + 1;
                                p++;
                        }
                return p;
        }
        if (p[0] == '-' && p[1] == '-') {
                p += strcspn(p, "\n");
                return p;
        }
        if (p[0] == '/' && p[1] == '*') {
                unsigned depth = 1;
                for (p += 2; *p && depth > 0; p++) {
                        if (p[0] == '/' && p[1] == '*')
                                depth++, p++;
                        else if (p[0] == '*' && p[1] == '/')
                                depth--, p++;
                }
                return p;
        }
        if (*p == '$' && (p == sql || !is_ident_char(p[-1]))) {
                size_t n = dollar_tag_len(p);
                const char *end;
                if (n == 0)
                        return p;
                for (end = p + n; *end; end++)
                        if (*end == '$' && strncmp(end, p, n) == 0)
                                return end + n;
                return end;
        }
        return p;
}

int pg_rewrite_placeholders(const char *sql, char **ret_sql, unsigned *ret_n_params) {
        _cleanup_free_ char *out = NULL;
        size_t len = strlen(sql), marks = 0;
        unsigned n = 0;
        const char *p;
        char *o;

        for (p = sql; *p; p++)
                marks += *p == '?';
        /* "$65535" is six bytes where '?' was one (and '?NNN' never grows). */
        out = malloc(len + marks * 5 + 1);
        if (!out)
                return -ENOMEM;

        o = out;
        for (p = sql; *p;) {
                const char *end = skip_quoted(sql, p);
                if (end != p) {
                        memcpy(o, p, end - p);
                        o += end - p;
                        p = end;
                } else if (*p == '?') {
                        unsigned k = 0;

                        p++;
                        if (*p == '0')
                                return -EINVAL;
                        if (*p >= '1' && *p <= '9') {
                                for (; *p >= '0' && *p <= '9'; p++) {
                                        k = k * 10 + (unsigned) (*p - '0');
                                        if (k > PG_MAX_PARAMS)
                                                return -E2BIG;
                                }
                        } else {
                                if (n == PG_MAX_PARAMS)
                                        return -E2BIG;
                                k = n + 1;
                        }
                        n = MAX(n, k);
                        o += sprintf(o, "$%u", k);
                } else
                        *o++ = *p++;
        }
        *o = '\0';

        *ret_sql = TAKE_PTR(out);
        *ret_n_params = n;
        return 0;
}
