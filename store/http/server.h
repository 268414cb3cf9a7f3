/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <json-c/json.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>

#include "http/conn-guard.h"
#include "http/csv-out.h"
#include "metrics/metrics.h"
#include "metrics/node-health.h"
#include "db/storage.h"
#include "analysis/findings-cache.h"
#include "analysis/findings.h"
#include "auth/identity.h"
#include "auth/leads.h"
#include "auth/session.h"
#include "auth/tokens.h"

/* The HTTP side of lmk-store: libmicrohttpd with a pool of worker threads on
 * epoll. server.c routes requests, checks tokens and limits and buffers
 * bodies; api-ingest.c and api-query.c turn a request into a Reply. */

typedef struct ServerConfig {
        struct sockaddr_storage listen;
        unsigned threads;
        unsigned connection_timeout_s; /* idle: nothing sent or read */
        unsigned header_timeout_s;     /* request line and headers complete */
        unsigned body_timeout_s;       /* grace before a body must keep up body_min_rate */
        uint64_t body_min_rate;        /* bytes per second */
        unsigned max_connections;
        unsigned max_connections_per_ip;
        size_t max_body;        /* bytes as sent (compressed or not) */
        size_t max_inflated;    /* bytes after decompression */
        size_t max_buffered;    /* bodies of all requests together */
        const char *munge_socket;      /* munged's socket; NULL: the default */
        const char *user_header;       /* the header a trusted proxy names the user in, or NULL */
        TrustedProxies trusted_proxies;
        bool site_views_admin_only;    /* site-wide views only for admin tokens */
        char **admin_users;            /* people who are admins, NULL-terminated, or NULL */
        unsigned session_ttl_s;        /* browser sessions */
        uint8_t session_key[SESSION_KEY_SIZE];
} ServerConfig;

typedef struct Server {
        ServerConfig config;
        struct MHD_Daemon *mhd;
        ConnGuard *guard;
        Storage *storage;
        Metrics metrics;
        NodeHealth *node_health;

        pthread_rwlock_t tokens_lock;
        TokenSet *tokens;

        /* the findings' rules and the library families they use; SIGHUP
         * swaps both under the write lock */
        pthread_rwlock_t findings_lock;
        FindingsConfig *findings;
        LibFamilies *families;
        FindingsCache *findings_cache; /* the site list's, cleared with the rules */

        /* who leads which account (SIGHUP) */
        pthread_rwlock_t leads_lock;
        Leads *leads;

        atomic_size_t buffered;

        SessionMints *mints; /* login tickets minted per identity */
} Server;

/* What a handler answers: a JSON body (or text for /metrics, HTML for the
 * pages). */
typedef struct Reply {
        unsigned status;
        json_object *json;
        char *text;
        size_t text_size;
        const char *content_type;
        char *location;         /* for 303 */
        char *set_cookie[2];    /* the session and its mark (session.h), or NULL */
        const char *allow;      /* for 405 */
        const char *content_disposition; /* a CSV answer's file name */
        const char *reject_reason; /* an ingest not taken: why (metrics.h); NULL: from the status */
        unsigned retry_after;   /* for 503, 507 and 429 */
        bool quiet;             /* a 5xx whose cause the handler logged (once per episode): no line per answer */
        bool www_authenticate;  /* for 401 */
} Reply;

/* A query parameter a page hands to the API handler it renders. */
typedef struct RequestArg {
        const char *key, *value;
} RequestArg;

/* A request as far as handlers see it. */
typedef struct Request {
        struct MHD_Connection *connection;
        char *token_node; /* the node a node token is bound to, or NULL */
        Identity identity; /* who asks, for query routes */
        const char *path_arg; /* what follows a route's prefix ("/api/v1/jobs/ID") */
        const char *url;      /* the path, %-decoded, without the query */
        /* When set, the query parameters instead of the connection's: a page
         * runs an API handler with the part of its query that is the API's. */
        const RequestArg *args;
        size_t n_args;
        char *body;
        size_t body_size;
        bool gzip;
        bool format_arg;      /* the route answers ?format=csv: "format" is a known parameter */
} Request;

int server_start(Server *s);
/* Stops accepting connections, waits up to timeout_s for requests in flight,
 * then stops. */
void server_stop(Server *s, unsigned timeout_s);
/* Replaces the token set (SIGHUP); takes ownership of tokens. */
void server_set_tokens(Server *s, TokenSet *tokens);
uint16_t server_port(Server *s);

_printf_(4, 5)
void reply_error(Reply *r, unsigned status, const char *field, const char *fmt, ...);
void reply_json(Reply *r, unsigned status, json_object *o);
void reply_done(Reply *r); /* frees what a reply holds */
void reply_oom(Reply *r);
/* -ENOSPC is a full disk: 507 with this Retry-After (lmkd backs off by
 * itself too). */
