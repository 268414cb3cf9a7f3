/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "http/conn-guard.h"
#include "macro.h"
#include "util.h"

/* How often deadlines are checked, and so how late past one a connection
 * may be closed. Each check is a walk over all connections (at most
 * --max-connections) with one getsockopt() per idle one. */
#define CHECK_INTERVAL_NS (UINT64_C(250) * 1000 * 1000)

typedef enum Phase {
        PHASE_HEADERS,  /* waiting for the request line and headers */
        PHASE_BODY,     /* headers in, body arriving */
        PHASE_REPLYING, /* the store is working on the answer or sending it */
        PHASE_IDLE,     /* keep-alive, between requests */
} Phase;

struct GuardedConn {
        GuardedConn *prev, *next;
        int fd;
        struct in6_addr addr; /* IPv4 as ::ffff:a.b.c.d */
        Phase phase;
        bool first;           /* no request finished on it yet */
        bool closing;         /* shut down; waits for libmicrohttpd to close it */
        uint64_t since_ns;    /* when the phase began */
        uint64_t body_bytes;
        uint64_t idle_bytes;  /* bytes received from the client when it went idle */
};

struct ConnGuard {
        ConnGuardConfig config;
        Metrics *metrics;
        pthread_mutex_t lock;
        pthread_cond_t wake;
        pthread_t thread;
        bool thread_started;
        bool stop;
        GuardedConn *head;
};

void address_key(const struct sockaddr *sa, struct in6_addr *ret) {
        memset(ret, 0, sizeof(*ret));
        if (!sa)
                return;
        if (sa->sa_family == AF_INET6)
                *ret = ((const struct sockaddr_in6 *) sa)->sin6_addr;
        else if (sa->sa_family == AF_INET) {
                ret->s6_addr[10] = ret->s6_addr[11] = 0xff;
                memcpy(ret->s6_addr + 12, &((const struct sockaddr_in *) sa)->sin_addr, 4);
        }
}

/* Everything the client has sent on the socket, including what
 * libmicrohttpd has already read: that is the only way to tell from outside
 * whether an idle keep-alive connection has begun its next request. */
static int bytes_received(int fd, uint64_t *ret) {
        struct tcp_info ti = {};
        socklen_t len = sizeof(ti);

        if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0)
                return negative_errno();
        /* Linux before 4.1 does not count bytes. */
        if (len < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof(ti.tcpi_bytes_received))
                return -EOPNOTSUPP;
        *ret = ti.tcpi_bytes_received;
        return 0;
}

/* Answers (if status is not 0) and shuts the connection down. Only called
 * while no answer of libmicrohttpd's can be underway on it: before the
 * request is complete, and after the previous answer went out. */
static void conn_close(ConnGuard *g, GuardedConn *c, unsigned status, const char *message) {
        if (status > 0) {
                char buf[512];
                int n;

                n = snprintf(buf, sizeof(buf),
                             "HTTP/1.1 %u %s\r\n"
                             "Connection: close\r\n"
                             "Content-Type: application/json\r\n"
                             "Cache-Control: no-store\r\n"
                             "%s"
                             "Content-Length: %zu\r\n"
                             "\r\n"
                             "{\"error\":\"%s\"}\n",
                             status, status == 408 ? "Request Timeout" : "Service Unavailable",
                             status == 503 ? "Retry-After: 1\r\n" : "",
                             strlen(message) + 13, message);
                /* Nothing else is queued on the socket, so the few hundred
                 * bytes fit; if the client does not read, it loses them. */
                if (n > 0 && (size_t) n < sizeof(buf))
                        (void) send(c->fd, buf, (size_t) n, MSG_DONTWAIT | MSG_NOSIGNAL);
                metrics_count_request(g->metrics, status);
        }
        (void) shutdown(c->fd, SHUT_RDWR);
        c->closing = true;
}

static bool request_begun(GuardedConn *c) {
        uint64_t n;

        return !c->first || bytes_received(c->fd, &n) < 0 || n > 0;
}

