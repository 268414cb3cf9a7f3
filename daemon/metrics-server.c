/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "metrics-server.h"
#include "util.h"

#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

typedef struct Client {
        int fd;                 /* -EBADF: a free slot */
        uint64_t deadline_ns;
        uint64_t accepted_ns;   /* the oldest goes first when all slots are taken */
        char in[METRICS_MAX_REQUEST];
        size_t in_len;
        char *out;              /* the whole answer, once the request is in */
        size_t out_len, out_off;
} Client;

struct MetricsServer {
        int listen_fd, wake_fd;
        uint16_t port;
        struct sockaddr_storage bound;
        pthread_t thread;
        atomic_bool stop;
        pthread_mutex_t lock;   /* text */
        char *text;
        size_t text_size;
        Client clients[METRICS_MAX_CLIENTS];
};

int metrics_listen_parse(const char *s, struct sockaddr_storage *ret, socklen_t *ret_len) {
        struct sockaddr_in *in4 = (struct sockaddr_in *) ret;
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *) ret;
        char host[INET6_ADDRSTRLEN + 2];
        const char *colon, *port_s;
        uint64_t port;
        size_t hlen;

        if (!s || !*s)
                return -EINVAL;
        colon = strrchr(s, ':');
        port_s = colon ? colon + 1 : s;
        if (safe_atou64(port_s, 10, &port) < 0 || port > 65535)
                return -EINVAL;
        hlen = colon ? (size_t) (colon - s) : 0;
        if (hlen >= sizeof(host))
                return -EINVAL;
        memcpy(host, s, hlen);
        host[hlen] = '\0';

        memset(ret, 0, sizeof(*ret));
        if (!colon || streq(host, "localhost")) {
                in4->sin_family = AF_INET;
                in4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        } else if (streq(host, "*")) {
                in6->sin6_family = AF_INET6;
                in6->sin6_addr = in6addr_any;
        } else if (host[0] == '[' && hlen > 2 && host[hlen - 1] == ']') {
                host[hlen - 1] = '\0';
                in6->sin6_family = AF_INET6;
                if (inet_pton(AF_INET6, host + 1, &in6->sin6_addr) != 1)
                        return -EINVAL;
        } else {
                in4->sin_family = AF_INET;
                if (inet_pton(AF_INET, host, &in4->sin_addr) != 1)
                        return -EINVAL;
        }
        if (ret->ss_family == AF_INET) {
                in4->sin_port = htons((uint16_t) port);
                *ret_len = sizeof(*in4);
        } else {
                in6->sin6_port = htons((uint16_t) port);
                *ret_len = sizeof(*in6);
        }
        return 0;
}

static void client_close(Client *c) {
        c->fd = safe_close(c->fd);
        free(c->out);
        c->out = NULL;
        c->in_len = c->out_len = c->out_off = 0;
}

static int answer(MetricsServer *s, Client *c, unsigned status, const char *reason, const char *extra,
                  bool head) {
        const char *body = reason;
        size_t body_len;
        char *buf = NULL;
        int n;

        /* a copy, under the lock: lmkd may publish meanwhile */
        pthread_mutex_lock(&s->lock);
        if (status == 200 && !s->text) {
                status = 503;
                reason = "Service Unavailable";
                body = "lmkd has not counted anything yet\n";
        }
        body = status == 200 ? s->text : body;
        body_len = status == 200 ? s->text_size : strlen(body);
        n = asprintf(&buf, "HTTP/1.1 %u %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                     "Cache-Control: no-store\r\nConnection: close\r\n%s\r\n%.*s",
                     status, reason, status == 200 ? CONTENT_TYPE : "text/plain; charset=utf-8", body_len,
                     extra ?: "", head ? 0 : (int) body_len, body);
        pthread_mutex_unlock(&s->lock);
        if (n < 0)
                return -ENOMEM;
        c->out = buf;
        c->out_len = (size_t) n;
        return 0;
}

/* The request line and headers are in: what to answer. Anything after
 * them (a body on a GET) is ignored; the connection closes after the
 * answer. */
