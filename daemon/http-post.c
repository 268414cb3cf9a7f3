/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http-post.h"
#include "util.h"

/* ---- the answer's parser ---- */

void http_parser_init(HttpParser *p) {
        p->state = HTTP_PARSE_HEAD;
        p->status = 0;
        p->head_len = p->line_start = 0;
        p->line_len = p->trailer_len = 0;
        p->interim = 0;
        p->remaining = 0;
        p->body_len = 0;
        p->body[0] = '\0';
        p->error = NULL;
}

static const char no_answer[] = "the server closed the connection without an answer";

static int fail(HttpParser *p, const char *why) {
        p->state = HTTP_PARSE_ERROR;
        p->error = why;
        return -EBADMSG;
}

static void keep(HttpParser *p, const char *data, size_t n) {
        size_t take = MIN(n, sizeof(p->body) - 1 - p->body_len);

        memcpy(p->body + p->body_len, data, take);
        p->body_len += take;
        p->body[p->body_len] = '\0';
}

static bool is_tchar(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* One header line, without its line end; name and value, the value
 * without the blanks around it. */
static int split_header(char *line, char **ret_name, char **ret_value) {
        char *colon = line, *v, *end;

        while (is_tchar(*colon))
                colon++;
        if (colon == line || *colon != ':')
                return -EBADMSG;
        *colon = '\0';
        v = colon + 1;
        v += strspn(v, " \t");
        end = v + strlen(v);
        while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
                end--;
        *end = '\0';
        for (char *c = v; *c; c++)
                if ((unsigned char) *c < ' ' && *c != '\t')
                        return -EBADMSG;
        *ret_name = line;
        *ret_value = v;
        return 0;
}

/* Transfer-Encoding's last coding: chunked or not (RFC 9112 6.3: an answer
 * whose last coding is another one ends with the connection). */
static bool last_coding_is_chunked(const char *v) {
        const char *last = strrchr(v, ',');

        last = last ? last + 1 : v;
        last += strspn(last, " \t");
        return strcasecmp(last, "chunked") == 0;
}

/* The head is complete in p->head (the blank line included): the status
 * line, then the headers that say where the body ends. */
static int parse_head(HttpParser *p) {
        char *line, *next, *name, *value;
        bool chunked = false, has_length = false;
        uint64_t length = 0;

        p->head[p->head_len] = '\0';
        line = p->head;
        next = strchr(line, '\n');
        *next++ = '\0';
        if (next - line >= 2 && next[-2] == '\r')
                next[-2] = '\0';
        /* "HTTP/1.x 200 OK": the reason may be empty, the space before it too */
        if (strncmp(line, "HTTP/1.", 7) != 0 || !(line[7] >= '0' && line[7] <= '9') || line[8] != ' ' ||
            !(line[9] >= '1' && line[9] <= '5') || !(line[10] >= '0' && line[10] <= '9') ||
            !(line[11] >= '0' && line[11] <= '9') || (line[12] != ' ' && line[12] != '\0'))
                return fail(p, "the status line is not \"HTTP/1.x NNN reason\"");
        p->status = (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');

        for (line = next; *line; line = next) {
                next = strchr(line, '\n');
                *next++ = '\0';
                if (next - line >= 2 && next[-2] == '\r')
                        next[-2] = '\0';
                if (!*line)
                        break;
                if (split_header(line, &name, &value) < 0)
                        return fail(p, "a header line is not \"Name: value\"");
                if (strcasecmp(name, "Content-Length") == 0) {
                        uint64_t n;

                        if (!*value || strspn(value, "0123456789") != strlen(value) || strlen(value) > 18 ||
                            safe_atou64(value, 10, &n) < 0)
                                return fail(p, "Content-Length is not a number");
                        if (has_length && n != length)
                                return fail(p, "two different Content-Length headers");
                        has_length = true;
                        length = n;
                } else if (strcasecmp(name, "Transfer-Encoding") == 0)
                        chunked = last_coding_is_chunked(value);
        }

        /* an interim answer (100 Continue) before the real one */
        if (p->status < 200) {
                if (p->status == 101)
                        return fail(p, "the server switched protocols, which lmkd did not ask for");
                p->head_len = p->line_start = 0;
                p->status = 0;
                p->interim++;
                return 0;
        }
        if (p->status == 204 || p->status == 304)
                p->state = HTTP_PARSE_DONE;
        else if (chunked)
                p->state = HTTP_PARSE_CHUNK_SIZE;
        else if (has_length) {
                p->remaining = length;
                p->state = length > 0 ? HTTP_PARSE_LENGTH : HTTP_PARSE_DONE;
        } else
                p->state = HTTP_PARSE_CLOSE;
        return p->state == HTTP_PARSE_DONE;
}

static int head_byte(HttpParser *p, char c) {
        static const char magic[] = "HTTP/";
        size_t line_len;

        if (p->head_len >= sizeof(p->head) - 1)
                return fail(p, "the header block is longer than 32 KiB");
        /* garbage is refused at once, not after 32 KiB of it */
        if (p->head_len < sizeof(magic) - 1 && c != magic[p->head_len])
                return fail(p, "it does not begin with \"HTTP/\"");
        if (c == '\0')
                return fail(p, "a NUL byte in the header block");
        p->head[p->head_len++] = c;
        if (c != '\n') {
                if (p->head_len - p->line_start > HTTP_LINE_MAX)
                        return fail(p, "a header line is longer than 8 KiB");
                return 0;
        }
        line_len = p->head_len - p->line_start;
        p->line_start = p->head_len;
        /* a blank line ("\r\n" or "\n") ends the head, unless it is the first line */
        if ((line_len == 1 || (line_len == 2 && p->head[p->head_len - 2] == '\r')) && p->head_len > line_len)
                return parse_head(p);
        if (p->head_len > line_len && (p->head[p->line_start - line_len] == ' ' || p->head[p->line_start - line_len] == '\t'))
                return fail(p, "a folded header line (obsolete, refused)");
        return 0;
}

/* A line of the chunked body (a size, the end of a chunk, a trailer), up to
 * its '\n'; returns 1 with the line, without its line end, in p->line. */
static int line_byte(HttpParser *p, char c) {
        if (c == '\n') {
                if (p->line_len > 0 && p->line[p->line_len - 1] == '\r')
                        p->line_len--;
                p->line[p->line_len] = '\0';
                return 1;
        }
        if (c == '\0')
                return fail(p, "a NUL byte in the chunked body's framing");
        if (p->line_len >= sizeof(p->line) - 1)
                return fail(p, "a line of the chunked body is longer than 8 KiB");
        p->line[p->line_len++] = c;
        return 0;
}

static int chunk_size(HttpParser *p) {
        uint64_t n = 0;
        const char *c = p->line;
        size_t digits = 0;

        for (; *c; c++, digits++) {
                int d = *c >= '0' && *c <= '9' ? *c - '0' :
                        *c >= 'a' && *c <= 'f' ? *c - 'a' + 10 :
                        *c >= 'A' && *c <= 'F' ? *c - 'A' + 10 : -1;
                if (d < 0)
                        break;
                if (n >> 56)
                        return fail(p, "a chunk size is too large");
                n = n * 16 + (uint64_t) d;
        }
        c += strspn(c, " \t");
        if (digits == 0 || (*c && *c != ';'))
                return fail(p, "a chunk size is not a hexadecimal number");
        p->line_len = 0;
        p->remaining = n;
        p->state = n > 0 ? HTTP_PARSE_CHUNK_DATA : HTTP_PARSE_TRAILER;
        return 0;
}

int http_parser_feed(HttpParser *p, const void *data, size_t size) {
        const char *d = data, *end = d + size;
        int r;

        while (d < end) {
                switch (p->state) {
                case HTTP_PARSE_HEAD:
                        r = head_byte(p, *d++);
                        if (r != 0)
                                return r;
                        break;
                case HTTP_PARSE_LENGTH:
                case HTTP_PARSE_CHUNK_DATA: {
                        size_t n = (size_t) MIN((uint64_t) (end - d), p->remaining);

                        keep(p, d, n);
                        d += n;
                        p->remaining -= n;
                        if (p->remaining == 0)
                                p->state = p->state == HTTP_PARSE_LENGTH ? HTTP_PARSE_DONE : HTTP_PARSE_CHUNK_END;
                        break;
                }
                case HTTP_PARSE_CLOSE:
                        keep(p, d, (size_t) (end - d));
                        d = end;
                        break;
                case HTTP_PARSE_CHUNK_SIZE:
                        r = line_byte(p, *d++);
                        if (r < 0)
                                return r;
                        if (r > 0 && chunk_size(p) < 0)
                                return -EBADMSG;
                        break;
                case HTTP_PARSE_CHUNK_END:
                        r = line_byte(p, *d++);
                        if (r < 0)
                                return r;
                        if (r > 0) {
                                if (p->line_len > 0)
                                        return fail(p, "a chunk is longer than its size");
                                p->state = HTTP_PARSE_CHUNK_SIZE;
                        }
                        break;
                case HTTP_PARSE_TRAILER:
                        if (++p->trailer_len > HTTP_HEAD_MAX)
                                return fail(p, "the trailer is longer than 32 KiB");
                        r = line_byte(p, *d++);
                        if (r < 0)
                                return r;
                        if (r > 0) {
                                if (p->line_len == 0)
                                        p->state = HTTP_PARSE_DONE;
                                p->line_len = 0;
                        }
                        break;
                case HTTP_PARSE_DONE:
                        return 1;
                case HTTP_PARSE_ERROR:
                        return -EBADMSG;
                }
        }
        return p->state == HTTP_PARSE_DONE ? 1 : p->state == HTTP_PARSE_ERROR ? -EBADMSG : 0;
}

int http_parser_eof(HttpParser *p) {
        switch (p->state) {
        case HTTP_PARSE_DONE:
                return 1;
        case HTTP_PARSE_CLOSE:
                p->state = HTTP_PARSE_DONE;
                return 1;
        case HTTP_PARSE_ERROR:
                return -EBADMSG;
        case HTTP_PARSE_HEAD:
                return fail(p, p->head_len == 0 ? no_answer : "the connection ended inside the header block");
        default:
                return fail(p, "the connection ended before the end of the body");
        }
}

/* ---- the request ---- */

typedef struct Url {
        bool https;
        char host[256];                 /* without the brackets of an IPv6 literal */
        char port[6];
        char *authority;                /* as written: the Host header */
        char *path;                     /* with its query */
} Url;

static void url_done(Url *u) {
        free(u->authority);
        free(u->path);
}

static int parse_url(const char *url, Url *u, char *answer) {
        const char *p, *end, *host, *host_end, *port = NULL, *path_end;
        size_t port_len = 0;
        unsigned port_n = 0;

        *u = (Url) {};
        if (strncasecmp(url, "http://", 7) == 0)
                p = url + 7;
        else if (strncasecmp(url, "https://", 8) == 0) {
                u->https = true;
                p = url + 8;
        } else {
                snprintf(answer, HTTP_ANSWER_SIZE, "Unsupported protocol in %s: lmkd speaks http:// and https://", url);
                return -EPROTONOSUPPORT;
        }
        end = p + strcspn(p, "/?#");
        if (memchr(p, '@', (size_t) (end - p))) {
                snprintf(answer, HTTP_ANSWER_SIZE, "URL %s: a user name in the URL is not supported", url);
                return -EINVAL;
        }
        if (*p == '[') {
                host = p + 1;
                host_end = memchr(p, ']', (size_t) (end - p));
                if (!host_end || (host_end + 1 < end && host_end[1] != ':')) {
                        snprintf(answer, HTTP_ANSWER_SIZE, "URL %s: malformed IPv6 address", url);
                        return -EINVAL;
                }
                if (host_end + 1 < end)
                        port = host_end + 2;
        } else {
                host = p;
                host_end = memchr(p, ':', (size_t) (end - p)) ?: end;
                if (host_end < end)
                        port = host_end + 1;
        }
        if (host_end == host || (size_t) (host_end - host) >= sizeof(u->host)) {
                snprintf(answer, HTTP_ANSWER_SIZE, "URL %s: no host name, or a host name longer than 255 bytes", url);
                return -EINVAL;
        }
        memcpy(u->host, host, (size_t) (host_end - host));
        if (port) {
                port_len = (size_t) (end - port);
                for (size_t i = 0; i < port_len; i++)
                        port_n = port[i] >= '0' && port[i] <= '9' && port_n < 65536 ? port_n * 10 + (unsigned) (port[i] - '0')
                                                                                    : 65536;
                if (port_len == 0 || port_n == 0 || port_n > 65535) {
                        snprintf(answer, HTTP_ANSWER_SIZE, "URL %s: the port is not a number from 1 to 65535", url);
                        return -EINVAL;
                }
        }
        snprintf(u->port, sizeof(u->port), "%u", port ? port_n : u->https ? 443 : 80);
        path_end = end + strcspn(end, "#");
        for (const char *c = end; c < path_end; c++)
                if ((unsigned char) *c <= ' ' || *c == 0x7f) {
                        snprintf(answer, HTTP_ANSWER_SIZE, "URL %s: blanks or control characters in the path", url);
                        return -EINVAL;
                }
        u->authority = strndup(p, (size_t) (end - p));
        if (!u->authority ||
            asprintf(&u->path, "%s%.*s", *end == '/' ? "" : "/", (int) (path_end - end), end) < 0) {
                u->path = NULL;
                snprintf(answer, HTTP_ANSWER_SIZE, "Out of memory");
                return -ENOMEM;
        }
        return 0;
}

/* ---- the connection ---- */

typedef struct Conn {
        int fd;
        gnutls_certificate_credentials_t cred;
        gnutls_session_t tls;           /* NULL: plain HTTP */
        uint64_t deadline;              /* CLOCK_MONOTONIC, ns */
        unsigned timeout_ms;
        char where[300];                /* "host port N", for messages */
} Conn;

static void conn_done(Conn *c) {
        if (c->tls)
                gnutls_deinit(c->tls);
        if (c->cred)
                gnutls_certificate_free_credentials(c->cred);
        if (c->fd >= 0)
                close(c->fd);
}

/* Returns the events that came, 0 when the deadline passed first. */
static int wait_fd(int fd, short events, uint64_t deadline) {
        for (;;) {
                struct pollfd pfd = { .fd = fd, .events = events };
                uint64_t now = now_ns(CLOCK_MONOTONIC);
                int r;

                if (now >= deadline)
                        return 0;
                r = poll(&pfd, 1, (int) MIN((deadline - now + 999999) / 1000000, (uint64_t) INT32_MAX));
                if (r < 0 && errno != EINTR)
                        return -errno;
                if (r > 0)
                        return pfd.revents;
        }
}

static void address_text(const struct sockaddr *sa, socklen_t len, char *buf, size_t size) {
        if (getnameinfo(sa, len, buf, (socklen_t) size, NULL, 0, NI_NUMERICHOST) != 0)
                snprintf(buf, size, "?");
}

/* Each of the host's addresses in turn, all within the connect time-out. */
static int conn_connect(Conn *c, const Url *u, unsigned connect_timeout_ms, char *answer) {
        struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
        struct addrinfo *ai = NULL;
        uint64_t deadline = MIN(c->deadline, now_ns(CLOCK_MONOTONIC) + (uint64_t) connect_timeout_ms * 1000000);
        char addr[INET6_ADDRSTRLEN] = "";
        int r, err = -EHOSTUNREACH;

        /* getaddrinfo() has no deadline of its own: the resolver's time-outs
         * (resolv.conf) bound it */
        r = getaddrinfo(u->host, u->port, &hints, &ai);
        if (r != 0) {
                snprintf(answer, HTTP_ANSWER_SIZE, "Could not resolve host: %s (%s)", u->host,
                         r == EAI_SYSTEM ? strerror(errno) : gai_strerror(r));
                return -EADDRNOTAVAIL;
        }
        for (struct addrinfo *a = ai; a; a = a->ai_next) {
                int fd, ev;
                socklen_t len = sizeof(r);

                address_text(a->ai_addr, a->ai_addrlen, addr, sizeof(addr));
                fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
                if (fd < 0) {
                        err = -errno;
                        continue;
                }
                if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
                        c->fd = fd;
                        break;
                }
                if (errno != EINPROGRESS) {
                        err = -errno;
                        close(fd);
                        continue;
                }
                ev = wait_fd(fd, POLLOUT, deadline);
                if (ev == 0) {
                        close(fd);
                        err = -ETIMEDOUT;
                        break;
                }
                if (ev < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &r, &len) < 0)
                        err = -errno;
                else if (r != 0)
                        err = -r;
                else {
                        c->fd = fd;
                        break;
                }
                close(fd);
        }
        freeaddrinfo(ai);
        if (c->fd >= 0)
                return 0;
        if (err == -ETIMEDOUT)
                snprintf(answer, HTTP_ANSWER_SIZE, "Timeout was reached: no connection to %s within %u ms", c->where,
                         connect_timeout_ms);
        else if (streq(addr, u->host) || !addr[0])
                snprintf(answer, HTTP_ANSWER_SIZE, "Couldn't connect to server %s: %s", c->where, strerror(-err));
        else /* the address tried last, of a name */
                snprintf(answer, HTTP_ANSWER_SIZE, "Couldn't connect to server %s (%s): %s", c->where, addr, strerror(-err));
        return err;
}

