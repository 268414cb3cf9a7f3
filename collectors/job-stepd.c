/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "job-stepd.h"
#include "macro.h"
#include "util.h"

/* A decimal number of at most 20 digits ending at a space, '\n' or end. */
static int parse_field(const char *s, size_t len, uint64_t *ret) {
        char buf[21];

        if (len == 0 || len >= sizeof(buf))
                return -EBADMSG;
        memcpy(buf, s, len);
        buf[len] = '\0';
        for (size_t i = 0; i < len; i++)
                if (buf[i] < '0' || buf[i] > '9')
                        return -EBADMSG;
        return safe_atou64(buf, 10, ret) < 0 ? -EBADMSG : 0;
}

int job_proc_stat_parse(const char *buf, size_t len, JobProcStat *ret) {
        /* fields after the comm, counted from 3 as proc(5) does */
        enum { F_STATE = 3, F_PPID = 4, F_START = 22 };
        const char *lp, *rp = NULL, *p, *end = buf + len;
        JobProcStat st = {};
        uint64_t v;
        int field;

        lp = memchr(buf, '(', len);
        if (!lp)
                return -EBADMSG;
        for (p = lp + 1; p < end; p++)
                if (*p == ')')
                        rp = p;
        if (!rp || (size_t) (rp - lp - 1) >= sizeof(st.comm) || memchr(lp + 1, '\0', (size_t) (rp - lp - 1)))
                return -EBADMSG;
        memcpy(st.comm, lp + 1, (size_t) (rp - lp - 1));

        p = rp + 1;
        for (field = F_STATE; field <= F_START; field++) {
                const char *tok;

                if (p >= end || *p != ' ')
                        return -EBADMSG;
                tok = ++p;
                while (p < end && *p != ' ' && *p != '\n')
                        p++;
                if (field == F_STATE)
                        continue;
                if (field != F_PPID && field != F_START)
                        continue;
                if (parse_field(tok, (size_t) (p - tok), &v) < 0)
                        return -EBADMSG;
                if (field == F_PPID) {
                        if (v > INT_MAX)
                                return -EBADMSG;
                        st.ppid = (uint32_t) v;
                } else
                        st.start = v;
        }
        *ret = st;
        return 0;
}

int job_proc_status_uid(const char *buf, size_t len, uint32_t *ret) {
        static const char key[] = "Uid:";
        const char *p = buf, *end = buf + len;

        while (p < end) {
                const char *eol = memchr(p, '\n', (size_t) (end - p));
                const char *q, *tok;
                uint64_t v;

                if (!eol)
                        return -EBADMSG; /* a cut line is no line */
                if ((size_t) (eol - p) > sizeof(key) - 1 && memcmp(p, key, sizeof(key) - 1) == 0) {
                        q = p + sizeof(key) - 1;
                        while (q < eol && (*q == '\t' || *q == ' '))
                                q++;
                        tok = q;
                        while (q < eol && *q >= '0' && *q <= '9')
                                q++;
                        if (q == eol || (*q != '\t' && *q != ' ') ||
                            parse_field(tok, (size_t) (q - tok), &v) < 0 || v >= UINT32_MAX)
                                return -EBADMSG;
                        *ret = (uint32_t) v;
                        return 0;
                }
                p = eol + 1;
        }
        return -EBADMSG;
}

int job_stepd_title_parse(const char *cmdline, size_t len, JobRef *ret) {
        static const char prefix[] = "slurmstepd: [";
        const char *p, *end, *dot;
        JobRef ref = { .uid = JOB_UNSET };

        if (len < sizeof(prefix) || memcmp(cmdline, prefix, sizeof(prefix) - 1) != 0)
                return 0;
        p = cmdline + sizeof(prefix) - 1;
        end = memchr(p, ']', len - (size_t) (p - cmdline));
        if (!end)
                return 0;
        dot = memchr(p, '.', (size_t) (end - p));
        if (!dot)
                dot = end; /* "slurmstepd: [4711]": the job's extern/batch holder */
        if (!job_id_valid(p, (size_t) (dot - p)))
                return -EBADMSG;
        job_text_copy(ref.job, sizeof(ref.job), p, (size_t) (dot - p));
        if (dot < end) {
                if (!job_step_valid(dot + 1, (size_t) (end - dot - 1)))
                        return -EBADMSG;
                job_text_copy(ref.step, sizeof(ref.step), dot + 1, (size_t) (end - dot - 1));
        }
        *ret = ref;
        return 1;
}

