/* SPDX-License-Identifier: GPL-2.0-or-later */
/* daemon/job-table.c and collectors/job-stepd.c: slurmstepd's title, stat
 * and status as outside input; which job a process is in and who may say
 * so (on a fake /proc: root's slurmstepd above it, cgroups, environments
 * of other users, notices); and a job's life from its processes and the
 * epilog's notice. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "job-stepd.h"
#include "job-table.h"
#include "tests.h"

#define T(lit) (lit), (sizeof(lit) - 1)

TEST(stepd_title) {
        JobRef ref;

        ASSERT_EQ(job_stepd_title_parse(T("slurmstepd: [4711.batch]"), &ref), 1);
        ASSERT_STREQ(ref.job, "4711");
        ASSERT_STREQ(ref.step, "batch");
        ASSERT_EQ(job_stepd_title_parse(T("slurmstepd: [4711.0]\0ignored"), &ref), 1);
        ASSERT_STREQ(ref.step, "0");
        ASSERT_EQ(job_stepd_title_parse(T("slurmstepd: [4711]"), &ref), 1);
        ASSERT_STREQ(ref.step, "");
        /* not a title of slurmstepd's: no job, nothing claimed */
        ASSERT_EQ(job_stepd_title_parse(T("slurmstepd"), &ref), 0);
        ASSERT_EQ(job_stepd_title_parse(T("slurmstepd: [4711.0"), &ref), 0);
        ASSERT_EQ(job_stepd_title_parse(T(""), &ref), 0);
        ASSERT_EQ(job_stepd_title_parse(T("/usr/sbin/slurmd -D"), &ref), 0);
        /* hostile ids and steps */
        ASSERT_ERROR(job_stepd_title_parse(T("slurmstepd: [.0]"), &ref), EBADMSG);
        ASSERT_ERROR(job_stepd_title_parse(T("slurmstepd: [../etc.0]"), &ref), EBADMSG);
        ASSERT_ERROR(job_stepd_title_parse(T("slurmstepd: [4711.a b]"), &ref), EBADMSG);
        ASSERT_ERROR(job_stepd_title_parse(T("slurmstepd: [47\00011.0]"), &ref), EBADMSG);
        ASSERT_ERROR(job_stepd_title_parse(T("slurmstepd: [123456789012345678901234567890123456789.0]"), &ref),
                     EBADMSG);
}

TEST(proc_stat) {
        JobProcStat st;
        uint32_t uid;

        ASSERT_OK(job_proc_stat_parse(T("4242 (bash) S 4241 4242 4242 34816 4300 4194560 6012 0 0 0 "
                                        "5 2 0 0 20 0 1 0 123456 9244672 1290 18446744073709551615\n"), &st));
        ASSERT_STREQ(st.comm, "bash");
        ASSERT_EQ(st.ppid, 4241);
        ASSERT_U64_EQ(st.start, 123456);
        /* a comm of the user's choice: spaces and parentheses; the fields
         * after the last ')' count */
        ASSERT_OK(job_proc_stat_parse(T("7 (a) 1 2 (b) S 99 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 77 0 0\n"), &st));
        ASSERT_STREQ(st.comm, "a) 1 2 (b");
        ASSERT_EQ(st.ppid, 99);
        ASSERT_U64_EQ(st.start, 77);
        /* cut, over-long comm, no number where one belongs */
        ASSERT_ERROR(job_proc_stat_parse(T("7 (a) S 99 7 7 0 -1 0 0"), &st), EBADMSG);
        ASSERT_ERROR(job_proc_stat_parse(T("7 (0123456789abcdefg) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 77\n"),
                                         &st), EBADMSG);
        ASSERT_ERROR(job_proc_stat_parse(T("7 (a) S x 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 77\n"), &st), EBADMSG);
        ASSERT_ERROR(job_proc_stat_parse(T("7 a S 1"), &st), EBADMSG);
        ASSERT_ERROR(job_proc_stat_parse(T(""), &st), EBADMSG);

        ASSERT_OK(job_proc_status_uid(T("Name:\tslurmstepd\nUid:\t0\t1000\t0\t0\nGid:\t0\t0\t0\t0\n"), &uid));
        ASSERT_EQ(uid, 0); /* the real uid: slurmstepd sets its effective one to the user's at times */
        ASSERT_OK(job_proc_status_uid(T("Uid:\t65534\t65534\t65534\t65534\n"), &uid));
        ASSERT_EQ(uid, 65534);
        ASSERT_ERROR(job_proc_status_uid(T("Name:\tx\nGid:\t0\t0\t0\t0\n"), &uid), EBADMSG);
        ASSERT_ERROR(job_proc_status_uid(T("Uid:\t0"), &uid), EBADMSG);       /* cut */
        ASSERT_ERROR(job_proc_status_uid(T("Uid:\t-1\t0\t0\t0\n"), &uid), EBADMSG);
        ASSERT_ERROR(job_proc_status_uid(T("Uid:\t4294967295\t0\t0\t0\n"), &uid), EBADMSG);
}