static int load_ca_file(gnutls_certificate_credentials_t cred, const char *path, char *why, size_t size) {
        int r;

        if (access(path, R_OK) < 0) {
                r = -errno;
                snprintf(why, size, "CA file %s: %s", path, strerror(-r));
                return r;
        }
        r = gnutls_certificate_set_x509_trust_file(cred, path, GNUTLS_X509_FMT_PEM);
        if (r < 0) {
                snprintf(why, size, "CA file %s: %s", path, gnutls_strerror(r));
                return -EINVAL;
        }
        if (r == 0) {
                snprintf(why, size, "CA file %s holds no PEM certificate", path);
                return -EINVAL;
        }
        return 0;
}

int http_check_ca_file(const char *path, char **ret_error) {
        gnutls_certificate_credentials_t cred;
        char why[HTTP_ANSWER_SIZE];
        int r;

        if (gnutls_certificate_allocate_credentials(&cred) < 0)
                return -ENOMEM;
        r = load_ca_file(cred, path, why, sizeof(why));
        gnutls_certificate_free_credentials(cred);
        if (r < 0 && ret_error)
                *ret_error = strdup(why);
        return r;
}

static bool is_ip_literal(const char *host) {
        unsigned char buf[sizeof(struct in6_addr)];

        return inet_pton(AF_INET, host, buf) == 1 || inet_pton(AF_INET6, host, buf) == 1;
}

