/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <limits.h>
#include <zlib.h>

#include "batch/inflate.h"
#include "macro.h"

int inflate_bounded(const void *data, size_t size, size_t max, char **ret, size_t *ret_size) {
        _cleanup_free_ char *buf = NULL;
        size_t alloc = 0, used = 0;
        z_stream z = {};
        int r, zr;

        if (size > UINT_MAX || max > SIZE_MAX - 2)
                return -EFBIG;
        /* 15 + 32: zlib or gzip header, detected automatically. */
        if (inflateInit2(&z, 15 + 32) != Z_OK)
                return -ENOMEM;
        z.next_in = (Bytef *) data;
        z.avail_in = (uInt) size;

        for (;;) {
                size_t avail;

                /* The buffer grows to max + 2 at most: one byte beyond the
                 * limit tells "too large" from "exactly max", one for the NUL. */
                if (used + 1 >= alloc) {
                        size_t na = alloc ? alloc * 2 : MAX(size * 8, (size_t) 64 * 1024);
                        char *nb;

                        na = MIN(na, max + 2);
                        if (na <= alloc) {
                                r = -EFBIG;
                                goto finish;
                        }
                        nb = realloc(buf, na);
                        if (!nb) {
                                r = -ENOMEM;
                                goto finish;
                        }
                        buf = nb;
                        alloc = na;
                }
                avail = MIN(alloc - used - 1, (size_t) UINT_MAX);
                z.next_out = (Bytef *) buf + used;
                z.avail_out = (uInt) avail;
                zr = inflate(&z, Z_NO_FLUSH);
                used += avail - z.avail_out;
                if (used > max) {
                        r = -EFBIG;
                        goto finish;
                }
                if (zr == Z_STREAM_END) {
                        /* Bytes after the gzip member are not part of the body. */
                        r = z.avail_in == 0 ? 0 : -EBADMSG;
                        goto finish;
                }
                if (zr == Z_BUF_ERROR && z.avail_in == 0) {
                        r = -EBADMSG; /* truncated */
                        goto finish;
                }
                if (zr != Z_OK && zr != Z_BUF_ERROR) {
                        r = zr == Z_MEM_ERROR ? -ENOMEM : -EBADMSG;
                        goto finish;
                }
        }

finish:
        inflateEnd(&z);
        if (r < 0)
                return r;
        buf[used] = '\0';
        *ret = TAKE_PTR(buf);
        *ret_size = used;
        return 0;
}
