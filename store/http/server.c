/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <inttypes.h>
#include <nettle/memops.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "db/db.h"
#include "log.h"
#include "http/server.h"
#include "utf8.h"
#include "util.h"

/* How much of a rejected body we read and drop to be able to answer 413. */
#define MAX_DISCARD ((size_t) 64 << 20)

typedef struct Route {
        const char *path;
        bool prefix; /* path is a prefix and what follows is the argument */
        const char *method;
        Role role;   /* ROLE_NONE: open to anyone; ROLE_ADMIN: queries (admins and people) */
        void (*handler)(Server *s, Request *req, Reply *reply);
        bool site_view; /* site-wide aggregates: people see them unless the site says no */
        bool page;      /* HTML for people: errors answered as pages too */
        const CsvTable *csv; /* a list: ?format=csv answers these rows (csv-out.h) */
        bool body;      /* takes a body (JSON); any other route refuses one */
        bool credential; /* a session cookie is not enough: MUNGE, a token or a proxy */
} Route;

/* Query routes are read-only and need an admin token; ingest needs a node
 * token. Neither role may do the other's work (docs/lmk-store.md). */
static const Route routes[] = {
        { "/api/v1/ingest", false, "POST", ROLE_NODE, api_ingest, .body = true },
        { "/api/v1/jobs", false, "GET", ROLE_ADMIN, api_jobs, false, false, &api_jobs_csv },
        { "/api/v1/jobs/", true, "GET", ROLE_ADMIN, api_job },
        { "/api/v1/objects", false, "GET", ROLE_ADMIN, api_objects, true, false, &api_objects_csv },
        { "/api/v1/nodes", false, "GET", ROLE_ADMIN, api_nodes, true, false, &api_nodes_csv },
        { "/api/v1/findings", false, "GET", ROLE_ADMIN, api_findings, false, false, &api_findings_csv },
        { "/api/v1/packages", false, "GET", ROLE_ADMIN, api_packages, true, false, &api_packages_csv },
        { "/api/v1/families", false, "GET", ROLE_ADMIN, api_families, true, false, &api_families_csv },
        { "/api/v1/scaling", false, "GET", ROLE_ADMIN, api_scaling, true, false, &api_scaling_csv },
        { "/api/v1/apps", false, "GET", ROLE_ADMIN, api_apps, true, false, &api_apps_csv },
        /* a session never renews itself: it ends when its time is up */
        { "/api/v1/sessions", false, "POST", ROLE_ADMIN, api_sessions, .body = true, .credential = true },
        { "/metrics", false, "GET", ROLE_NONE, api_metrics },
        { "/healthz", false, "GET", ROLE_NONE, api_healthz },
        /* the web pages (docs/web.md) */
        { "/", false, "GET", ROLE_NONE, web_root, false, true },
        { "/login", false, "GET", ROLE_NONE, web_login, false, true },
        { "/login", false, "POST", ROLE_NONE, web_login_confirm, false, true },
        { "/logout", false, "GET", ROLE_NONE, web_logout, false, true },
        { "/static/lmk.css", false, "GET", ROLE_NONE, web_css },
        { "/jobs", false, "GET", ROLE_ADMIN, web_jobs, false, true },
        { "/jobs/", true, "GET", ROLE_ADMIN, web_job, false, true },
        { "/site", false, "GET", ROLE_ADMIN, web_site, true, true },
        { "/site/software", false, "GET", ROLE_ADMIN, web_site_software, true, true },
        { "/site/scaling", false, "GET", ROLE_ADMIN, web_site_scaling, true, true },
        { "/site/apps", false, "GET", ROLE_ADMIN, web_site_apps, true, true },
};

/* State of one request between libmicrohttpd's calls. */
typedef struct Ctx {
        Request req;
        const Route *route;
        size_t body_alloc;
        size_t discarded;
        bool rejected;  /* the answer is decided; the rest of the body is dropped */
        Reply pending;
        uint64_t start_ns;
        bool csv;       /* ?format=csv */
} Ctx;

void reply_done(Reply *r) {
        json_object_put(r->json);
        free(r->text);
        free(r->location);
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

/* The database's own message goes to the log, once, with what the store
 * was doing; the client learns only what it can act on, never SQL. */
void reply_storage_error(Reply *r, int error) {
        const char *msg = db_error_last();

        if (error == -EBUSY) {
                reply_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "database busy, try again");
                r->retry_after = 1;
                return;
        }
        if (msg)
                log_error_errno(error, "Database error while %s: %s", db_purpose(), msg);
        else
                log_error_errno(error, "Database error while %s: %m", db_purpose());
        db_error_clear();
        /* Unreachable now, there again soon (the drivers reconnect), or a
         * conflict that outlasted the retries: nodes keep the batch in
         * their spool and push it again. */
        if (error == -ECONNREFUSED || error == -ECONNRESET || error == -EAGAIN) {
                reply_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "database unavailable, try again");
                r->retry_after = 5;
                return;
        }
        if (error == -ENOSPC) {
                reply_error(r, MHD_HTTP_INSUFFICIENT_STORAGE, NULL, "database disk full, try again later");
                r->retry_after = DISK_FULL_RETRY_AFTER_S;
                return;
        }
        reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "database error");
}