#define DISK_FULL_RETRY_AFTER_S 60
void reply_storage_error(Reply *r, int error);

/* Query arguments: api handlers name the ones they accept; any other gives
 * 400, so that a typo does not silently widen a query. */
bool request_check_args(Request *req, const char *const *allowed, Reply *reply);
const char *request_arg(Request *req, const char *key); /* NULL for absent or empty */

void api_ingest(Server *s, Request *req, Reply *reply);
void api_jobs(Server *s, Request *req, Reply *reply);
void api_job(Server *s, Request *req, Reply *reply);
void api_objects(Server *s, Request *req, Reply *reply);
void api_nodes(Server *s, Request *req, Reply *reply);
void api_findings(Server *s, Request *req, Reply *reply);
/* Site answers (api-site.c): installed software and its use, library families. */
void api_packages(Server *s, Request *req, Reply *reply);
void api_families(Server *s, Request *req, Reply *reply);
/* Scaling across runs of one application (api-scaling.c, docs/scaling.md). */
void api_scaling(Server *s, Request *req, Reply *reply);
/* The application mix (api-apps.c). */
void api_apps(Server *s, Request *req, Reply *reply);
/* The cluster, partition and account a site answer is narrowed to
 * (query parameters; pointers into req). false when the reply holds a 403:
 * a person may narrow to an account only when they lead it
 * (api_account_allowed()). */
bool api_scope(Server *s, Request *req, JobScope *ret, Reply *reply);
bool api_account_allowed(Server *s, Request *req, const char *account, Reply *reply);
/* "day", "hour", or "jobs" for a scope's prorated jobs (ObjectList.grain). */
const char *api_grain_name(int64_t grain);
/* "share" of part in total and what it rests on (docs/uncertainty.md). */
int api_add_share(json_object *e, int64_t part, int64_t total);
/* Query parameters: a time (Unix seconds, "now" or an age; fallback when
 * absent, NULL: leave *ret) and an integer in [min, max]. false when the
 * reply holds a 400. */
bool arg_time(Request *req, const char *key, const char *fallback, int64_t now, int64_t *ret, Reply *reply);
bool arg_uint(Request *req, const char *key, unsigned min, unsigned max, unsigned *ret, Reply *reply);
/* Narrows a job filter to what the request's identity may see (the filter
 * then points into req). */
void api_viewer(const Request *req, JobFilter *f);
/* Adds "findings" to a job's summary. */
int api_job_findings(Server *s, const JobSummary *js, json_object *o);
/* Replaces who leads which account (SIGHUP); takes ownership. */
void server_set_leads(Server *s, Leads *leads);
/* Counts and logs (at debug level) a request refused for who asked. */
void server_denied(Server *s, Request *req, const char *reason);
/* Replaces the findings' rules and families (SIGHUP); takes ownership. */
void server_set_findings(Server *s, FindingsConfig *findings, LibFamilies *families);
void api_metrics(Server *s, Request *req, Reply *reply);
/* POST /api/v1/sessions: a login ticket for a browser (session.h). */
void api_sessions(Server *s, Request *req, Reply *reply);
/* The web pages (web.c and web-*.c) */
void web_root(Server *s, Request *req, Reply *reply);
void web_login(Server *s, Request *req, Reply *reply);
/* POST /login: the browser's confirmation that it follows a login link for
 * someone else than who it is signed in as. */
void web_login_confirm(Server *s, Request *req, Reply *reply);
void web_logout(Server *s, Request *req, Reply *reply);
void web_css(Server *s, Request *req, Reply *reply);
void web_jobs(Server *s, Request *req, Reply *reply);
void web_job(Server *s, Request *req, Reply *reply);
void web_site(Server *s, Request *req, Reply *reply);
void web_site_software(Server *s, Request *req, Reply *reply);
void web_site_scaling(Server *s, Request *req, Reply *reply);
void web_site_apps(Server *s, Request *req, Reply *reply);
/* An error reply (JSON) as a page: the same status and message. */
void web_error_page(Server *s, Request *req, Reply *reply);
/* Whether a site-wide view is closed to the request's identity. */
bool server_site_view_closed(Server *s, const Request *req);
void api_healthz(Server *s, Request *req, Reply *reply);
/* The columns of the list answers as CSV (?format=csv), beside their handlers. */
extern const CsvTable api_jobs_csv, api_objects_csv, api_nodes_csv, api_findings_csv, api_packages_csv,
        api_families_csv, api_scaling_csv, api_apps_csv;
