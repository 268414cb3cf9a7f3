/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "macro.h"
#include "service-notify.h"

int service_notify(const char *state) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        const char *path = getenv("NOTIFY_SOCKET");
        _cleanup_close_ int fd = -EBADF;
        socklen_t len;
        size_t n;

        if (!path || !*path)
                return 0;
        /* a path or an abstract name; other kinds (vsock:) lmkd does not run under */
        if (path[0] != '/' && path[0] != '@')
                return -EAFNOSUPPORT;
        n = strlen(path);
        if (n > sizeof(sa.sun_path) - (path[0] == '/'))
                return -EINVAL;
        memcpy(sa.sun_path, path, n);
        /* an abstract name is its bytes after a NUL, its length says where it ends */
        if (path[0] == '@')
                sa.sun_path[0] = '\0';
        len = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + n);

        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (sendto(fd, state, strlen(state), MSG_NOSIGNAL, (const struct sockaddr *) &sa, len) < 0)
                return -errno;
        return 1;
}

static bool parse_u64(const char *s, uint64_t *ret) {
        char *end;
        unsigned long long v;

        if (!s || *s < '0' || *s > '9')
                return false;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno != 0 || *end)
                return false;
        *ret = v;
        return true;
}

uint64_t service_watchdog_usec(void) {
        const char *pid = getenv("WATCHDOG_PID");
        uint64_t usec, p;

        if (!parse_u64(getenv("WATCHDOG_USEC"), &usec) || usec == 0)
                return 0;
        /* set for another process (one this one forked from) */
        if (pid && (!parse_u64(pid, &p) || p != (uint64_t) getpid()))
                return 0;
        return usec;
}