/* ---- a fake /proc ----------------------------------------------------- */

/* Pids above the kernel's pid_max: no real process has them. */
#define PID(n) (UINT32_C(5000000) + (n))

static char proc_root[] = "/tmp/lmk-test-jobproc-XXXXXX";

static void put_file(uint32_t pid, const char *name, const char *data, size_t len) {
        char path[256];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%" PRIu32 "/%s", proc_root, pid, name);
        f = fopen(path, "we");
        ASSERT_NOT_NULL(f);
        ASSERT_EQ(fwrite(data, 1, len, f), len);
        ASSERT_EQ(fclose(f), 0);
}

/* A process: its stat (comm, parent, start), real uid, cmdline, the file
 * it executes, its environment ("A=1\0B=2\0", env_len bytes) and its
 * /proc/<pid>/cgroup. */
typedef struct Fake {
        uint32_t pid, ppid, uid;
        uint64_t start;
        const char *comm, *cmdline, *exe, *cgroup;
        const char *env;
        size_t env_len;
} Fake;

static void fake(const Fake *f) {
        char path[256], buf[512];
        int n;

        snprintf(path, sizeof(path), "%s/%" PRIu32, proc_root, f->pid);
        ASSERT_TRUE(mkdir(path, 0755) == 0 || errno == EEXIST);
        n = snprintf(buf, sizeof(buf), "%" PRIu32 " (%s) S %" PRIu32 " 1 1 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 %"
                     PRIu64 " 1000 10 18446744073709551615\n", f->pid, f->comm, f->ppid, f->start);
        put_file(f->pid, "stat", buf, (size_t) n);
        n = snprintf(buf, sizeof(buf), "Name:\t%s\nUmask:\t0022\nState:\tS (sleeping)\nUid:\t%" PRIu32 "\t%" PRIu32
                     "\t%" PRIu32 "\t%" PRIu32 "\n", f->comm, f->uid, f->uid, f->uid, f->uid);
        put_file(f->pid, "status", buf, (size_t) n);
        put_file(f->pid, "cmdline", f->cmdline ?: f->comm, strlen(f->cmdline ?: f->comm) + 1);
        put_file(f->pid, "environ", f->env ?: "", f->env ? f->env_len : 0);
        put_file(f->pid, "cgroup", f->cgroup ?: "0::/user.slice/user-1000.slice/session-3.scope\n",
                 strlen(f->cgroup ?: "0::/user.slice/user-1000.slice/session-3.scope\n"));
        snprintf(path, sizeof(path), "%s/%" PRIu32 "/exe", proc_root, f->pid);
        (void) unlink(path);
        ASSERT_EQ(symlink(f->exe ?: "/usr/bin/sleep", path), 0);
}

#define ENV(lit) .env = (lit), .env_len = sizeof(lit) - 1

static void fake_done(void) {
        char cmd[128];

        snprintf(cmd, sizeof(cmd), "rm -rf %s", proc_root);
        ASSERT_EQ(system(cmd), 0);
}

/* root's slurmstepd of a step, its parent slurmd's */
static void fake_stepd(uint32_t pid, const char *title, uint64_t start) {
        fake(&(Fake) { .pid = pid, .ppid = PID(1), .uid = 0, .start = start, .comm = "slurmstepd",
                       .cmdline = title, .exe = "/usr/sbin/slurmstepd" });
}

static Job *notice(JobTable *t, JobNoticeEvent event, const char *job, uint32_t uid, const char *user) {
        JobNotice n = { .event = event };

        job_info_init(&n.info);
        snprintf(n.info.job, sizeof(n.info.job), "%s", job);
        n.info.uid = uid;
        snprintf(n.info.user, sizeof(n.info.user), "%s", user);
        jobs_apply_notice(t, &n, 5.0);
        return jobs_get(t, job);
}

static Job *resolve(JobTable *t, Process *p, uint32_t pid, uint32_t uid) {
        *p = (Process) { .pid = pid, .rank = JOB_UNSET, .job = { .uid = JOB_UNSET } };
        snprintf(p->comm, sizeof(p->comm), "prog");
        return jobs_resolve(t, p, uid, 10.0);
}