static int handle_request(MetricsServer *s, Client *c) {
        char *sp1, *sp2, *eol;
        bool head;

        c->in[c->in_len] = '\0';
        eol = strpbrk(c->in, "\r\n");
        if (eol)
                *eol = '\0';
        sp1 = strchr(c->in, ' ');
        sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
        if (!sp1 || !sp2 || strncmp(sp2 + 1, "HTTP/1.", 7) != 0)
                return answer(s, c, 400, "Bad Request", NULL, false);
        *sp1 = *sp2 = '\0';
        head = streq(c->in, "HEAD");
        if (!head && !streq(c->in, "GET"))
                return answer(s, c, 405, "Method Not Allowed", "Allow: GET, HEAD\r\n", false);
        if (!streq(sp1 + 1, "/metrics") && strncmp(sp1 + 1, "/metrics?", 9) != 0)
                return answer(s, c, 404, "Not Found", NULL, head);
        return answer(s, c, 200, "OK", NULL, head);
}

static void client_read(MetricsServer *s, Client *c) {
        ssize_t n;

        /* one byte kept for the terminating NUL */
        n = recv(c->fd, c->in + c->in_len, sizeof(c->in) - 1 - c->in_len, 0);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return;
        if (n <= 0) {
                client_close(c);
                return;
        }
        c->in_len += (size_t) n;
        c->in[c->in_len] = '\0';
        if (strstr(c->in, "\r\n\r\n") || strstr(c->in, "\n\n")) {
                if (handle_request(s, c) < 0)
                        client_close(c);
        } else if (c->in_len >= sizeof(c->in) - 1 && answer(s, c, 431, "Request Header Fields Too Large",
                                                              NULL, false) < 0)
                client_close(c);
}

static void client_write(Client *c) {
        ssize_t n;

        n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return;
        if (n < 0) {
                client_close(c);
                return;
        }
        c->out_off += (size_t) n;
        if (c->out_off == c->out_len) {
                (void) shutdown(c->fd, SHUT_WR);
                client_close(c);
        }
}

static void accept_client(MetricsServer *s) {
        Client *slot = NULL;
        uint64_t now = now_ns(CLOCK_MONOTONIC);
        int fd;

        fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
                return;
        for (size_t i = 0; i < METRICS_MAX_CLIENTS; i++) {
                Client *c = &s->clients[i];

                if (c->fd < 0) {
                        slot = c;
                        break;
                }
                if (!slot || c->accepted_ns < slot->accepted_ns)
                        slot = c;
        }
        /* all taken: the oldest goes, so that idle connections cannot lock
         * out the scraper */
        client_close(slot);
        slot->fd = fd;
        slot->accepted_ns = now;
        slot->deadline_ns = now + (uint64_t) METRICS_TIMEOUT_MS * 1000000;
}