static int tls_handshake(Conn *c, const Url *u, const char *ca_file, char *answer) {
        int r;

        if (gnutls_certificate_allocate_credentials(&c->cred) < 0)
                goto oom;
        r = gnutls_certificate_set_x509_system_trust(c->cred);
        if (r < 0 && !ca_file) {
                snprintf(answer, HTTP_ANSWER_SIZE, "Cannot load the system's trusted certificates: %s", gnutls_strerror(r));
                return -EIO;
        }
        if (ca_file) {
                r = load_ca_file(c->cred, ca_file, answer, HTTP_ANSWER_SIZE);
                if (r < 0)
                        return r;
        }
        if (gnutls_init(&c->tls, GNUTLS_CLIENT | GNUTLS_NONBLOCK | GNUTLS_NO_SIGNAL) < 0)
                goto oom;
        if (gnutls_set_default_priority(c->tls) < 0 ||
            gnutls_credentials_set(c->tls, GNUTLS_CRD_CERTIFICATE, c->cred) < 0)
                goto oom;
        /* SNI names a host, never an address (RFC 6066 3) */
        if (!is_ip_literal(u->host) && gnutls_server_name_set(c->tls, GNUTLS_NAME_DNS, u->host, strlen(u->host)) < 0)
                goto oom;
        gnutls_session_set_verify_cert(c->tls, u->host, 0);
        gnutls_transport_set_int(c->tls, c->fd);

        for (;;) {
                int ev;

                r = gnutls_handshake(c->tls);
                if (r == 0)
                        return 0;
                if (r == GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR) {
                        unsigned status = gnutls_session_get_verify_cert_status(c->tls);
                        gnutls_datum_t why = {};

                        char *text;

                        if (gnutls_certificate_verification_status_print(status, gnutls_certificate_type_get(c->tls), &why,
                                                                         0) < 0)
                                why.data = NULL;
                        text = why.data ? (char *) why.data : (char *) gnutls_strerror(r);
                        /* GnuTLS ends its sentences with blanks */
                        for (size_t n = strlen(text); why.data && n > 0 && text[n - 1] == ' '; n--)
                                text[n - 1] = '\0';
                        snprintf(answer, HTTP_ANSWER_SIZE, "SSL certificate problem: the certificate of %s did not verify: %s",
                                 c->where, text);
                        gnutls_free(why.data);
                        return -EKEYREJECTED;
                }
                if (r != GNUTLS_E_AGAIN && r != GNUTLS_E_INTERRUPTED && gnutls_error_is_fatal(r)) {
                        snprintf(answer, HTTP_ANSWER_SIZE, "SSL connect error with %s: %s", c->where, gnutls_strerror(r));
                        return -EPROTO;
                }
                ev = wait_fd(c->fd, gnutls_record_get_direction(c->tls) ? POLLOUT : POLLIN, c->deadline);
                if (ev < 0) {
                        snprintf(answer, HTTP_ANSWER_SIZE, "SSL connect error with %s: %s", c->where, strerror(-ev));
                        return ev;
                }
                if (ev == 0) {
                        snprintf(answer, HTTP_ANSWER_SIZE, "Timeout was reached: no TLS handshake with %s within %u ms",
                                 c->where, c->timeout_ms);
                        return -ETIMEDOUT;
                }
        }
oom:
        snprintf(answer, HTTP_ANSWER_SIZE, "Out of memory");
        return -ENOMEM;
}

