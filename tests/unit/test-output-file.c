/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Writing where a user points: a regular file (or nothing) is replaced
 * atomically, a FIFO or character device is written in place and stays what
 * it was, a directory or a dangling symlink is refused. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "output-file.h"
#include "tests.h"
#include "util.h"

static char dir[] = "/tmp/lmk-output-XXXXXX";

static char *at(const char *name) {
        static char path[4][256];
        static unsigned i;
        char *p = path[i++ % ELEMENTSOF(path)];

        snprintf(p, sizeof(path[0]), "%s/%s", dir, name);
        return p;
}

static char *slurp(const char *path) {
        char *buf;

        ASSERT_OK(read_full_file(path, 1 << 20, &buf, NULL));
        return buf;
}

static mode_t file_type(const char *path) {
        struct stat st;

        ASSERT_TRUE(lstat(path, &st) == 0);
        return st.st_mode & S_IFMT;
}

/* No temp file is left next to the target. */
static void assert_no_leftovers(void) {
        char cmd[512];
        FILE *p;
        int c;

        snprintf(cmd, sizeof(cmd), "ls -A %s | grep -c tmp", dir);
        p = popen(cmd, "r");
        ASSERT_NOT_NULL(p);
        c = fgetc(p);
        pclose(p);
        ASSERT_EQ(c, '0');
}

TEST(absent) {
        struct stat st;
        _cleanup_free_ char *got = NULL;

        ASSERT_OK(user_path_check(at("new")));
        ASSERT_OK(write_file_at_user_path(at("new"), "report\n", 7, 0644));
        got = slurp(at("new"));
        ASSERT_STREQ(got, "report\n");
        ASSERT_TRUE(stat(at("new"), &st) == 0);
        ASSERT_EQ(st.st_mode & 07777, 0644);
        assert_no_leftovers();
}

TEST(regular_file_is_replaced) {
        _cleanup_free_ char *got = NULL;
        struct stat before, after;
        int fd;

        fd = open(at("old"), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(loop_write(fd, "a much longer old report\n", 25));
        close(fd);
        ASSERT_TRUE(stat(at("old"), &before) == 0);

        ASSERT_OK(write_file_at_user_path(at("old"), "new\n", 4, 0644));
        got = slurp(at("old"));
        ASSERT_STREQ(got, "new\n");
        /* replaced by rename, not rewritten: a reader never sees half a file */
        ASSERT_TRUE(stat(at("old"), &after) == 0);
        ASSERT_TRUE(before.st_ino != after.st_ino);
        assert_no_leftovers();
}

static void *read_fifo(void *arg) {
        char *buf = NULL;
        int fd;

        fd = open(arg, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
                (void) read_full_fd(fd, 1 << 20, &buf, NULL);
                close(fd);
        }
        return buf;
}

static void write_through_fifo(const char *name, const char *fifo) {
        _cleanup_free_ char *got = NULL;
        pthread_t t;

        ASSERT_EQ(pthread_create(&t, NULL, read_fifo, at(fifo)), 0);
        ASSERT_OK(write_file_at_user_path(at(name), "through the pipe\n", 17, 0644));
        ASSERT_EQ(pthread_join(t, (void **) &got), 0);
        ASSERT_STREQ(got, "through the pipe\n");
        ASSERT_EQ(file_type(at(fifo)), S_IFIFO);
}

TEST(fifo_is_written_in_place) {
        ASSERT_TRUE(mkfifo(at("fifo"), 0600) == 0);
        ASSERT_OK(user_path_check(at("fifo")));
        write_through_fifo("fifo", "fifo");
        assert_no_leftovers();
}

/* /dev/stdout is a symlink to the pipe or terminal behind fd 1. */
TEST(symlink_to_fifo_is_written_in_place) {
        ASSERT_TRUE(symlink(at("fifo"), at("stdout")) == 0);
        write_through_fifo("stdout", "fifo");
        ASSERT_EQ(file_type(at("stdout")), S_IFLNK);
}

TEST(char_device_stays) {
        const char *dev = "/dev/null";

        /* As root, a mistake would replace the real /dev/null: use a node of our own. */
        if (geteuid() == 0) {
                ASSERT_TRUE(mknod(at("null"), S_IFCHR | 0666, makedev(1, 3)) == 0);
                dev = at("null");
        }
        ASSERT_OK(user_path_check(dev));
        ASSERT_OK(write_file_at_user_path(dev, "discarded\n", 10, 0644));
        ASSERT_EQ(file_type(dev), S_IFCHR);
        assert_no_leftovers();
}

TEST(directory_is_refused) {
        ASSERT_TRUE(mkdir(at("sub"), 0755) == 0);
        ASSERT_ERROR(user_path_check(at("sub")), EISDIR);
        ASSERT_ERROR(write_file_at_user_path(at("sub"), "x", 1, 0644), EISDIR);
        ASSERT_EQ(file_type(at("sub")), S_IFDIR);
        assert_no_leftovers();
}

TEST(symlink_to_regular_file) {
        _cleanup_free_ char *got = NULL;

        ASSERT_OK(write_file_at_user_path(at("target"), "old\n", 4, 0644));
        ASSERT_TRUE(symlink("target", at("link")) == 0);
        ASSERT_OK(write_file_at_user_path(at("link"), "via the link\n", 13, 0644));
        /* the link stays a link; the file it names has the new content */
        ASSERT_EQ(file_type(at("link")), S_IFLNK);
        got = slurp(at("target"));
        ASSERT_STREQ(got, "via the link\n");
        assert_no_leftovers();
}

TEST(dangling_symlink_is_refused) {
        ASSERT_TRUE(symlink("nowhere", at("dangling")) == 0);
        ASSERT_ERROR(user_path_check(at("dangling")), EINVAL);
        ASSERT_ERROR(write_file_at_user_path(at("dangling"), "x", 1, 0644), EINVAL);
        ASSERT_EQ(file_type(at("dangling")), S_IFLNK);
}

TEST(socket_is_refused) {
        ASSERT_TRUE(mknod(at("sock"), S_IFSOCK | 0600, 0) == 0);
        ASSERT_ERROR(write_file_at_user_path(at("sock"), "x", 1, 0644), EINVAL);
}

int main(void) {
        char cmd[256];

        ASSERT_NOT_NULL(mkdtemp(dir));
        RUN(absent);
        RUN(regular_file_is_replaced);
        RUN(fifo_is_written_in_place);
        RUN(symlink_to_fifo_is_written_in_place);
        RUN(char_device_stays);
        RUN(directory_is_refused);
        RUN(symlink_to_regular_file);
        RUN(dangling_symlink_is_refused);
        RUN(socket_is_refused);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        (void) system(cmd);
        return 0;
}