static void *run(void *userdata) {
        MetricsServer *s = userdata;
        struct pollfd pfd[2 + METRICS_MAX_CLIENTS];

        while (!atomic_load(&s->stop)) {
                uint64_t now = now_ns(CLOCK_MONOTONIC), next = UINT64_MAX;
                size_t n = 2, idx[METRICS_MAX_CLIENTS];
                int timeout;

                pfd[0] = (struct pollfd) { .fd = s->wake_fd, .events = POLLIN };
                pfd[1] = (struct pollfd) { .fd = s->listen_fd, .events = POLLIN };
                for (size_t i = 0; i < METRICS_MAX_CLIENTS; i++) {
                        Client *c = &s->clients[i];

                        if (c->fd < 0)
                                continue;
                        if (now >= c->deadline_ns) {
                                client_close(c);
                                continue;
                        }
                        next = MIN(next, c->deadline_ns);
                        idx[n - 2] = i;
                        pfd[n++] = (struct pollfd) { .fd = c->fd, .events = c->out ? POLLOUT : POLLIN };
                }
                timeout = next == UINT64_MAX ? -1 : (int) ((next - now) / 1000000 + 1);
                if (poll(pfd, n, timeout) < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                for (size_t k = 2; k < n; k++) {
                        Client *c = &s->clients[idx[k - 2]];

                        if (pfd[k].revents & (POLLERR | POLLNVAL)) {
                                client_close(c);
                                continue;
                        }
                        if (c->out && (pfd[k].revents & (POLLOUT | POLLHUP)))
                                client_write(c);
                        else if (!c->out && (pfd[k].revents & (POLLIN | POLLHUP)))
                                client_read(s, c);
                }
                if (pfd[1].revents & POLLIN)
                        accept_client(s);
        }
        for (size_t i = 0; i < METRICS_MAX_CLIENTS; i++)
                client_close(&s->clients[i]);
        return NULL;
}

int metrics_server_start(const struct sockaddr_storage *addr, socklen_t len, MetricsServer **ret) {
        _cleanup_close_ int fd = -EBADF, wake = -EBADF;
        struct sockaddr_storage bound;
        socklen_t blen = sizeof(bound);
        MetricsServer *s;
        int one = 1, r;

        fd = socket(addr->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        (void) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        /* "*:PORT": IPv4 too, whatever net.ipv6.bindv6only says */
        if (addr->ss_family == AF_INET6)
                (void) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &(int) { 0 }, sizeof(int));
        if (bind(fd, (const struct sockaddr *) addr, len) < 0 || listen(fd, METRICS_MAX_CLIENTS) < 0 ||
            getsockname(fd, (struct sockaddr *) &bound, &blen) < 0)
                return -errno;
        wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (wake < 0)
                return -errno;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        for (size_t i = 0; i < METRICS_MAX_CLIENTS; i++)
                s->clients[i].fd = -EBADF;
        s->bound = bound;
        s->port = ntohs(bound.ss_family == AF_INET ? ((struct sockaddr_in *) &bound)->sin_port
                                                   : ((struct sockaddr_in6 *) &bound)->sin6_port);
        pthread_mutex_init(&s->lock, NULL);
        s->listen_fd = TAKE_FD(fd);
        s->wake_fd = TAKE_FD(wake);
        r = -pthread_create(&s->thread, NULL, run, s);
        if (r < 0) {
                safe_close(s->listen_fd);
                safe_close(s->wake_fd);
                pthread_mutex_destroy(&s->lock);
                free(s);
                return r;
        }
        *ret = s;
        return 0;
}

int metrics_server_publish(MetricsServer *s, const char *text, size_t size) {
        char *copy = malloc(size + 1);

        if (!copy)
                return -ENOMEM;
        memcpy(copy, text, size);
        copy[size] = '\0';
        pthread_mutex_lock(&s->lock);
        free(s->text);
        s->text = copy;
        s->text_size = size;
        pthread_mutex_unlock(&s->lock);
        return 0;
}

uint16_t metrics_server_port(const MetricsServer *s) {
        return s->port;
}

const char *metrics_server_address(const MetricsServer *s, char *buf, size_t size) {
        char a[INET6_ADDRSTRLEN] = "?";

        if (s->bound.ss_family == AF_INET6) {
                inet_ntop(AF_INET6, &((const struct sockaddr_in6 *) &s->bound)->sin6_addr, a, sizeof(a));
                snprintf(buf, size, "[%s]:%u", a, s->port);
        } else {
                inet_ntop(AF_INET, &((const struct sockaddr_in *) &s->bound)->sin_addr, a, sizeof(a));
                snprintf(buf, size, "%s:%u", a, s->port);
        }
        return buf;
}

MetricsServer *metrics_server_stop(MetricsServer *s) {
        if (!s)
                return NULL;
        atomic_store(&s->stop, true);
        (void) eventfd_write(s->wake_fd, 1);
        pthread_join(s->thread, NULL);
        safe_close(s->listen_fd);
        safe_close(s->wake_fd);
        pthread_mutex_destroy(&s->lock);
        free(s->text);
        free(s);
        return NULL;
}