/* Bytes sent, -EAGAIN when the socket is full, or -errno. */
static ssize_t conn_send(Conn *c, const void *data, size_t size, int flags) {
        ssize_t n;

        if (c->tls) {
                n = gnutls_record_send(c->tls, data, size);
                if (n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED)
                        return -EAGAIN;
                return n < 0 ? -EPIPE : n;
        }
        n = send(c->fd, data, size, MSG_NOSIGNAL | flags);
        if (n < 0)
                return errno == EAGAIN || errno == EINTR ? -EAGAIN : -errno;
        return n;
}

/* Bytes read, 0 at the end of the answer, -EAGAIN when none are there yet,
 * or -errno. */
static ssize_t conn_recv(Conn *c, void *buf, size_t size) {
        ssize_t n;

        if (c->tls) {
                n = gnutls_record_recv(c->tls, buf, size);
                /* servers that close without TLS's close_notify are common;
                 * the HTTP framing says whether the answer is complete */
                if (n == GNUTLS_E_PREMATURE_TERMINATION)
                        return 0;
                if (n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED || (n < 0 && !gnutls_error_is_fatal((int) n)))
                        return -EAGAIN;
                return n < 0 ? -EPROTO : n;
        }
        n = recv(c->fd, buf, size, 0);
        if (n < 0)
                return errno == EAGAIN || errno == EINTR ? -EAGAIN : -errno;
        return n;
}

