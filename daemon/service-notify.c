/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
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
