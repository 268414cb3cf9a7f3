/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Which job and step a cgroup path names (/proc/<pid>/cgroup, the kernel's
 * cgroup records): set by slurmstepd, so the user cannot choose it. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "job-internal.h"
#include "job-slurm.h"
#include "macro.h"
#include "util.h"

static bool has_prefix(const char *s, size_t len, const char *prefix) {
        size_t n = strlen(prefix);

        return len >= n && memcmp(s, prefix, n) == 0;
}

static bool has_suffix(const char *s, size_t len, const char *suffix) {
        size_t n = strlen(suffix);

        return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

static bool is_equal(const char *s, size_t len, const char *word) {
        return len == strlen(word) && memcmp(s, word, len) == 0;
}

typedef enum CgroupState {
        CG_SEARCH,   /* no Slurm anchor yet */
        CG_V1_UID,   /* after slurm[_<node>]: expect uid_<uid> */
        CG_V1_JOB,   /* after uid_<uid>: expect job_<id> */
        CG_V2_JOB,   /* after [<node>_]slurmstepd.scope: expect job_<id> or a SLUID */
        CG_STEP,     /* after the job: expect step_<step> */
        CG_DONE,     /* decided; the rest only gets checked for sanity */
} CgroupState;

static bool is_v1_top(const char *c, size_t n) {
        return is_equal(c, n, "slurm") || (has_prefix(c, n, "slurm_") && n > strlen("slurm_"));
}

static bool is_v2_scope(const char *c, size_t n) {
        return is_equal(c, n, "slurmstepd.scope") ||
               (has_suffix(c, n, "_slurmstepd.scope") && n > strlen("_slurmstepd.scope"));
}

/* A subtree its user may create cgroups in (systemd delegates the user
 * manager's tree): nothing below it is Slurm's word. */
static bool is_user_delegated(const char *c, size_t n) {
        return has_prefix(c, n, "user@") && has_suffix(c, n, ".service");
}

/* Parses one cgroup path. 1: in a job (ret filled, and ret_job_end, if
 * given, the length of the path up to the end of the job's own directory),
 * 0: not, -EBADMSG. */
static int parse_cgroup_path(const char *path, size_t len, JobRef *ret, size_t *ret_job_end) {
        CgroupState state = CG_SEARCH;
        JobRef ref = { .uid = JOB_UNSET };
        bool untrusted = false;
        size_t i = 1, job_end = 0;

        if (len == 0 || path[0] != '/')
                return -EBADMSG;
        if (len == 1)
                return 0;

        while (i <= len) {
                const char *c = path + i, *slash = memchr(c, '/', len - i);
                size_t n = slash ? (size_t) (slash - c) : len - i;

                if (n == 0 || is_equal(c, n, ".") || is_equal(c, n, ".."))
                        return -EBADMSG;
                i += n + 1;

                if (state == CG_V1_UID) {
                        uint32_t uid;

                        if (has_prefix(c, n, "uid_") && job_parse_u32(c + 4, n - 4, &uid) && uid != JOB_UNSET) {
                                ref.uid = uid;
                                state = CG_V1_JOB;
                                continue;
                        }
                        /* Not Slurm's top after all (a container named "slurm"?): look on. */
                        state = CG_SEARCH;
                }

                switch (state) {
                case CG_SEARCH:
                        if (is_user_delegated(c, n))
                                untrusted = true;
                        if (untrusted)
                                break;
                        if (is_v1_top(c, n))
                                state = CG_V1_UID;
                        else if (is_v2_scope(c, n))
                                state = CG_V2_JOB;
                        break;
                case CG_V1_JOB:
                case CG_V2_JOB:
                        if (has_prefix(c, n, "job_")) {
                                if (!job_id_valid(c + 4, n - 4))
                                        return -EBADMSG;
                                job_copy_token(ref.job, sizeof(ref.job), c + 4, n - 4);
                                job_end = (size_t) (c - path) + n;
                                state = CG_STEP;
                        } else if (state == CG_V2_JOB && job_sluid_valid(c, n)) {
                                job_copy_token(ref.sluid, sizeof(ref.sluid), c, n);
                                job_end = (size_t) (c - path) + n;
                                state = CG_STEP;
                        } else
                                /* slurmstepd.scope/system holds slurmstepd itself, not a job;
                                 * and a later look-alike would sit in a tree users may own. */
                                state = CG_DONE;
                        break;
                case CG_STEP:
                        if (has_prefix(c, n, "step_")) {
                                if (!job_step_valid(c + 5, n - 5))
                                        return -EBADMSG;
                                job_copy_token(ref.step, sizeof(ref.step), c + 5, n - 5);
                        }
                        state = CG_DONE;
                        break;
                case CG_V1_UID:
                case CG_DONE:
                        break;
                }
        }

        if (!ref.job[0] && !ref.sluid[0])
                return 0;
        *ret = ref;
        if (ret_job_end)
                *ret_job_end = job_end;
        return 1;
}

int job_cgroup_path_parse(const char *path, size_t len, JobRef *ret, size_t *ret_job_end) {
        if (!path && len > 0)
                return -EINVAL;
        if (len > 0 && memchr(path, '\0', len))
                return -EBADMSG;
        return parse_cgroup_path(path, len, ret, ret_job_end);
}

/* Two hierarchies agree when they name the same job (and uid); a step known
 * in one and not the other (a hierarchy holding the job but not the step)
 * is filled in. */
static int merge_ref(JobRef *acc, const JobRef *r) {
        if (!streq(acc->job, r->job) || !streq(acc->sluid, r->sluid) || acc->uid != r->uid)
                return -EBADMSG;
        if (!acc->step[0])
                memcpy(acc->step, r->step, sizeof(acc->step));
        else if (r->step[0] && !streq(acc->step, r->step))
                return -EBADMSG;
        return 0;
}

int job_cgroup_parse(const char *buf, size_t len, JobRef *ret) {
        JobRef acc;
        bool found = false;
        size_t i = 0;

        if (!buf && len > 0)
                return -EINVAL;
        if (len > 0 && memchr(buf, '\0', len))
                return -EBADMSG;

        while (i < len) {
                const char *line = buf + i, *nl = memchr(line, '\n', len - i);
                const char *colon1, *colon2;
                size_t n;
                JobRef r;
                int k;

                /* The kernel ends every line: a line without its '\n' was
                 * cut, and a cut "job_4711" would name job 47. */
                if (!nl)
                        return -EBADMSG;
                n = (size_t) (nl - line);
                i += n + 1;

                colon1 = memchr(line, ':', n);
                if (!colon1 || colon1 == line)
                        return -EBADMSG;
                for (const char *p = line; p < colon1; p++)
                        if (*p < '0' || *p > '9')
                                return -EBADMSG;
                colon2 = memchr(colon1 + 1, ':', n - (size_t) (colon1 + 1 - line));
                if (!colon2)
                        return -EBADMSG;

                k = parse_cgroup_path(colon2 + 1, n - (size_t) (colon2 + 1 - line), &r, NULL);
                if (k < 0)
                        return k;
                if (k == 0)
                        continue;
                if (!found) {
                        acc = r;
                        found = true;
                } else {
                        k = merge_ref(&acc, &r);
                        if (k < 0)
                                return k;
                }
        }

        if (!found)
                return 0;
        *ret = acc;
        return 1;
}

int job_cgroup_read(const char *proc_root, pid_t pid, JobRef *ret) {
        _cleanup_free_ char *buf = NULL;
        char path[PATH_MAX];
        size_t size;
        int r;

        if (pid <= 0)
                return -EINVAL;
        if (snprintf(path, sizeof(path), "%s/%d/cgroup", proc_root, (int) pid) >= (int) sizeof(path))
                return -ENAMETOOLONG;
        r = read_full_file(path, JOB_CGROUP_READ_MAX, &buf, &size);
        if (r < 0)
                return r;
        return job_cgroup_parse(buf, size, ret);
}