static void check_deadlines(ConnGuard *g, uint64_t now) {
        const ConnGuardConfig *cf = &g->config;

        for (GuardedConn *c = g->head; c; c = c->next) {
                uint64_t n;
                char msg[128];

                if (c->closing)
                        continue;
                switch (c->phase) {
                case PHASE_IDLE:
                        /* New bytes: the next request has begun. If they
                         * cannot be counted, assume it has. */
                        if (bytes_received(c->fd, &n) < 0 || n != c->idle_bytes) {
                                c->phase = PHASE_HEADERS;
                                c->since_ns = now;
                        }
                        break;
                case PHASE_HEADERS:
                        if (now - c->since_ns < cf->header_timeout_ns)
                                break;
                        /* A connection that never sent anything has no
                         * request to answer. */
                        snprintf(msg, sizeof(msg), "request headers not complete within %" PRIu64 " s",
                                 cf->header_timeout_ns / 1000000000);
                        conn_close(g, c, request_begun(c) ? 408 : 0, msg);
                        atomic_fetch_add_explicit(&g->metrics->slow_headers_closed, 1, memory_order_relaxed);
                        break;
                case PHASE_BODY:
                        /* Like Apache's mod_reqtimeout: a grace time, extended
                         * by each byte at the minimum rate. */
                        if (cf->body_min_rate == 0 ||
                            (double) (now - c->since_ns) <=
                                    (double) cf->body_timeout_ns +
                                            (double) c->body_bytes * 1e9 / (double) cf->body_min_rate)
                                break;
                        snprintf(msg, sizeof(msg), "request body slower than %" PRIu64 " bytes/s",
                                 cf->body_min_rate);
                        conn_close(g, c, 408, msg);
                        atomic_fetch_add_explicit(&g->metrics->slow_bodies_closed, 1, memory_order_relaxed);
                        break;
                case PHASE_REPLYING:
                        break;
                }
        }
}

static void *guard_thread(void *userdata) {
        ConnGuard *g = userdata;

        pthread_mutex_lock(&g->lock);
        while (!g->stop) {
                uint64_t next;
                struct timespec ts;

                check_deadlines(g, now_ns(CLOCK_MONOTONIC));
                next = now_ns(CLOCK_MONOTONIC) + CHECK_INTERVAL_NS;
                ts = (struct timespec) { .tv_sec = (time_t) (next / 1000000000),
                                         .tv_nsec = (long) (next % 1000000000) };
                (void) pthread_cond_timedwait(&g->wake, &g->lock, &ts);
        }
        pthread_mutex_unlock(&g->lock);
        return NULL;
}

int conn_guard_new(const ConnGuardConfig *config, Metrics *metrics, ConnGuard **ret) {
        pthread_condattr_t attr;
        ConnGuard *g;
        int r;

        g = calloc(1, sizeof(*g));
        if (!g)
                return -ENOMEM;
        g->config = *config;
        g->metrics = metrics;
        pthread_mutex_init(&g->lock, NULL);
        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&g->wake, &attr);
        pthread_condattr_destroy(&attr);

        r = pthread_create(&g->thread, NULL, guard_thread, g);
        if (r != 0) {
                conn_guard_free(g);
                return -r;
        }
        g->thread_started = true;
        *ret = g;
        return 0;
}

void conn_guard_free(ConnGuard *g) {
        if (!g)
                return;
        if (g->thread_started) {
                pthread_mutex_lock(&g->lock);
                g->stop = true;
                pthread_cond_signal(&g->wake);
                pthread_mutex_unlock(&g->lock);
                pthread_join(g->thread, NULL);
        }
        while (g->head) {
                GuardedConn *c = g->head;

                g->head = c->next;
                free(c);
        }
        pthread_cond_destroy(&g->wake);
        pthread_mutex_destroy(&g->lock);
        free(g);
}

/* How fast a connection still sending its headers has sent them: bytes per
 * second since its headers phase began. A slow client trickles; a client
 * whose request is all in, waiting for the server to parse it (slower
 * under load), has sent it at once. */
static double header_rate(const GuardedConn *c, uint64_t now) {
        uint64_t n;

        if (bytes_received(c->fd, &n) < 0)
                return 0;
        if (!c->first)
                n = n > c->idle_bytes ? n - c->idle_bytes : 0;
        return (double) n * 1e9 / (double) MAX(now - c->since_ns, UINT64_C(1000000));
}

/* Which of two connections from one address gives up its slot first: one
 * still sending headers before one idle between requests (a slow client
 * more likely than a fast one); among those sending headers the slower
 * sender, so that a wave of tricklers that just reconnected does not push
 * out a client whose request is complete; else the one waiting longer. */
static bool evict_before(const GuardedConn *a, double rate_a, const GuardedConn *b, double rate_b) {
        if (a->phase != b->phase)
                return a->phase == PHASE_HEADERS;
        if (a->phase == PHASE_HEADERS && rate_a != rate_b)
                return rate_a < rate_b;
        return a->since_ns < b->since_ns;
}

