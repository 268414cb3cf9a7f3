/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

/* The varints of the store's packed values (sample-pack.h,
 * function-pack.h): an int64 taken as uint64 in 7-bit groups, the lowest
 * first, each but the last with the high bit set (LEB128); at most 10
 * bytes. */
#define VARINT_MAX_BYTES 10

/* Appends v at p[*len], which has room for VARINT_MAX_BYTES. */
static inline void varint_put(uint8_t *p, size_t *len, int64_t v) {
        uint64_t u = (uint64_t) v;

        while (u >= 0x80) {
                p[(*len)++] = (uint8_t) (u | 0x80);
                u >>= 7;
        }
        p[(*len)++] = (uint8_t) u;
}

/* Reads the varint at data[*offset] and moves *offset past it;
 * -EBADMSG when cut short or past 64 bits. */
static inline int varint_get(const uint8_t *data, size_t len, size_t *offset, int64_t *ret) {
        uint64_t u = 0;

        for (unsigned shift = 0; shift < 64; shift += 7) {
                uint8_t b;

                if (*offset >= len)
                        return -EBADMSG;
                b = data[(*offset)++];
                if (shift == 63 && (b & 0x7e))
                        return -EBADMSG; /* past 64 bits */
                u |= (uint64_t) (b & 0x7f) << shift;
                if (!(b & 0x80)) {
                        *ret = (int64_t) u;
                        return 0;
                }
        }
        return -EBADMSG;
}
