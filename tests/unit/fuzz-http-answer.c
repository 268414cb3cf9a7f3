/* SPDX-License-Identifier: GPL-2.0-or-later */
/* An answer from a server, as lmkd's HTTP client reads it (status line,
 * headers, a body by Content-Length, chunked or up to the end): any bytes
 * are an answer or refused with a reason, within the parser's fixed
 * buffers, and the answer does not depend on how the bytes were cut into
 * reads: fed whole, in the input's own cut points, or a byte at a time, the
 * parser ends alike. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-cuts.h"
#include "http-post.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int feed_in(HttpParser *p, const uint8_t *data, size_t size, const size_t *cuts, size_t n_cuts) {
        size_t at = 0;
        int r = 0;

        http_parser_init(p);
        for (size_t i = 0; i <= n_cuts && r == 0; i++) {
                size_t to = i < n_cuts ? cuts[i] : size;

                r = http_parser_feed(p, data + at, to - at);
                at = to;
        }
        if (r == 0)
                r = http_parser_eof(p);
        if (r < 0 && (r != -EBADMSG || !p->error))
                abort();
        if (r > 0 && (p->state != HTTP_PARSE_DONE || p->status < 200 || p->status > 599 ||
                      p->body_len >= HTTP_ANSWER_SIZE || p->body[p->body_len] != '\0'))
                abort();
        return r;
}

static bool same(const HttpParser *a, int ra, const HttpParser *b, int rb) {
        if (ra != rb)
                return false;
        if (ra < 0)
                return strcmp(a->error, b->error) == 0;
        return a->status == b->status && a->body_len == b->body_len && memcmp(a->body, b->body, a->body_len) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static HttpParser whole, cut, bytes;
        size_t cuts[3], *each;
        int r1, r2, r3;

        if (size == 0 || size > 1 << 20)
                return 0;
        fuzz_cut_points(data, size, cuts);
        r1 = feed_in(&whole, data, size, NULL, 0);
        r2 = feed_in(&cut, data, size, cuts, 3);
        if (!same(&whole, r1, &cut, r2))
                abort();
        /* a byte at a time is how a trickling server feeds it */
        if (size <= 4096) {
                each = malloc(size * sizeof(*each));
                if (!each)
                        return 0;
                for (size_t i = 0; i < size; i++)
                        each[i] = i;
                r3 = feed_in(&bytes, data, size, each, size);
                free(each);
                if (!same(&whole, r1, &bytes, r3))
                        abort();
        }
        return 0;
}