bool conn_guard_admit(ConnGuard *g, const struct sockaddr *sa) {
        GuardedConn *victim = NULL;
        struct in6_addr addr;
        unsigned n = 0;
        bool ok = true;

        if (g->config.max_per_address == 0)
                return true;
        address_key(sa, &addr);

        /* Connections being accepted by other worker threads are not in the
         * list yet, so the limit may be overshot by their number. */
        pthread_mutex_lock(&g->lock);
        for (GuardedConn *c = g->head; c; c = c->next)
                if (!c->closing && memcmp(&c->addr, &addr, sizeof(addr)) == 0)
                        n++;
        /* at the limit only: the rates cost a getsockopt() each */
        if (n >= g->config.max_per_address) {
                uint64_t now = now_ns(CLOCK_MONOTONIC);
                double victim_rate = 0;

                for (GuardedConn *c = g->head; c; c = c->next) {
                        double rate;

                        if (c->closing || memcmp(&c->addr, &addr, sizeof(addr)) != 0 ||
                            (c->phase != PHASE_HEADERS && c->phase != PHASE_IDLE))
                                continue;
                        rate = c->phase == PHASE_HEADERS ? header_rate(c, now) : 0;
                        if (!victim || evict_before(c, rate, victim, victim_rate)) {
                                victim = c;
                                victim_rate = rate;
                        }
                }
        }
        if (n >= g->config.max_per_address) {
                if (victim) {
                        /* One that began a request learns why it was cut. */
                        conn_close(g, victim,
                                   victim->phase == PHASE_HEADERS && request_begun(victim) ? 503 : 0,
                                   "too many connections from this address");
                        atomic_fetch_add_explicit(&g->metrics->connections_evicted, 1, memory_order_relaxed);
                } else
                        ok = false;
        }
        pthread_mutex_unlock(&g->lock);
        return ok;
}

int conn_guard_add(ConnGuard *g, int fd, const struct sockaddr *sa, GuardedConn **ret) {
        GuardedConn *c;

        c = calloc(1, sizeof(*c));
        if (!c) {
                /* An unguarded connection could hold its slot forever. */
                (void) shutdown(fd, SHUT_RDWR);
                return -ENOMEM;
        }
        c->fd = fd;
        address_key(sa, &c->addr);
        c->phase = PHASE_HEADERS;
        c->first = true;
        c->since_ns = now_ns(CLOCK_MONOTONIC);

        pthread_mutex_lock(&g->lock);
        c->next = g->head;
        if (g->head)
                g->head->prev = c;
        g->head = c;
        pthread_mutex_unlock(&g->lock);
        *ret = c;
        return 0;
}

void conn_guard_remove(ConnGuard *g, GuardedConn *c) {
        if (!c)
                return;
        pthread_mutex_lock(&g->lock);
        if (c->prev)
                c->prev->next = c->next;
        else
                g->head = c->next;
        if (c->next)
                c->next->prev = c->prev;
        pthread_mutex_unlock(&g->lock);
        free(c);
}

static void set_phase(ConnGuard *g, GuardedConn *c, Phase phase) {
        if (!c)
                return;
        pthread_mutex_lock(&g->lock);
        c->phase = phase;
        c->since_ns = now_ns(CLOCK_MONOTONIC);
        c->body_bytes = 0;
        pthread_mutex_unlock(&g->lock);
}

void conn_guard_headers_done(ConnGuard *g, GuardedConn *c) {
        set_phase(g, c, PHASE_BODY);
}

void conn_guard_body_progress(ConnGuard *g, GuardedConn *c, size_t n) {
        if (!c)
                return;
        pthread_mutex_lock(&g->lock);
        c->body_bytes += n;
        pthread_mutex_unlock(&g->lock);
}

void conn_guard_replying(ConnGuard *g, GuardedConn *c) {
        set_phase(g, c, PHASE_REPLYING);
}

void conn_guard_request_done(ConnGuard *g, GuardedConn *c) {
        uint64_t n = 0;
        int r;

        if (!c)
                return;
        r = bytes_received(c->fd, &n);
        pthread_mutex_lock(&g->lock);
        c->phase = r < 0 ? PHASE_HEADERS : PHASE_IDLE;
        c->first = false;
        c->since_ns = now_ns(CLOCK_MONOTONIC);
        c->idle_bytes = n;
        pthread_mutex_unlock(&g->lock);
}
