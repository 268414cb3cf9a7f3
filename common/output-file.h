/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <sys/types.h>

/* Writing to a path a user named (a report, a metrics textfile, a ready file).
 *
 * A regular file, or a name that does not exist yet, is replaced atomically
 * (temp file in the same directory, fsync, rename), so a reader never sees
 * half of it. Anything else is never replaced: a character device or a FIFO
 * (/dev/null, /dev/stdout on a terminal or pipe) is opened and written in
 * place. A symlink is followed to decide, and a regular file behind it is
 * replaced, not the link. A directory gives -EISDIR; a block device, a
 * socket or a dangling symlink give -EINVAL. */
int write_file_at_user_path(const char *path, const void *buf, size_t n, mode_t mode);

/* The same checks without writing, so a daemon can refuse a bad path at start
 * rather than after an hour of work. */
int user_path_check(const char *path);
