/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>

#include "token-file.h"
#include "utf8.h"
#include "util.h"

_printf_(3, 4) static int fail(int r, char **ret_error, const char *fmt, ...) {
        va_list ap;

        if (ret_error) {
                va_start(ap, fmt);
                if (vasprintf(ret_error, fmt, ap) < 0)
                        *ret_error = NULL;
                va_end(ap);
        }
        return r;
}

static unsigned line_of(const char *text, size_t offset) {
        unsigned line = 1;

        for (size_t i = 0; i < offset; i++)
                if (text[i] == '\n')
                        line++;
        return line;
}

int token_text_check(const char *path, const char *text, size_t n, char **ret_error) {
        long bad;
        bool blank = true;

        bad = utf8_find_invalid(text, n);
        if (bad >= 0)
                return fail(-EBADMSG, ret_error,
                            "Token file %s is not text: byte %ld (line %u) is not UTF-8; "
                            "write the token(s) as plain ASCII.", path, bad, line_of(text, (size_t) bad));
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char) text[i];

                if (c == '\r')
                        return fail(-EBADMSG, ret_error,
                                    "Token file %s has a carriage return on line %u (DOS line endings?); "
                                    "fix with: sed -i 's/\\r$//' %s", path, line_of(text, i), path);
                if (c == '\0')
                        return fail(-EBADMSG, ret_error,
                                    "Token file %s is not text: NUL byte at offset %zu (line %u).",
                                    path, i, line_of(text, i));
                if (c != '\n' && c != '\t' && string_has_control(text + i, 1))
                        return fail(-EBADMSG, ret_error,
                                    "Token file %s is not text: control character 0x%02x at offset %zu (line %u).",
                                    path, c, i, line_of(text, i));
                if (c != '\n' && c != '\t' && c != ' ')
                        blank = false;
        }
        if (blank)
                return fail(-ENODATA, ret_error, "Token file %s is empty; put the token in it.", path);
        return 0;
}

int token_file_read(const char *path, char **ret, char **ret_error) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *text = NULL;
        struct stat st;
        size_t n;
        uid_t uid = geteuid();
        int r;

        if (ret_error)
                *ret_error = NULL;
        /* O_NONBLOCK: a FIFO put in its place must not hang the reader. */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                r = -errno;
                return fail(r, ret_error, "Failed to open token file %s: %s", path, strerror(-r));
        }
        /* Checks on the opened file, not the name: nothing can be swapped in between. */
        if (fstat(fd, &st) < 0) {
                r = -errno;
                return fail(r, ret_error, "Failed to stat token file %s: %s", path, strerror(-r));
        }
        if (!S_ISREG(st.st_mode))
                return fail(-EINVAL, ret_error, "Token file %s is not a regular file.", path);
        if (st.st_uid != uid && st.st_uid != 0)
                return fail(-EPERM, ret_error,
                            "Token file %s belongs to uid %u, not to this user (uid %u) or root; "
                            "fix with: chown %u %s", path, (unsigned) st.st_uid, (unsigned) uid,
                            (unsigned) uid, path);
        if (st.st_mode & (S_IRGRP | S_IWGRP | S_IROTH | S_IWOTH))
                return fail(-EACCES, ret_error,
                            "Token file %s can be %s by %s (mode %04o): a token others can read is no "
                            "secret; fix with: chmod 600 %s", path,
                            st.st_mode & (S_IRGRP | S_IROTH) ? "read" : "changed",
                            st.st_mode & (S_IROTH | S_IWOTH) ? "all users" : "its group",
                            (unsigned) st.st_mode & 07777, path);
        if ((uint64_t) st.st_size > TOKEN_FILE_MAX)
                return fail(-EFBIG, ret_error, "Token file %s is %jd bytes, more than the %u a token file may hold.",
                            path, (intmax_t) st.st_size, TOKEN_FILE_MAX);
        if (fcntl(fd, F_SETFL, 0) < 0) {
                r = -errno;
                return fail(r, ret_error, "Failed to read token file %s: %s", path, strerror(-r));
        }
        r = read_full_fd(fd, TOKEN_FILE_MAX, &text, &n);
        if (r == -EFBIG)
                return fail(r, ret_error, "Token file %s is more than the %u bytes a token file may hold.",
                            path, TOKEN_FILE_MAX);
        if (r < 0)
                return fail(r, ret_error, "Failed to read token file %s: %s", path, strerror(-r));
        r = token_text_check(path, text, n, ret_error);
        if (r < 0) {
                explicit_bzero(text, n);
                return r;
        }
        *ret = TAKE_PTR(text);
        return 0;
}

bool token_is_valid(const char *t) {
        size_t n = strlen(t);

        if (n < TOKEN_MIN_LENGTH || n > TOKEN_MAX_LENGTH)
                return false;
        for (; *t; t++)
                if (*t <= ' ' || *t > '~')
                        return false;
        return true;
}

void token_erase(char *s) {
        if (s)
                explicit_bzero(s, strlen(s));
}
