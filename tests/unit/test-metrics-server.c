/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lmkd's /metrics endpoint (daemon/metrics-server.h) over real sockets on
 * 127.0.0.1: the answers a scraper gets, and what bad, slow, big or many
 * clients get. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "metrics-server.h"
#include "tests.h"
#include "util.h"

static const char text[] = "# HELP lmkd_samples_total Samples attributed.\n# TYPE lmkd_samples_total counter\n"
                           "lmkd_samples_total 42\n";

static int dial(uint16_t port) {
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(connect(fd, (struct sockaddr *) &a, sizeof(a)) < 0 ? -errno : 0);
        return fd;
}

/* Everything the server sends until it closes, within timeout_ms. */
static size_t read_all(int fd, char *buf, size_t size, int timeout_ms) {
        size_t n = 0;

        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                ssize_t k;

                if (poll(&p, 1, timeout_ms) <= 0)
                        test_fail("no end of the answer within %d ms (got %zu bytes)", timeout_ms, n);
                k = recv(fd, buf + n, size - 1 - n, 0);
                if (k <= 0)
                        break;
                n += (size_t) k;
        }
        buf[n] = '\0';
        return n;
}

static void exchange(uint16_t port, const char *request, char *buf, size_t size) {
        int fd = dial(port);

        ASSERT_EQ(send(fd, request, strlen(request), MSG_NOSIGNAL), (ssize_t) strlen(request));
        read_all(fd, buf, size, 2000);
        close(fd);
}

TEST(parse) {
        struct sockaddr_storage sa;
        struct sockaddr_in *in4 = (struct sockaddr_in *) &sa;
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *) &sa;
        socklen_t len;

        ASSERT_OK(metrics_listen_parse("9101", &sa, &len));
        ASSERT_EQ(sa.ss_family, AF_INET);
        ASSERT_EQ(ntohl(in4->sin_addr.s_addr), INADDR_LOOPBACK);
        ASSERT_EQ(ntohs(in4->sin_port), 9101);
        ASSERT_EQ(len, sizeof(struct sockaddr_in));
        ASSERT_OK(metrics_listen_parse("localhost:9101", &sa, &len));
        ASSERT_EQ(ntohl(in4->sin_addr.s_addr), INADDR_LOOPBACK);
        ASSERT_OK(metrics_listen_parse("10.1.2.3:80", &sa, &len));
        ASSERT_EQ(ntohl(in4->sin_addr.s_addr), 0x0a010203);
        ASSERT_EQ(ntohs(in4->sin_port), 80);
        ASSERT_OK(metrics_listen_parse("[::1]:9101", &sa, &len));
        ASSERT_EQ(sa.ss_family, AF_INET6);
        ASSERT_TRUE(IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr));
        ASSERT_EQ(len, sizeof(struct sockaddr_in6));
        ASSERT_OK(metrics_listen_parse("*:9101", &sa, &len));
        ASSERT_TRUE(IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr));
        ASSERT_OK(metrics_listen_parse("0", &sa, &len));

        static const char *const bad[] = { "", "abc", "1.2.3.4", "1.2.3.4:", "65536", "host.example:80",
                                           "[::1:80", "::1:80", "1.2.3.4:-1", "1.2.3.4:80x", ":80",
                                           "[]:80", "256.1.1.1:80" };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                if (metrics_listen_parse(bad[i], &sa, &len) != -EINVAL)
                        test_fail("\"%s\" was taken", bad[i]);
}

