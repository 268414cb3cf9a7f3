/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The pages' frame, the login by ticket (session.h), and what every page
 * uses to read the API's JSON and draw a share. */
#include <errno.h>
#include <math.h>
#include <strings.h>
#include <time.h>

#include "http/json-out.h"
#include "log.h"
#include "web/web.h"
#include "util.h"

const char *web_root_prefix(const Request *req) {
        static const char *const prefixes[] = { "./", "../", "../../", "../../../" };
        size_t slashes = 0;

        for (const char *p = req->url ?: "/"; *p; p++)
                slashes += *p == '/';
        return prefixes[MIN(slashes > 0 ? slashes - 1 : 0, ELEMENTSOF(prefixes) - 1)];
}

/* refresh: a page of ours to go on to at once (relative), or NULL */
static void begin_page(Html *h, Server *s, const Request *req, const char *title, const char *refresh) {
        const char *root = web_root_prefix(req);

        html_raw(h, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                    "<meta name=\"referrer\" content=\"no-referrer\">");
        if (refresh) {
                html_raw(h, "<meta http-equiv=\"refresh\" content=\"0; url=");
                html_text(h, refresh);
                html_raw(h, "\">");
        }
        html_raw(h, "<title>");
        html_text(h, title);
        html_raw(h, " · lmk</title><link rel=\"icon\" href=\"data:,\"><link rel=\"stylesheet\" href=\"");
        html_raw(h, root);
        html_raw(h, "static/lmk.css\"></head>\n<body><header><a class=\"brand\" href=\"");
        html_raw(h, root);
        html_raw(h, "jobs\">lmk</a>");
        if (req->identity.admin || req->identity.user) {
                html_rawf(h, "<nav><a href=\"%sjobs\">%s</a>", root, req->identity.admin ? "Jobs" : "My jobs");
                if (!server_site_view_closed(s, req))
                        html_rawf(h, "<a href=\"%ssite\">Site</a>", root);
                html_raw(h, "</nav><span class=\"who\">");
                html_text(h, req->identity.user ?: "admin token");
                if (req->identity.admin)
                        html_raw(h, " <span class=\"tag\">admin</span>");
                html_rawf(h, " · <a href=\"%slogout\">Sign out</a></span>", root);
        }
        html_raw(h, "</header>\n<main>");
}

void web_begin(Html *h, Server *s, const Request *req, const char *title) {
        begin_page(h, s, req, title, NULL);
}

void web_end(Html *h, const Request *req) {
        html_raw(h, "</main>\n<footer>lmk " PACKAGE_VERSION " · times in UTC · shares are of samples, "
                    "with their 95% intervals</footer></body></html>\n");
}

void web_reply(Reply *reply, Html *h) {
        size_t n;
        char *b = html_finish(h, &n);

        if (!b) {
                reply_oom(reply);
                return;
        }
        reply_done(reply);
        reply->status = MHD_HTTP_OK;
        reply->text = b;
        reply->text_size = n;
        reply->content_type = "text/html; charset=utf-8";
}

bool web_api(Server *s, Request *req, void (*handler)(Server *, Request *, Reply *), const RequestArg *args,
             size_t n_args, Reply *reply, json_object **ret) {
        Request sub = *req;
        Reply r = {};

        /* NULL: the page's own query, as it came */
        if (args) {
                sub.args = args;
                sub.n_args = n_args;
        }
        handler(s, &sub, &r);
        if (r.status != MHD_HTTP_OK || !r.json) {
                reply_done(reply);
                *reply = r;
                if (!reply->json && !reply->text)
                        reply_oom(reply);
                return false;
        }
        *ret = TAKE_PTR(r.json);
        reply_done(&r);
        return true;
}