/* libmicrohttpd decodes %xx in the path and the query into C strings, where
 * a %00 would silently cut "4711%00" down to "4711". Decoding it as DEL
 * instead keeps it visible, and DEL is refused like every other control
 * character (check_text_param()). */
static size_t unescape(void *cls, struct MHD_Connection *c, char *s) {
        for (char *p = strstr(s, "%00"); p; p = strstr(p + 3, "%00"))
                memcpy(p, "%7F", 3);
        return MHD_http_unescape(s);
}

/* A decoded path or query parameter: strict UTF-8 (common/utf8.h), no
 * control characters. On failure, the byte offset of the first bad byte. */
static bool check_text_param(const char *s, size_t *ret_offset) {
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
        bool format;    /* "format" is allowed too (server.c checked its value) */
        const char *unknown;
        const char *bad;        /* a key whose key or value is not clean text */
        size_t bad_offset;
        bool bad_in_key;
} ArgCheck;

static enum MHD_Result check_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
        ArgCheck *a = cls;

        if (!check_text_param(key, &a->bad_offset) ||
            (value && !check_text_param(value, &a->bad_offset))) {
                a->bad = key;
                a->bad_in_key = !check_text_param(key, &a->bad_offset);
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

static GuardedConn *guarded_conn(struct MHD_Connection *c) {
        const union MHD_ConnectionInfo *i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

        return i ? i->socket_context : NULL;
}

static enum MHD_Result send_reply(Server *s, Ctx *ctx, Reply *r) {
        struct MHD_Response *resp;
        enum MHD_Result ret;
        const char *body;
        size_t size;
        char *json_buf = NULL;

        /* a page's error is a page, with the same status */
        if (ctx->route && ctx->route->page && r->json)
                web_error_page(s, &ctx->req, r);
        if (r->json) {
                const char *j = json_object_to_json_string_ext(r->json, JSON_C_TO_STRING_PLAIN |
                                                                        JSON_C_TO_STRING_NOSLASHESCAPE);
                if (j && asprintf(&json_buf, "%s\n", j) >= 0) {
                        body = json_buf;
                        size = strlen(json_buf);
                } else {
                        r->status = MHD_HTTP_INTERNAL_SERVER_ERROR;
                        body = "{\"error\":\"out of memory\"}\n";
                        size = strlen(body);
                }
                r->content_type = "application/json";
        } else if (r->text) {
                body = r->text;
                size = r->text_size;
        } else {
                /* A handler that set nothing ran out of memory on the way. */
                r->status = MHD_HTTP_INTERNAL_SERVER_ERROR;
                body = "{\"error\":\"out of memory\"}\n";
                size = strlen(body);
                r->content_type = "application/json";
        }

        resp = MHD_create_response_from_buffer(size, (void *) body, MHD_RESPMEM_MUST_COPY);
        free(json_buf);
        if (!resp)
                return MHD_NO;
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->content_type ?: "application/json");
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
        MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
        if (r->allow)
                MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, r->allow);
        if (r->location)
                MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, r->location);
        for (size_t i = 0; i < ELEMENTSOF(r->set_cookie) && r->set_cookie[i]; i++)
                MHD_add_response_header(resp, MHD_HTTP_HEADER_SET_COOKIE, r->set_cookie[i]);
        if (r->content_disposition)
                MHD_add_response_header(resp, "Content-Disposition", r->content_disposition);
        if (r->content_type && strncmp(r->content_type, "text/html", 9) == 0) {
                /* no script runs on a page of ours, nothing loads from elsewhere */
                MHD_add_response_header(resp, "Content-Security-Policy",
                                        "default-src 'none'; style-src 'self'; img-src 'self' data:; "
                                        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
                /* a login link must not travel on in a Referer */
                MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
                MHD_add_response_header(resp, "X-Frame-Options", "DENY");
        }
        if (r->www_authenticate)
                MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"lmk-store\"");
        if (r->retry_after > 0) {
                char buf[16];

                snprintf(buf, sizeof(buf), "%u", r->retry_after);
                MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, buf);
        }
        conn_guard_replying(s->guard, guarded_conn(ctx->req.connection));
        ret = MHD_queue_response(ctx->req.connection, r->status, resp);
        MHD_destroy_response(resp);
        metrics_count_request(&s->metrics, r->status);
        if (ctx->route && ctx->route->handler == api_ingest && r->status != MHD_HTTP_OK)
                metrics_count_ingest_rejected(&s->metrics, r->reject_reason, r->status);
        if (r->status >= 500 && !r->quiet)
                log_warning("%s %s: %u", ctx->route ? ctx->route->method : "-",
                            ctx->route ? ctx->route->path : "-", r->status);

        reply_done(r);
        return ret;
}

