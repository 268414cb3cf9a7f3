/* SPDX-License-Identifier: GPL-2.0-or-later */
/* GET /login: a login link (a ticket, auth/session.h) signs the browser
 * in; POST /login: the browser confirms it follows a link for someone else
 * than it is signed in as. */
#include <errno.h>
#include <strings.h>
#include <time.h>

#include "log.h"
#include "util.h"
#include "web/web.h"

/* Whether the browser reached us over HTTPS, as a trusted proxy says. */
static bool via_https(Server *s, Request *req) {
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(req->connection,
                                                                     MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        const char *proto = MHD_lookup_connection_value(req->connection, MHD_HEADER_KIND, "X-Forwarded-Proto");

        return proto && strcasecmp(proto, "https") == 0 && ci &&
               trusted_proxies_contain(&s->auth.config.trusted_proxies, ci->client_addr);
}

static const char *const login_args[] = { "ticket", "next", NULL };
static const char *const confirm_args[] = { "ticket", "next", "confirm", NULL };

/* Who the browser is signed in as: its session cookie, else the mark
 * beside it, which it sends on a link from another site too. */
static bool browser_identity(Server *s, Request *req, int64_t now, SessionClaims *ret) {
        const char *v = MHD_lookup_connection_value(req->connection, MHD_COOKIE_KIND, SESSION_COOKIE);

        if (v && session_verify(s->auth.config.session_key, SESSION_COOKIE_KIND, v, now, ret) >= 0)
                return true;
        v = MHD_lookup_connection_value(req->connection, MHD_COOKIE_KIND, SESSION_MARK_COOKIE);
        return v && session_verify(s->auth.config.session_key, SESSION_MARK, v, now, ret) >= 0;
}

static bool login_ticket(Server *s, Request *req, int64_t now, SessionClaims *ret, Reply *reply) {
        int r = session_verify(s->auth.config.session_key, SESSION_TICKET, request_arg(req, "ticket"), now, ret);

        if (r >= 0)
                return true;
        auth_denied(&s->auth, req, "bad-session");
        reply_error(reply, MHD_HTTP_UNAUTHORIZED, NULL,
                    r == -EKEYEXPIRED ? "this login link has expired" : "this is not a valid login link");
        return false;
}

/* A navigation another site started: the browser leaves SameSite=Strict
 * cookies off it, and off a redirect that continues it. */
static bool cross_site(Request *req) {
        const char *v = MHD_lookup_connection_value(req->connection, MHD_HEADER_KIND, "Sec-Fetch-Site");

        return v && streq(v, "cross-site");
}

static int set_cookie(char **ret, const char *name, const char *value, unsigned max_age, const char *same_site,
                      bool secure) {
        return asprintf(ret, "%s=%s; Max-Age=%u; HttpOnly; SameSite=%s%s", name, value, max_age, same_site,
                        secure ? "; Secure" : "") < 0 ? -ENOMEM : 0;
}

/* Uses the ticket up and gives the browser its session and mark, then
 * leads it on to next. */
static void sign_in(Server *s, Request *req, const SessionClaims *t, const char *next, int64_t now, Reply *reply) {
        _cleanup_free_ char *cookie = NULL, *mark = NULL;
        bool secure = via_https(s, req);
        SessionClaims c = *t;
        int r;

        r = s->storage->ops->use_ticket(s->storage, t->nonce, t->expires, now);
        if (r == -EALREADY) {
                auth_denied(&s->auth, req, "bad-session");
                reply_error(reply, MHD_HTTP_UNAUTHORIZED, NULL, "this login link was used already");
                return;
        }
        if (r < 0) {
                reply_storage_error(reply, r);
                return;
        }
        c.kind = SESSION_COOKIE_KIND;
        c.expires = now + s->auth.config.session_ttl_s;
        r = session_sign(s->auth.config.session_key, &c, &cookie);
        if (r >= 0) {
                c.kind = SESSION_MARK;
                r = session_seal(s->auth.config.session_key, &c, &mark);
        }
        /* no Path: the cookies belong to the directory of /login, which is
         * the store's root however a proxy mounts it */
        if (r < 0 ||
            set_cookie(&reply->set_cookie[0], SESSION_COOKIE, cookie, s->auth.config.session_ttl_s, "Strict", secure) < 0 ||
            set_cookie(&reply->set_cookie[1], SESSION_MARK_COOKIE, mark, s->auth.config.session_ttl_s, "Lax", secure) < 0) {
                reply_oom(reply);
                return;
        }
        next = next ?: "jobs";
        if (cross_site(req)) {
                /* A page of ours goes on: a navigation it starts is the
                 * store's own, and carries the new session. */
                _cleanup_(html_done) Html h = {};
                char *set[2] = { TAKE_PTR(reply->set_cookie[0]), TAKE_PTR(reply->set_cookie[1]) };

                web_begin_refresh(&h, s, req, "Signed in", next);
                html_raw(&h, "<h1>Signed in</h1><p>This browser is signed in as ");
                html_text(&h, c.admin ? "an admin token" : c.user);
                html_raw(&h, ". <a href=\"");
                html_text(&h, next);
                html_raw(&h, "\">Go on</a></p>");
                web_end(&h, req);
                web_reply(reply, &h);
                reply->set_cookie[0] = set[0];
                reply->set_cookie[1] = set[1];
        } else {
                reply->location = strdup(next);
                reply->text = strdup("Signed in.\n");
                if (!reply->location || !reply->text) {
                        reply_oom(reply);
                        return;
                }
                reply->text_size = strlen(reply->text);
                reply->content_type = "text/plain; charset=utf-8";
                reply->status = MHD_HTTP_SEE_OTHER;
        }
        log_debug("Session for %s%s.", c.user, c.admin ? " (admin token)" : "");
}

static void html_who(Html *h, const SessionClaims *c) {
        if (c->admin)
                html_raw(h, "an admin token");
        else {
                html_raw(h, "<strong>");
                html_text(h, c->user);
                html_raw(h, "</strong>");
        }
}

/* Asks before a link signs the browser in as someone else than it is:
 * someone else's link would otherwise make the browser theirs unseen
 * (login CSRF). The answer is a form post to the store itself, which
 * carries a code only this browser's cookies make valid. */
static void confirm_page(Server *s, Request *req, const SessionClaims *t, const SessionClaims *cur,
                         const char *next, Reply *reply) {
        _cleanup_(html_done) Html h = {};
        char code[SESSION_CONFIRM_SIZE + 1];

        session_confirm_code(s->auth.config.session_key, t, cur, code);
        web_begin(&h, s, req, "Switch user?");
        html_raw(&h, "<h1>Switch user?</h1><p>This browser is signed in as ");
        html_who(&h, cur);
        html_raw(&h, ". The link you followed would sign it in as ");
        html_who(&h, t);
        html_raw(&h, " instead.</p><p>Login links come from <code>lmk web</code>. If you did not run it as that "
                     "user yourself, the link is someone else's: stay as you are.</p>"
                     "<form class=\"filters\" method=\"post\" action=\"login?ticket=");
        html_url_part(&h, request_arg(req, "ticket"));
        if (next) {
                html_raw(&h, "&amp;next=");
                html_url_part(&h, next);
        }
        html_raw(&h, "&amp;confirm=");
        html_raw(&h, code);
        html_raw(&h, "\"><button type=\"submit\">Sign in as ");
        html_text(&h, t->admin ? "an admin token" : t->user);
        html_raw(&h, "</button></form><p><a href=\"jobs\">Stay signed in as ");
        html_text(&h, cur->admin ? "an admin token" : cur->user);
        html_raw(&h, "</a></p>");
        web_end(&h, req);
        web_reply(reply, &h);
}

void web_login(Server *s, Request *req, Reply *reply) {
        const char *next = request_arg(req, "next");
        int64_t now = (int64_t) time(NULL);
        SessionClaims t, cur;

        if (!request_check_args(req, login_args, reply) || !login_ticket(s, req, now, &t, reply))
                return;
        if (next && !session_next_valid(next))
                next = NULL;
        if (browser_identity(s, req, now, &cur) && !session_same_identity(&cur, &t)) {
                confirm_page(s, req, &t, &cur, next, reply);
                return;
        }
        sign_in(s, req, &t, next, now, reply);
}

void web_login_confirm(Server *s, Request *req, Reply *reply) {
        const char *next = request_arg(req, "next"),
                   *site = MHD_lookup_connection_value(req->connection, MHD_HEADER_KIND, "Sec-Fetch-Site");
        int64_t now = (int64_t) time(NULL);
        SessionClaims t, cur;

        if (!request_check_args(req, confirm_args, reply))
                return;
        /* The store's own confirmation page posts from the store's origin;
         * browsers say where a post came from, and cookies (SameSite) do
         * not go along on another site's anyway. */
        if (site && !streq(site, "same-origin")) {
                auth_denied(&s->auth, req, "bad-session");
                reply_error(reply, MHD_HTTP_FORBIDDEN, NULL, "a login is confirmed on this store's own page only");
                return;
        }
        if (!login_ticket(s, req, now, &t, reply))
                return;
        if (!browser_identity(s, req, now, &cur) ||
            !session_confirm_check(s->auth.config.session_key, &t, &cur, request_arg(req, "confirm"))) {
                auth_denied(&s->auth, req, "bad-session");
                reply_error(reply, MHD_HTTP_FORBIDDEN, NULL,
                            "this confirmation is not valid in this browser: follow the login link again");
                return;
        }
        if (next && !session_next_valid(next))
                next = NULL;
        sign_in(s, req, &t, next, now, reply);
}
