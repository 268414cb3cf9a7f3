/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "macro.h"

/* Numbers from outside: the whole string must be a number in range. */
int safe_atou64(const char *s, int base, uint64_t *ret);
int safe_atou32(const char *s, uint32_t *ret);
int safe_atoi(const char *s, int *ret);
int safe_atod(const char *s, double *ret);

/* Reads at most max bytes of a file (a /proc or sysfs file, a config file) into
 * a NUL-terminated buffer. Files longer than max give -EFBIG. */
int read_full_file(const char *path, size_t max, char **ret, size_t *ret_size);
int read_full_fd(int fd, size_t max, char **ret, size_t *ret_size);
/* Reads until n bytes or the end of the file (a short read is no end):
 * returns how many it read, or -errno. */
ssize_t loop_read(int fd, void *buf, size_t n);

/* Reads a sysfs/proc file that holds one line, without the newline. */
int read_one_line(const char *path, char **ret);

uint64_t now_ns(clockid_t clock);

/* Writes all of buf or fails. */
int loop_write(int fd, const void *buf, size_t n);
