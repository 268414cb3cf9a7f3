/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Who asks a request, and whether they may use its route (auth.h). */
#include <errno.h>
#include <nettle/memops.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "auth/auth.h"
#include "log.h"
#include "util.h"

void auth_denied(Auth *a, const Request *req, const char *reason) {
        metrics_count_denied(a->metrics, reason);
        log_debug("Denied (%s) to %s%s: %s", reason, req->identity->admin ? "an admin token" :
                  req->identity->user ? "user " : "an unidentified client", req->identity->user ?: "",
                  req->url ?: "?");
}

/* The accounts user leads, copied: SIGHUP may replace the list meanwhile. */
static int copy_accounts(Auth *a, const char *user, char ***ret) {
        const char *const *led;
        char **v = NULL;
        size_t n;

        pthread_rwlock_rdlock(&a->leads_lock);
        led = leads_accounts_of(a->leads, user, &n);
        if (led) {
                v = calloc(n + 1, sizeof(char *));
                for (size_t i = 0; v && i < n; i++)
                        if (!(v[i] = strdup(led[i]))) {
                                for (size_t k = 0; k < i; k++)
                                        free(v[k]);
                                free(TAKE_PTR(v));
                        }
        }
        pthread_rwlock_unlock(&a->leads_lock);
        if (led && !v)
                return -ENOMEM;
        *ret = v;
        return 0;
}

/* People (MUNGE, a trusted proxy) read; only nodes push. */
static bool person_route(Auth *a, const Route *route, Request *req, Reply *reply) {
        if (route->access->role == ROLE_ADMIN)
                return true;
        auth_denied(a, req, "wrong-role");
        reply_error(reply, MHD_HTTP_FORBIDDEN, NULL, "a person may not use %s %s, only nodes may",
                    route->method, route->path);
        return false;
}

static bool admin_user(Auth *a, const char *user) {
        for (char **u = a->config.admin_users; u && *u; u++)
                if (streq(*u, user))
                        return true;
        return false;
}

bool auth_site_view_closed(Auth *a, const Request *req) {
        return a->config.site_views_admin_only && !req->identity->admin;
}

/* Once a person is known: an admin (--admin-users), else the accounts they
 * lead; and the site's word on its site-wide views. */
static bool person_admit(Auth *a, const Route *route, Request *req, Reply *reply) {
        if (admin_user(a, req->identity->user))
                req->identity->admin = true;
        else if (copy_accounts(a, req->identity->user, &req->identity->accounts) < 0) {
                reply_oom(reply);
                return false;
        }
        if (route->access->site_view && auth_site_view_closed(a, req)) {
                auth_denied(a, req, "site-view");
                reply_error(reply, MHD_HTTP_FORBIDDEN, NULL, "site-wide views are for admins on this store");
                return false;
        }
        return true;
}

