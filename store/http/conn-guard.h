/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <netinet/in.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "metrics/metrics.h"

/* Keeps slow clients from holding connection slots (docs/lmk-store.md,
 * "Limits"). libmicrohttpd's idle timeout only closes silent connections,
 * so a client trickling a byte every few seconds could keep a request open
 * forever, and its per-address limit then locks out everyone else behind
 * the same address (nodes behind NAT). The guard instead
 *
 *  - gives a request's headers a deadline, counted from the connection's
 *    start (first request) or from the first byte after the previous
 *    response (keep-alive), and its body a minimum rate after a grace time;
 *    a request past either is answered 408 and the connection shut down;
 *  - applies the per-address limit itself: at the limit, a new connection
 *    takes the slot of the address's oldest connection that is still
 *    sending headers (or else idle between requests), so slow clients
 *    cannot starve ones that send a request promptly. Only when all of the
 *    address's connections are in the middle of a body or a reply is a new
 *    one refused.
 *
 * The server tells it about connections and requests from libmicrohttpd's
 * callbacks; a thread of its own checks the deadlines. It closes a
 * connection by shutting its socket down, which libmicrohttpd then sees as
 * the client going away; the socket stays libmicrohttpd's to close. */

typedef struct ConnGuard ConnGuard;
typedef struct GuardedConn GuardedConn;

typedef struct ConnGuardConfig {
        uint64_t header_timeout_ns;
        uint64_t body_timeout_ns;   /* grace before the body must keep up the rate */
        uint64_t body_min_rate;     /* bytes per second; 0: bodies have no deadline */
        unsigned max_per_address;   /* 0: no limit */
} ConnGuardConfig;

/* Starts the deadline thread. Counts what it closes in metrics. */
int conn_guard_new(const ConnGuardConfig *config, Metrics *metrics, ConnGuard **ret);
/* Stops the thread. Every connection must have been removed. Accepts NULL. */
void conn_guard_free(ConnGuard *g);

/* Whether a connection from sa may start; may evict another one from the
 * same address to make room. */
bool conn_guard_admit(ConnGuard *g, const struct sockaddr *sa);
/* A connection has started on fd (libmicrohttpd's; the guard only shuts it
 * down). -ENOMEM: it could not be tracked and has been shut down. */
int conn_guard_add(ConnGuard *g, int fd, const struct sockaddr *sa, GuardedConn **ret);
/* The connection is gone; its socket is about to be closed. Accepts NULL. */
void conn_guard_remove(ConnGuard *g, GuardedConn *c);

/* A request's headers are complete; its body, if any, follows. */
void conn_guard_headers_done(ConnGuard *g, GuardedConn *c);
/* n more bytes of the body arrived. */
void conn_guard_body_progress(ConnGuard *g, GuardedConn *c, size_t n);
/* The request is in; the store is answering it. */
void conn_guard_replying(ConnGuard *g, GuardedConn *c);
/* The answer has gone out (or the request was aborted): the connection is
 * idle until the client sends its next request. */
void conn_guard_request_done(ConnGuard *g, GuardedConn *c);

/* A client's address as an IPv6 one (IPv4 as ::ffff:a.b.c.d), for comparing
 * addresses of either family; all zeros for NULL or another family. */
void address_key(const struct sockaddr *sa, struct in6_addr *ret);