void server_denied(Server *s, Request *req, const char *reason) {
        metrics_count_denied(&s->metrics, reason);
        log_debug("Denied (%s) to %s%s: %s", reason, req->identity.admin ? "an admin token" :
                  req->identity.user ? "user " : "an unidentified client", req->identity.user ?: "",
                  req->url ?: "?");
}

/* The accounts user leads, copied: SIGHUP may replace the list meanwhile. */
static int copy_accounts(Server *s, const char *user, char ***ret) {
        const char *const *a;
        char **v = NULL;
        size_t n;

        pthread_rwlock_rdlock(&s->leads_lock);
        a = leads_accounts_of(s->leads, user, &n);
        if (a) {
                v = calloc(n + 1, sizeof(char *));
                for (size_t i = 0; v && i < n; i++)
                        if (!(v[i] = strdup(a[i]))) {
                                for (size_t k = 0; k < i; k++)
                                        free(v[k]);
                                free(TAKE_PTR(v));
                        }
        }
        pthread_rwlock_unlock(&s->leads_lock);
        if (a && !v)
                return -ENOMEM;
        *ret = v;
        return 0;
}

/* People (MUNGE, a trusted proxy) read; only nodes push. */
static bool person_route(Server *s, Ctx *ctx, Reply *reply) {
        if (ctx->route->role == ROLE_ADMIN)
                return true;
        server_denied(s, &ctx->req, "wrong-role");
        reply_error(reply, MHD_HTTP_FORBIDDEN, NULL, "a person may not use %s %s, only nodes may",
                    ctx->route->method, ctx->route->path);
        return false;
}

static bool admin_user(Server *s, const char *user) {
        for (char **a = s->config.admin_users; a && *a; a++)
                if (streq(*a, user))
                        return true;
        return false;
}

bool server_site_view_closed(Server *s, const Request *req) {
        return s->config.site_views_admin_only && !req->identity.admin;
}

/* Once a person is known: an admin (--admin-users), else the accounts they
 * lead; and the site's word on its site-wide views. */
static bool person_admit(Server *s, Ctx *ctx, Reply *reply) {
        if (admin_user(s, ctx->req.identity.user))
                ctx->req.identity.admin = true;
        else if (copy_accounts(s, ctx->req.identity.user, &ctx->req.identity.accounts) < 0) {
                reply_oom(reply);
                return false;
        }
        if (ctx->route->site_view && server_site_view_closed(s, &ctx->req)) {
                server_denied(s, &ctx->req, "site-view");
                reply_error(reply, MHD_HTTP_FORBIDDEN, NULL, "site-wide views are for admins on this store");
                return false;
        }
        return true;
}

/* A person: "Authorization: MUNGE <credential>" made for this request. */
static bool authenticate_munge(Server *s, Ctx *ctx, const char *cred, Reply *reply) {
        _cleanup_free_ char *why = NULL;
        int r;

        if (!person_route(s, ctx, reply))
                return false;
        r = identity_from_munge(s->config.munge_socket, cred, ctx->route->method, ctx->req.url,
                                &ctx->req.identity, &why);
        if (r == -EHOSTDOWN || r == -EOPNOTSUPP) {
                log_warning("Cannot check a MUNGE credential: %s", why ?: "unknown error");
                reply_error(reply, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "%s", why ?: "cannot check MUNGE credentials");
                reply->retry_after = 5;
                return false;
        }
        if (r < 0) {
                server_denied(s, &ctx->req, "bad-credential");
                reply_error(reply, MHD_HTTP_UNAUTHORIZED, NULL, "%s", why ?: "invalid MUNGE credential");
                reply->www_authenticate = true;
                return false;
        }
        return person_admit(s, ctx, reply);
}

typedef struct HeaderCount {
        const char *name;
        unsigned n;
} HeaderCount;

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
        HeaderCount *h = cls;

        h->n += strcasecmp(key, h->name) == 0;
        return MHD_YES;
}

/* An identity header sent twice is refused, not read as its first copy:
 * a client's own copy would otherwise come before the one a proxy adds. */
static bool header_once(Server *s, Ctx *ctx, const char *name, Reply *reply) {
        HeaderCount h = { .name = name };

        MHD_get_connection_values(ctx->req.connection, MHD_HEADER_KIND, count_header, &h);
        if (h.n <= 1)
                return true;
        server_denied(s, &ctx->req, "repeated-header");
        reply_error(reply, MHD_HTTP_BAD_REQUEST, NULL, "%s is sent %u times: one request, one identity", name, h.n);
        return false;
}

/* A user named by a trusted reverse proxy (single sign-on): 1 when the
 * request came from one with the header, 0 when not (other ways apply),
 * -1 when it was answered. */