/* A person: "Authorization: MUNGE <credential>" made for this request. */
static bool authenticate_munge(Auth *a, const Route *route, Request *req, const char *cred, Reply *reply) {
        _cleanup_free_ char *why = NULL;
        int r;

        if (!person_route(a, route, req, reply))
                return false;
        r = identity_from_munge(a->config.munge_socket, cred, route->method, req->url, req->identity, &why);
        if (r == -EHOSTDOWN || r == -EOPNOTSUPP) {
                log_warning("Cannot check a MUNGE credential: %s", why ?: "unknown error");
                reply_error(reply, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "%s", why ?: "cannot check MUNGE credentials");
                reply->retry_after = 5;
                return false;
        }
        if (r < 0) {
                auth_denied(a, req, "bad-credential");
                reply_error(reply, MHD_HTTP_UNAUTHORIZED, NULL, "%s", why ?: "invalid MUNGE credential");
                reply->www_authenticate = true;
                return false;
        }
        return person_admit(a, route, req, reply);
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
static bool header_once(Auth *a, const Request *req, const char *name, Reply *reply) {
        HeaderCount h = { .name = name };

        MHD_get_connection_values(req->connection, MHD_HEADER_KIND, count_header, &h);
        if (h.n <= 1)
                return true;
        auth_denied(a, req, "repeated-header");
        reply_error(reply, MHD_HTTP_BAD_REQUEST, NULL, "%s is sent %u times: one request, one identity", name, h.n);
        return false;
}

/* A user named by a trusted reverse proxy (single sign-on): 1 when the
 * request came from one with the header, 0 when not (other ways apply),
 * -1 when it was answered. */
static int authenticate_proxy(Auth *a, const Route *route, Request *req, Reply *reply) {
        const union MHD_ConnectionInfo *ci;
        const char *user;

        if (!a->config.user_header || a->config.trusted_proxies.n == 0)
                return 0;
        user = MHD_lookup_connection_value(req->connection, MHD_HEADER_KIND, a->config.user_header);
        if (!user)
                return 0;
        ci = MHD_get_connection_info(req->connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        if (!ci || !trusted_proxies_contain(&a->config.trusted_proxies, ci->client_addr)) {
                /* anyone can send the header: only the proxies' word counts */
                log_debug("Ignoring %s from an address that is not a trusted proxy.", a->config.user_header);
                return 0;
        }
        if (!header_once(a, req, a->config.user_header, reply))
                return -1;
        if (!person_route(a, route, req, reply))
                return -1;
        if (!identity_user_valid(user)) {
                auth_denied(a, req, "bad-credential");
                reply_error(reply, MHD_HTTP_UNAUTHORIZED, NULL, "the proxy's %s is not a user name",
                            a->config.user_header);
                return -1;
        }
        if (identity_from_proxy(user, req->identity) < 0) {
                reply_oom(reply);
                return -1;
        }
        return person_admit(a, route, req, reply) ? 1 : -1;
}

/* The browser's session cookie (auth/session.h): 1 with its claims, 0 when
 * there is none, <0 when it is not one of ours or has expired. */
static int session_cookie(Auth *a, const Request *req, SessionClaims *ret) {
        const char *v = MHD_lookup_connection_value(req->connection, MHD_COOKIE_KIND, SESSION_COOKIE);

        if (!v || !*v)
                return 0;
        return session_verify(a->config.session_key, SESSION_COOKIE_KIND, v, (int64_t) time(NULL), ret) < 0 ? -1 : 1;
}

static bool session_refused(Auth *a, const Request *req, Reply *reply, const char *msg) {
        auth_denied(a, req, "bad-session");
        reply_error(reply, MHD_HTTP_UNAUTHORIZED, NULL, "%s", msg);
        reply->www_authenticate = true;
        return false;
}

/* A session is who it names, with what today's configuration gives them:
 * an admin token's session lasts while that token is in the token file, a
 * person is an admin or a lead while --admin-users or the leads say so. */
static bool authenticate_session(Auth *a, const Route *route, Request *req, const SessionClaims *c,
                                 Reply *reply) {
        bool token_current;

        if (!person_route(a, route, req, reply))
                return false;
        if (route->access->credential)
                return session_refused(a, req, reply, "a session cannot sign in another browser or itself "
                                       "again: run \"lmk web\" (MUNGE), or use a token");
        if (c->admin) {
                pthread_rwlock_rdlock(&a->tokens_lock);
                token_current = a->tokens && token_set_has_admin_ref(a->tokens, c->ref);
                pthread_rwlock_unlock(&a->tokens_lock);
                if (!token_current)
                        return session_refused(a, req, reply, "the admin token this session was signed in "
                                               "with is no longer valid");
                req->identity->admin = req->identity->by_token = true;
                memcpy(req->identity->token_ref, c->ref, TOKEN_REF_SIZE);
        }
        req->identity->uid = c->uid >= 0 ? (uid_t) c->uid : (uid_t) -1;
        if (!(req->identity->user = strdup(c->user))) {
                reply_oom(reply);
                return false;
        }
        return c->admin ? true : person_admit(a, route, req, reply);
}

static bool authenticate_header(Auth *a, const Route *route, Request *req, const char *h, Reply *reply) {
        const char *token, *node = NULL;
        Role role;

        if (h && strncasecmp(h, "MUNGE ", 6) == 0)
                return authenticate_munge(a, route, req, h + 6 + strspn(h + 6, " "), reply);
        if (!h || strncasecmp(h, "Bearer ", 7) != 0) {
                auth_denied(a, req, "no-identity");
                reply_error(reply, MHD_HTTP_UNAUTHORIZED, NULL,
                            h ? "Authorization must be \"Bearer TOKEN\" or \"MUNGE CREDENTIAL\"" :
                                "missing Authorization: Bearer TOKEN or MUNGE CREDENTIAL");
                reply->www_authenticate = true;
                return false;
        }
        token = h + 7;
        token += strspn(token, " ");

        pthread_rwlock_rdlock(&a->tokens_lock);
        role = a->tokens ? token_set_lookup(a->tokens, token, &node) : ROLE_NONE;
        /* which admin token: a session it signs in lasts as long as it does */
        if (role == ROLE_ADMIN)
                req->identity->by_token = token_set_admin_ref(a->tokens, token, req->identity->token_ref);
        if (node && !(req->identity->node = strdup(node))) {
                pthread_rwlock_unlock(&a->tokens_lock);
                reply_oom(reply);
                return false;
        }
        pthread_rwlock_unlock(&a->tokens_lock);

        if (role == ROLE_NONE) {
                auth_denied(a, req, "bad-token");
                reply_error(reply, MHD_HTTP_UNAUTHORIZED, NULL, "invalid token");
                reply->www_authenticate = true;
                return false;
        }
        if (role != route->access->role) {
                auth_denied(a, req, "wrong-role");
                reply_error(reply, MHD_HTTP_FORBIDDEN, NULL, "tokens of role %s may not use %s %s",
                            role_to_string(role), route->method, route->path);
                return false;
        }
        req->identity->admin = role == ROLE_ADMIN;
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
static bool authenticate(Auth *a, const Route *route, Request *req, Reply *reply) {
        const char *h = MHD_lookup_connection_value(req->connection, MHD_HEADER_KIND,
                                                    MHD_HTTP_HEADER_AUTHORIZATION);
        SessionClaims c;
        int r, cookie;

        if (h && !header_once(a, req, MHD_HTTP_HEADER_AUTHORIZATION, reply))
                return false;
        cookie = session_cookie(a, req, &c);
        if (!h) {
                r = authenticate_proxy(a, route, req, reply);
                if (r < 0)
                        return false;
                if (r == 0) {
                        if (cookie > 0)
                                return authenticate_session(a, route, req, &c, reply);
                        if (cookie < 0) {
                                auth_denied(a, req, "bad-session");
                                reply_error(reply, MHD_HTTP_UNAUTHORIZED, NULL,
                                            "the session has expired or is not valid here: run \"lmk web\" "
                                            "for a new login link");
                                reply->www_authenticate = true;
                                return false;
                        }
                }
        }
        if (h && !authenticate_header(a, route, req, h, reply))
                return false;
        if (!h && !req->identity->user && !req->identity->admin)
                return authenticate_header(a, route, req, NULL, reply);
        if (cookie > 0 && !same_person(&c, req->identity)) {
                auth_denied(a, req, "conflicting-identity");
                reply_error(reply, MHD_HTTP_UNAUTHORIZED, NULL,
                            "the session cookie names someone else than the request's credential");
                reply->www_authenticate = true;
                return false;
        }
        return true;
}


bool auth_admit(Auth *a, const Route *route, Request *req, Reply *reply) {
        req->identity = calloc(1, sizeof(Identity));
        if (!req->identity) {
                reply_oom(reply);
                return false;
        }
        return !route->access || authenticate(a, route, req, reply);
}

void auth_request_done(Request *req) {
        req->identity = identity_free(req->identity);
}

void auth_init(Auth *a, Metrics *metrics) {
        a->metrics = metrics;
        pthread_rwlock_init(&a->tokens_lock, NULL);
        pthread_rwlock_init(&a->leads_lock, NULL);
}

int auth_start(Auth *a) {
        if (a->tokens)
                token_set_derive_refs(a->tokens, a->config.session_key, sizeof(a->config.session_key));
        return session_mints_new(&a->mints);
}

void auth_done(Auth *a) {
        a->tokens = token_set_free(a->tokens);
        a->leads = leads_free(a->leads);
        a->mints = session_mints_free(a->mints);
        pthread_rwlock_destroy(&a->tokens_lock);
        pthread_rwlock_destroy(&a->leads_lock);
}

void auth_set_tokens(Auth *a, TokenSet *tokens) {
        TokenSet *old;

        token_set_derive_refs(tokens, a->config.session_key, sizeof(a->config.session_key));
        pthread_rwlock_wrlock(&a->tokens_lock);
        old = a->tokens;
        a->tokens = tokens;
        pthread_rwlock_unlock(&a->tokens_lock);
        token_set_free(old);
}

void auth_set_leads(Auth *a, Leads *leads) {
        Leads *old;

        pthread_rwlock_wrlock(&a->leads_lock);
        old = a->leads;
        a->leads = leads;
        pthread_rwlock_unlock(&a->leads_lock);
        leads_free(old);
}
