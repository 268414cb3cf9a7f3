/* SPDX-License-Identifier: GPL-2.0-or-later */
/* common/util.c's reads: loop_read() goes on past short reads to the end or
 * a full buffer, read_full_fd() takes a file of max bytes and refuses one
 * byte more. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "tests.h"
#include "util.h"

/* A pipe whose writer sends its text in pieces, with pauses between. */
static int slow_pipe(const char *const *pieces, pid_t *ret_pid) {
        int p[2];
        pid_t pid;

        ASSERT_OK(pipe2(p, O_CLOEXEC));
        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                close(p[0]);
                for (size_t i = 0; pieces[i]; i++) {
                        if (loop_write(p[1], pieces[i], strlen(pieces[i])) < 0)
                                _exit(1);
                        nanosleep(&(struct timespec) { .tv_nsec = 20 * 1000 * 1000 }, NULL);
                }
                _exit(0);
        }
        close(p[1]);
        *ret_pid = pid;
        return p[0];
}

static void reap(pid_t pid) {
        int status;

        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(loop_read) {
        static const char *const pieces[] = { "abc", "defgh", "ij", NULL };
        char buf[64];
        pid_t pid;
        int fd;

        fd = slow_pipe(pieces, &pid);
        ASSERT_EQ(loop_read(fd, buf, sizeof(buf)), 10);
        ASSERT_TRUE(memcmp(buf, "abcdefghij", 10) == 0);
        ASSERT_EQ(loop_read(fd, buf, sizeof(buf)), 0);
        close(fd);
        reap(pid);

        fd = slow_pipe(pieces, &pid);
        ASSERT_EQ(loop_read(fd, buf, 4), 4);
        ASSERT_TRUE(memcmp(buf, "abcd", 4) == 0);
        ASSERT_EQ(loop_read(fd, buf, sizeof(buf)), 6);
        close(fd);
        reap(pid);

        ASSERT_ERROR(loop_read(-1, buf, 1), EBADF);
}

static int file_of(size_t n) {
        char path[] = "/tmp/lmk-test-util-XXXXXX";
        _cleanup_free_ char *data = malloc(n + 1);
        int fd = mkostemp(path, O_CLOEXEC);

        ASSERT_TRUE(fd >= 0 && data);
        ASSERT_OK(unlink(path));
        memset(data, 'x', n);
        ASSERT_OK(loop_write(fd, data, n));
        ASSERT_OK(lseek(fd, 0, SEEK_SET));
        return fd;
}

TEST(read_full_fd) {
        static const size_t sizes[] = { 0, 1, 4095, 4096, 4097, 100000 };

        for (size_t i = 0; i < ELEMENTSOF(sizes); i++) {
                size_t n = sizes[i], got = 12345;
                char *buf = NULL;
                int fd;

                fd = file_of(n);
                ASSERT_OK(read_full_fd(fd, n, &buf, &got));
                ASSERT_EQ(got, n);
                ASSERT_EQ(strlen(buf), n);
                free(buf);
                close(fd);

                fd = file_of(n + 1);
                buf = NULL;
                ASSERT_ERROR(read_full_fd(fd, n, &buf, &got), EFBIG);
                ASSERT_NULL(buf);
                close(fd);
        }
}

int main(void) {
        RUN(loop_read);
        RUN(read_full_fd);
        return 0;
}
