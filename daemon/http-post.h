/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* lmkd's HTTP/1.1 client, for its one request: a batch POSTed to lmk-store.
 * A general client (libcurl) cost lmkd megabytes of resident libraries for
 * protocols it never speaks. http:// and https:// (GnuTLS, the system's
 * trust store plus an optional CA file, the host name verified); no
 * redirects, no proxy, no keep-alive: one connection per request. */

#define HTTP_ANSWER_SIZE 512            /* the start of the answer's body kept, NUL included */
#define HTTP_HEAD_MAX (32 * 1024)       /* status line and headers together */
#define HTTP_LINE_MAX (8 * 1024)        /* one header, chunk-size or trailer line */
#define HTTP_CONNECT_TIMEOUT_MS 10000
#define HTTP_TIMEOUT_MS 60000
/* A body above this asks first (Expect: 100-continue, as curl did): a store
 * that refuses it (401, 413...) says so before it is sent. The wait for
 * the go-ahead is short: a server that ignores Expect gets the body. */
#define HTTP_EXPECT_MIN (1024 * 1024)
#define HTTP_EXPECT_WAIT_MS 1000

typedef struct HttpPost {
        const char *url;
        const char *const *headers;     /* "Name: value", NULL-terminated; may be NULL */
        const void *body;
        size_t size;
        const char *ca_file;            /* PEM certificates trusted besides the system's; NULL: none */
        unsigned connect_timeout_ms;    /* 0: HTTP_CONNECT_TIMEOUT_MS */
        unsigned timeout_ms;            /* the whole exchange, a deadline; 0: HTTP_TIMEOUT_MS */
} HttpPost;

/* Returns the answer's HTTP status (100-599) with the start of its body in
 * answer[], or a negative errno when no complete answer came, with why in
 * answer[] (which server, what failed). */
int http_post(const HttpPost *req, char answer[static HTTP_ANSWER_SIZE]);

/* Loads a CA file as http_post() would: for a configuration error at
 * start-up rather than at the first push. */
int http_check_ca_file(const char *path, char **ret_error);

/* The parser of an answer, fed bytes as they come; apart for its fuzz
 * target. */
typedef enum HttpParseState {
        HTTP_PARSE_HEAD,
        HTTP_PARSE_LENGTH,              /* a body of Content-Length bytes */
        HTTP_PARSE_CLOSE,               /* a body up to the end of the connection */
        HTTP_PARSE_CHUNK_SIZE,
        HTTP_PARSE_CHUNK_DATA,
        HTTP_PARSE_CHUNK_END,           /* the CRLF after a chunk's data */
        HTTP_PARSE_TRAILER,
        HTTP_PARSE_DONE,
        HTTP_PARSE_ERROR,
} HttpParseState;

typedef struct HttpParser {
        HttpParseState state;
        int status;
        char head[HTTP_HEAD_MAX];
        size_t head_len, line_start;
        char line[HTTP_LINE_MAX];       /* chunk-size and trailer lines */
        size_t line_len, trailer_len;
        unsigned interim;               /* interim answers (100 Continue) passed over */
        uint64_t remaining;             /* of the body or of the chunk */
        char body[HTTP_ANSWER_SIZE];
        size_t body_len;
        const char *error;              /* why, in HTTP_PARSE_ERROR */
} HttpParser;

void http_parser_init(HttpParser *p);
/* Returns 1 once the answer is complete (bytes after it are ignored), 0
 * when it needs more, -EBADMSG when it is not a valid answer (p->error). */
int http_parser_feed(HttpParser *p, const void *data, size_t size);
/* The connection ended: 1 when that completes the answer, else -EBADMSG. */
int http_parser_eof(HttpParser *p);
