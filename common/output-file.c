/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "output-file.h"
#include "util.h"

static int write_replacing(const char *path, const void *buf, size_t n, mode_t mode) {
        _cleanup_free_ char *tmp = NULL;
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (asprintf(&tmp, "%s.tmpXXXXXX", path) < 0)
                return -ENOMEM;
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = loop_write(fd, buf, n);
        if (r >= 0 && fchmod(fd, mode) < 0)
                r = -errno;
        if (r >= 0 && fsync(fd) < 0)
                r = -errno;
        if (r >= 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0)
                (void) unlink(tmp);
        return r;
}

static int write_in_place(const char *path, const void *buf, size_t n) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        /* No O_CREAT, no O_TRUNC: a device or FIFO is written, never made or emptied. */
        fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        /* The name was swapped for a file between stat() and open(): do not write into it in place. */
        if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode))
                return -EAGAIN;
        return loop_write(fd, buf, n);
}

typedef enum OutputKind {
        OUTPUT_REPLACE,
        OUTPUT_IN_PLACE,
} OutputKind;

static int output_kind(const char *path, OutputKind *ret) {
        struct stat st;

        if (!path || !*path)
                return -EINVAL;
        if (stat(path, &st) < 0) {
                if (errno != ENOENT)
                        return -errno;
                /* Absent, or a symlink to nothing: replacing the link would not write where it points. */
                if (lstat(path, &st) == 0)
                        return -EINVAL;
                *ret = OUTPUT_REPLACE;
                return 0;
        }
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
                *ret = OUTPUT_IN_PLACE;
        else if (S_ISREG(st.st_mode))
                *ret = OUTPUT_REPLACE;
        else
                return -EINVAL;
        return 0;
}

int user_path_check(const char *path) {
        OutputKind kind;

        return output_kind(path, &kind);
}

int write_file_at_user_path(const char *path, const void *buf, size_t n, mode_t mode) {
        _cleanup_free_ char *resolved = NULL;
        OutputKind kind;
        int r;

        r = output_kind(path, &kind);
        if (r < 0)
                return r;
        if (kind == OUTPUT_IN_PLACE)
                return write_in_place(path, buf, n);
        /* Rename over the file a symlink points to, not over the link. */
        resolved = realpath(path, NULL);
        if (!resolved) {
                if (errno != ENOENT)
                        return -errno;
                return write_replacing(path, buf, n, mode);
        }
        return write_replacing(resolved, buf, n, mode);
}
