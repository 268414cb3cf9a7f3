/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzzes inflate_bounded(), lmk-store's reader of gzip bodies, against its
 * contract: the output is NUL-terminated and never longer than the limit, a
 * body that inflates to exactly the limit passes and one byte more is
 * -EFBIG, trailing or missing bytes are -EBADMSG.
 *
 * The first byte chooses the mode. Even: the next three bytes are the limit
 * and the rest is a body from outside, as a client sends it. Odd: the rest is
 * data that we gzip ourselves (level from the first byte), so every buffer
 * size the output grows through is reached with valid streams too. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "batch/inflate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_output(const char *out, size_t out_size, size_t max) {
        if (!out || out_size > max || out[out_size] != '\0')
                abort();
}

/* The same body once more, with the limit at the size it inflated to and one
 * below: the limit is exact. */
static void check_limit(const uint8_t *body, size_t n, const char *out, size_t out_size) {
        char *again = NULL;
        size_t again_size = 0;

        if (inflate_bounded(body, n, out_size, &again, &again_size) < 0 || again_size != out_size ||
            memcmp(again, out, out_size) != 0)
                abort();
        free(again);
        if (out_size > 0 && inflate_bounded(body, n, out_size - 1, &again, &again_size) != -EFBIG)
                abort();
}

static void from_outside(const uint8_t *data, size_t size) {
        size_t max, out_size = 0;
        char *out = NULL;
        int r;

        if (size < 3)
                return;
        max = (size_t) data[0] | (size_t) data[1] << 8 | (size_t) data[2] << 16;
        r = inflate_bounded(data + 3, size - 3, max, &out, &out_size);
        if (r < 0) {
                if (r != -EFBIG && r != -EBADMSG && r != -ENOMEM)
                        abort();
                return;
        }
        check_output(out, out_size, max);
        check_limit(data + 3, size - 3, out, out_size);
        free(out);
}

static void round_trip(const uint8_t *data, size_t size, int level) {
        z_stream z = {};
        uint8_t *gz;
        size_t cap, n, out_size = 0;
        char *out = NULL;

        /* windowBits 15 + 16: a gzip wrapper, as lmkd sends. */
        if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
                return;
        cap = deflateBound(&z, (uLong) size) + 1;
        gz = malloc(cap);
        if (!gz) {
                deflateEnd(&z);
                return;
        }
        z.next_in = (Bytef *) data;
        z.avail_in = (uInt) size;
        z.next_out = gz;
        z.avail_out = (uInt) (cap - 1);
        if (deflate(&z, Z_FINISH) != Z_STREAM_END)
                abort();
        n = z.total_out;
        deflateEnd(&z);

        if (inflate_bounded(gz, n, size, &out, &out_size) < 0 || out_size != size ||
            memcmp(out, data, size) != 0)
                abort();
        check_output(out, out_size, size);
        check_limit(gz, n, out, out_size);
        free(out);

        /* A cut stream and bytes after the gzip member are not a body. */
        if (inflate_bounded(gz, n - 1, size, &out, &out_size) != -EBADMSG)
                abort();
        gz[n] = 0;
        if (inflate_bounded(gz, n + 1, size, &out, &out_size) != -EBADMSG)
                abort();
        free(gz);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size < 1)
                return 0;
        if (data[0] & 1)
                round_trip(data + 1, size - 1, (data[0] >> 1) % 10);
        else
                from_outside(data + 1, size - 1);
        return 0;
}
