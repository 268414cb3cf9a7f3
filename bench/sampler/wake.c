/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The machine's floor for a sampler at 1 Hz: a process that wakes once a
 * second from a timerfd, as lmkd's timer does, touches KIB KiB of its
 * memory (default 0) and sleeps again. bench/sampler/run measures its CPU
 * time beside lmkd's: on a VM whose host takes back idle memory, waking at
 * all costs what no sampler can save. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/timerfd.h>
#include <unistd.h>

int main(int argc, char **argv) {
        size_t bytes = argc > 1 ? strtoul(argv[1], NULL, 10) * 1024 : 0;
        struct itimerspec its = { .it_interval = { 1, 0 }, .it_value = { 1, 0 } };
        volatile char *buf = bytes ? calloc(1, bytes) : NULL;
        int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);

        if (fd < 0 || timerfd_settime(fd, 0, &its, NULL) < 0 || (bytes && !buf)) {
                perror("lmk-bench-wake");
                return 1;
        }
        printf("ready\n");
        fflush(stdout);
        for (unsigned v = 0;; v++) {
                uint64_t n;

                if (read(fd, &n, sizeof(n)) != sizeof(n))
                        return 1;
                for (size_t i = 0; i < bytes; i += 64)
                        buf[i] = (char) v;
        }
}