/* Only root's slurmstepd, above a process and older than it, names its job. */
TEST(stepd_tree) {
        JobRef ref;

        ASSERT_NOT_NULL(mkdtemp(proc_root));
        fake(&(Fake) { .pid = PID(1), .ppid = 0, .uid = 0, .start = 1, .comm = "slurmd", .exe = "/usr/sbin/slurmd" });
        fake_stepd(PID(100), "slurmstepd: [4711.batch]", 100);
        fake(&(Fake) { .pid = PID(101), .ppid = PID(100), .uid = 1000, .start = 101, .comm = "slurm_script" });
        fake(&(Fake) { .pid = PID(102), .ppid = PID(101), .uid = 1000, .start = 102, .comm = "mpirun" });
        ASSERT_EQ(job_stepd_find(proc_root, PID(102), &ref), 1);
        ASSERT_STREQ(ref.job, "4711");
        ASSERT_STREQ(ref.step, "batch");
        ASSERT_EQ(ref.uid, JOB_UNSET);
        ASSERT_EQ(job_stepd_find(proc_root, PID(101), &ref), 1);
        /* slurmstepd itself is read by its title, not by a walk */
        ASSERT_EQ(job_stepd_find(proc_root, PID(100), &ref), 0);
        ASSERT_EQ(job_stepd_read(proc_root, PID(100), &ref), 1);
        ASSERT_STREQ(ref.job, "4711");
        ASSERT_EQ(job_stepd_read(proc_root, PID(101), &ref), 0);

        /* a user's process named slurmstepd with a title of its choice */
        fake(&(Fake) { .pid = PID(200), .ppid = PID(1), .uid = 1000, .start = 200, .comm = "slurmstepd",
                       .cmdline = "slurmstepd: [4711.batch]", .exe = "/usr/sbin/slurmstepd" });
        fake(&(Fake) { .pid = PID(201), .ppid = PID(200), .uid = 1000, .start = 201, .comm = "sh" });
        ASSERT_EQ(job_stepd_find(proc_root, PID(201), &ref), 0);
        ASSERT_EQ(job_stepd_read(proc_root, PID(200), &ref), 0);
        /* root's by a setuid program run through a symlink called slurmstepd */
        fake(&(Fake) { .pid = PID(300), .ppid = PID(1), .uid = 0, .start = 300, .comm = "slurmstepd",
                       .cmdline = "slurmstepd: [4711.batch]", .exe = "/usr/bin/passwd" });
        fake(&(Fake) { .pid = PID(301), .ppid = PID(300), .uid = 1000, .start = 301, .comm = "sh" });
        ASSERT_EQ(job_stepd_find(proc_root, PID(301), &ref), 0);
        /* root's, called slurmstepd, but not a job's title */
        fake_stepd(PID(310), "slurmstepd: [4711.batch", 310);
        fake(&(Fake) { .pid = PID(311), .ppid = PID(310), .uid = 1000, .start = 311, .comm = "sh" });
        ASSERT_EQ(job_stepd_find(proc_root, PID(311), &ref), 0);
        /* Debian's executable, slurmstepd-wlm (an alternative) */
        fake(&(Fake) { .pid = PID(330), .ppid = PID(1), .uid = 0, .start = 330, .comm = "slurmstepd",
                       .cmdline = "slurmstepd: [4715.extern]", .exe = "/usr/sbin/slurmstepd-wlm" });
        fake(&(Fake) { .pid = PID(331), .ppid = PID(330), .uid = 1000, .start = 331, .comm = "sleep" });
        ASSERT_EQ(job_stepd_find(proc_root, PID(331), &ref), 1);
        ASSERT_STREQ(ref.step, "extern");
        /* not a name slurmstepd's package gives */
        fake(&(Fake) { .pid = PID(340), .ppid = PID(1), .uid = 0, .start = 340, .comm = "slurmstepd",
                       .cmdline = "slurmstepd: [4715.extern]", .exe = "/usr/sbin/slurmstepdx" });
        fake(&(Fake) { .pid = PID(341), .ppid = PID(340), .uid = 1000, .start = 341, .comm = "sleep" });
        ASSERT_EQ(job_stepd_find(proc_root, PID(341), &ref), 0);
        /* a slurmstepd deleted by an upgrade while its job runs still is one */
        fake(&(Fake) { .pid = PID(320), .ppid = PID(1), .uid = 0, .start = 320, .comm = "slurmstepd",
                       .cmdline = "slurmstepd: [4712.0]", .exe = "/usr/sbin/slurmstepd (deleted)" });
        fake(&(Fake) { .pid = PID(321), .ppid = PID(320), .uid = 1000, .start = 321, .comm = "a.out" });
        ASSERT_EQ(job_stepd_find(proc_root, PID(321), &ref), 1);
        ASSERT_STREQ(ref.job, "4712");
        ASSERT_STREQ(ref.step, "0");

        /* its parent exited and the pid now is a newer slurmstepd's: no
         * ancestor of a process started before it */
        fake_stepd(PID(400), "slurmstepd: [4713.batch]", 500);
        fake(&(Fake) { .pid = PID(401), .ppid = PID(400), .uid = 1000, .start = 401, .comm = "sh" });
        ASSERT_EQ(job_stepd_find(proc_root, PID(401), &ref), 0);
        /* parent gone: nothing above it is asked */
        fake(&(Fake) { .pid = PID(410), .ppid = PID(499), .uid = 1000, .start = 410, .comm = "sh" });
        ASSERT_EQ(job_stepd_find(proc_root, PID(410), &ref), 0);
        /* the process itself gone */
        ASSERT_TRUE(job_stepd_find(proc_root, PID(498), &ref) < 0);

        /* bounded: a chain deeper than JOB_STEPD_DEPTH_MAX, and a loop */
        fake_stepd(PID(1000), "slurmstepd: [4714.batch]", 1000);
        for (uint32_t i = 1; i <= JOB_STEPD_DEPTH_MAX + 1; i++)
                fake(&(Fake) { .pid = PID(1000 + i), .ppid = PID(1000 + i - 1), .uid = 1000, .start = 1000 + i,
                               .comm = "sh" });
        ASSERT_EQ(job_stepd_find(proc_root, PID(1000 + JOB_STEPD_DEPTH_MAX), &ref), 1);
        ASSERT_EQ(job_stepd_find(proc_root, PID(1000 + JOB_STEPD_DEPTH_MAX + 1), &ref), 0);
        fake(&(Fake) { .pid = PID(500), .ppid = PID(501), .uid = 1000, .start = 500, .comm = "sh" });
        fake(&(Fake) { .pid = PID(501), .ppid = PID(500), .uid = 1000, .start = 500, .comm = "sh" });
        ASSERT_EQ(job_stepd_find(proc_root, PID(500), &ref), 0);
        fake_done();
}