static int read_proc_file(const char *proc_root, uint32_t pid, const char *name, size_t max, char **ret,
                          size_t *ret_size) {
        char path[PATH_MAX];

        if (snprintf(path, sizeof(path), "%s/%" PRIu32 "/%s", proc_root, pid, name) >= (int) sizeof(path))
                return -ENAMETOOLONG;
        return read_full_file(path, max, ret, ret_size);
}

static int read_stat(const char *proc_root, uint32_t pid, JobProcStat *ret) {
        _cleanup_free_ char *buf = NULL;
        size_t n;
        int r;

        if (pid == 0)
                return -EINVAL;
        r = read_proc_file(proc_root, pid, "stat", JOB_PROC_STAT_MAX, &buf, &n);
        if (r < 0)
                return r;
        return job_proc_stat_parse(buf, n, ret);
}

/* The file the process executes is named slurmstepd ("…/slurmstepd", or
 * "…/slurmstepd (deleted)" after a package upgrade under a running job;
 * Debian's is /usr/sbin/slurmstepd-wlm, an alternative /usr/sbin/slurmstepd
 * points to). Users cannot give a setuid program such a name: a symlink
 * resolves to the program's own, and they may not hard-link another's file
 * (protected_hardlinks). */
static bool exe_is_stepd(const char *proc_root, uint32_t pid) {
        static const char deleted[] = " (deleted)";
        char path[PATH_MAX], target[PATH_MAX];
        const char *base;
        ssize_t n;

        if (snprintf(path, sizeof(path), "%s/%" PRIu32 "/exe", proc_root, pid) >= (int) sizeof(path))
                return false;
        n = readlink(path, target, sizeof(target) - 1);
        if (n <= 0 || (size_t) n >= sizeof(target) - 1)
                return false;
        target[n] = '\0';
        if ((size_t) n > sizeof(deleted) - 1 && streq(target + n - (sizeof(deleted) - 1), deleted))
                target[n - (sizeof(deleted) - 1)] = '\0';
        base = strrchr(target, '/');
        if (!base)
                return false;
        base++;
        return streq(base, "slurmstepd") || strncmp(base, "slurmstepd-", strlen("slurmstepd-")) == 0;
}

/* pid, whose stat says st, is root's slurmstepd of a job. */
static int stepd_of(const char *proc_root, uint32_t pid, const JobProcStat *st, JobRef *ret) {
        _cleanup_free_ char *status = NULL, *cmdline = NULL;
        JobProcStat again;
        uint32_t uid;
        size_t n;
        JobRef ref;
        int r;

        if (!streq(st->comm, "slurmstepd"))
                return 0;
        r = read_proc_file(proc_root, pid, "status", JOB_PROC_STATUS_MAX, &status, &n);
        if (r < 0)
                return r;
        if (job_proc_status_uid(status, n, &uid) < 0 || uid != 0 || !exe_is_stepd(proc_root, pid))
                return 0;
        r = read_proc_file(proc_root, pid, "cmdline", JOB_PROC_CMDLINE_MAX, &cmdline, &n);
        if (r < 0)
                return r;
        if (job_stepd_title_parse(cmdline, n, &ref) <= 0)
                return 0;
        /* the same process all along: not one that took its pid meanwhile */
        r = read_stat(proc_root, pid, &again);
        if (r < 0)
                return r;
        if (again.start != st->start)
                return 0;
        *ret = ref;
        return 1;
}

int job_stepd_read(const char *proc_root, uint32_t pid, JobRef *ret) {
        JobProcStat st;
        int r;

        r = read_stat(proc_root, pid, &st);
        if (r < 0)
                return r;
        return stepd_of(proc_root, pid, &st, ret);
}

int job_stepd_find(const char *proc_root, uint32_t pid, JobRef *ret) {
        JobProcStat st, up;
        int r;

        r = read_stat(proc_root, pid, &st);
        if (r < 0)
                return r;
        for (unsigned depth = 0; depth < JOB_STEPD_DEPTH_MAX; depth++) {
                uint32_t parent = st.ppid;

                /* init and the kernel (ppid 0) start no job */
                if (parent <= 1)
                        return 0;
                if (read_stat(proc_root, parent, &up) < 0)
                        return 0; /* gone: its child was reparented, ask no further */
                /* a parent is never younger than its child: one that is
                 * took a pid that was freed since (reuse) */
                if (up.start > st.start)
                        return 0;
                r = stepd_of(proc_root, parent, &up, ret);
                if (r != 0)
                        return r > 0 ? 1 : 0;
                st = up;
        }
        return 0;
}
