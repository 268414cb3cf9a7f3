/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <json-c/json.h>
#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "http/csv-out.h"
#include "macro.h"
#include "metrics/metrics.h"

/* The HTTP side of lmk-store: libmicrohttpd with a pool of worker threads on
 * epoll. http.c routes each request through the table the program hands it
 * (store/routes.c), keeps slow clients and large bodies in check, buffers
 * bodies, and sends what a handler answers (a Reply). Who asks is for the
 * program's hooks (HttpHooks) to say: http/ carries the program's state
 * (Server, api/api.h), who asks (Identity, auth/identity.h) and who may
 * use a route (Access, auth/auth.h) without looking inside. */

typedef struct Server Server;
typedef struct Identity Identity;
typedef struct Access Access;

/* What a handler answers: a JSON body (or text for /metrics, HTML for the
 * pages). */
typedef struct Reply {
        unsigned status;
        json_object *json;
        char *text;
        size_t text_size;
        const char *content_type;
        char *location;         /* for 303 */
        char *set_cookie[2];    /* the session and its mark (auth/session.h), or NULL */
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
        Identity *identity; /* who asks: set by HttpHooks.admit before any handler runs */
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

typedef void (*Handler)(Server *s, Request *req, Reply *reply);

/* A route of the program's table. */
typedef struct Route {
        const char *path;
        bool prefix;    /* path is a prefix and what follows is the argument */
        const char *method;
        Handler handler;
        const Access *access; /* who may use it, for HttpHooks.admit; NULL: anyone */
        const CsvTable *csv; /* a list: ?format=csv answers these rows (csv-out.h) */
        bool body;      /* takes a body (JSON); any other route refuses one */
        /* Makes an error (JSON) the route's kind of answer, with the same
         * status: HTML for people. NULL: errors stay JSON. */
        Handler error_page;
        /* Sees every answer of the route, the handler's and the refusals
         * before it ran. */
        void (*replied)(Server *s, const Reply *reply);
        /* With prefix: the path also ends in this, after an argument of
         * its own ("/api/v1/jobs/ID/functions"); path_arg holds both. Such
         * a route comes before the one of its prefix alone, and owns the
         * paths it matches, whatever their method. */
        const char *suffix;
} Route;

/* What the program does for every request. */
typedef struct HttpHooks {
        /* Once the route is known, before the body is read: who asks
         * (req->identity) and whether they may. false: reply holds the
         * answer. */
        bool (*admit)(Server *s, const Route *route, Request *req, Reply *reply);
        /* The request is over: frees what admit put in req. */
        void (*done)(Server *s, Request *req);
} HttpHooks;

typedef struct HttpConfig {
        struct sockaddr_storage listen;
        unsigned threads;
        unsigned connection_timeout_s; /* idle: nothing sent or read */
        unsigned header_timeout_s;     /* request line and headers complete */
        unsigned body_timeout_s;       /* grace before a body must keep up body_min_rate */
        uint64_t body_min_rate;        /* bytes per second */
        unsigned max_connections;
        unsigned max_connections_per_ip;
        size_t max_body;        /* bytes as sent (compressed or not) */
        size_t max_buffered;    /* bodies of all requests together */
} HttpConfig;

typedef struct HttpServer HttpServer;

/* Starts serving routes (kept, not copied) with the program's hooks;
 * handlers get server. Counts requests, the requests in flight and slow
 * clients in metrics. */
int http_server_start(const HttpConfig *config, const Route *routes, size_t n_routes, const HttpHooks *hooks,
                      Server *server, Metrics *metrics, HttpServer **ret);
/* Stops accepting connections, waits up to timeout_s for requests in flight,
 * then stops and frees h. Accepts NULL. */
void http_server_stop(HttpServer *h, unsigned timeout_s);
uint16_t http_server_port(HttpServer *h);

_printf_(4, 5)
void reply_error(Reply *r, unsigned status, const char *field, const char *fmt, ...);
void reply_json(Reply *r, unsigned status, json_object *o);
void reply_done(Reply *r); /* frees what a reply holds */
void reply_oom(Reply *r);

/* A decoded path or query parameter: strict UTF-8 (common/utf8.h), no
 * control characters. On failure, the byte offset of the first bad byte. */
bool request_text_valid(const char *s, size_t *ret_offset);
/* Query arguments: api handlers name the ones they accept; any other gives
 * 400, so that a typo does not silently widen a query. */
bool request_check_args(Request *req, const char *const *allowed, Reply *reply);
const char *request_arg(Request *req, const char *key); /* NULL for absent or empty */
/* s percent-encoded for a URL's path segment or query value (RFC 3986:
 * the unreserved characters kept), to free; "" for NULL; NULL on ENOMEM. */
char *url_encode_part(const char *s);
