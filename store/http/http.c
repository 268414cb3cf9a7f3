/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libmicrohttpd's side of a request: from its callbacks to a route's
 * handler and back to an answer on the wire (http.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "http/conn-guard.h"
#include "http/http.h"
#include "log.h"
#include "util.h"

/* How much of a rejected body we read and drop to be able to answer 413. */
#define MAX_DISCARD ((size_t) 64 << 20)

struct HttpServer {
        HttpConfig config;
        const Route *routes;
        size_t n_routes;
        HttpHooks hooks;
        Server *server;         /* the handlers' */
        Metrics *metrics;
        struct MHD_Daemon *mhd;
        ConnGuard *guard;
        atomic_size_t buffered;
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

/* libmicrohttpd decodes %xx in the path and the query into C strings, where
 * a %00 would silently cut "4711%00" down to "4711". Decoding it as DEL
 * instead keeps it visible, and DEL is refused like every other control
 * character (request_text_valid()). */
static size_t unescape(void *cls, struct MHD_Connection *c, char *s) {
        for (char *p = strstr(s, "%00"); p; p = strstr(p + 3, "%00"))
                memcpy(p, "%7F", 3);
        return MHD_http_unescape(s);
}

static GuardedConn *guarded_conn(struct MHD_Connection *c) {
        const union MHD_ConnectionInfo *i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

        return i ? i->socket_context : NULL;
}

static enum MHD_Result send_reply(HttpServer *h, Ctx *ctx, Reply *r) {
        struct MHD_Response *resp;
        enum MHD_Result ret;
        const char *body;
        size_t size;
        char *json_buf = NULL;

        /* a page's error is a page, with the same status */
        if (ctx->route && ctx->route->error_page && r->json)
                ctx->route->error_page(h->server, &ctx->req, r);
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
        conn_guard_replying(h->guard, guarded_conn(ctx->req.connection));
        ret = MHD_queue_response(ctx->req.connection, r->status, resp);
        MHD_destroy_response(resp);
        metrics_count_request(h->metrics, r->status);
        if (ctx->route && ctx->route->replied)
                ctx->route->replied(h->server, r);
        if (r->status >= 500 && !r->quiet)
                log_warning("%s %s: %u", ctx->route ? ctx->route->method : "-",
                            ctx->route ? ctx->route->path : "-", r->status);

        reply_done(r);
        return ret;
}

/* Checks what can be checked before the body arrives, so that a client
 * sending "Expect: 100-continue" learns of a 401 or 413 before uploading. */
static bool check_body_headers(HttpServer *h, Ctx *ctx, Reply *reply) {
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
        if (len && safe_atou64(len, 10, &n) >= 0 && n > h->config.max_body) {
                reply_error(reply, MHD_HTTP_CONTENT_TOO_LARGE, NULL,
                            "body of %" PRIu64 " bytes is over the limit of %zu bytes", n, h->config.max_body);
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

/* s is an argument, then suffix. */
static bool ends_with_suffix(const char *s, const char *suffix) {
        size_t n = strlen(s), k = strlen(suffix);

        return n > k && streq(s + n - k, suffix);
}

static bool route_request(HttpServer *h, Ctx *ctx, const char *url, const char *method, Reply *reply) {
        const Route *path_match = NULL;
        unsigned methods = 0;

        for (size_t i = 0; i < h->n_routes; i++) {
                const Route *rt = &h->routes[i];
                size_t n = strlen(rt->path);

                if (rt->prefix ? strncmp(url, rt->path, n) != 0 || !url[n] : !streq(url, rt->path))
                        continue;
                if (rt->suffix && !ends_with_suffix(url + n, rt->suffix))
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
                if (rt->suffix)
                        break; /* not the prefix's route's either */
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

static bool request_start(HttpServer *h, Ctx *ctx, const char *url, const char *method, Reply *reply) {
        size_t bad;

        if (!request_text_valid(url, &bad)) {
                reply_error(reply, MHD_HTTP_BAD_REQUEST, NULL,
                            "the path holds a control character or invalid UTF-8 at byte %zu", bad);
                return false;
        }
        if (!route_request(h, ctx, url, method, reply))
                return false;
        if (!h->hooks.admit(h->server, ctx->route, &ctx->req, reply))
                return false;
        if (ctx->route->csv && !check_format(ctx, reply))
                return false;
        if (ctx->route->body ? !check_body_headers(h, ctx, reply) : !check_no_body(ctx, reply))
                return false;
        return true;
}

static void release_body(HttpServer *h, Ctx *ctx) {
        if (ctx->body_alloc > 0)
                atomic_fetch_sub(&h->buffered, ctx->body_alloc);
        free(ctx->req.body);
        ctx->req.body = NULL;
        ctx->body_alloc = ctx->req.body_size = 0;
}

/* Appends a piece of the body. false: the answer is decided (413, 503). */
static bool append_body(HttpServer *h, Ctx *ctx, const char *data, size_t size, Reply *reply) {
        size_t need, na;
        char *nb;

        if (size > h->config.max_body || ctx->req.body_size > h->config.max_body - size) {
                reply_error(reply, MHD_HTTP_CONTENT_TOO_LARGE, NULL,
                            "body is over the limit of %zu bytes", h->config.max_body);
                return false;
        }
        need = ctx->req.body_size + size + 1;
        if (need > ctx->body_alloc) {
                na = MIN(MAX(need, ctx->body_alloc * 2), h->config.max_body + 1);
                /* All bodies being received share one budget, so that many
                 * clients uploading at once cannot exhaust memory. */
                if (atomic_fetch_add(&h->buffered, na - ctx->body_alloc) + (na - ctx->body_alloc) >
                    h->config.max_buffered) {
                        atomic_fetch_sub(&h->buffered, na - ctx->body_alloc);
                        reply_error(reply, MHD_HTTP_SERVICE_UNAVAILABLE, NULL,
                                    "too many uploads in progress, try again");
                        reply->retry_after = 5;
                        return false;
                }
                nb = realloc(ctx->req.body, na);
                if (!nb) {
                        atomic_fetch_sub(&h->buffered, na - ctx->body_alloc);
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
        HttpServer *h = cls;
        Ctx *ctx = *con_cls;
        Reply reply = {};

        if (!ctx) {
                ctx = calloc(1, sizeof(Ctx));
                if (!ctx)
                        return MHD_NO;
                *con_cls = ctx;
                ctx->req.connection = c;
                ctx->start_ns = now_ns(CLOCK_MONOTONIC);
                atomic_fetch_add(&h->metrics->in_flight, 1);
                conn_guard_headers_done(h->guard, guarded_conn(c));
                if (!request_start(h, ctx, url, method, &reply))
                        return send_reply(h, ctx, &reply);
                return MHD_YES;
        }

        if (*upload_data_size > 0) {
                /* Dropped bytes count too: the client is sending them. */
                conn_guard_body_progress(h->guard, guarded_conn(c), *upload_data_size);
                if (ctx->rejected) {
                        /* libmicrohttpd lets us answer only once the body is
                         * in: drop it, but not forever. */
                        ctx->discarded += *upload_data_size;
                        if (ctx->discarded > MAX(4 * h->config.max_body, MAX_DISCARD))
                                return MHD_NO;
                } else if (!append_body(h, ctx, upload_data, *upload_data_size, &ctx->pending)) {
                        ctx->rejected = true;
                        ctx->discarded = ctx->req.body_size;
                        release_body(h, ctx);
                }
                *upload_data_size = 0;
                return MHD_YES;
        }

        /* The body is in: storing it may take a while, and that is no
         * client's fault. */
        conn_guard_replying(h->guard, guarded_conn(c));
        if (ctx->rejected)
                return send_reply(h, ctx, &ctx->pending);
        ctx->route->handler(h->server, &ctx->req, &reply);
        if (ctx->csv)
                reply_csv(ctx->route->csv, &reply);
        release_body(h, ctx);
        return send_reply(h, ctx, &reply);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
        HttpServer *h = cls;
        Ctx *ctx = *con_cls;

        conn_guard_request_done(h->guard, guarded_conn(c));
        if (!ctx)
                return;
        release_body(h, ctx);
        reply_done(&ctx->pending);
        h->hooks.done(h->server, &ctx->req);
        free(ctx);
        *con_cls = NULL;
        atomic_fetch_sub(&h->metrics->in_flight, 1);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code) {
        HttpServer *h = cls;
        const union MHD_ConnectionInfo *fd, *addr;
        GuardedConn *g = NULL;

        if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
                conn_guard_remove(h->guard, *socket_context);
                *socket_context = NULL;
                return;
        }
        fd = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        addr = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        if (fd && conn_guard_add(h->guard, fd->connect_fd, addr ? addr->client_addr : NULL, &g) >= 0)
                *socket_context = g;
}

static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen) {
        HttpServer *h = cls;

        return conn_guard_admit(h->guard, addr) ? MHD_YES : MHD_NO;
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

int http_server_start(const HttpConfig *config, const Route *routes, size_t n_routes, const HttpHooks *hooks,
                      Server *server, Metrics *metrics, HttpServer **ret) {
        unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC | MHD_USE_ERROR_LOG;
        ConnGuardConfig guard = {
                .header_timeout_ns = (uint64_t) config->header_timeout_s * UINT64_C(1000000000),
                .body_timeout_ns = (uint64_t) config->body_timeout_s * UINT64_C(1000000000),
                .body_min_rate = config->body_min_rate,
                .max_per_address = config->max_connections_per_ip,
        };
        HttpServer *h;
        int r;

        h = calloc(1, sizeof(HttpServer));
        if (!h)
                return -ENOMEM;
        *h = (HttpServer) {
                .config = *config,
                .routes = routes,
                .n_routes = n_routes,
                .hooks = *hooks,
                .server = server,
                .metrics = metrics,
        };
        if (h->config.listen.ss_family == AF_INET6)
                flags |= MHD_USE_IPv6;
        r = conn_guard_new(&guard, metrics, &h->guard);
        if (r < 0) {
                free(h);
                return r;
        }

        /* libmicrohttpd's own per-address limit would refuse a new
         * connection before the guard could make room for it. */
        h->mhd = MHD_start_daemon(flags, 0, on_accept, h, on_request, h,
                                  MHD_OPTION_SOCK_ADDR, (struct sockaddr *) &h->config.listen,
                                  MHD_OPTION_THREAD_POOL_SIZE, (unsigned) h->config.threads,
                                  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned) h->config.connection_timeout_s,
                                  MHD_OPTION_CONNECTION_LIMIT, (unsigned) h->config.max_connections,
                                  MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
                                  MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
                                  MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, h,
                                  MHD_OPTION_STRICT_FOR_CLIENT, 1,
                                  MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL,
                                  MHD_OPTION_END);
        if (!h->mhd) {
                r = errno > 0 ? -errno : -EADDRNOTAVAIL;
                conn_guard_free(h->guard);
                free(h);
                return r;
        }
        *ret = h;
        return 0;
}

uint16_t http_server_port(HttpServer *h) {
        const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_BIND_PORT);

        return info ? info->port : 0;
}

void http_server_stop(HttpServer *h, unsigned timeout_s) {
        uint64_t deadline;
        MHD_socket fd;

        if (!h)
                return;
        fd = MHD_quiesce_daemon(h->mhd);
        if (fd != MHD_INVALID_SOCKET)
                close(fd);
        deadline = now_ns(CLOCK_MONOTONIC) + (uint64_t) timeout_s * UINT64_C(1000000000);
        while (atomic_load(&h->metrics->in_flight) > 0 && now_ns(CLOCK_MONOTONIC) < deadline)
                (void) nanosleep(&(struct timespec) { .tv_nsec = 20 * 1000 * 1000 }, NULL);
        if (atomic_load(&h->metrics->in_flight) > 0)
                log_warning("Stopping with %u requests still in flight.", atomic_load(&h->metrics->in_flight));
        MHD_stop_daemon(h->mhd);
        /* After the daemon: it removes every connection from the guard. */
        conn_guard_free(h->guard);
        free(h);
}