/* Who may put samples and notes into a job: the environment counts only
 * for the uid a trusted source names as the job's (a notice, a cgroup,
 * slurmstepd's tree). */
TEST(trust) {
        JobTable t;
        Process p, q;
        Job *j;

        snprintf(proc_root, sizeof(proc_root), "/tmp/lmk-test-jobproc-XXXXXX");
        ASSERT_NOT_NULL(mkdtemp(proc_root));
        ASSERT_OK(jobs_init(&t));
        t.proc_root = proc_root;
        fake(&(Fake) { .pid = PID(1), .ppid = 0, .uid = 0, .start = 1, .comm = "systemd", .exe = "/sbin/init" });

        /* A user's process claims job 4711 before the job exists here: it
         * creates no job, under no name */
        fake(&(Fake) { .pid = PID(10), .ppid = PID(1), .uid = 65534, .start = 10, .comm = "prog",
                       ENV("SLURM_JOB_ID=4711\0SLURM_JOB_USER=mallory\0LMK_NOTES=evil=1\0") });
        ASSERT_NULL(resolve(&t, &p, PID(10), 65534));
        ASSERT_NULL(jobs_get(&t, "4711"));
        ASSERT_STREQ(p.claim, "4711");
        ASSERT_EQ(p.job_state, JOB_RESOLVED);
        /* ... nor after the job's notice names another user as its owner */
        j = notice(&t, JOB_NOTICE_START, "4711", 4242, "alice");
        ASSERT_NOT_NULL(j);
        ASSERT_EQ(j->uid_trust, JOB_UID_SLURM);
        ASSERT_NULL(jobs_resolve(&t, &p, 65534, 11.0));
        ASSERT_EQ(j->live, 0);

        /* the job's user's environment, outside any cgroup and tree */
        fake(&(Fake) { .pid = PID(11), .ppid = PID(1), .uid = 4242, .start = 11, .comm = "prog",
                       ENV("SLURM_JOB_ID=4711\0SLURM_JOB_NAME=run7\0SLURM_JOB_USER=bob\0SLURM_JOB_UID=7\0"
                           "SLURM_STEP_ID=0\0PMIX_RANK=3\0LMK_NOTES=app=lulesh\0") });
        ASSERT_TRUE(resolve(&t, &q, PID(11), 4242) == j);
        ASSERT_STREQ(q.job.job, "4711");
        ASSERT_STREQ(q.job.step, "0");
        ASSERT_EQ(q.rank, 3);
        ASSERT_EQ(j->live, 1);
        ASSERT_STREQ(j->info.name, "run7");
        ASSERT_STREQ(job_notes_get(&j->info.notes, "app"), "lulesh");
        ASSERT_NULL(job_notes_get(&j->info.notes, "evil"));
        /* who the job's user is, only the notice said */
        ASSERT_STREQ(j->info.user, "alice");
        ASSERT_EQ(j->info.uid, 4242);

        /* another user: no SLURM_JOB_UID, a forged one, a forged user */
        fake(&(Fake) { .pid = PID(12), .ppid = PID(1), .uid = 65534, .start = 12, .comm = "prog",
                       ENV("SLURM_JOB_ID=4711\0SLURM_JOB_UID=4242\0SLURM_JOB_USER=alice\0PMIX_RANK=0\0") });
        ASSERT_NULL(resolve(&t, &p, PID(12), 65534));
        ASSERT_EQ(p.rank, JOB_UNSET);
        /* root is not the job's user */
        fake(&(Fake) { .pid = PID(13), .ppid = PID(1), .uid = 0, .start = 13, .comm = "prog",
                       ENV("SLURM_JOB_ID=4711\0") });
        ASSERT_NULL(resolve(&t, &p, PID(13), 0));
        /* an id no trusted source knows: no job, whoever claims it */
        fake(&(Fake) { .pid = PID(14), .ppid = PID(1), .uid = 4242, .start = 14, .comm = "prog",
                       ENV("SLURM_JOB_ID=5000\0SLURM_JOB_USER=mallory\0SLURM_JOB_UID=4242\0") });
        ASSERT_NULL(resolve(&t, &p, PID(14), 4242));
        ASSERT_NULL(jobs_get(&t, "5000"));
        ASSERT_EQ(j->live, 1);

        /* its own job's later, an exec with another environment: the claim
         * is the new one's */
        fake(&(Fake) { .pid = PID(15), .ppid = PID(1), .uid = 65534, .start = 15, .comm = "prog",
                       ENV("SLURM_JOB_ID=4711\0") });
        ASSERT_NULL(resolve(&t, &p, PID(15), 65534));
        ASSERT_NOT_NULL(notice(&t, JOB_NOTICE_START, "4720", 65534, "nobody"));
        ASSERT_NULL(jobs_resolve(&t, &p, 65534, 11.0));
        fake(&(Fake) { .pid = PID(15), .ppid = PID(1), .uid = 65534, .start = 15, .comm = "prog",
                       ENV("SLURM_JOB_ID=4720\0") });
        p.job_state = JOB_UNRESOLVED; /* what process_table_comm() does at exec */
        j = jobs_resolve(&t, &p, 65534, 12.0);
        ASSERT_NOT_NULL(j);
        ASSERT_STREQ(j->info.job, "4720");
        ASSERT_STREQ(p.claim, "");

        /* A claim that trust reaches later (the notice came after the
         * process's first sample): outside any job until then, in it after */
        fake(&(Fake) { .pid = PID(16), .ppid = PID(1), .uid = 4243, .start = 16, .comm = "prog",
                       ENV("SLURM_JOB_ID=4730\0LMK_NOTES=size=64\0") });
        ASSERT_NULL(resolve(&t, &p, PID(16), 4243));
        j = notice(&t, JOB_NOTICE_START, "4730", 4243, "carol");
        ASSERT_TRUE(jobs_resolve(&t, &p, 4243, 11.0) == j);
        ASSERT_EQ(j->live, 1);
        ASSERT_STREQ(job_notes_get(&j->info.notes, "size"), "64");
        /* one that exited meanwhile joins with what it claimed */
        fake(&(Fake) { .pid = PID(17), .ppid = PID(1), .uid = 4244, .start = 17, .comm = "prog",
                       ENV("SLURM_JOB_ID=4731\0") });
        ASSERT_NULL(resolve(&t, &p, PID(17), 4244));
        p.exit_time = 1;
        ASSERT_NULL(jobs_resolve(&t, &p, 4244, 11.0));
        j = notice(&t, JOB_NOTICE_START, "4731", 4244, "dave");
        ASSERT_TRUE(jobs_resolve(&t, &p, 4244, 12.0) == j);
        ASSERT_EQ(j->live, 0);
        jobs_done(&t);
        fake_done();
}

