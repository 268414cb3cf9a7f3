/* SPDX-License-Identifier: GPL-2.0-or-later */
/* GET /logout: the session's cookies gone from the browser. */
#include <string.h>

#include "web/web.h"

void web_logout(Server *s, Request *req, Reply *reply) {
        _cleanup_(html_done) Html h = {};
        Request anonymous = *req;
        Identity nobody = {};

        anonymous.identity = &nobody;
        web_begin(&h, s, &anonymous, "Signed out");
        html_raw(&h, "<h1>Signed out</h1><p>The session cookie is gone from this browser. "
                     "Run <code>lmk web</code> on a login node to sign in again.</p>");
        web_end(&h, req);
        web_reply(reply, &h);
        if (reply->status == MHD_HTTP_OK &&
            (!(reply->set_cookie[0] = strdup(SESSION_COOKIE "=; Max-Age=0; HttpOnly; SameSite=Strict")) ||
             !(reply->set_cookie[1] = strdup(SESSION_MARK_COOKIE "=; Max-Age=0; HttpOnly; SameSite=Lax"))))
                reply_oom(reply);
}