static int authenticate_proxy(Server *s, Ctx *ctx, Reply *reply) {
        const union MHD_ConnectionInfo *ci;
        const char *user;

        if (!s->config.user_header || s->config.trusted_proxies.n == 0)
                return 0;
        user = MHD_lookup_connection_value(ctx->req.connection, MHD_HEADER_KIND, s->config.user_header);
        if (!user)
                return 0;
        ci = MHD_get_connection_info(ctx->req.connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        if (!ci || !trusted_proxies_contain(&s->config.trusted_proxies, ci->client_addr)) {
                /* anyone can send the header: only the proxies' word counts */
                log_debug("Ignoring %s from an address that is not a trusted proxy.", s->config.user_header);
                return 0;
        }
        if (!header_once(s, ctx, s->config.user_header, reply))
                return -1;
        if (!person_route(s, ctx, reply))
                return -1;
        if (!identity_user_valid(user)) {
                server_denied(s, &ctx->req, "bad-credential");
                reply_error(reply, MHD_HTTP_UNAUTHORIZED, NULL, "the proxy's %s is not a user name",
                            s->config.user_header);
                return -1;
        }
        if (identity_from_proxy(user, &ctx->req.identity) < 0) {
                reply_oom(reply);
                return -1;
        }
        return person_admit(s, ctx, reply) ? 1 : -1;
}

/* The browser's session cookie (session.h): 1 with its claims, 0 when
 * there is none, <0 when it is not one of ours or has expired. */
static int session_cookie(Server *s, Ctx *ctx, SessionClaims *ret) {
        const char *v = MHD_lookup_connection_value(ctx->req.connection, MHD_COOKIE_KIND, SESSION_COOKIE);

        if (!v || !*v)
                return 0;
        return session_verify(s->config.session_key, SESSION_COOKIE_KIND, v, (int64_t) time(NULL), ret) < 0 ? -1 : 1;
}

static bool session_refused(Server *s, Ctx *ctx, Reply *reply, const char *msg) {
        server_denied(s, &ctx->req, "bad-session");
        reply_error(reply, MHD_HTTP_UNAUTHORIZED, NULL, "%s", msg);
        reply->www_authenticate = true;
        return false;
}

/* A session is who it names, with what today's configuration gives them:
 * an admin token's session lasts while that token is in the token file, a
 * person is an admin or a lead while --admin-users or the leads say so. */
static bool authenticate_session(Server *s, Ctx *ctx, const SessionClaims *c, Reply *reply) {
        bool token_current;

        if (!person_route(s, ctx, reply))
                return false;
        if (ctx->route->credential)
                return session_refused(s, ctx, reply, "a session cannot sign in another browser or itself "
                                       "again: run \"lmk web\" (MUNGE), or use a token");
        if (c->admin) {
                pthread_rwlock_rdlock(&s->tokens_lock);
                token_current = s->tokens && token_set_has_admin_ref(s->tokens, c->ref);
                pthread_rwlock_unlock(&s->tokens_lock);
                if (!token_current)
                        return session_refused(s, ctx, reply, "the admin token this session was signed in with is "
                                               "no longer valid");
                ctx->req.identity.admin = ctx->req.identity.by_token = true;
                memcpy(ctx->req.identity.token_ref, c->ref, TOKEN_REF_SIZE);
        }
        ctx->req.identity.uid = c->uid >= 0 ? (uid_t) c->uid : (uid_t) -1;
        if (!(ctx->req.identity.user = strdup(c->user))) {
                reply_oom(reply);
                return false;
        }
        return c->admin ? true : person_admit(s, ctx, reply);
}

static bool authenticate_header(Server *s, Ctx *ctx, const char *h, Reply *reply) {
        const char *token, *node = NULL;
        Role role;

        if (h && strncasecmp(h, "MUNGE ", 6) == 0)
                return authenticate_munge(s, ctx, h + 6 + strspn(h + 6, " "), reply);
        if (!h || strncasecmp(h, "Bearer ", 7) != 0) {
                server_denied(s, &ctx->req, "no-identity");
                reply_error(reply, MHD_HTTP_UNAUTHORIZED, NULL,
                            h ? "Authorization must be \"Bearer TOKEN\" or \"MUNGE CREDENTIAL\"" :
                                "missing Authorization: Bearer TOKEN or MUNGE CREDENTIAL");
                reply->www_authenticate = true;
                return false;
        }
        token = h + 7;
        token += strspn(token, " ");

        pthread_rwlock_rdlock(&s->tokens_lock);
        role = s->tokens ? token_set_lookup(s->tokens, token, &node) : ROLE_NONE;
        /* which admin token: a session it signs in lasts as long as it does */
        if (role == ROLE_ADMIN)
                ctx->req.identity.by_token = token_set_admin_ref(s->tokens, token, ctx->req.identity.token_ref);
        if (node && !(ctx->req.token_node = strdup(node))) {
                pthread_rwlock_unlock(&s->tokens_lock);
                reply_oom(reply);
                return false;
        }
        pthread_rwlock_unlock(&s->tokens_lock);

        if (role == ROLE_NONE) {
                server_denied(s, &ctx->req, "bad-token");
                reply_error(reply, MHD_HTTP_UNAUTHORIZED, NULL, "invalid token");
                reply->www_authenticate = true;
                return false;
        }
        if (role != ctx->route->role) {
                server_denied(s, &ctx->req, "wrong-role");
                reply_error(reply, MHD_HTTP_FORBIDDEN, NULL, "tokens of role %s may not use %s %s",
                            role_to_string(role), ctx->route->method, ctx->route->path);
                return false;
        }
        ctx->req.identity.admin = role == ROLE_ADMIN;
        return true;
}

static bool same_person(const SessionClaims *c, const Identity *id) {
        if (c->admin || id->by_token)
                return c->admin && id->by_token && memeql_sec(c->ref, id->token_ref, TOKEN_REF_SIZE);
        return id->user && streq(c->user, id->user);
}

/* Who asks: an Authorization header (token or MUNGE), else a trusted
 * proxy's header, else a session cookie. A cookie sent along with another
 * identity must name the same person. */
static bool authenticate(Server *s, Ctx *ctx, Reply *reply) {
        const char *h = MHD_lookup_connection_value(ctx->req.connection, MHD_HEADER_KIND,
                                                    MHD_HTTP_HEADER_AUTHORIZATION);
        SessionClaims c;
        int r, cookie;

        if (h && !header_once(s, ctx, MHD_HTTP_HEADER_AUTHORIZATION, reply))
                return false;
        cookie = session_cookie(s, ctx, &c);
        if (!h) {
                r = authenticate_proxy(s, ctx, reply);
                if (r < 0)
                        return false;
                if (r == 0) {
                        if (cookie > 0)
                                return authenticate_session(s, ctx, &c, reply);
                        if (cookie < 0) {
                                server_denied(s, &ctx->req, "bad-session");
                                reply_error(reply, MHD_HTTP_UNAUTHORIZED, NULL,
                                            "the session has expired or is not valid here: run \"lmk web\" "
                                            "for a new login link");
                                reply->www_authenticate = true;
                                return false;
                        }
                }
        }
        if (h && !authenticate_header(s, ctx, h, reply))
                return false;
        if (!h && !ctx->req.identity.user && !ctx->req.identity.admin)
                return authenticate_header(s, ctx, NULL, reply);
        if (cookie > 0 && !same_person(&c, &ctx->req.identity)) {
                server_denied(s, &ctx->req, "conflicting-identity");
                reply_error(reply, MHD_HTTP_UNAUTHORIZED, NULL,
                            "the session cookie names someone else than the request's credential");
                reply->www_authenticate = true;
                return false;
        }
        return true;
}

/* Checks what can be checked before the body arrives, so that a client
 * sending "Expect: 100-continue" learns of a 401 or 413 before uploading. */
static bool check_body_headers(Server *s, Ctx *ctx, Reply *reply) {
        struct MHD_Connection *c = ctx->req.connection;
        const char *type, *enc, *len;
        uint64_t n;

        type = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
        if (!type || strncasecmp(type, "application/json", 16) != 0 || (type[16] && type[16] != ';' && type[16] != ' ')) {
                reply_error(reply, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, NULL,
                            "Content-Type must be application/json, not %s", type ?: "(none)");
                return false;
        }
        enc = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_ENCODING);
        if (enc && (strcasecmp(enc, "gzip") == 0 || strcasecmp(enc, "deflate") == 0))
                ctx->req.gzip = true;
        else if (enc && strcasecmp(enc, "identity") != 0) {
                reply_error(reply, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, NULL,
                            "Content-Encoding must be gzip or identity, not %s", enc);
                return false;
        }
        len = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (len && safe_atou64(len, 10, &n) >= 0 && n > s->config.max_body) {
                reply_error(reply, MHD_HTTP_CONTENT_TOO_LARGE, NULL,
                            "body of %" PRIu64 " bytes is over the limit of %zu bytes", n, s->config.max_body);
                return false;
        }
        return true;
}

