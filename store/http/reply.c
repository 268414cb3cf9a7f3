/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Filling and freeing a Reply. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "http/http.h"

void reply_done(Reply *r) {
        json_object_put(r->json);
        free(r->text);
        free(r->location);
        free(r->disposition);
        for (size_t i = 0; i < ELEMENTSOF(r->set_cookie); i++)
                free(r->set_cookie[i]);
        *r = (Reply) {};
}

void reply_json(Reply *r, unsigned status, json_object *o) {
        json_object_put(r->json);
        r->status = status;
        r->json = o;
}

void reply_error(Reply *r, unsigned status, const char *field, const char *fmt, ...) {
        char msg[512];
        json_object *o;
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);

        o = json_object_new_object();
        if (o) {
                json_object_object_add(o, "error", json_object_new_string(msg));
                if (field)
                        json_object_object_add(o, "field", json_object_new_string(field));
        }
        reply_json(r, status, o);
}

void reply_oom(Reply *r) {
        reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory");
}