TEST(answers) {
        _cleanup_(metrics_server_stopp) MetricsServer *s = NULL;
        struct sockaddr_storage sa;
        char buf[16384], want[256], addr[64];
        socklen_t len;
        uint16_t port;

        ASSERT_OK(metrics_listen_parse("127.0.0.1:0", &sa, &len));
        ASSERT_OK(metrics_server_start(&sa, len, &s));
        port = metrics_server_port(s);
        ASSERT_TRUE(port > 0);
        snprintf(want, sizeof(want), "127.0.0.1:%u", port);
        ASSERT_STREQ(metrics_server_address(s, addr, sizeof(addr)), want);

        /* nothing counted yet */
        exchange(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", buf, sizeof(buf));
        ASSERT_TRUE(strncmp(buf, "HTTP/1.1 503 ", 13) == 0);

        ASSERT_OK(metrics_server_publish(s, text, strlen(text)));
        exchange(port, "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n", buf, sizeof(buf));
        ASSERT_TRUE(strncmp(buf, "HTTP/1.1 200 OK\r\n", 17) == 0);
        ASSERT_NOT_NULL(strstr(buf, "\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
        snprintf(want, sizeof(want), "\r\nContent-Length: %zu\r\n", strlen(text));
        ASSERT_NOT_NULL(strstr(buf, want));
        ASSERT_NOT_NULL(strstr(buf, "\r\nConnection: close\r\n"));
        ASSERT_STREQ(strstr(buf, "\r\n\r\n") + 4, text);

        /* Prometheus may add parameters; HTTP/1.0 and bare LF are fine */
        exchange(port, "GET /metrics?name[]=x HTTP/1.0\n\n", buf, sizeof(buf));
        ASSERT_TRUE(strncmp(buf, "HTTP/1.1 200 OK\r\n", 17) == 0);

        exchange(port, "HEAD /metrics HTTP/1.1\r\n\r\n", buf, sizeof(buf));
        ASSERT_TRUE(strncmp(buf, "HTTP/1.1 200 OK\r\n", 17) == 0);
        ASSERT_STREQ(strstr(buf, "\r\n\r\n") + 4, "");

        exchange(port, "GET / HTTP/1.1\r\n\r\n", buf, sizeof(buf));
        ASSERT_TRUE(strncmp(buf, "HTTP/1.1 404 ", 13) == 0);
        exchange(port, "GET /metricsx HTTP/1.1\r\n\r\n", buf, sizeof(buf));
        ASSERT_TRUE(strncmp(buf, "HTTP/1.1 404 ", 13) == 0);
        exchange(port, "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n", buf, sizeof(buf));
        ASSERT_TRUE(strncmp(buf, "HTTP/1.1 405 ", 13) == 0);
        ASSERT_NOT_NULL(strstr(buf, "\r\nAllow: GET, HEAD\r\n"));
        exchange(port, "hello\r\n\r\n", buf, sizeof(buf));
        ASSERT_TRUE(strncmp(buf, "HTTP/1.1 400 ", 13) == 0);
        exchange(port, "GET /metrics SMTP\r\n\r\n", buf, sizeof(buf));
        ASSERT_TRUE(strncmp(buf, "HTTP/1.1 400 ", 13) == 0);

        /* a new text replaces the old */
        ASSERT_OK(metrics_server_publish(s, "lmkd_samples_total 43\n", 22));
        exchange(port, "GET /metrics HTTP/1.1\r\n\r\n", buf, sizeof(buf));
        ASSERT_STREQ(strstr(buf, "\r\n\r\n") + 4, "lmkd_samples_total 43\n");
}

TEST(hostile_clients) {
        _cleanup_(metrics_server_stopp) MetricsServer *s = NULL;
        struct sockaddr_storage sa;
        char buf[16384], big[METRICS_MAX_REQUEST + 100];
        int idle[METRICS_MAX_CLIENTS + 4], fd;
        socklen_t len;
        uint16_t port;
        uint64_t t0;

        ASSERT_OK(metrics_listen_parse("0", &sa, &len));
        ASSERT_OK(metrics_server_start(&sa, len, &s));
        port = metrics_server_port(s);
        ASSERT_OK(metrics_server_publish(s, text, strlen(text)));

        /* headers that never end: 431 once the buffer is full */
        memset(big, 'a', sizeof(big));
        memcpy(big, "GET /metrics HTTP/1.1\r\nX: ", 26);
        big[sizeof(big) - 1] = '\0';
        exchange(port, big, buf, sizeof(buf));
        ASSERT_TRUE(strncmp(buf, "HTTP/1.1 431 ", 13) == 0);

        /* a request in pieces, one byte at a time */
        fd = dial(port);
        for (const char *p = "GET /metrics HTTP/1.1\r\n\r\n"; *p; p++) {
                ASSERT_EQ(send(fd, p, 1, MSG_NOSIGNAL), 1);
                (void) nanosleep(&(struct timespec) { .tv_nsec = 2000000 }, NULL);
        }
        read_all(fd, buf, sizeof(buf), 2000);
        close(fd);
        ASSERT_TRUE(strncmp(buf, "HTTP/1.1 200 OK\r\n", 17) == 0);

        /* more idle connections than slots: the scraper still gets its answer */
        for (size_t i = 0; i < ELEMENTSOF(idle); i++)
                idle[i] = dial(port);
        (void) nanosleep(&(struct timespec) { .tv_nsec = 100000000 }, NULL);
        exchange(port, "GET /metrics HTTP/1.1\r\n\r\n", buf, sizeof(buf));
        ASSERT_TRUE(strncmp(buf, "HTTP/1.1 200 OK\r\n", 17) == 0);
        for (size_t i = 0; i < ELEMENTSOF(idle); i++)
                close(idle[i]);

        /* a client that sends nothing is closed after the timeout */
        fd = dial(port);
        t0 = now_ns(CLOCK_MONOTONIC);
        ASSERT_EQ(read_all(fd, buf, sizeof(buf), METRICS_TIMEOUT_MS + 2000), 0);
        ASSERT_TRUE(now_ns(CLOCK_MONOTONIC) - t0 >= (uint64_t) (METRICS_TIMEOUT_MS - 100) * 1000000);
        close(fd);

        /* a client that goes away before reading its answer */
        fd = dial(port);
        ASSERT_EQ(send(fd, "GET /metrics HTTP/1.1\r\n\r\n", 25, MSG_NOSIGNAL), 25);
        close(fd);
        exchange(port, "GET /metrics HTTP/1.1\r\n\r\n", buf, sizeof(buf));
        ASSERT_TRUE(strncmp(buf, "HTTP/1.1 200 OK\r\n", 17) == 0);
}

TEST(address_in_use) {
        _cleanup_(metrics_server_stopp) MetricsServer *a = NULL, *b = NULL;
        struct sockaddr_storage sa;
        socklen_t len;
        char spec[32];

        ASSERT_OK(metrics_listen_parse("0", &sa, &len));
        ASSERT_OK(metrics_server_start(&sa, len, &a));
        snprintf(spec, sizeof(spec), "%u", metrics_server_port(a));
        ASSERT_OK(metrics_listen_parse(spec, &sa, &len));
        ASSERT_ERROR(metrics_server_start(&sa, len, &b), EADDRINUSE);
        ASSERT_NULL(b);
        ASSERT_NULL(metrics_server_stop(NULL));
}

int main(void) {
        RUN(parse);
        RUN(answers);
        RUN(hostile_clients);
        RUN(address_in_use);
        return 0;
}
