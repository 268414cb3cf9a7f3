/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

/* Decompresses a gzip (or zlib) body into a new NUL-terminated buffer of at
 * most max bytes. A body that would inflate beyond max fails with -EFBIG as
 * soon as the limit is crossed, so a zip bomb costs max bytes, not more.
 * -EBADMSG for data that is not gzip or is truncated. */
int inflate_bounded(const void *data, size_t size, size_t max, char **ret, size_t *ret_size);
