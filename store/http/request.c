/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A request's path and query: checking and reading them; a value encoded
 * for a URL. */
#include <string.h>

#include "http/http.h"
#include "utf8.h"
#include "util.h"

bool request_text_valid(const char *s, size_t *ret_offset) {
        size_t n = strlen(s);
        long bad = utf8_find_invalid(s, n);

        if (bad >= 0) {
                *ret_offset = (size_t) bad;
                return false;
        }
        for (size_t i = 0; i < n; i++)
                if ((unsigned char) s[i] < 0x20 || s[i] == 0x7f) {
                        *ret_offset = i;
                        return false;
                }
        return true;
}

typedef struct ArgCheck {
        const char *const *allowed;
        bool format;    /* "format" is allowed too (http.c checked its value) */
        const char *unknown;
        const char *bad;        /* a key whose key or value is not clean text */
        size_t bad_offset;
        bool bad_in_key;
} ArgCheck;

static enum MHD_Result check_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
        ArgCheck *a = cls;

        if (!request_text_valid(key, &a->bad_offset) ||
            (value && !request_text_valid(value, &a->bad_offset))) {
                a->bad = key;
                a->bad_in_key = !request_text_valid(key, &a->bad_offset);
                return MHD_NO;
        }
        for (const char *const *p = a->allowed; *p; p++)
                if (streq(*p, key))
                        return MHD_YES;
        if (a->format && streq(key, "format"))
                return MHD_YES;
        a->unknown = key;
        return MHD_NO;
}

bool request_check_args(Request *req, const char *const *allowed, Reply *reply) {
        ArgCheck a = { .allowed = allowed, .format = req->format_arg };

        if (req->args) {
                for (size_t i = 0; i < req->n_args; i++)
                        if (check_arg(&a, MHD_GET_ARGUMENT_KIND, req->args[i].key, req->args[i].value) == MHD_NO)
                                break;
        } else
                MHD_get_connection_values(req->connection, MHD_GET_ARGUMENT_KIND, check_arg, &a);
        if (a.bad) {
                /* The name itself may be what is broken: not echoed then. */
                if (a.bad_in_key)
                        reply_error(reply, MHD_HTTP_BAD_REQUEST, NULL,
                                    "a query parameter name holds a control character or invalid UTF-8 at byte %zu",
                                    a.bad_offset);
                else
                        reply_error(reply, MHD_HTTP_BAD_REQUEST, a.bad,
                                    "query parameter \"%s\" holds a control character or invalid UTF-8 at byte %zu",
                                    a.bad, a.bad_offset);
                return false;
        }
        if (a.unknown) {
                reply_error(reply, MHD_HTTP_BAD_REQUEST, a.unknown, "unknown query parameter \"%s\"", a.unknown);
                return false;
        }
        return true;
}

const char *request_arg(Request *req, const char *key) {
        const char *v = NULL;

        if (req->args) {
                for (size_t i = 0; i < req->n_args; i++)
                        if (streq(req->args[i].key, key))
                                v = req->args[i].value;
        } else
                v = MHD_lookup_connection_value(req->connection, MHD_GET_ARGUMENT_KIND, key);

        return v && *v ? v : NULL;
}

char *url_encode_part(const char *s) {
        static const char hex[] = "0123456789ABCDEF";
        char *e = malloc(3 * strlen(s ?: "") + 1), *q = e;

        if (!e)
                return NULL;
        for (const unsigned char *p = (const unsigned char *) s; p && *p; p++)
                if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
                    *p == '-' || *p == '.' || *p == '_' || *p == '~')
                        *q++ = (char) *p;
                else {
                        *q++ = '%';
                        *q++ = hex[*p >> 4];
                        *q++ = hex[*p & 15];
                }
        *q = '\0';
        return e;
}
