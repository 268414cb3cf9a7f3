/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Steps the wall clock of one process, for tests: LD_PRELOAD'ed, it adds
 * the whole seconds written in the file $LMK_TEST_CLOCK_OFFSET_FILE (read
 * at every call, so a test steps the clock by rewriting it) to what
 * clock_gettime() answers for CLOCK_REALTIME. CLOCK_MONOTONIC is left
 * alone, as NTP leaves it. Stepping the machine's clock (date -s) would
 * step it under every other test running beside, and a time namespace
 * offsets only the monotonic and boot-time clocks. */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

typedef int (*clock_gettime_fn)(clockid_t clock, struct timespec *ts);

static long long offset_ns(void) {
        const char *path = getenv("LMK_TEST_CLOCK_OFFSET_FILE");
        char buf[32];
        ssize_t n;
        int fd;

        if (!path)
                return 0;
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return 0;
        buf[n] = '\0';
        return strtoll(buf, NULL, 10) * 1000000000LL;
}

int clock_gettime(clockid_t clock, struct timespec *ts);
int clock_gettime(clockid_t clock, struct timespec *ts) {
        static clock_gettime_fn next;
        long long t;
        int r;

        if (!next)
                next = (clock_gettime_fn) dlsym(RTLD_NEXT, "clock_gettime");
        r = next(clock, ts);
        if (r < 0 || (clock != CLOCK_REALTIME && clock != CLOCK_REALTIME_COARSE))
                return r;
        t = (long long) ts->tv_sec * 1000000000LL + ts->tv_nsec + offset_ns();
        ts->tv_sec = (time_t) (t / 1000000000LL);
        ts->tv_nsec = (long) (t % 1000000000LL);
        return r;
}