/* Trust from Slurm's placement: a cgroup/v1 path names the uid; a non-root
 * process in a job's v2 cgroup or below its slurmstepd is the job's user. */
TEST(trust_placed) {
        JobTable t;
        Process p;
        Job *j;

        snprintf(proc_root, sizeof(proc_root), "/tmp/lmk-test-jobproc-XXXXXX");
        ASSERT_NOT_NULL(mkdtemp(proc_root));
        ASSERT_OK(jobs_init(&t));
        t.proc_root = proc_root;
        fake(&(Fake) { .pid = PID(1), .ppid = 0, .uid = 0, .start = 1, .comm = "systemd", .exe = "/sbin/init" });

        /* cgroup/v1: root's path says uid 1000, whoever is in it */
        fake(&(Fake) { .pid = PID(20), .ppid = PID(1), .uid = 0, .start = 20, .comm = "prog",
                       .cgroup = "4:freezer:/slurm/uid_1000/job_4740/step_batch\n" });
        j = resolve(&t, &p, PID(20), 0);
        ASSERT_NOT_NULL(j);
        ASSERT_EQ(j->uid_trust, JOB_UID_SLURM);
        ASSERT_EQ(j->info.uid, 1000);
        fake(&(Fake) { .pid = PID(21), .ppid = PID(1), .uid = 1000, .start = 21, .comm = "prog",
                       ENV("SLURM_JOB_ID=4740\0") });
        ASSERT_TRUE(resolve(&t, &p, PID(21), 1000) == j);
        fake(&(Fake) { .pid = PID(22), .ppid = PID(1), .uid = 1001, .start = 22, .comm = "prog",
                       ENV("SLURM_JOB_ID=4740\0") });
        ASSERT_NULL(resolve(&t, &p, PID(22), 1001));

        /* cgroup/v2: root's processes in it (slurmstepd) say nothing of its
         * user, the first non-root one does, and others' environments then
         * count for nothing */
        fake(&(Fake) { .pid = PID(30), .ppid = PID(1), .uid = 0, .start = 30, .comm = "prog",
                       .cgroup = "0::/system.slice/slurmstepd.scope/job_4750/step_0/slurm\n",
                       ENV("SLURM_JOB_ID=4750\0LMK_NOTES=by=root\0") });
        j = resolve(&t, &p, PID(30), 0);
        ASSERT_NOT_NULL(j);
        ASSERT_EQ(j->uid_trust, JOB_UID_UNKNOWN);
        ASSERT_FALSE(j->environ_read);
        fake(&(Fake) { .pid = PID(31), .ppid = PID(1), .uid = 1002, .start = 31, .comm = "prog",
                       .cgroup = "0::/system.slice/slurmstepd.scope/job_4750/step_0/user/task_0\n",
                       ENV("SLURM_JOB_ID=4750\0SLURM_JOB_USER=root\0LMK_NOTES=by=user\0") });
        ASSERT_TRUE(resolve(&t, &p, PID(31), 1002) == j);
        ASSERT_EQ(j->uid_trust, JOB_UID_MEMBER);
        ASSERT_EQ(j->info.uid, 1002);
        ASSERT_STREQ(j->info.user, "");
        ASSERT_STREQ(job_notes_get(&j->info.notes, "by"), "user");
        fake(&(Fake) { .pid = PID(32), .ppid = PID(1), .uid = 1003, .start = 32, .comm = "prog",
                       ENV("SLURM_JOB_ID=4750\0") });
        ASSERT_NULL(resolve(&t, &p, PID(32), 1003));
        /* the notice, root's word, names the user */
        ASSERT_TRUE(notice(&t, JOB_NOTICE_START, "4750", 1002, "erin") == j);
        ASSERT_EQ(j->uid_trust, JOB_UID_SLURM);
        ASSERT_STREQ(j->info.user, "erin");

        /* linuxproc: below root's slurmstepd. The batch script's own
         * environment names a user of its choice: not the job's user */
        fake_stepd(PID(100), "slurmstepd: [4760.batch]", 100);
        fake(&(Fake) { .pid = PID(101), .ppid = PID(100), .uid = 1004, .start = 101, .comm = "slurm_script",
                       ENV("SLURM_JOB_ID=4760\0SLURM_JOB_USER=mallory\0SLURM_JOB_UID=0\0LMK_NOTES=app=x\0") });
        j = resolve(&t, &p, PID(101), 1004);
        ASSERT_NOT_NULL(j);
        ASSERT_STREQ(p.job.job, "4760");
        ASSERT_STREQ(p.job.step, "batch");
        ASSERT_EQ(j->uid_trust, JOB_UID_MEMBER);
        ASSERT_EQ(j->info.uid, 1004);
        ASSERT_STREQ(j->info.user, "");
        ASSERT_STREQ(job_notes_get(&j->info.notes, "app"), "x");
        /* a root process in the job's tree is in the job, but not its user;
         * a process of another user there gives no rank and no metadata */
        fake(&(Fake) { .pid = PID(102), .ppid = PID(101), .uid = 0, .start = 102, .comm = "prog",
                       ENV("SLURM_JOB_ID=4760\0") });
        ASSERT_TRUE(resolve(&t, &p, PID(102), 0) == j);
        ASSERT_EQ(j->info.uid, 1004);
        fake(&(Fake) { .pid = PID(103), .ppid = PID(101), .uid = 1005, .start = 103, .comm = "prog",
                       ENV("SLURM_JOB_ID=4760\0SLURM_STEP_ID=0\0PMIX_RANK=1\0") });
        ASSERT_TRUE(resolve(&t, &p, PID(103), 1005) == j);
        ASSERT_EQ(p.rank, JOB_UNSET);
        ASSERT_EQ(j->info.uid, 1004);
        /* the user's process that left the tree (double fork, or lmkd
         * started after): by its environment, now that its user is known */
        fake(&(Fake) { .pid = PID(110), .ppid = PID(1), .uid = 1004, .start = 110, .comm = "prog",
                       ENV("SLURM_JOB_ID=4760\0") });
        ASSERT_TRUE(resolve(&t, &p, PID(110), 1004) == j);
        fake(&(Fake) { .pid = PID(111), .ppid = PID(1), .uid = 65534, .start = 111, .comm = "prog",
                       ENV("SLURM_JOB_ID=4760\0") });
        ASSERT_NULL(resolve(&t, &p, PID(111), 65534));
        /* a user's look-alike slurmstepd above its own process names no job */
        fake(&(Fake) { .pid = PID(200), .ppid = PID(1), .uid = 65534, .start = 200, .comm = "slurmstepd",
                       .cmdline = "slurmstepd: [4770.batch]", .exe = "/usr/sbin/slurmstepd" });
        fake(&(Fake) { .pid = PID(201), .ppid = PID(200), .uid = 65534, .start = 201, .comm = "prog",
                       ENV("SLURM_JOB_ID=4770\0") });
        ASSERT_NULL(resolve(&t, &p, PID(201), 65534));
        ASSERT_NULL(jobs_get(&t, "4770"));
        jobs_done(&t);
        fake_done();
}