/* Reads what is there into the parser: 1 the answer is complete, 0 more
 * came or may come, -EAGAIN nothing there, -EPIPE the connection ended
 * before the answer did, -EBADMSG garbage, or -errno. */
static int read_some(Conn *c, HttpParser *p) {
        char buf[16384];
        ssize_t n;

        n = conn_recv(c, buf, sizeof(buf));
        if (n == -EAGAIN)
                return -EAGAIN;
        if (n < 0)
                return (int) n;
        if (n == 0)
                return http_parser_eof(p) > 0 ? 1 : p->error == no_answer ? -EPIPE : -EBADMSG;
        return http_parser_feed(p, buf, (size_t) n);
}

static bool tls_pending(Conn *c) {
        return c->tls && gnutls_record_check_pending(c->tls) > 0;
}

/* Sends all of data, unless the server answers first (a 413 before the
 * whole body is there): then *answered. */
static int send_all(Conn *c, const void *data, size_t size, int flags, HttpParser *p, bool *answered) {
        const char *d = data;

        while (size > 0 && !*answered) {
                ssize_t n = conn_send(c, d, size, flags);
                int ev, r;

                if (n >= 0) {
                        d += n;
                        size -= (size_t) n;
                        continue;
                }
                if (n != -EAGAIN)
                        return (int) n;
                ev = tls_pending(c) ? POLLIN : wait_fd(c->fd, POLLOUT | POLLIN, c->deadline);
                if (ev <= 0)
                        return ev == 0 ? -ETIMEDOUT : ev;
                if (!(ev & (POLLIN | POLLHUP | POLLERR)))
                        continue;
                /* a TLS 1.3 session ticket is no answer: reading it gives
                 * -EAGAIN; nor is a late 100 Continue */
                r = read_some(c, p);
                if (r == -EAGAIN || (r == 0 && p->state == HTTP_PARSE_HEAD))
                        continue;
                *answered = true;
                if (r < 0 && r != -EBADMSG)
                        return r;
        }
        return 0;
}

