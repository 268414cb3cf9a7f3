/* SPDX-License-Identifier: GPL-2.0-or-later */
/* zlib compressing and inflating in a loop, for the function tests
 * (tests/functions): its time goes to zlib's own functions.
 *
 *   lmk-func-zlib SECONDS */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <zlib.h>

#define SIZE (1u << 20)

static double now(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
        static const char *const words[] = { "sample ", "interval ", "function ", "object ", "phase ",
                                             "job ", "node ", "kernel ", "library ", "build " };
        unsigned seed = 4711;
        uLongf zlen, ulen;
        unsigned char *in, *z, *out;
        double end;
        size_t n = 0;
        int r = 0;

        if (argc != 2 || atof(argv[1]) <= 0) {
                fprintf(stderr, "usage: lmk-func-zlib SECONDS\n");
                return 2;
        }
        in = malloc(SIZE);
        out = malloc(SIZE);
        z = malloc(compressBound(SIZE));
        if (!in || !out || !z)
                r = 1;
        /* text-like: words and numbers, compressible about 4:1 */
        while (r == 0 && n < SIZE) {
                int k = snprintf((char *) in + n, SIZE - n, "%s%u ", words[rand_r(&seed) % 10],
                                 (unsigned) rand_r(&seed) % 1000);

                if (k <= 0)
                        break;
                n += (size_t) k;
        }
        end = now() + atof(argv[1]);
        /* the buffers are freed: the sanitizer build checks for leaks */
        while (r == 0) {
                zlen = compressBound(SIZE);
                ulen = SIZE;
                if (compress2(z, &zlen, in, SIZE, 6) != Z_OK || uncompress(out, &ulen, z, zlen) != Z_OK ||
                    ulen != SIZE)
                        r = 1;
                else if (now() >= end)
                        break;
        }
        free(in);
        free(out);
        free(z);
        return r;
}
