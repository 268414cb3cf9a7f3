/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _likely_(x) __builtin_expect(!!(x), 1)
#define _unlikely_(x) __builtin_expect(!!(x), 0)
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _noreturn_ __attribute__((noreturn))
#define _pure_ __attribute__((pure))
#define _warn_unused_result_ __attribute__((warn_unused_result))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
/* -1, 0 or 1 as a is below, equal to or above b: a comparator's answer
 * (qsort()), without a - b's overflow. Evaluates each argument twice. */
#define CMP(a, b) (((a) > (b)) - ((a) < (b)))
#define ALIGN_TO(x, a) (((x) + (a) - 1) & ~((__typeof__(x))(a) - 1))

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

/* Take ownership of a pointer away from a _cleanup_ variable. */
#define TAKE_PTR(p)                                     \
        ({                                              \
                __typeof__(p) _tp_ = (p);               \
                (p) = NULL;                             \
                _tp_;                                   \
        })

#define TAKE_FD(fd)                                     \
        ({                                              \
                int _tf_ = (fd);                        \
                (fd) = -EBADF;                          \
                _tf_;                                   \
        })

static inline void freep(void *p) {
        free(*(void **) p);
}

static inline int safe_close(int fd) {
        if (fd >= 0) {
                int saved = errno;
                close(fd);
                errno = saved;
        }
        return -EBADF;
}

static inline void closep(int *fd) {
        safe_close(*fd);
}

static inline void fclosep(FILE **f) {
        if (*f)
                fclose(*f);
}

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)

/* Defines a cleanup helper "name##p" that calls func(*p) when *p is non-NULL. */
#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)         \
        static inline void func##p(type *p) {           \
                if (*p)                                 \
                        func(*p);                       \
        }

#define streq(a, b) (strcmp((a), (b)) == 0)

/* strcmp() where either may be NULL, which comes first. */
static inline int strcmp_null(const char *a, const char *b) {
        if (!a || !b)
                return (a != NULL) - (b != NULL);
        return strcmp(a, b);
}

/* Returns a negative errno from errno, never 0 (for callers of libc functions that set errno). */
static inline int negative_errno(void) {
        return errno > 0 ? -errno : -EIO;
}

#include <dirent.h>
static inline void closedirp(DIR **d) {
        if (*d)
                closedir(*d);
}
