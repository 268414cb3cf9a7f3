/* SPDX-License-Identifier: GPL-2.0-or-later */
/* POST /api/v1/sessions: a login ticket for a browser, which `lmk web`
 * asks for with MUNGE (auth/session.h, docs/web.md). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "api/api.h"
#include "http/json-in.h"
#include "log.h"
#include "util.h"

static const char *const sessions_args[] = { NULL };

/* Who minted, for the count of tickets (SessionMints). */
static void minter(const Request *req, char *ret, size_t size) {
        char ref[2 * TOKEN_REF_SIZE + 1];

        if (!req->identity->by_token) {
                snprintf(ret, size, "user:%s", req->identity->user ?: "");
                return;
        }
        for (size_t i = 0; i < TOKEN_REF_SIZE; i++)
                snprintf(ref + 2 * i, 3, "%02x", req->identity->token_ref[i]);
        snprintf(ret, size, "token:%s", ref);
}

void api_sessions(Server *s, Request *req, Reply *reply) {
        _cleanup_(json_object_putp) json_object *body = NULL, *o = NULL;
        _cleanup_free_ char *ticket = NULL, *next_part = NULL, *link = NULL;
        SessionClaims c = {
                .kind = SESSION_TICKET,
                .admin = req->identity->by_token,
                .uid = req->identity->by_token || req->identity->uid == (uid_t) -1 ? -1 : (int64_t) req->identity->uid,
                .expires = (int64_t) time(NULL) + SESSION_TICKET_TTL,
        };
        const char *next = NULL;
        unsigned retry = 0;
        char who[80];
        int r;

        if (!request_check_args(req, sessions_args, reply))
                return;
        if (req->body_size > 0) {
                body = json_tokener_parse(req->body);
                if (!body || !json_object_is_type(body, json_type_object)) {
                        reply_error(reply, MHD_HTTP_BAD_REQUEST, NULL, "the body must be a JSON object");
                        return;
                }
                next = jstr(body, "next");
                if (jget(body, "next") && !session_next_valid(next)) {
                        reply_error(reply, MHD_HTTP_BAD_REQUEST, "next",
                                    "next must be a page of this store, such as jobs/4711");
                        return;
                }
        }
        if (c.admin)
                memcpy(c.ref, req->identity->token_ref, TOKEN_REF_SIZE);
        snprintf(c.user, sizeof(c.user), "%s", req->identity->user ?: "admin");
        /* Each identity mints a few at a time: the tickets' records
         * (use_ticket) and the work of checking them stay bounded by the
         * site's people, not by how fast one of them asks. */
        minter(req, who, sizeof(who));
        r = session_mints_take(s->auth.mints, who, (int64_t) (now_ns(CLOCK_MONOTONIC) / UINT64_C(1000000000)),
                               &retry);
        if (r == -EUSERS) {
                auth_denied(&s->auth, req, "ticket-limit");
                reply_error(reply, MHD_HTTP_TOO_MANY_REQUESTS, NULL,
                            "%d login links within %d seconds are enough for anyone: try again in %u s",
                            SESSION_TICKETS_MAX, SESSION_TICKET_TTL, retry);
                reply->retry_after = retry;
                return;
        }
        if (r < 0) {
                reply_oom(reply);
                return;
        }
        r = session_sign(s->auth.config.session_key, &c, &ticket);
        if (r == -EINVAL) {
                reply_error(reply, MHD_HTTP_BAD_REQUEST, NULL, "user name %s cannot have a browser session",
                            req->identity->user ?: "?");
                return;
        }
        if (r < 0) {
                reply_oom(reply);
                return;
        }
        if (next && !(next_part = url_encode_part(next))) {
                reply_oom(reply);
                return;
        }
        if (asprintf(&link, "login?ticket=%s%s%s", ticket, next ? "&next=" : "", next_part ?: "") < 0)
                link = NULL;
        o = json_object_new_object();
        if (!link || !o ||
            json_add(o, "login", json_object_new_string(link)) < 0 ||
            json_add(o, "user", json_object_new_string(c.user)) < 0 ||
            json_add(o, "admin", json_object_new_boolean(req->identity->admin)) < 0 ||
            json_add(o, "expires", json_object_new_int64(c.expires)) < 0 ||
            json_add(o, "session_seconds", json_object_new_int64(s->auth.config.session_ttl_s)) < 0) {
                reply_oom(reply);
                return;
        }
        log_debug("Login ticket for %s%s.", c.user, c.admin ? " (admin token)" : "");
        reply_json(reply, MHD_HTTP_OK, TAKE_PTR(o));
}
