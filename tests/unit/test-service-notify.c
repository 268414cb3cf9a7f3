/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Notifications to the service manager (common/service-notify.c, lmkd's and lmk-store's)
 * arrive, as the manager reads them, on a real AF_UNIX datagram socket: a
 * path and an abstract name; none without $NOTIFY_SOCKET; a name that
 * cannot be one is refused. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "service-notify.h"
#include "tests.h"

static int listen_on(const char *name) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        size_t n = strlen(name);
        int fd;

        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        ASSERT_TRUE(fd >= 0);
        memcpy(sa.sun_path, name, n);
        if (name[0] == '@')
                sa.sun_path[0] = '\0';
        ASSERT_TRUE(bind(fd, (struct sockaddr *) &sa, (socklen_t) (offsetof(struct sockaddr_un, sun_path) + n)) == 0);
        return fd;
}

static void expect(int fd, const char *want) {
        char buf[256];
        ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);

        ASSERT_TRUE(n >= 0);
        buf[n] = '\0';
        ASSERT_STREQ(buf, want);
}

TEST(path) {
        char dir[] = "/tmp/lmk-notify-XXXXXX", path[128];
        int fd;

        ASSERT_NOT_NULL(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/notify", dir);
        fd = listen_on(path);
        ASSERT_TRUE(setenv("NOTIFY_SOCKET", path, 1) == 0);
        ASSERT_EQ(service_notify("READY=1\nSTATUS=Sampling"), 1);
        expect(fd, "READY=1\nSTATUS=Sampling");
        ASSERT_EQ(service_notify("WATCHDOG=1"), 1);
        expect(fd, "WATCHDOG=1");
        close(fd);
        /* the manager went away: an error, not a crash or a signal */
        ASSERT_TRUE(unlink(path) == 0);
        ASSERT_ERROR(service_notify("STOPPING=1"), ENOENT);
        ASSERT_TRUE(rmdir(dir) == 0);
}

TEST(abstract) {
        char name[64];
        int fd;

        snprintf(name, sizeof(name), "@lmk-test-notify-%d", (int) getpid());
        fd = listen_on(name);
        ASSERT_TRUE(setenv("NOTIFY_SOCKET", name, 1) == 0);
        ASSERT_EQ(service_notify("STOPPING=1"), 1);
        expect(fd, "STOPPING=1");
        close(fd);
}

TEST(no_manager) {
        char long_path[200];

        ASSERT_TRUE(unsetenv("NOTIFY_SOCKET") == 0);
        ASSERT_EQ(service_notify("READY=1"), 0);
        ASSERT_TRUE(setenv("NOTIFY_SOCKET", "", 1) == 0);
        ASSERT_EQ(service_notify("READY=1"), 0);
        ASSERT_TRUE(setenv("NOTIFY_SOCKET", "relative/notify", 1) == 0);
        ASSERT_ERROR(service_notify("READY=1"), EAFNOSUPPORT);
        memset(long_path, 'a', sizeof(long_path) - 1);
        long_path[0] = '/';
        long_path[sizeof(long_path) - 1] = '\0';
        ASSERT_TRUE(setenv("NOTIFY_SOCKET", long_path, 1) == 0);
        ASSERT_ERROR(service_notify("READY=1"), EINVAL);
}

/* The watchdog interval: for this process only, and only a number. */
TEST(watchdog) {
        char pid[32];

        ASSERT_TRUE(unsetenv("WATCHDOG_USEC") == 0 && unsetenv("WATCHDOG_PID") == 0);
        ASSERT_EQ(service_watchdog_usec(), 0);
        ASSERT_TRUE(setenv("WATCHDOG_USEC", "400000", 1) == 0);
        ASSERT_EQ(service_watchdog_usec(), 400000);
        snprintf(pid, sizeof(pid), "%d", (int) getpid());
        ASSERT_TRUE(setenv("WATCHDOG_PID", pid, 1) == 0);
        ASSERT_EQ(service_watchdog_usec(), 400000);
        snprintf(pid, sizeof(pid), "%d", (int) getpid() + 1);
        ASSERT_TRUE(setenv("WATCHDOG_PID", pid, 1) == 0);
        ASSERT_EQ(service_watchdog_usec(), 0);
        ASSERT_TRUE(setenv("WATCHDOG_PID", "x", 1) == 0);
        ASSERT_EQ(service_watchdog_usec(), 0);
        ASSERT_TRUE(unsetenv("WATCHDOG_PID") == 0);
        for (const char *const *bad = (const char *const[]) { "0", "", "-5", "12us", "99999999999999999999", NULL };
             *bad; bad++) {
                ASSERT_TRUE(setenv("WATCHDOG_USEC", *bad, 1) == 0);
                ASSERT_EQ(service_watchdog_usec(), 0);
        }
        ASSERT_TRUE(unsetenv("WATCHDOG_USEC") == 0);
}

int main(void) {
        RUN(path);
        RUN(abstract);
        RUN(no_manager);
        RUN(watchdog);
        return 0;
}