/* A route that takes no body refuses one before it arrives, rather than
 * read and drop it (200 MiB to /healthz): the connection then closes. */
static bool check_no_body(Ctx *ctx, Reply *reply) {
        struct MHD_Connection *c = ctx->req.connection;
        const char *len = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        uint64_t n;

        if (!MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING) &&
            (!len || (safe_atou64(len, 10, &n) >= 0 && n == 0)))
                return true;
        reply_error(reply, MHD_HTTP_CONTENT_TOO_LARGE, NULL, "%s %s takes no body", ctx->route->method,
                    ctx->route->path);
        return false;
}

static bool route_request(Server *s, Ctx *ctx, const char *url, const char *method, Reply *reply) {
        const Route *path_match = NULL;
        unsigned methods = 0;

        for (size_t i = 0; i < ELEMENTSOF(routes); i++) {
                const Route *rt = &routes[i];
                size_t n = strlen(rt->path);

                if (rt->prefix ? strncmp(url, rt->path, n) != 0 || !url[n] : !streq(url, rt->path))
                        continue;
                path_match = rt;
                methods++;
                /* HEAD is GET without the body, which libmicrohttpd drops. */
                if (streq(method, rt->method) || (streq(rt->method, "GET") && streq(method, "HEAD"))) {
                        ctx->route = rt;
                        ctx->req.path_arg = rt->prefix ? url + n : NULL;
                        ctx->req.url = url;
                        return true;
                }
        }
        if (path_match) {
                reply_error(reply, MHD_HTTP_METHOD_NOT_ALLOWED, NULL, "%s is not allowed on %s", method, url);
                /* /login alone has two: its page and its confirmation */
                reply->allow = methods > 1 ? "GET, HEAD, POST" :
                               streq(path_match->method, "GET") ? "GET, HEAD" : path_match->method;
        } else
                reply_error(reply, MHD_HTTP_NOT_FOUND, NULL, "no such resource: %s", url);
        return false;
}

