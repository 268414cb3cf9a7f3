/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "job-cgroup2.h"
#include "macro.h"
#include "util.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

static int open_if_cgroup2(const char *path) {
        struct statfs fs;
        int fd;

        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fstatfs(fd, &fs) < 0 || fs.f_type != CGROUP2_SUPER_MAGIC) {
                close(fd);
                return -ENOMEDIUM;
        }
        return fd;
}

int cgroup2_root_open(const char *sys_fs_cgroup) {
        char hybrid[PATH_MAX];
        int fd;

        fd = open_if_cgroup2(sys_fs_cgroup);
        if (fd >= 0)
                return fd;
        if (snprintf(hybrid, sizeof(hybrid), "%s/unified", sys_fs_cgroup) >= (int) sizeof(hybrid))
                return -ENAMETOOLONG;
        fd = open_if_cgroup2(hybrid);
        return fd >= 0 ? fd : -ENOMEDIUM;
}

typedef struct Scan {
        int root_fd;
        job_cgroup2_cb_t cb;
        void *userdata;
        unsigned dirs;
        int found;
} Scan;

static bool has_suffix(const char *s, const char *suffix) {
        size_t n = strlen(s), m = strlen(suffix);

        return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

/* path: relative to the root, "" or "/a/b". in_scope: path is one of
 * Slurm's scopes, whose children are jobs. */
static int walk(Scan *s, const char *path, unsigned depth, bool in_scope) {
        _cleanup_close_ int fd = -EBADF;
        DIR *d;
        struct dirent *de;
        int r = 0;

        if (++s->dirs > JOB_CGROUP2_SCAN_DIRS)
                return 0;
        fd = path[0] ? openat(s->root_fd, path + 1, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)
                     : openat(s->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno; /* removed meanwhile */
        d = fdopendir(fd);
        if (!d)
                return -errno;
        fd = -EBADF; /* owned by d */

        while (r >= 0 && (de = readdir(d))) {
                char child[PATH_MAX];
                JobRef ref;
                size_t job_end;
                struct stat st;

                if (de->d_type != DT_DIR || de->d_name[0] == '.')
                        continue;
                if (snprintf(child, sizeof(child), "%s/%s", path, de->d_name) >= (int) sizeof(child))
                        continue;
                if (in_scope) {
                        size_t len = strlen(child);

                        if (job_cgroup_path_parse(child, len, &ref, &job_end) != 1 || job_end != len)
                                continue;
                        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                                continue;
                        s->found++;
                        r = s->cb(child, &ref, (uint64_t) st.st_ino, s->userdata);
                        continue;
                }
                /* A user's own systemd instance may create cgroups named
                 * like Slurm's: nothing below it is a job. */
                if (strncmp(de->d_name, "user@", 5) == 0 && has_suffix(de->d_name, ".service"))
                        continue;
                if (has_suffix(de->d_name, "slurmstepd.scope"))
                        r = walk(s, child, depth + 1, true);
                else if (depth + 1 < JOB_CGROUP2_SCAN_DEPTH)
                        r = walk(s, child, depth + 1, false);
        }
        closedir(d);
        return r;
}

int job_cgroup2_scan(int root_fd, job_cgroup2_cb_t cb, void *userdata) {
        Scan s = { .root_fd = root_fd, .cb = cb, .userdata = userdata };
        int r;

        if (root_fd < 0 || !cb)
                return -EINVAL;
        r = walk(&s, "", 0, false);
        return r < 0 ? r : s.found;
}