TEST(life) {
        JobTable t;
        Process p = { .pid = 100, .job_state = JOB_RESOLVED, .job = { .uid = JOB_UNSET } };
        JobNotice n;
        Job *j;

        ASSERT_OK(jobs_init(&t));
        snprintf(p.job.job, sizeof(p.job.job), "4711");
        j = jobs_resolve(&t, &p, 1000, 10.0);
        ASSERT_NOT_NULL(j);
        ASSERT_STREQ(j->display, "4711");
        ASSERT_TRUE(j->seen && !j->ended);

        /* the epilog's end stands even when a process is resolved later */
        memset(&n, 0, sizeof(n));
        n.event = JOB_NOTICE_END;
        job_info_init(&n.info);
        snprintf(n.info.job, sizeof(n.info.job), "4711");
        jobs_apply_notice(&t, &n, 20.0);
        ASSERT_TRUE(j->ended);
        /* a live process that inherited the job (we are outside any job,
         * so /proc keeps the inherited one) joins it after the notice */
        Process late = { .pid = (uint32_t) getpid(), .job_state = JOB_UNRESOLVED };
        late.job = p.job;
        ASSERT_TRUE(jobs_resolve(&t, &late, (uint32_t) getuid(), 21.0) == j);
        ASSERT_EQ(late.job_state, JOB_RESOLVED);
        ASSERT_EQ(j->live, 1);
        ASSERT_TRUE(j->ended);
        jobs_release(&t, &late, 22.0);
        ASSERT_EQ(j->live, 0);

        /* reported in an interval, then forgotten */
        jobs_end_interval(&t);
        ASSERT_NULL(jobs_get(&t, "4711"));
        jobs_done(&t);
}