/* After "Expect: 100-continue": returns once the server said 100 (send the
 * body), answered for good (*answered), or did not say within
 * HTTP_EXPECT_WAIT_MS (send the body). */
static int await_continue(Conn *c, HttpParser *p, bool *answered) {
        uint64_t until = MIN(c->deadline, now_ns(CLOCK_MONOTONIC) + (uint64_t) HTTP_EXPECT_WAIT_MS * 1000000);

        for (;;) {
                int ev, r;

                ev = tls_pending(c) ? POLLIN : wait_fd(c->fd, POLLIN, until);
                if (ev <= 0)
                        return ev == 0 && until < c->deadline ? 0 : ev == 0 ? -ETIMEDOUT : ev;
                r = read_some(c, p);
                if (r == -EAGAIN)
                        continue;
                if (r != 0 || p->state != HTTP_PARSE_HEAD) {
                        *answered = true;
                        return r < 0 && r != -EBADMSG && r != -EPIPE ? r : 0;
                }
                if (p->interim > 0 && p->head_len == 0)
                        return 0;
        }
}

static int request_head(const HttpPost *req, const Url *u, char **ret) {
        char *head = NULL;
        size_t size = 0;
        FILE *f;

        f = open_memstream(&head, &size);
        if (!f)
                return -ENOMEM;
        fprintf(f, "POST %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: lmkd/" PACKAGE_VERSION "\r\nAccept: */*\r\n"
                   "Connection: close\r\nContent-Length: %zu\r\n%s", u->path, u->authority, req->size,
                req->size > HTTP_EXPECT_MIN ? "Expect: 100-continue\r\n" : "");
        for (const char *const *h = req->headers; h && *h; h++) {
                if (strpbrk(*h, "\r\n") || !strchr(*h, ':')) {
                        fclose(f);
                        free(head);
                        return -EINVAL;
                }
                fprintf(f, "%s\r\n", *h);
        }
        fputs("\r\n", f);
        if (fclose(f) != 0) {
                free(head);
                return -ENOMEM;
        }
        *ret = head;
        return 0;
}

