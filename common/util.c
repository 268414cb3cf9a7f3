/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

#include "util.h"

int safe_atou64(const char *s, int base, uint64_t *ret) {
        char *end;
        unsigned long long v;

        if (!s || !*s || isspace((unsigned char) *s) || *s == '-' || *s == '+')
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, base);
        if (errno == ERANGE)
                return -ERANGE;
        if (errno != 0 || *end != '\0' || end == s)
                return -EINVAL;
        *ret = v;
        return 0;
}

int safe_atou32(const char *s, uint32_t *ret) {
        uint64_t v;
        int r;

        r = safe_atou64(s, 10, &v);
        if (r < 0)
                return r;
        if (v > UINT32_MAX)
                return -ERANGE;
        *ret = (uint32_t) v;
        return 0;
}

int safe_atoi(const char *s, int *ret) {
        char *end;
        long v;

        if (!s || !*s || isspace((unsigned char) *s))
                return -EINVAL;
        errno = 0;
        v = strtol(s, &end, 10);
        if (errno == ERANGE || v > INT_MAX || v < INT_MIN)
                return -ERANGE;
        if (errno != 0 || *end != '\0')
                return -EINVAL;
        *ret = (int) v;
        return 0;
}

int safe_atod(const char *s, double *ret) {
        char *end;
        double v;

        if (!s || !*s || isspace((unsigned char) *s))
                return -EINVAL;
        errno = 0;
        v = strtod(s, &end);
        if (errno == ERANGE)
                return -ERANGE;
        if (errno != 0 || *end != '\0' || !isfinite(v))
                return -EINVAL;
        *ret = v;
        return 0;
}

ssize_t loop_read(int fd, void *buf, size_t n) {
        char *p = buf;
        size_t done = 0;

        while (done < n) {
                ssize_t k = read(fd, p + done, n - done);

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                done += (size_t) k;
        }
        return (ssize_t) done;
}

int read_full_fd(int fd, size_t max, char **ret, size_t *ret_size) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, alloc = 0;

        for (;;) {
                size_t want;
                ssize_t n;

                if (alloc - size < 2) {
                        size_t na = alloc ? alloc * 2 : 4096;
                        char *nb;

                        if (na > max + 2)
                                na = max + 2;
                        if (na <= alloc)
                                return -EFBIG;
                        nb = realloc(buf, na);
                        if (!nb)
                                return -ENOMEM;
                        buf = nb;
                        alloc = na;
                }
                want = alloc - size - 1;
                n = loop_read(fd, buf + size, want);
                if (n < 0)
                        return (int) n;
                size += (size_t) n;
                if (size > max)
                        return -EFBIG;
                if ((size_t) n < want)
                        break; /* the end of the file */
        }
        if (!buf) {
                buf = malloc(1);
                if (!buf)
                        return -ENOMEM;
        }
        buf[size] = '\0';
        *ret = TAKE_PTR(buf);
        if (ret_size)
                *ret_size = size;
        return 0;
}

int read_full_file(const char *path, size_t max, char **ret, size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        return read_full_fd(fd, max, ret, ret_size);
}

int read_one_line(const char *path, char **ret) {
        char *buf;
        int r;

        r = read_full_file(path, 64 * 1024, &buf, NULL);
        if (r < 0)
                return r;
        buf[strcspn(buf, "\n")] = '\0';
        *ret = buf;
        return 0;
}

uint64_t now_ns(clockid_t clock) {
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (uint64_t) ts.tv_sec * UINT64_C(1000000000) + (uint64_t) ts.tv_nsec;
}

int loop_write(int fd, const void *buf, size_t n) {
        const char *p = buf;

        while (n > 0) {
                ssize_t k = write(fd, p, n);

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        return -EIO;
                p += k;
                n -= (size_t) k;
        }
        return 0;
}