/* ?format=json (the default) or csv, on the list routes. */
static bool check_format(Ctx *ctx, Reply *reply) {
        const char *v = request_arg(&ctx->req, "format");

        ctx->req.format_arg = true;
        if (!v || streq(v, "json"))
                return true;
        if (streq(v, "csv")) {
                ctx->csv = true;
                return true;
        }
        reply_error(reply, MHD_HTTP_BAD_REQUEST, "format", "format=%s: expected json or csv", v);
        return false;
}

/* A list answer's rows as CSV; errors stay JSON, whatever was asked. */
static void reply_csv(const CsvTable *t, Reply *reply) {
        char *text;
        size_t size;
        int r;

        if (!reply->json || reply->status != MHD_HTTP_OK)
                return;
        r = csv_from_json(reply->json, t, &text, &size);
        if (r == -ENOMEM) {
                reply_oom(reply);
                return;
        }
        if (r < 0) {
                reply_error(reply, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "the answer has no list \"%s\"", t->list);
                return;
        }
        json_object_put(TAKE_PTR(reply->json));
        free(reply->text);
        reply->text = text;
        reply->text_size = size;
        reply->content_type = "text/csv; charset=utf-8";
        reply->content_disposition = t->disposition;
}

static bool request_start(Server *s, Ctx *ctx, const char *url, const char *method, Reply *reply) {
        size_t bad;

        if (!check_text_param(url, &bad)) {
                reply_error(reply, MHD_HTTP_BAD_REQUEST, NULL,
                            "the path holds a control character or invalid UTF-8 at byte %zu", bad);
                return false;
        }
        if (!route_request(s, ctx, url, method, reply))
                return false;
        if (ctx->route->role != ROLE_NONE && !authenticate(s, ctx, reply))
                return false;
        if (ctx->route->csv && !check_format(ctx, reply))
                return false;
        if (ctx->route->body ? !check_body_headers(s, ctx, reply) : !check_no_body(ctx, reply))
                return false;
        return true;
}

static void release_body(Server *s, Ctx *ctx) {
        if (ctx->body_alloc > 0)
                atomic_fetch_sub(&s->buffered, ctx->body_alloc);
        free(ctx->req.body);
        ctx->req.body = NULL;
        ctx->body_alloc = ctx->req.body_size = 0;
}