static void notice_lmk(JobTable *t, JobNoticeEvent event, const char *job, JobLmk lmk) {
        JobNotice n = { .event = event };

        job_info_init(&n.info);
        snprintf(n.info.job, sizeof(n.info.job), "%s", job);
        n.info.lmk = lmk;
        jobs_apply_notice(t, &n, 5.0);
}

/* sbatch --lmk: root's notice says it; a later notice without the word
 * (the Epilog script beside the plugin) does not undo it; lmkd.conf
 * opt_out = forbidden turns off into on. */
TEST(lmk_wish) {
        JobTable t;

        ASSERT_OK(jobs_init(&t));
        notice_lmk(&t, JOB_NOTICE_START, "4801", JOB_LMK_OFF);
        notice_lmk(&t, JOB_NOTICE_START, "4802", JOB_LMK_NOCOUNTERS);
        notice_lmk(&t, JOB_NOTICE_START, "4803", JOB_LMK_UNSET);
        ASSERT_TRUE(job_opted_out(jobs_get(&t, "4801")));
        ASSERT_FALSE(job_counters_released(jobs_get(&t, "4801")));
        ASSERT_TRUE(job_counters_released(jobs_get(&t, "4802")));
        ASSERT_FALSE(job_opted_out(jobs_get(&t, "4802")));
        ASSERT_FALSE(job_opted_out(jobs_get(&t, "4803")) || job_counters_released(jobs_get(&t, "4803")));
        notice_lmk(&t, JOB_NOTICE_END, "4801", JOB_LMK_UNSET);
        ASSERT_TRUE(job_opted_out(jobs_get(&t, "4801")));
        ASSERT_EQ(t.opt_outs_refused, 0);
        jobs_done(&t);

        ASSERT_OK(jobs_init(&t));
        t.opt_out_forbidden = true;
        notice_lmk(&t, JOB_NOTICE_START, "4804", JOB_LMK_OFF);
        notice_lmk(&t, JOB_NOTICE_START, "4805", JOB_LMK_NOCOUNTERS);
        ASSERT_FALSE(job_opted_out(jobs_get(&t, "4804")));
        ASSERT_EQ(jobs_get(&t, "4804")->info.lmk, JOB_LMK_ON);
        ASSERT_TRUE(job_counters_released(jobs_get(&t, "4805")));
        ASSERT_EQ(t.opt_outs_refused, 1);
        jobs_done(&t);
}

