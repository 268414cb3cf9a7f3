/* SPDX-License-Identifier: GPL-2.0-or-later */
/* http_post() (daemon/http-post.c) from the command line, for
 * test-http-post.py, whose servers it talks to:
 *
 *   http-post-client URL BODY [--ca-file FILE] [--timeout-ms N]
 *                    [--connect-timeout-ms N] [--header "Name: value"]...
 *                    [--body-size N]
 *
 * --body-size sends N bytes of 'x' instead of BODY, more than a socket's
 * buffers hold.
 *
 * Prints what http_post() returned, then the answer (or the error) on the
 * next line; exits 0 unless it was used wrongly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http-post.h"
#include "util.h"

int main(int argc, char **argv) {
        const char *headers[16] = {};
        size_t n_headers = 0;
        char answer[HTTP_ANSWER_SIZE];
        _cleanup_free_ char *big = NULL;
        HttpPost req = {};
        uint32_t ms;
        int r;

        if (argc < 3) {
                fprintf(stderr, "usage: %s URL BODY [--ca-file FILE] [--timeout-ms N] [--connect-timeout-ms N] "
                                "[--header H]... [--body-size N]\n", argv[0]);
                return 2;
        }
        req.url = argv[1];
        req.body = argv[2];
        req.size = strlen(argv[2]);
        for (int i = 3; i + 1 < argc; i += 2) {
                if (streq(argv[i], "--ca-file"))
                        req.ca_file = argv[i + 1];
                else if (streq(argv[i], "--timeout-ms") && safe_atou32(argv[i + 1], &ms) >= 0)
                        req.timeout_ms = ms;
                else if (streq(argv[i], "--connect-timeout-ms") && safe_atou32(argv[i + 1], &ms) >= 0)
                        req.connect_timeout_ms = ms;
                else if (streq(argv[i], "--header") && n_headers + 1 < ELEMENTSOF(headers))
                        headers[n_headers++] = argv[i + 1];
                else if (streq(argv[i], "--body-size") && safe_atou32(argv[i + 1], &ms) >= 0 && (big = malloc(ms))) {
                        memset(big, 'x', ms);
                        req.body = big;
                        req.size = ms;
                }
                else {
                        fprintf(stderr, "bad argument %s\n", argv[i]);
                        return 2;
                }
        }
        req.headers = headers;
        r = http_post(&req, answer);
        printf("%d\n%s\n", r, answer);
        return 0;
}
