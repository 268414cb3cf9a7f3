/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <zlib.h>

#include "batch/inflate.h"
#include "tests.h"

/* gzip-compresses n bytes of c into a new buffer. */
static unsigned char *gzip_fill(char c, size_t n, size_t *ret_size) {
        size_t cap = n / 100 + 1024;
        unsigned char *out = malloc(cap), *in = malloc(n ? n : 1);
        z_stream z = {};

        ASSERT_NOT_NULL(out);
        ASSERT_NOT_NULL(in);
        memset(in, c, n);
        ASSERT_EQ(deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY), Z_OK);
        z.next_in = in;
        z.avail_in = (uInt) n;
        z.next_out = out;
        z.avail_out = (uInt) cap;
        ASSERT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
        *ret_size = cap - z.avail_out;
        deflateEnd(&z);
        free(in);
        return out;
}

TEST(roundtrip) {
        size_t n, out_size;
        unsigned char *gz = gzip_fill('a', 1000, &n);
        char *out;

        ASSERT_OK(inflate_bounded(gz, n, 1000, &out, &out_size));
        ASSERT_EQ(out_size, 1000);
        ASSERT_EQ(out[999], 'a');
        ASSERT_EQ(out[1000], '\0');
        free(out);
        free(gz);
}

TEST(limit_is_exact) {
        size_t n, out_size;
        unsigned char *gz = gzip_fill('b', 4096, &n);
        char *out = NULL;

        ASSERT_OK(inflate_bounded(gz, n, 4096, &out, &out_size));
        ASSERT_EQ(out_size, 4096);
        free(out);
        ASSERT_ERROR(inflate_bounded(gz, n, 4095, &out, &out_size), EFBIG);
        free(gz);
}

TEST(bomb) {
        /* 256 MiB of zeros, about 256 KiB compressed, against a 1 MiB limit. */
        size_t n, out_size;
        unsigned char *gz = gzip_fill('\0', (size_t) 256 << 20, &n);
        char *out = NULL;

        ASSERT_TRUE(n < (size_t) 1 << 20);
        ASSERT_ERROR(inflate_bounded(gz, n, (size_t) 1 << 20, &out, &out_size), EFBIG);
        ASSERT_NULL(out);
        free(gz);
}

TEST(garbage) {
        size_t n, out_size;
        unsigned char *gz = gzip_fill('c', 1000, &n);
        char *out = NULL;

        ASSERT_ERROR(inflate_bounded("{\"not\":\"gzip\"}", 14, 1024, &out, &out_size), EBADMSG);
        ASSERT_ERROR(inflate_bounded("", 0, 1024, &out, &out_size), EBADMSG);
        ASSERT_ERROR(inflate_bounded(gz, n / 2, 4096, &out, &out_size), EBADMSG); /* truncated */
        gz[n / 2] ^= 0xff;
        ASSERT_TRUE(inflate_bounded(gz, n, 4096, &out, &out_size) < 0); /* corrupt */
        ASSERT_NULL(out);
        free(gz);
}

int main(void) {
        RUN(roundtrip);
        RUN(limit_is_exact);
        RUN(bomb);
        RUN(garbage);
        return 0;
}