/* An exec re-reads a process's job: the job still counts it once, and its
 * exit ends the job. */
TEST(exec_counts_once) {
        JobTable t;
        Process p = { .pid = (uint32_t) getpid(), .job_state = JOB_UNRESOLVED, .job = { .uid = JOB_UNSET } };
        Job *j;

        ASSERT_OK(jobs_init(&t));
        snprintf(p.job.job, sizeof(p.job.job), "4712");
        j = jobs_resolve(&t, &p, (uint32_t) getuid(), 10.0);
        ASSERT_NOT_NULL(j);
        ASSERT_EQ(j->live, 1);
        p.job_state = JOB_UNRESOLVED; /* what process_table_comm() does at exec */
        ASSERT_TRUE(jobs_resolve(&t, &p, (uint32_t) getuid(), 11.0) == j);
        ASSERT_EQ(j->live, 1);
        jobs_release(&t, &p, 12.0);
        ASSERT_EQ(j->live, 0);
        ASSERT_TRUE(j->ended);
        jobs_release(&t, &p, 13.0); /* released once only */
        ASSERT_EQ(j->live, 0);
        jobs_done(&t);
}

/* A step of the wall clock between two samples of a job (NTP setting back
 * a node that ran 2 h ahead): the job's times move with the clock, so the
 * next batch does not say it was last seen before it was first seen. */
TEST(clock_step) {
        JobTable t;
        Process p = { .pid = 100, .job_state = JOB_RESOLVED, .job = { .uid = JOB_UNSET } };
        Job *j;

        ASSERT_OK(jobs_init(&t));
        snprintf(p.job.job, sizeof(p.job.job), "4713");
        j = jobs_resolve(&t, &p, 1000, 1795557600.0);
        ASSERT_NOT_NULL(j);
        ASSERT_TRUE(jobs_resolve(&t, &p, 1000, 1795557630.0) == j);
        jobs_end_interval(&t);
        jobs_clock_stepped(&t, -7200.0);
        ASSERT_TRUE(jobs_resolve(&t, &p, 1000, 1795550460.0) == j);
        ASSERT_TRUE(j->first_seen == 1795550400.0);
        ASSERT_TRUE(j->last_seen == 1795550460.0);
        ASSERT_TRUE(j->last_seen >= j->first_seen);
        jobs_done(&t);
}

int main(void) {
        RUN(stepd_title);
        RUN(proc_stat);
        RUN(stepd_tree);
        RUN(trust);
        RUN(trust_placed);
        RUN(life);
        RUN(lmk_wish);
        RUN(exec_counts_once);
        RUN(clock_step);
        return 0;
}
