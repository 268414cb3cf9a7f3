/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cpu-list.h"
#include "job-cpuset.h"
#include "job-slurm.h"
#include "macro.h"
#include "util.h"

/* The length of path up to and including its outermost job_<id> component,
 * or 0. */
static size_t job_prefix(const char *path, size_t len) {
        size_t i = 0;

        while (i < len) {
                size_t start, end;

                while (i < len && path[i] == '/')
                        i++;
                start = i;
                while (i < len && path[i] != '/')
                        i++;
                end = i;
                if (end - start > 4 && memcmp(path + start, "job_", 4) == 0 &&
                    job_id_valid(path + start + 4, end - start - 4))
                        return end;
        }
        return 0;
}

static bool has_controller(const char *list, size_t len, const char *want) {
        size_t n = strlen(want), i = 0;

        while (i <= len) {
                const char *comma = memchr(list + i, ',', len - i);
                size_t e = comma ? (size_t) (comma - list) : len;

                if (e - i == n && memcmp(list + i, want, n) == 0)
                        return true;
                i = e + 1;
        }
        return false;
}

int job_cpuset_path(const char *cgroup, size_t len, char *ret, size_t size) {
        const char *p = cgroup, *end = cgroup + len;
        const char *v2 = NULL;
        size_t v2_len = 0;

        while (p < end) {
                const char *eol = memchr(p, '\n', (size_t) (end - p));
                const char *c1, *c2;
                size_t plen, prefix;
                int n;

                if (!eol)
                        return -EBADMSG;
                c1 = memchr(p, ':', (size_t) (eol - p));
                c2 = c1 ? memchr(c1 + 1, ':', (size_t) (eol - c1 - 1)) : NULL;
                if (!c2 || c2 + 1 >= eol || c2[1] != '/')
                        return -EBADMSG;
                plen = (size_t) (eol - c2 - 1);
                prefix = job_prefix(c2 + 1, plen);
                if (prefix > 0) {
                        if (has_controller(c1 + 1, (size_t) (c2 - c1 - 1), "cpuset")) {
                                n = snprintf(ret, size, "/sys/fs/cgroup/cpuset%.*s/cpuset.cpus", (int) prefix, c2 + 1);
                                return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : 1;
                        }
                        if (c2 == c1 + 1 && (size_t) (c1 - p) == 1 && p[0] == '0') {
                                v2 = c2 + 1;
                                v2_len = prefix;
                        }
                }
                p = eol + 1;
        }
        if (v2) {
                int n = snprintf(ret, size, "/sys/fs/cgroup%.*s/cpuset.cpus.effective", (int) v2_len, v2);
                return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : 1;
        }
        return 0;
}

int job_cpuset_read(pid_t pid, unsigned *ret) {
        _cleanup_free_ char *cg = NULL, *list = NULL;
        char path[64], file[4096];
        size_t n;
        int r;

        snprintf(path, sizeof(path), "/proc/%d/cgroup", (int) pid);
        r = read_full_file(path, JOB_CGROUP_READ_MAX, &cg, &n);
        if (r < 0)
                return r == -ESRCH ? -ENOENT : r;
        r = job_cpuset_path(cg, n, file, sizeof(file));
        if (r < 0)
                return r;
        if (r == 0)
                return -ENOENT;
        r = read_full_file(file, 64 * 1024, &list, &n);
        if (r < 0)
                return r;
        return cpu_list_count(list, n, ret);
}
