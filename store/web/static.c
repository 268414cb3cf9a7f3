/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The answers that never change: / leads to the jobs, and the pages'
 * stylesheet, served from the binary. */
#include <string.h>

#include "lmk-css.h"
#include "web/web.h"

void web_root(Server *s, Request *req, Reply *reply) {
        reply->status = MHD_HTTP_SEE_OTHER;
        reply->location = strdup("jobs");
        reply->text = strdup("See jobs\n");
        reply->text_size = reply->text ? strlen(reply->text) : 0;
        reply->content_type = "text/plain; charset=utf-8";
        if (!reply->location || !reply->text)
                reply_oom(reply);
}

void web_css(Server *s, Request *req, Reply *reply) {
        reply->status = MHD_HTTP_OK;
        reply->text = strdup(lmk_css);
        reply->text_size = strlen(lmk_css);
        reply->content_type = "text/css; charset=utf-8";
        if (!reply->text)
                reply_oom(reply);
}