json_object *jget(json_object *o, const char *key) {
        json_object *v = NULL;

        return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

const char *jstr(json_object *o, const char *key) {
        json_object *v = jget(o, key);

        return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

double jnum(json_object *o, const char *key) {
        json_object *v = jget(o, key);

        return v && (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)) ?
                json_object_get_double(v) : NAN;
}

int64_t jint(json_object *o, const char *key, int64_t dflt) {
        json_object *v = jget(o, key);

        return v && json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : dflt;
}

bool jbool(json_object *o, const char *key) {
        json_object *v = jget(o, key);

        return v && json_object_get_boolean(v);
}

void web_share(Html *h, json_object *e) {
        json_object *ci = jget(e, "share_ci95");
        double share = jnum(e, "share");

        if (!jbool(e, "share_reliable")) {
                html_raw(h, "<span class=\"rough\" title=\"too few samples for more than a rough figure\">~");
                html_number(h, share * 100, 0);
                html_rawf(h, "%% <small>(n=%" PRId64 ")</small></span>", jint(e, "share_of_samples", 0));
                return;
        }
        html_number(h, share * 100, 1);
        html_raw(h, "%");
        if (ci && json_object_array_length(ci) == 2) {
                html_raw(h, " <small>");
                html_number(h, json_object_get_double(json_object_array_get_idx(ci, 0)) * 100, 1);
                html_raw(h, "–");
                html_number(h, json_object_get_double(json_object_array_get_idx(ci, 1)) * 100, 1);
                html_raw(h, "</small>");
        }
}

void web_bar(Html *h, double share, double low, double high) {
        if (!isfinite(share))
                share = 0;
        share = MIN(MAX(share, 0.0), 1.0);
        html_raw(h, "<svg class=\"bar\" viewBox=\"0 0 100 10\" preserveAspectRatio=\"none\" aria-hidden=\"true\">"
                    "<rect class=\"track\" width=\"100\" height=\"10\"/><rect class=\"fill\" height=\"10\" width=\"");
        html_number(h, share * 100, 2);
        html_raw(h, "\"/>");
        if (isfinite(low) && isfinite(high) && high > low)
                html_rawf(h, "<line class=\"ci\" x1=\"%.2f\" x2=\"%.2f\" y1=\"5\" y2=\"5\"/>",
                          MAX(low, 0.0) * 100, MIN(high, 1.0) * 100);
        html_raw(h, "</svg>");
}

void web_share_cells(Html *h, json_object *e, bool with_ipc) {
        json_object *ci = jget(e, "share_ci95");
        double low = NAN, high = NAN;

        if (ci && json_object_array_length(ci) == 2) {
                low = json_object_get_double(json_object_array_get_idx(ci, 0));
                high = json_object_get_double(json_object_array_get_idx(ci, 1));
        }
        html_raw(h, "<td class=\"num\">");
        web_share(h, e);
        html_raw(h, "</td><td>");
        web_bar(h, jnum(e, "share"), low, high);
        html_raw(h, "</td><td class=\"num\">");
        web_cpu_time(h, jnum(e, "cpu_seconds"));
        html_rawf(h, "</td><td class=\"num\">%" PRId64 "</td>", jint(e, "samples", 0));
        if (with_ipc) {
                html_raw(h, "<td class=\"num\">");
                html_number(h, jnum(e, "ipc"), 2);
                html_raw(h, "</td>");
        }
}

void web_job_link(Html *h, const char *root, const char *job, const char *cluster, const char *fragment) {
        html_raw(h, "<a href=\"");
        html_raw(h, root);
        html_raw(h, "jobs/");
        html_url_part(h, job);
        if (cluster) {
                html_raw(h, "?cluster=");
                html_url_part(h, cluster);
        }
        html_raw(h, fragment ?: "");
        html_raw(h, "\">");
        html_text(h, job);
        html_raw(h, "</a>");
}

void web_cpu_time(Html *h, double s) {
        if (!isfinite(s))
                html_raw(h, "–");
        else if (s >= 3600)
                html_rawf(h, "%.1f core-h", s / 3600);
        else if (s >= 60)
                html_rawf(h, "%.1f core-min", s / 60);
        else
                html_rawf(h, "%.1f core-s", s);
}

/* A page's error: the API's message in the frame, with the same status. */
void web_error_page(Server *s, Request *req, Reply *reply) {
        const char *msg = jstr(reply->json, "error") ?: "error";
        unsigned status = reply->status;
        bool unauthorized = status == MHD_HTTP_UNAUTHORIZED;
        _cleanup_(html_done) Html h = {};
        size_t n;
        char *b;

        web_begin(&h, s, req, unauthorized ? "Sign in" : "Not available");
        html_rawf(&h, "<h1>%s</h1><p class=\"error\">", unauthorized ? "Sign in" :
                  status == MHD_HTTP_NOT_FOUND ? "Not found" : "Not available");
        html_text(&h, msg);
        html_raw(&h, "</p>");
        if (unauthorized)
                html_raw(&h, "<p>On a login node of the cluster, run</p><pre>lmk web</pre>"
                             "<p>and open the link it prints: it signs you in as the user who ran it, "
                             "the way Slurm knows you (MUNGE).</p>");
        web_end(&h, req);
        b = html_finish(&h, &n);
        if (!b)
                return; /* the JSON error goes out instead */
        json_object_put(TAKE_PTR(reply->json));
        free(reply->text);
        reply->text = b;
        reply->text_size = n;
        reply->content_type = "text/html; charset=utf-8";
        reply->status = status;
}

void web_root(Server *s, Request *req, Reply *reply) {
        reply->status = MHD_HTTP_SEE_OTHER;
        reply->location = strdup("jobs");
        reply->text = strdup("See jobs\n");
        reply->text_size = reply->text ? strlen(reply->text) : 0;
        reply->content_type = "text/plain; charset=utf-8";
        if (!reply->location || !reply->text)
                reply_oom(reply);
}

#include "lmk-css.h"

void web_css(Server *s, Request *req, Reply *reply) {
        reply->status = MHD_HTTP_OK;
        reply->text = strdup(lmk_css);
        reply->text_size = strlen(lmk_css);
        reply->content_type = "text/css; charset=utf-8";
        if (!reply->text)
                reply_oom(reply);
}

/* Where a login link may lead: one of our pages, relative, nothing that
 * could leave the store (no scheme, no "//", no ".."). */
static bool next_valid(const char *n) {
        if (!n || strlen(n) > 512 || strstr(n, "//") || strstr(n, ".."))
                return false;
        if (strncmp(n, "jobs", 4) != 0 && strncmp(n, "site", 4) != 0)
                return false;
        for (const char *p = n; *p; p++)
                if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/?=&%+", *p))
                        return false;
        return true;
}

/* Whether the browser reached us over HTTPS, as a trusted proxy says. */
static bool via_https(Server *s, Request *req) {
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(req->connection,
                                                                     MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        const char *proto = MHD_lookup_connection_value(req->connection, MHD_HEADER_KIND, "X-Forwarded-Proto");

        return proto && strcasecmp(proto, "https") == 0 && ci &&
               trusted_proxies_contain(&s->config.trusted_proxies, ci->client_addr);
}

static const char *const sessions_args[] = { NULL };

/* Who minted, for the count of tickets (SessionMints). */
static void minter(const Request *req, char *ret, size_t size) {
        char ref[2 * TOKEN_REF_SIZE + 1];

        if (!req->identity.by_token) {
                snprintf(ret, size, "user:%s", req->identity.user ?: "");
                return;
        }
        for (size_t i = 0; i < TOKEN_REF_SIZE; i++)
                snprintf(ref + 2 * i, 3, "%02x", req->identity.token_ref[i]);
        snprintf(ret, size, "token:%s", ref);
}

void api_sessions(Server *s, Request *req, Reply *reply) {
        _cleanup_(json_object_putp) json_object *body = NULL, *o = NULL;
        _cleanup_free_ char *ticket = NULL, *link = NULL;
        SessionClaims c = {
                .kind = SESSION_TICKET,
                .admin = req->identity.by_token,
                .uid = req->identity.by_token || req->identity.uid == (uid_t) -1 ? -1 : (int64_t) req->identity.uid,
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
                if (jget(body, "next") && !next_valid(next)) {
                        reply_error(reply, MHD_HTTP_BAD_REQUEST, "next",
                                    "next must be a page of this store, such as jobs/4711");
                        return;
                }
        }
        if (c.admin)
                memcpy(c.ref, req->identity.token_ref, TOKEN_REF_SIZE);
        snprintf(c.user, sizeof(c.user), "%s", req->identity.user ?: "admin");
        /* Each identity mints a few at a time: the tickets' records
         * (use_ticket) and the work of checking them stay bounded by the
         * site's people, not by how fast one of them asks. */
        minter(req, who, sizeof(who));
        r = session_mints_take(s->mints, who, (int64_t) (now_ns(CLOCK_MONOTONIC) / UINT64_C(1000000000)), &retry);
        if (r == -EUSERS) {
                server_denied(s, req, "ticket-limit");
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
        r = session_sign(s->config.session_key, &c, &ticket);
        if (r == -EINVAL) {
                reply_error(reply, MHD_HTTP_BAD_REQUEST, NULL, "user name %s cannot have a browser session",
                            req->identity.user ?: "?");
                return;
        }
        if (r < 0) {
                reply_oom(reply);
                return;
        }
        {
                Html l = {};
                size_t n;

                html_raw(&l, "login?ticket=");
                html_raw(&l, ticket);
                if (next) {
                        html_raw(&l, "&next=");
                        html_url_part(&l, next);
                }
                link = html_finish(&l, &n);
        }
        o = json_object_new_object();
        if (!link || !o ||
            json_add(o, "login", json_object_new_string(link)) < 0 ||
            json_add(o, "user", json_object_new_string(c.user)) < 0 ||
            json_add(o, "admin", json_object_new_boolean(req->identity.admin)) < 0 ||
            json_add(o, "expires", json_object_new_int64(c.expires)) < 0 ||
            json_add(o, "session_seconds", json_object_new_int64(s->config.session_ttl_s)) < 0) {
                reply_oom(reply);
                return;
        }
        log_debug("Login ticket for %s%s.", c.user, c.admin ? " (admin token)" : "");
        reply_json(reply, MHD_HTTP_OK, TAKE_PTR(o));
}

static const char *const login_args[] = { "ticket", "next", NULL };
static const char *const confirm_args[] = { "ticket", "next", "confirm", NULL };

/* Who the browser is signed in as: its session cookie, else the mark
 * beside it, which it sends on a link from another site too. */
static bool browser_identity(Server *s, Request *req, int64_t now, SessionClaims *ret) {
        const char *v = MHD_lookup_connection_value(req->connection, MHD_COOKIE_KIND, SESSION_COOKIE);

        if (v && session_verify(s->config.session_key, SESSION_COOKIE_KIND, v, now, ret) >= 0)
                return true;
        v = MHD_lookup_connection_value(req->connection, MHD_COOKIE_KIND, SESSION_MARK_COOKIE);
        return v && session_verify(s->config.session_key, SESSION_MARK, v, now, ret) >= 0;
}

static bool login_ticket(Server *s, Request *req, int64_t now, SessionClaims *ret, Reply *reply) {
        int r = session_verify(s->config.session_key, SESSION_TICKET, request_arg(req, "ticket"), now, ret);

        if (r >= 0)
                return true;
        server_denied(s, req, "bad-session");
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
                server_denied(s, req, "bad-session");
                reply_error(reply, MHD_HTTP_UNAUTHORIZED, NULL, "this login link was used already");
                return;
        }
        if (r < 0) {
                reply_storage_error(reply, r);
                return;
        }
        c.kind = SESSION_COOKIE_KIND;
        c.expires = now + s->config.session_ttl_s;
        r = session_sign(s->config.session_key, &c, &cookie);
        if (r >= 0) {
                c.kind = SESSION_MARK;
                r = session_seal(s->config.session_key, &c, &mark);
        }
        /* no Path: the cookies belong to the directory of /login, which is
         * the store's root however a proxy mounts it */
        if (r < 0 ||
            set_cookie(&reply->set_cookie[0], SESSION_COOKIE, cookie, s->config.session_ttl_s, "Strict", secure) < 0 ||
            set_cookie(&reply->set_cookie[1], SESSION_MARK_COOKIE, mark, s->config.session_ttl_s, "Lax", secure) < 0) {
                reply_oom(reply);
                return;
        }
        next = next ?: "jobs";
        if (cross_site(req)) {
                /* A page of ours goes on: a navigation it starts is the
                 * store's own, and carries the new session. */
                _cleanup_(html_done) Html h = {};
                char *set[2] = { TAKE_PTR(reply->set_cookie[0]), TAKE_PTR(reply->set_cookie[1]) };

                begin_page(&h, s, req, "Signed in", next);
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

        session_confirm_code(s->config.session_key, t, cur, code);
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
        if (next && !next_valid(next))
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
                server_denied(s, req, "bad-session");
                reply_error(reply, MHD_HTTP_FORBIDDEN, NULL, "a login is confirmed on this store's own page only");
                return;
        }
        if (!login_ticket(s, req, now, &t, reply))
                return;
        if (!browser_identity(s, req, now, &cur) ||
            !session_confirm_check(s->config.session_key, &t, &cur, request_arg(req, "confirm"))) {
                server_denied(s, req, "bad-session");
                reply_error(reply, MHD_HTTP_FORBIDDEN, NULL,
                            "this confirmation is not valid in this browser: follow the login link again");
                return;
        }
        if (next && !next_valid(next))
                next = NULL;
        sign_in(s, req, &t, next, now, reply);
}

void web_logout(Server *s, Request *req, Reply *reply) {
        _cleanup_(html_done) Html h = {};
        Request anonymous = *req;

        anonymous.identity = (Identity) {};
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
