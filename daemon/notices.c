/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "job-notify.h"
#include "log.h"
#include "notices.h"
#include "util.h"

static int mkdir_parent(const char *path) {
        _cleanup_free_ char *copy = strdup(path);
        char *dir;

        if (!copy)
                return -ENOMEM;
        dir = dirname(copy);
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                return -errno;
        return 0;
}

int notice_socket_open(const char *path, int *ret_fd) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -EBADF;
        int one = 1, r;

        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        r = mkdir_parent(path);
        if (r < 0)
                return r;
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        /* A socket file that answers belongs to a running lmkd: leave it be.
         * One that refuses is stale and goes. */
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) == 0)
                return -EADDRINUSE;
        if (errno == ECONNREFUSED)
                (void) unlink(path);
        close(fd);
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return -errno;
        /* only root may send: the Prolog/Epilog run as root */
        if (chmod(path, 0600) < 0 || setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0) {
                r = -errno;
                (void) unlink(path);
                return r;
        }
        *ret_fd = TAKE_FD(fd);
        return 0;
}

void notice_socket_read(int fd, Monitor *m) {
        for (;;) {
                char buf[JOB_NOTICE_MAX + 1];
                union {
                        struct cmsghdr h;
                        char space[CMSG_SPACE(sizeof(struct ucred))];
                } control;
                struct iovec iov = { buf, sizeof(buf) - 1 };
                struct msghdr mh = {
                        .msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = &control,
                        .msg_controllen = sizeof(control),
                };
                struct ucred *cred = NULL;
                struct cmsghdr *c;
                JobNotice notice;
                ssize_t n;
                int r;

                n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
                if (n < 0) {
                        if (errno != EAGAIN && errno != EINTR)
                                log_warning_errno(-errno, "Failed to read a job notice: %m");
                        return;
                }
                for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
                        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
                            c->cmsg_len == CMSG_LEN(sizeof(struct ucred)))
                                cred = (struct ucred *) CMSG_DATA(c);
                if (!cred || cred->uid != 0) {
                        log_warning("Ignored a job notice from uid %d: only root's Prolog/Epilog may send them.",
                                    cred ? (int) cred->uid : -1);
                        monitor_jobs(m)->bad_notices++;
                        continue;
                }
                if (mh.msg_flags & MSG_TRUNC) {
                        log_warning("Ignored a job notice over %d bytes.", JOB_NOTICE_MAX);
                        monitor_jobs(m)->bad_notices++;
                        continue;
                }
                r = job_notice_parse(buf, (size_t) n, &notice);
                if (r < 0) {
                        log_warning_errno(r, "Ignored a malformed job notice (%.60s): %m", buf);
                        monitor_jobs(m)->bad_notices++;
                        continue;
                }
                log_debug("Job %s: %s.", notice.info.job, job_notice_event_to_string(notice.event));
                monitor_apply_notice(m, &notice);
        }
}

/* Only root's: a folder or file another user could write would let them
 * name a job's user or switch its measurement off. */
static bool roots_own(const struct stat *st) {
        return st->st_uid == 0 && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

static int read_kept(int dir_fd, const char *name, JobNotice *ret) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        struct stat st;
        size_t n;
        int r;

        fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode) || !roots_own(&st))
                return -EPERM;
        r = read_full_fd(fd, JOB_NOTICE_MAX, &buf, &n);
        if (r < 0)
                return r;
        r = job_notice_parse(buf, n, ret);
        if (r < 0)
                return r;
        /* the file is named by its job, and says its start */
        return ret->event == JOB_NOTICE_START && streq(ret->info.job, name) ? 0 : -EBADMSG;
}

int notice_state_read(const char *socket_path, Monitor *m) {
        _cleanup_(closedirp) DIR *d = NULL;
        char path[PATH_MAX];
        struct dirent *de;
        struct stat st;
        int r, n = 0;

        r = job_notice_state_dir(socket_path, path, sizeof(path));
        if (r < 0)
                return r;
        d = opendir(path);
        if (!d)
                return errno == ENOENT ? 0 : -errno;
        if (fstat(dirfd(d), &st) < 0)
                return -errno;
        if (!roots_own(&st)) {
                log_warning("Ignored the job notices kept in %s: not root's alone.", path);
                return -EPERM;
        }
        while ((de = readdir(d))) {
                JobNotice notice;

                if (de->d_name[0] == '.')
                        continue;
                r = read_kept(dirfd(d), de->d_name, &notice);
                if (r < 0) {
                        log_warning_errno(r, "Ignored the kept job notice %s/%s: %m", path, de->d_name);
                        monitor_jobs(m)->bad_notices++;
                        continue;
                }
                monitor_apply_notice(m, &notice);
                n++;
        }
        if (n > 0)
                log_info("Read the start notices of %d running job(s) from %s.", n, path);
        return n;
}