/* Appends a piece of the body. false: the answer is decided (413, 503). */
static bool append_body(Server *s, Ctx *ctx, const char *data, size_t size, Reply *reply) {
        size_t need, na;
        char *nb;

        if (size > s->config.max_body || ctx->req.body_size > s->config.max_body - size) {
                reply_error(reply, MHD_HTTP_CONTENT_TOO_LARGE, NULL,
                            "body is over the limit of %zu bytes", s->config.max_body);
                return false;
        }
        need = ctx->req.body_size + size + 1;
        if (need > ctx->body_alloc) {
                na = MIN(MAX(need, ctx->body_alloc * 2), s->config.max_body + 1);
                /* All bodies being received share one budget, so that many
                 * clients uploading at once cannot exhaust memory. */
                if (atomic_fetch_add(&s->buffered, na - ctx->body_alloc) + (na - ctx->body_alloc) >
                    s->config.max_buffered) {
                        atomic_fetch_sub(&s->buffered, na - ctx->body_alloc);
                        reply_error(reply, MHD_HTTP_SERVICE_UNAVAILABLE, NULL,
                                    "too many uploads in progress, try again");
                        reply->retry_after = 5;
                        return false;
                }
                nb = realloc(ctx->req.body, na);
                if (!nb) {
                        atomic_fetch_sub(&s->buffered, na - ctx->body_alloc);
                        reply_oom(reply);
                        return false;
                }
                ctx->req.body = nb;
                ctx->body_alloc = na;
        }
        memcpy(ctx->req.body + ctx->req.body_size, data, size);
        ctx->req.body_size += size;
        ctx->req.body[ctx->req.body_size] = '\0';
        return true;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls) {
        Server *s = cls;
        Ctx *ctx = *con_cls;
        Reply reply = {};

        if (!ctx) {
                ctx = calloc(1, sizeof(Ctx));
                if (!ctx)
                        return MHD_NO;
                *con_cls = ctx;
                ctx->req.connection = c;
                ctx->start_ns = now_ns(CLOCK_MONOTONIC);
                atomic_fetch_add(&s->metrics.in_flight, 1);
                conn_guard_headers_done(s->guard, guarded_conn(c));
                if (!request_start(s, ctx, url, method, &reply))
                        return send_reply(s, ctx, &reply);
                return MHD_YES;
        }

        if (*upload_data_size > 0) {
                /* Dropped bytes count too: the client is sending them. */
                conn_guard_body_progress(s->guard, guarded_conn(c), *upload_data_size);
                if (ctx->rejected) {
                        /* libmicrohttpd lets us answer only once the body is
                         * in: drop it, but not forever. */
                        ctx->discarded += *upload_data_size;
                        if (ctx->discarded > MAX(4 * s->config.max_body, MAX_DISCARD))
                                return MHD_NO;
                } else if (!append_body(s, ctx, upload_data, *upload_data_size, &ctx->pending)) {
                        ctx->rejected = true;
                        ctx->discarded = ctx->req.body_size;
                        release_body(s, ctx);
                }
                *upload_data_size = 0;
                return MHD_YES;
        }

        /* The body is in: storing it may take a while, and that is no
         * client's fault. */
        conn_guard_replying(s->guard, guarded_conn(c));
        if (ctx->rejected)
                return send_reply(s, ctx, &ctx->pending);
        ctx->route->handler(s, &ctx->req, &reply);
        if (ctx->csv)
                reply_csv(ctx->route->csv, &reply);
        release_body(s, ctx);
        return send_reply(s, ctx, &reply);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
        Server *s = cls;
        Ctx *ctx = *con_cls;

        conn_guard_request_done(s->guard, guarded_conn(c));
        if (!ctx)
                return;
        release_body(s, ctx);
        reply_done(&ctx->pending);
        free(ctx->req.token_node);
        identity_done(&ctx->req.identity);
        free(ctx);
        *con_cls = NULL;
        atomic_fetch_sub(&s->metrics.in_flight, 1);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code) {
        Server *s = cls;
        const union MHD_ConnectionInfo *fd, *addr;
        GuardedConn *g = NULL;

        if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
                conn_guard_remove(s->guard, *socket_context);
                *socket_context = NULL;
                return;
        }
        fd = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        addr = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        if (fd && conn_guard_add(s->guard, fd->connect_fd, addr ? addr->client_addr : NULL, &g) >= 0)
                *socket_context = g;
}

static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen) {
        Server *s = cls;

        return conn_guard_admit(s->guard, addr) ? MHD_YES : MHD_NO;
}

_printf_(2, 0)
static void on_mhd_log(void *cls, const char *fmt, va_list ap) {
        char buf[512];

        vsnprintf(buf, sizeof(buf), fmt, ap);
        buf[strcspn(buf, "\n")] = '\0';
        /* Messages about single connections (resets, timeouts, bad requests)
         * are clients' business; a busy store must not flood the journal. */
        log_debug("libmicrohttpd: %s", buf);
}

/* The nodes the database knows and their last push, so that a node that
 * stopped before the store restarted is still stale in /metrics. */
static void seed_node_health(Server *s) {
        NodeList l = {};
        int r;

        r = s->storage->ops->list_nodes(s->storage, &l);
        if (r < 0) {
                log_warning_errno(r, "Failed to read the nodes' last pushes, /metrics knows nodes from their "
                                  "next push: %s", db_error_last() ?: strerror(-r));
                return;
        }
        for (size_t i = 0; i < l.n; i++)
                (void) node_health_seed(s->node_health, l.items[i].name, l.items[i].last_push);
        node_list_free(&l);
}

