/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The pages' frame, the login by ticket (session.h), and what every page
 * uses to read the API's JSON and draw a share. */
#include <errno.h>
#include <math.h>
#include <strings.h>
#include <time.h>

#include "json-out.h"
#include "log.h"
#include "web.h"
#include "util.h"

const char *web_root_prefix(const Request *req) {
        static const char *const prefixes[] = { "./", "../", "../../", "../../../" };
        size_t slashes = 0;

        for (const char *p = req->url ?: "/"; *p; p++)
                slashes += *p == '/';
        return prefixes[MIN(slashes > 0 ? slashes - 1 : 0, ELEMENTSOF(prefixes) - 1)];
}

void web_begin(Html *h, Server *s, const Request *req, const char *title) {
        const char *root = web_root_prefix(req);

        html_raw(h, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                    "<meta name=\"referrer\" content=\"no-referrer\"><title>");
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

void api_sessions(Server *s, Request *req, Reply *reply) {
        _cleanup_(json_object_putp) json_object *body = NULL, *o = NULL;
        _cleanup_free_ char *ticket = NULL, *link = NULL;
        SessionClaims c = {
                .kind = SESSION_TICKET,
                .admin = req->identity.admin,
                .uid = req->identity.user && !req->identity.admin ? (int64_t) req->identity.uid : -1,
                .expires = (int64_t) time(NULL) + SESSION_TICKET_TTL,
        };
        const char *next = NULL;
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
        snprintf(c.user, sizeof(c.user), "%s", req->identity.user ?: "admin");
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
            json_add(o, "admin", json_object_new_boolean(c.admin)) < 0 ||
            json_add(o, "expires", json_object_new_int64(c.expires)) < 0 ||
            json_add(o, "session_seconds", json_object_new_int64(s->config.session_ttl_s)) < 0) {
                reply_oom(reply);
                return;
        }
        log_debug("Login ticket for %s%s.", c.user, c.admin ? " (admin)" : "");
        reply_json(reply, MHD_HTTP_OK, TAKE_PTR(o));
}

static const char *const login_args[] = { "ticket", "next", NULL };

void web_login(Server *s, Request *req, Reply *reply) {
        _cleanup_free_ char *cookie = NULL;
        const char *next = request_arg(req, "next");
        int64_t now = (int64_t) time(NULL);
        SessionClaims t, c;
        int r;

        if (!request_check_args(req, login_args, reply))
                return;
        r = session_verify(s->config.session_key, SESSION_TICKET, request_arg(req, "ticket"), now, &t);
        if (r >= 0) {
                r = session_used_take(&s->tickets_used, t.nonce, t.expires, now);
                if (r == -ENOSPC) {
                        reply_error(reply, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "too many logins at once, try again");
                        reply->retry_after = 5;
                        return;
                }
        }
        if (r < 0) {
                server_denied(s, req, "bad-session");
                reply_error(reply, MHD_HTTP_UNAUTHORIZED, NULL,
                            r == -EKEYEXPIRED ? "this login link has expired" :
                            r == -EALREADY ? "this login link was used already" : "this is not a valid login link");
                return;
        }
        if (next && !next_valid(next))
                next = NULL;
        c = t;
        c.kind = SESSION_COOKIE_KIND;
        c.expires = now + s->config.session_ttl_s;
        r = session_sign(s->config.session_key, &c, &cookie);
        if (r < 0) {
                reply_oom(reply);
                return;
        }
        /* no Path: the cookie belongs to the directory of /login, which is
         * the store's root however a proxy mounts it */
        if (asprintf(&reply->set_cookie, SESSION_COOKIE "=%s; Max-Age=%u; HttpOnly; SameSite=Strict%s", cookie,
                     s->config.session_ttl_s, via_https(s, req) ? "; Secure" : "") < 0)
                reply->set_cookie = NULL;
        reply->location = strdup(next ?: "jobs");
        reply->text = strdup("Signed in.\n");
        if (!reply->set_cookie || !reply->location || !reply->text) {
                reply_oom(reply);
                return;
        }
        reply->text_size = strlen(reply->text);
        reply->content_type = "text/plain; charset=utf-8";
        reply->status = MHD_HTTP_SEE_OTHER;
        log_debug("Session for %s%s.", c.user, c.admin ? " (admin)" : "");
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
            !(reply->set_cookie = strdup(SESSION_COOKIE "=; Max-Age=0; HttpOnly; SameSite=Strict")))
                reply_oom(reply);
}