int http_post(const HttpPost *req, char answer[static HTTP_ANSWER_SIZE]) {
        unsigned connect_ms = req->connect_timeout_ms ?: HTTP_CONNECT_TIMEOUT_MS;
        Conn c = { .fd = -1, .timeout_ms = req->timeout_ms ?: HTTP_TIMEOUT_MS };
        _cleanup_(url_done) Url u = {};
        _cleanup_free_ HttpParser *p = NULL;
        _cleanup_free_ char *head = NULL;
        bool answered = false;
        int r, sent;

        answer[0] = '\0';
        c.deadline = now_ns(CLOCK_MONOTONIC) + (uint64_t) c.timeout_ms * 1000000;
        r = parse_url(req->url, &u, answer);
        if (r < 0)
                return r;
        snprintf(c.where, sizeof(c.where), "%s port %s", u.host, u.port);
        p = malloc(sizeof(*p));
        r = p ? request_head(req, &u, &head) : -ENOMEM;
        if (r < 0) {
                snprintf(answer, HTTP_ANSWER_SIZE, r == -EINVAL ? "A request header is not \"Name: value\" on one line"
                                                                : "Out of memory");
                return r;
        }
        http_parser_init(p);

        r = conn_connect(&c, &u, connect_ms, answer);
        if (r >= 0 && u.https)
                r = tls_handshake(&c, &u, req->ca_file, answer);
        if (r < 0)
                goto finish;

        sent = send_all(&c, head, strlen(head), c.tls ? 0 : MSG_MORE, p, &answered);
        if (sent >= 0 && !answered && req->size > HTTP_EXPECT_MIN)
                sent = await_continue(&c, p, &answered);
        if (sent >= 0)
                sent = send_all(&c, req->body, req->size, 0, p, &answered);
        /* a server may answer and close before it has read the whole body:
         * its answer, if it came, says more than the broken pipe */
        if (sent == -ETIMEDOUT) {
                r = sent;
                snprintf(answer, HTTP_ANSWER_SIZE, "Timeout was reached: %s did not take the request within %u ms",
                         c.where, c.timeout_ms);
                goto finish;
        }
        for (r = p->state == HTTP_PARSE_DONE ? 1 : p->state == HTTP_PARSE_ERROR ? -EBADMSG : 0; r == 0 || r == -EAGAIN;) {
                int ev;

                r = read_some(&c, p);
                if (r != -EAGAIN || tls_pending(&c))
                        continue;
                ev = wait_fd(c.fd, POLLIN, c.deadline);
                if (ev < 0)
                        r = ev;
                else if (ev == 0) {
                        snprintf(answer, HTTP_ANSWER_SIZE, "Timeout was reached: %s %s within %u ms", c.where,
                                 p->head_len == 0 && p->status == 0 ? "did not answer" : "did not complete its answer",
                                 c.timeout_ms);
                        r = -ETIMEDOUT;
                        goto finish;
                }
        }
        if (r == -EBADMSG && p->error == no_answer)
                r = -EPIPE;
        if (r == -EBADMSG)
                snprintf(answer, HTTP_ANSWER_SIZE, "Weird server reply from %s: %s", c.where, p->error);
        else if (r == -EPIPE && sent < 0)
                snprintf(answer, HTTP_ANSWER_SIZE, "Failure when sending data to %s: %s", c.where, strerror(-sent));
        else if (r == -EPIPE)
                snprintf(answer, HTTP_ANSWER_SIZE, "Empty reply from server %s", c.where);
        else if (r < 0)
                snprintf(answer, HTTP_ANSWER_SIZE, "Failure when receiving data from %s: %s", c.where, strerror(-r));
        else {
                memcpy(answer, p->body, p->body_len + 1);
                r = p->status;
        }
finish:
        conn_done(&c);
        return r;
}