int server_start(Server *s) {
        unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC | MHD_USE_ERROR_LOG;
        ConnGuardConfig guard = {
                .header_timeout_ns = (uint64_t) s->config.header_timeout_s * UINT64_C(1000000000),
                .body_timeout_ns = (uint64_t) s->config.body_timeout_s * UINT64_C(1000000000),
                .body_min_rate = s->config.body_min_rate,
                .max_per_address = s->config.max_connections_per_ip,
        };
        int r;

        if (s->config.listen.ss_family == AF_INET6)
                flags |= MHD_USE_IPv6;
        pthread_rwlock_init(&s->tokens_lock, NULL);
        pthread_rwlock_init(&s->findings_lock, NULL);
        pthread_rwlock_init(&s->leads_lock, NULL);
        if (s->tokens)
                token_set_derive_refs(s->tokens, s->config.session_key, sizeof(s->config.session_key));
        r = session_mints_new(&s->mints);
        if (r < 0)
                return r;
        s->metrics.start_time = (int64_t) time(NULL);
        s->findings_cache = findings_cache_new();
        if (!s->findings_cache)
                return -ENOMEM;
        r = node_health_new(&s->node_health);
        if (r < 0)
                return r;
        seed_node_health(s);
        r = conn_guard_new(&guard, &s->metrics, &s->guard);
        if (r < 0)
                return r;

        /* libmicrohttpd's own per-address limit would refuse a new
         * connection before the guard could make room for it. */
        s->mhd = MHD_start_daemon(flags, 0, on_accept, s, on_request, s,
                                  MHD_OPTION_SOCK_ADDR, (struct sockaddr *) &s->config.listen,
                                  MHD_OPTION_THREAD_POOL_SIZE, (unsigned) s->config.threads,
                                  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned) s->config.connection_timeout_s,
                                  MHD_OPTION_CONNECTION_LIMIT, (unsigned) s->config.max_connections,
                                  MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
                                  MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
                                  MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, s,
                                  MHD_OPTION_STRICT_FOR_CLIENT, 1,
                                  MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL,
                                  MHD_OPTION_END);
        if (!s->mhd) {
                r = errno > 0 ? -errno : -EADDRNOTAVAIL;
                conn_guard_free(TAKE_PTR(s->guard));
                return r;
        }
        return 0;
}

uint16_t server_port(Server *s) {
        const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_BIND_PORT);

        return info ? info->port : 0;
}

void server_set_leads(Server *s, Leads *leads) {
        Leads *old;

        pthread_rwlock_wrlock(&s->leads_lock);
        old = s->leads;
        s->leads = leads;
        pthread_rwlock_unlock(&s->leads_lock);
        leads_free(old);
}

static void free_findings(Server *s) {
        s->leads = leads_free(s->leads);
        findings_config_done(s->findings);
        free(TAKE_PTR(s->findings));
        lib_families_done(s->families);
        free(TAKE_PTR(s->families));
}

void server_stop(Server *s, unsigned timeout_s) {
        uint64_t deadline;
        MHD_socket fd;

        if (!s->mhd) {
                free_findings(s); /* handed over, never served */
                s->node_health = node_health_free(s->node_health);
                s->mints = session_mints_free(s->mints);
                return;
        }
        fd = MHD_quiesce_daemon(s->mhd);
        if (fd != MHD_INVALID_SOCKET)
                close(fd);
        deadline = now_ns(CLOCK_MONOTONIC) + (uint64_t) timeout_s * UINT64_C(1000000000);
        while (atomic_load(&s->metrics.in_flight) > 0 && now_ns(CLOCK_MONOTONIC) < deadline)
                (void) nanosleep(&(struct timespec) { .tv_nsec = 20 * 1000 * 1000 }, NULL);
        if (atomic_load(&s->metrics.in_flight) > 0)
                log_warning("Stopping with %u requests still in flight.", atomic_load(&s->metrics.in_flight));
        MHD_stop_daemon(s->mhd);
        s->mhd = NULL;
        /* After the daemon: it removes every connection from the guard. */
        conn_guard_free(TAKE_PTR(s->guard));
        token_set_free(s->tokens);
        s->tokens = NULL;
        pthread_rwlock_destroy(&s->tokens_lock);
        free_findings(s);
        findings_cache_free(TAKE_PTR(s->findings_cache));
        s->node_health = node_health_free(s->node_health);
        pthread_rwlock_destroy(&s->findings_lock);
        pthread_rwlock_destroy(&s->leads_lock);
        s->mints = session_mints_free(s->mints);
}

void server_set_findings(Server *s, FindingsConfig *findings, LibFamilies *families) {
        FindingsConfig *old_findings;
        LibFamilies *old_families;

        pthread_rwlock_wrlock(&s->findings_lock);
        old_findings = s->findings;
        old_families = s->families;
        s->findings = findings;
        s->families = families;
        /* findings judged by the old rules, their advice pointing into them */
        if (s->findings_cache)
                findings_cache_clear(s->findings_cache);
        pthread_rwlock_unlock(&s->findings_lock);
        findings_config_done(old_findings);
        free(old_findings);
        lib_families_done(old_families);
        free(old_families);
}

void server_set_tokens(Server *s, TokenSet *tokens) {
        TokenSet *old;

        token_set_derive_refs(tokens, s->config.session_key, sizeof(s->config.session_key));
        pthread_rwlock_wrlock(&s->tokens_lock);
        old = s->tokens;
        s->tokens = tokens;
        pthread_rwlock_unlock(&s->tokens_lock);
        token_set_free(old);
}
