/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "macro.h"

/* lmkd's own metrics over HTTP (--metrics-listen): GET /metrics answers the
 * last text lmkd published, in Prometheus' text format. It is one thread
 * with poll(2) and nothing else of lmkd in it, so a scraper, slow or
 * hostile, never holds up sampling: at most METRICS_MAX_CLIENTS
 * connections (a new one closes the oldest), a request line and headers
 * of at most METRICS_MAX_REQUEST bytes, METRICS_TIMEOUT_MS for the whole
 * exchange, one request per connection. No libmicrohttpd: lmkd does not
 * link it, and this needs a few hundred lines, not a web server. */

#define METRICS_MAX_CLIENTS 16
#define METRICS_MAX_REQUEST 4096
#define METRICS_TIMEOUT_MS 5000

typedef struct MetricsServer MetricsServer;

/* "PORT" (on 127.0.0.1: the metrics are local unless asked otherwise),
 * "ADDR:PORT" with a literal IPv4 address, "[ADDR]:PORT" with IPv6,
 * "localhost:PORT", or "*:PORT" for every address. No names are resolved.
 * -EINVAL on anything else. */
int metrics_listen_parse(const char *s, struct sockaddr_storage *ret, socklen_t *ret_len);

/* Binds (SO_REUSEADDR), listens and starts the thread. */
int metrics_server_start(const struct sockaddr_storage *addr, socklen_t len, MetricsServer **ret);
/* The text the next scrapes get (copied); until the first, they get 503. */
int metrics_server_publish(MetricsServer *s, const char *text, size_t size);
/* The port it listens on (port 0 binds one), and the address with it
 * ("127.0.0.1:9101", "[::]:9101") in buf. */
uint16_t metrics_server_port(const MetricsServer *s);
const char *metrics_server_address(const MetricsServer *s, char *buf, size_t size);
/* Stops the thread, closes every connection. Accepts NULL. */
MetricsServer *metrics_server_stop(MetricsServer *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(MetricsServer *, metrics_server_stop);
