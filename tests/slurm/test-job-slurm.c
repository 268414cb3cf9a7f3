/* SPDX-License-Identifier: GPL-2.0-or-later */
/* collectors/job-cgroup.c, job-environ.c, job-info.c, job-slurm.c: cgroup
 * paths, environments, LMK_NOTES, merging, ids and text. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job-slurm.h"
#include "macro.h"
#include "tests.h"

#define S(lit) (lit), (sizeof(lit) - 1)

static JobRef ref;

/* Parses a literal; a result of 0 or an error must leave ref untouched. */
static int cg(const char *buf, size_t len) {
        JobRef before;
        int r;

        memset(&ref, 0x5a, sizeof(ref));
        before = ref;
        r = job_cgroup_parse(buf, len, &ref);
        if (r <= 0)
                ASSERT_TRUE(memcmp(&before, &ref, sizeof(ref)) == 0);
        return r;
}

/* As read on this project's test VM with Debian's Slurm 22.05 and
 * proctrack/cgroup + task/cgroup (a --enable-multiple-slurmd build). */
static const char debian_v1[] =
        "9:name=systemd:/\n"
        "8:pids:/\n"
        "7:blkio:/\n"
        "6:freezer:/slurm_vm/uid_65534/job_21293777/step_0\n"
        "5:devices:/\n"
        "4:memory:/slurm_vm/uid_65534/job_21293777/step_0/task_0\n"
        "3:cpuset:/slurm_vm/uid_65534/job_21293777/step_0\n"
        "2:cpuacct:/\n"
        "1:cpu:/\n"
        "0::/\n";

TEST(cgroup_v1) {
        ASSERT_EQ(cg(S(debian_v1)), 1);
        ASSERT_STREQ(ref.job, "21293777");
        ASSERT_STREQ(ref.step, "0");
        ASSERT_STREQ(ref.sluid, "");
        ASSERT_EQ(ref.uid, 65534);

        ASSERT_EQ(cg(S("12:freezer:/slurm/uid_1000/job_4711/step_batch\n"
                       "11:memory:/slurm/uid_1000/job_4711/step_batch/task_0\n"
                       "10:devices:/slurm/uid_1000/job_4711/step_batch\n"
                       "9:cpuset,cpu,cpuacct:/slurm/uid_1000/job_4711/step_batch\n"
                       "1:name=systemd:/system.slice/slurmd.service\n")), 1);
        ASSERT_STREQ(ref.job, "4711");
        ASSERT_STREQ(ref.step, "batch");
        ASSERT_EQ(ref.uid, 1000);

        ASSERT_EQ(cg(S("4:freezer:/slurm/uid_0/job_1/step_extern\n")), 1);
        ASSERT_STREQ(ref.step, "extern");
        ASSERT_EQ(cg(S("4:freezer:/slurm/uid_0/job_1/step_interactive\n")), 1);
        ASSERT_STREQ(ref.step, "interactive");
        ASSERT_EQ(cg(S("4:freezer:/slurm/uid_0/job_4294967294/step_4294967295\n")), 1);
        ASSERT_STREQ(ref.job, "4294967294");
        ASSERT_STREQ(ref.step, "4294967295");
        /* A heterogeneous step component. */
        ASSERT_EQ(cg(S("4:freezer:/slurm/uid_0/job_9/step_0+1/task_0\n")), 1);
        ASSERT_STREQ(ref.step, "0+1");

        /* The job known in one hierarchy, the step in another. */
        ASSERT_EQ(cg(S("4:memory:/slurm/uid_0/job_5\n"
                       "6:freezer:/slurm/uid_0/job_5/step_2/task_0\n")), 1);
        ASSERT_STREQ(ref.job, "5");
        ASSERT_STREQ(ref.step, "2");
        /* In the job, between steps (slurmstepd before it moves on). */
        ASSERT_EQ(cg(S("4:memory:/slurm/uid_0/job_5\n")), 1);
        ASSERT_STREQ(ref.step, "");
}

TEST(cgroup_v2) {
        ASSERT_EQ(cg(S("0::/system.slice/slurmstepd.scope/job_4711/step_0/user/task_0\n")), 1);
        ASSERT_STREQ(ref.job, "4711");
        ASSERT_STREQ(ref.step, "0");
        ASSERT_EQ(ref.uid, JOB_UNSET);

        /* slurmstepd of a step, in its own leaf next to the user's tasks */
        ASSERT_EQ(cg(S("0::/system.slice/slurmstepd.scope/job_4711/step_batch/slurm\n")), 1);
        ASSERT_STREQ(ref.step, "batch");
        ASSERT_EQ(cg(S("0::/system.slice/slurmstepd.scope/job_4711/step_extern/user/task_special\n")), 1);
        ASSERT_STREQ(ref.step, "extern");

        /* multiple-slurmd builds prefix the scope with the node name */
        ASSERT_EQ(cg(S("0::/system.slice/node17_slurmstepd.scope/job_12/step_3/user/task_1\n")), 1);
        ASSERT_STREQ(ref.job, "12");
        ASSERT_STREQ(ref.step, "3");

        /* Slurm >= 26.05 names the job directory by SLUID by default. */
        ASSERT_EQ(cg(S("0::/system.slice/slurmstepd.scope/sEKNKTV3WPV500/step_0/user/task_0\n")), 1);
        ASSERT_STREQ(ref.job, "");
        ASSERT_STREQ(ref.sluid, "sEKNKTV3WPV500");
        ASSERT_STREQ(ref.step, "0");
        /* ... and with CgroupJobIdPaths=yes keeps job_<id>. */
        ASSERT_EQ(cg(S("0::/system.slice/slurmstepd.scope/job_3385/step_batch/user/task_0\n")), 1);
        ASSERT_STREQ(ref.job, "3385");

        /* slurmstepd's own processes are no job's. */
        ASSERT_EQ(cg(S("0::/system.slice/slurmstepd.scope/system\n")), 0);
        /* Not SLUIDs: lower case, the letters Crockford leaves out, length. */
        ASSERT_EQ(cg(S("0::/system.slice/slurmstepd.scope/sekNKTV3WPV500/step_0\n")), 0);
        ASSERT_EQ(cg(S("0::/system.slice/slurmstepd.scope/sEKNKTV3WPV5I0/step_0\n")), 0);
        ASSERT_EQ(cg(S("0::/system.slice/slurmstepd.scope/sEKNKTV3WPV50/step_0\n")), 0);
}

TEST(cgroup_containers) {
        ASSERT_EQ(cg(S("0::/docker/0123456789abcdef/system.slice/slurmstepd.scope/job_77/step_1/user/task_0\n")), 1);
        ASSERT_STREQ(ref.job, "77");
        ASSERT_STREQ(ref.step, "1");
        ASSERT_EQ(cg(S("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1a2b.slice/"
                       "cri-containerd-7f3e.scope/system.slice/slurmstepd.scope/job_99/step_batch/user/task_0\n")), 1);
        ASSERT_STREQ(ref.job, "99");
        ASSERT_STREQ(ref.step, "batch");
        ASSERT_EQ(cg(S("7:freezer:/docker/abc/slurm/uid_1000/job_5/step_0\n"
                       "0::/docker/abc\n")), 1);
        ASSERT_STREQ(ref.job, "5");
        ASSERT_EQ(ref.uid, 1000);
        /* a container (or anything) called "slurm" is not Slurm's top */
        ASSERT_EQ(cg(S("0::/machine.slice/slurm/init.scope\n")), 0);
        ASSERT_EQ(cg(S("0::/slurm/foo/slurm/uid_3/job_8/step_0\n")), 1);
        ASSERT_STREQ(ref.job, "8");
}

TEST(cgroup_no_job) {
        ASSERT_EQ(cg(S("")), 0);
        ASSERT_EQ(cg(S("0::/\n")), 0);
        ASSERT_EQ(cg(S("0::/init.scope\n")), 0);
        ASSERT_EQ(cg(S("0::/system.slice/slurmd.service\n")), 0);
        ASSERT_EQ(cg(S("0::/user.slice/user-1000.slice/session-3.scope\n")), 0);
        ASSERT_EQ(cg(S("1:name=systemd:/user.slice/user-1000.slice/session-3.scope\n"
                       "0::/user.slice/user-1000.slice/session-3.scope\n")), 0);
        ASSERT_EQ(cg(S("4:memory:/process_api/10168cc131e080126e8c6d94bbaada3b\n")), 0);
        /* half an anchor */
        ASSERT_EQ(cg(S("6:freezer:/slurm\n")), 0);
        ASSERT_EQ(cg(S("6:freezer:/slurm/uid_0\n")), 0);
        ASSERT_EQ(cg(S("6:freezer:/slurm/uid_0/system\n")), 0);
        ASSERT_EQ(cg(S("6:freezer:/slurm/uid_x/job_5/step_0\n")), 0);
        ASSERT_EQ(cg(S("6:freezer:/slurm/uid_0/uid_0/job_5/step_0\n")), 0);
        ASSERT_EQ(cg(S("0::/system.slice/slurmstepd.scope\n")), 0);
}

/* Users own their systemd instance's tree (and, with cgroup/v1, the cgroups
 * of their own job): no cgroup they can name claims a job they are not in. */
TEST(cgroup_user_delegated) {
        ASSERT_EQ(cg(S("0::/user.slice/user-1000.slice/user@1000.service/app.slice/"
                       "slurmstepd.scope/job_5/step_0/user/task_0\n")), 0);
        ASSERT_EQ(cg(S("0::/user.slice/user-1000.slice/user@1000.service/slurm/uid_0/job_5/step_0\n")), 0);
        ASSERT_EQ(cg(S("0::/user.slice/user-1000.slice/user@1000.service/user.slice/"
                       "podman-1.scope/system.slice/slurmstepd.scope/job_5/step_0\n")), 0);

        /* Nested inside one's own job: the outermost (Slurm's) job counts. */
        ASSERT_EQ(cg(S("4:memory:/slurm/uid_1000/job_5/step_0/slurm/uid_0/job_6/step_1\n")), 1);
        ASSERT_STREQ(ref.job, "5");
        ASSERT_STREQ(ref.step, "0");
        ASSERT_EQ(ref.uid, 1000);
        ASSERT_EQ(cg(S("0::/system.slice/slurmstepd.scope/job_5/step_0/user/task_0/"
                       "system.slice/slurmstepd.scope/job_6/step_1\n")), 1);
        ASSERT_STREQ(ref.job, "5");
        ASSERT_STREQ(ref.step, "0");
        /* A directory made in the job directory itself. */
        ASSERT_EQ(cg(S("4:memory:/slurm/uid_1000/job_5/job_6/step_1\n")), 1);
        ASSERT_STREQ(ref.job, "5");
        ASSERT_STREQ(ref.step, "");

        /* A cgroup name may hold a newline: a fake line naming another job
         * makes the file contradict itself, never names the other job. */
        ASSERT_ERROR(cg(S("4:memory:/slurm/uid_1000/job_5/step_0/x\n"
                          "4:memory:/slurm/uid_0/job_6/step_0\n")), EBADMSG);
}

TEST(cgroup_hostile) {
        static const char *const bad[] = {
                "6:freezer:/slurm/uid_0/job_\n",
                "6:freezer:/slurm/uid_0/job_/step_0\n",
                "6:freezer:/slurm/uid_0/job_abc/step_0\n",
                "6:freezer:/slurm/uid_0/job_../step_0\n",
                "6:freezer:/slurm/uid_0/job_12a\n",
                "6:freezer:/slurm/uid_0/job_-1\n",
                "6:freezer:/slurm/uid_0/job_+5\n",
                "6:freezer:/slurm/uid_0/job_007/step_0\n",
                "6:freezer:/slurm/uid_0/job_0\n",
                "6:freezer:/slurm/uid_0/job_4294967295\n",
                "6:freezer:/slurm/uid_0/job_99999999999\n",
                "6:freezer:/slurm/uid_0/job_4711_3/step_0\n",
                "6:freezer:/slurm/uid_0/job_5/step_\n",
                "6:freezer:/slurm/uid_0/job_5/step_0x\n",
                "6:freezer:/slurm/uid_0/job_5/step_BATCH\n",
                "6:freezer:/slurm/uid_0/job_5/step_1+\n",
                "6:freezer:/slurm/uid_0/job_5/step_..\n",
                "6:freezer:/slurm/uid_0/job_5/step_abcdefghijklmnopqrstuvwxyz\n",
                "6:freezer:/slurm/uid_0/../job_5/step_0\n",
                "6:freezer:/slurm/uid_0/./job_5/step_0\n",
                "6:freezer:/slurm//uid_0/job_5/step_0\n",
                "6:freezer:/slurm/uid_0/job_5/step_0/\n",
                "0::/system.slice/slurmstepd.scope/job_x/step_0\n",
                "6:freezer:slurm/uid_0/job_5\n",
                "6:freezer:\n",
                "freezer:/slurm/uid_0/job_5\n",
                "x6:freezer:/slurm/uid_0/job_5\n",
                ":freezer:/slurm/uid_0/job_5\n",
                "6/slurm/uid_0/job_5\n",
                /* a cut read: the last line has no '\n' */
                "6:freezer:/slurm/uid_0/job_47",
                "0::/\n6:freezer:/slurm/uid_0/job_4711/step_0",
                /* hierarchies that disagree */
                "6:freezer:/slurm/uid_0/job_5/step_0\n4:memory:/slurm/uid_0/job_6/step_0\n",
                "6:freezer:/slurm/uid_0/job_5/step_0\n4:memory:/slurm/uid_0/job_5/step_1\n",
                "6:freezer:/slurm/uid_0/job_5/step_0\n4:memory:/slurm/uid_1/job_5/step_0\n",
                "6:freezer:/slurm/uid_0/job_5/step_0\n0::/system.slice/slurmstepd.scope/job_5/step_0\n",
                ("0::/system.slice/slurmstepd.scope/job_5/step_0\n"
                 "0::/system.slice/slurmstepd.scope/sEKNKTV3WPV500/step_0\n"),
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                int r = cg(bad[i], strlen(bad[i]));

                if (r != -EBADMSG)
                        test_fail("\"%s\": expected -EBADMSG, got %d", bad[i], r);
        }

        /* NUL bytes */
        ASSERT_ERROR(cg(S("6:freezer:/slurm/uid_0/job_5\0/step_0\n")), EBADMSG);
        ASSERT_ERROR(cg(S("6:freezer:/slurm/uid_0/job_4711\n\0")), EBADMSG);
        ASSERT_ERROR(job_cgroup_parse(NULL, 5, &ref), EINVAL);
}

TEST(cgroup_long) {
        size_t n = 60000, o = 0;
        _cleanup_free_ char *buf = malloc(n + 200);

        ASSERT_NOT_NULL(buf);
        o += (size_t) sprintf(buf, "0::");
        while (o < n)
                o += (size_t) sprintf(buf + o, "/abcdefghij");
        o += (size_t) sprintf(buf + o, "/system.slice/slurmstepd.scope/job_31337/step_2/user/task_0\n");
        ASSERT_EQ(cg(buf, o), 1);
        ASSERT_STREQ(ref.job, "31337");
        ASSERT_STREQ(ref.step, "2");

        /* one huge component */
        o = (size_t) sprintf(buf, "6:freezer:/slurm/uid_0/job_");
        memset(buf + o, '1', n - o);
        buf[n] = '\n';
        ASSERT_ERROR(cg(buf, n + 1), EBADMSG);

        o = (size_t) sprintf(buf, "6:freezer:/slurm/uid_0/job_5/step_");
        memset(buf + o, 'a', n - o);
        buf[n] = '\n';
        ASSERT_ERROR(cg(buf, n + 1), EBADMSG);

        /* thousands of lines, all in one job */
        o = 0;
        for (unsigned i = 0; o < n; i++)
                o += (size_t) sprintf(buf + o, "%u:c%u:/slurm/uid_0/job_5/step_0\n", i, i);
        ASSERT_EQ(cg(buf, o), 1);
        ASSERT_STREQ(ref.job, "5");
}

/* However a valid file is cut, the answer is never another job. */
TEST(cgroup_every_prefix) {
        size_t len = strlen(debian_v1);

        for (size_t k = 0; k <= len; k++) {
                int r = cg(debian_v1, k);

                if (r == 1) {
                        ASSERT_STREQ(ref.job, "21293777");
                        ASSERT_TRUE(streq(ref.step, "0") || streq(ref.step, ""));
                } else
                        ASSERT_TRUE(r == 0 || r == -EBADMSG);
        }
}

/* One path, as a kernel cgroup record gives it: the job and where its own
 * directory ends. */
TEST(cgroup_path) {
        static const char v2[] = "/system.slice/slurmstepd.scope/job_4711/step_0/user/task_0";
        static const char node[] = "/system.slice/cn1_slurmstepd.scope/job_12";
        JobRef r;
        size_t end;

        ASSERT_EQ(job_cgroup_path_parse(v2, strlen(v2), &r, &end), 1);
        ASSERT_STREQ(r.job, "4711");
        ASSERT_STREQ(r.step, "0");
        ASSERT_EQ(end, strlen("/system.slice/slurmstepd.scope/job_4711"));
        ASSERT_EQ(job_cgroup_path_parse(node, strlen(node), &r, &end), 1);
        ASSERT_STREQ(r.job, "12");
        ASSERT_EQ(end, strlen(node));
        ASSERT_EQ(job_cgroup_path_parse("/slurm/uid_5/job_7/step_1", 25, &r, &end), 1);
        ASSERT_EQ(end, strlen("/slurm/uid_5/job_7"));
        ASSERT_EQ(job_cgroup_path_parse("/system.slice/slurmstepd.scope/system", 37, &r, &end), 0);
        ASSERT_EQ(job_cgroup_path_parse("/user.slice/user@1000.service/slurmstepd.scope/job_9", 52, &r, &end), 0);
        ASSERT_ERROR(job_cgroup_path_parse("/system.slice/slurmstepd.scope/job_4\0711", 41, &r, &end), EBADMSG);
        ASSERT_ERROR(job_cgroup_path_parse("relative/job_1", 14, &r, &end), EBADMSG);
        ASSERT_ERROR(job_cgroup_path_parse(NULL, 3, &r, &end), EINVAL);
}

TEST(cgroup_read_self) {
        /* The test itself runs outside any job, unless someone runs it
         * inside Slurm: either way the live file parses. */
        ASSERT_TRUE(job_cgroup_read("/proc", getpid(), &ref) >= 0);
        ASSERT_ERROR(job_cgroup_read("/proc", 0, &ref), EINVAL);
        ASSERT_TRUE(job_cgroup_read("/proc", INT32_MAX, &ref) < 0);
}

/* ---- environ ----------------------------------------------------------- */

static JobInfo info;

static int env(const char *buf, size_t len) {
        JobInfo before;
        int r;

        memset(&info, 0x5a, sizeof(info));
        before = info;
        r = job_environ_parse(buf, len, &info);
        if (r <= 0)
                ASSERT_TRUE(memcmp(&before, &info, sizeof(info)) == 0);
        return r;
}

/* A batch script's environment under Slurm 22.05 (trimmed), plus notes. */
static const char batch_env[] =
        "HOME=/root\0"
        "SLURMD_NODENAME=vm\0"
        "SLURM_CLUSTER_NAME=lmktest\0"
        "SLURM_CPUS_ON_NODE=1\0"
        "SLURM_JOBID=59398791\0"
        "SLURM_JOB_CPUS_PER_NODE=1\0"
        "SLURM_JOB_GID=0\0"
        "SLURM_JOB_ID=59398791\0"
        "SLURM_JOB_NAME=job-uaexyt3v.sh\0"
        "SLURM_JOB_NODELIST=vm\0"
        "SLURM_JOB_NUM_NODES=1\0"
        "SLURM_JOB_PARTITION=debug\0"
        "SLURM_JOB_UID=0\0"
        "SLURM_JOB_USER=root\0"
        "SLURM_NNODES=1\0"
        "SLURM_TASK_PID=6861\0"
        "LMK_NOTES=app=demo:size=128\0"
        "PATH=/usr/bin:/bin\0";

TEST(environ_batch) {
        char id[JOB_ID_SIZE];

        ASSERT_EQ(env(S(batch_env)), 1);
        ASSERT_STREQ(info.job, "59398791");
        ASSERT_STREQ(info.step, "");
        ASSERT_STREQ(info.user, "root");
        ASSERT_EQ(info.uid, 0);
        ASSERT_STREQ(info.partition, "debug");
        ASSERT_STREQ(info.account, "");
        ASSERT_STREQ(info.name, "job-uaexyt3v.sh");
        ASSERT_STREQ(info.cluster, "lmktest");
        ASSERT_EQ(info.nodes, 1);
        ASSERT_EQ(info.tasks, JOB_UNSET);
        ASSERT_EQ(info.array_job, JOB_UNSET);
        ASSERT_EQ(info.notes.n, 2);
        ASSERT_STREQ(job_notes_get(&info.notes, "app"), "demo");
        ASSERT_STREQ(job_notes_get(&info.notes, "size"), "128");
        job_info_display_id(&info, id);
        ASSERT_STREQ(id, "59398791");
}

TEST(environ_step) {
        ASSERT_EQ(env(S("SLURM_JOB_ID=7\0SLURM_STEP_ID=1\0SLURM_STEPID=1\0SLURM_NTASKS=4\0"
                        "SLURM_NNODES=2\0SLURM_JOB_ACCOUNT=p123\0")), 1);
        ASSERT_STREQ(info.step, "1");
        ASSERT_EQ(info.tasks, 4);
        ASSERT_EQ(info.nodes, 2);
        ASSERT_STREQ(info.account, "p123");
        /* the old names alone */
        ASSERT_EQ(env(S("SLURM_JOBID=8\0SLURM_STEPID=3\0")), 1);
        ASSERT_STREQ(info.job, "8");
        ASSERT_STREQ(info.step, "3");
        /* the special steps as numbers */
        ASSERT_EQ(env(S("SLURM_JOB_ID=7\0SLURM_STEP_ID=4294967291\0")), 1);
        ASSERT_STREQ(info.step, "batch");
        ASSERT_EQ(env(S("SLURM_JOB_ID=7\0SLURM_STEP_ID=4294967292\0")), 1);
        ASSERT_STREQ(info.step, "extern");
        ASSERT_EQ(env(S("SLURM_JOB_ID=7\0SLURM_STEP_ID=4294967290\0")), 1);
        ASSERT_STREQ(info.step, "interactive");
        ASSERT_EQ(env(S("SLURM_JOB_ID=7\0SLURM_STEP_ID=4294967293\0")), 1);
        ASSERT_STREQ(info.step, "");
        ASSERT_EQ(env(S("SLURM_JOB_ID=7\0SLURM_STEP_ID=x\0")), 1);
        ASSERT_STREQ(info.step, "");
}

TEST(environ_array_het) {
        char id[JOB_ID_SIZE];

        ASSERT_EQ(env(S("SLURM_JOB_ID=4714\0SLURM_ARRAY_JOB_ID=4711\0SLURM_ARRAY_TASK_ID=3\0")), 1);
        ASSERT_STREQ(info.job, "4714");
        ASSERT_EQ(info.array_job, 4711);
        ASSERT_EQ(info.array_task, 3);
        job_info_display_id(&info, id);
        ASSERT_STREQ(id, "4711_3");

        ASSERT_EQ(env(S("SLURM_JOB_ID=4712\0SLURM_HET_JOB_ID=4711\0SLURM_HET_JOB_OFFSET=1\0")), 1);
        job_info_display_id(&info, id);
        ASSERT_STREQ(id, "4711+1");
        ASSERT_EQ(env(S("SLURM_JOB_ID=4711\0SLURM_HET_JOB_ID=4711\0SLURM_HET_JOB_OFFSET=0\0")), 1);
        job_info_display_id(&info, id);
        ASSERT_STREQ(id, "4711+0");

        /* half of a pair, or a bad half, is no pair */
        ASSERT_EQ(env(S("SLURM_JOB_ID=4714\0SLURM_ARRAY_TASK_ID=3\0")), 1);
        ASSERT_EQ(info.array_task, JOB_UNSET);
        ASSERT_EQ(env(S("SLURM_JOB_ID=4714\0SLURM_ARRAY_JOB_ID=x\0SLURM_ARRAY_TASK_ID=3\0")), 1);
        ASSERT_EQ(info.array_job, JOB_UNSET);
        ASSERT_EQ(info.array_task, JOB_UNSET);
        job_info_display_id(&info, id);
        ASSERT_STREQ(id, "4714");
}

/* Ranks: MPI's own variables, SLURM_PROCID only in numbered steps. */
TEST(environ_rank) {
        /* an Open MPI rank started by mpirun inside a batch script: the
         * launcher's SLURM_PROCID of the batch step is not its rank */
        ASSERT_EQ(env(S("SLURM_JOB_ID=7\0SLURM_STEP_ID=4294967291\0SLURM_PROCID=0\0"
                        "OMPI_COMM_WORLD_SIZE=2\0OMPI_COMM_WORLD_RANK=1\0PMIX_RANK=1\0")), 1);
        ASSERT_EQ(info.rank, 1);
        /* the batch script itself, and mpirun, carry SLURM_PROCID=0 only */
        ASSERT_EQ(env(S(batch_env)), 1);
        ASSERT_EQ(info.rank, JOB_UNSET);
        ASSERT_EQ(env(S("SLURM_JOB_ID=7\0SLURM_STEP_ID=4294967291\0SLURM_PROCID=0\0")), 1);
        ASSERT_EQ(info.rank, JOB_UNSET);
        ASSERT_EQ(env(S("SLURM_JOB_ID=7\0SLURM_PROCID=0\0")), 1);
        ASSERT_EQ(info.rank, JOB_UNSET);
        ASSERT_EQ(env(S("SLURM_JOB_ID=7\0SLURM_STEP_ID=4294967290\0SLURM_PROCID=0\0")), 1);
        ASSERT_EQ(info.rank, JOB_UNSET);
        /* a task of srun step 2 (any MPI, or none) */
        ASSERT_EQ(env(S("SLURM_JOB_ID=7\0SLURM_STEP_ID=2\0SLURM_PROCID=13\0")), 1);
        ASSERT_EQ(info.rank, 13);
        ASSERT_EQ(env(S("SLURM_JOB_ID=7\0SLURM_STEPID=0\0SLURM_PROCID=3\0")), 1);
        ASSERT_EQ(info.rank, 3);
        /* srun --mpi=pmix: PMIx's rank and SLURM_PROCID agree; MPI's word first */
        ASSERT_EQ(env(S("SLURM_JOB_ID=7\0SLURM_STEP_ID=0\0SLURM_PROCID=5\0PMIX_RANK=4\0")), 1);
        ASSERT_EQ(info.rank, 4);
        /* the order of MPI's variables: Open MPI, PMIx, PMI, MVAPICH */
        ASSERT_EQ(env(S("SLURM_JOB_ID=7\0MV2_COMM_WORLD_RANK=4\0PMI_RANK=3\0PMIX_RANK=2\0"
                        "OMPI_COMM_WORLD_RANK=1\0")), 1);
        ASSERT_EQ(info.rank, 1);
        ASSERT_EQ(env(S("SLURM_JOB_ID=7\0MV2_COMM_WORLD_RANK=4\0PMI_RANK=3\0")), 1);
        ASSERT_EQ(info.rank, 3);
        ASSERT_EQ(env(S("SLURM_JOB_ID=7\0MV2_COMM_WORLD_RANK=4\0")), 1);
        ASSERT_EQ(info.rank, 4);
        ASSERT_EQ(env(S("SLURM_JOB_ID=7\0PMI_RANK=0\0")), 1);
        ASSERT_EQ(info.rank, 0);
        /* a bad value is passed over for the next source */
        ASSERT_EQ(env(S("SLURM_JOB_ID=7\0OMPI_COMM_WORLD_RANK=x\0PMI_RANK=2\0")), 1);
        ASSERT_EQ(info.rank, 2);
        ASSERT_EQ(env(S("SLURM_JOB_ID=7\0SLURM_STEP_ID=1\0PMI_RANK=-1\0SLURM_PROCID=6\0")), 1);
        ASSERT_EQ(info.rank, 6);
        /* what is not a rank: signs, leading zeros, spaces, too large, empty */
        ASSERT_EQ(env(S("SLURM_JOB_ID=7\0PMI_RANK=+1\0")), 1);
        ASSERT_EQ(info.rank, JOB_UNSET);
        ASSERT_EQ(env(S("SLURM_JOB_ID=7\0PMI_RANK=01\0")), 1);
        ASSERT_EQ(info.rank, JOB_UNSET);
        ASSERT_EQ(env(S("SLURM_JOB_ID=7\0PMI_RANK= 1\0")), 1);
        ASSERT_EQ(info.rank, JOB_UNSET);
        ASSERT_EQ(env(S("SLURM_JOB_ID=7\0PMI_RANK=2147483647\0")), 1);
        ASSERT_EQ(info.rank, JOB_UNSET);
        ASSERT_EQ(env(S("SLURM_JOB_ID=7\0PMI_RANK=2147483646\0")), 1);
        ASSERT_EQ(info.rank, 2147483646);
        ASSERT_EQ(env(S("SLURM_JOB_ID=7\0PMI_RANK=\0")), 1);
        ASSERT_EQ(info.rank, JOB_UNSET);
        /* names that only start like ours; the first of duplicates counts */
        ASSERT_EQ(env(S("SLURM_JOB_ID=7\0PMI_RANKS=1\0OMPI_COMM_WORLD_RANKX=1\0XPMI_RANK=1\0")), 1);
        ASSERT_EQ(info.rank, JOB_UNSET);
        ASSERT_EQ(env(S("SLURM_JOB_ID=7\0PMI_RANK=1\0PMI_RANK=2\0")), 1);
        ASSERT_EQ(info.rank, 1);
        /* a cut read never yields half a rank */
        ASSERT_EQ(env(S("SLURM_JOB_ID=7\0PMI_RANK=12")), 1);
        ASSERT_EQ(info.rank, JOB_UNSET);
        /* a rank is the process's, not the job's: merging leaves it */
        {
                JobInfo a, b;

                ASSERT_EQ(job_environ_parse(S("SLURM_JOB_ID=7\0"), &a), 1);
                ASSERT_EQ(job_environ_parse(S("SLURM_JOB_ID=7\0PMI_RANK=3\0"), &b), 1);
                ASSERT_EQ(job_info_merge(&a, &b), 0);
                ASSERT_EQ(a.rank, JOB_UNSET);
        }
}

TEST(environ_no_job) {
        ASSERT_EQ(env(S("")), 0);
        ASSERT_EQ(env(S("HOME=/root\0PATH=/bin\0")), 0);
        ASSERT_EQ(env(S("SLURM_JOB_ID=\0")), 0);
        ASSERT_EQ(env(S("SLURM_JOB_ID=abc\0")), 0);
        ASSERT_EQ(env(S("SLURM_JOB_ID=0\0")), 0);
        ASSERT_EQ(env(S("SLURM_JOB_ID=-1\0")), 0);
        ASSERT_EQ(env(S("SLURM_JOB_ID=007\0")), 0);
        ASSERT_EQ(env(S("SLURM_JOB_ID= 7\0")), 0);
        ASSERT_EQ(env(S("SLURM_JOB_ID=4294967295\0")), 0);
        ASSERT_EQ(env(S("SLURM_JOB_ID=4711_3\0")), 0);
        /* names that only start like ours */
        ASSERT_EQ(env(S("SLURM_JOB_IDX=7\0SLURM_JOB_ID_HET_GROUP_0=7\0XSLURM_JOB_ID=7\0")), 0);
        ASSERT_EQ(env(S("SLURM_JOB_ID\0")), 0);
        /* the first of duplicates counts, as for getenv() */
        ASSERT_EQ(env(S("SLURM_JOB_ID=x\0SLURM_JOB_ID=7\0")), 0);
        ASSERT_ERROR(job_environ_parse(NULL, 3, &info), EINVAL);
}

TEST(environ_duplicates) {
        ASSERT_EQ(env(S("SLURM_JOB_ID=5\0SLURM_JOB_USER=alice\0SLURM_JOB_ID=6\0SLURM_JOB_USER=bob\0")), 1);
        ASSERT_STREQ(info.job, "5");
        ASSERT_STREQ(info.user, "alice");
        /* SLURM_JOB_ID wins over SLURM_JOBID wherever it is */
        ASSERT_EQ(env(S("SLURM_JOBID=6\0SLURM_JOB_ID=5\0")), 1);
        ASSERT_STREQ(info.job, "5");
}

TEST(environ_truncated) {
        /* a read that stopped inside the value: never half an id */
        ASSERT_EQ(env(S("SLURM_JOB_ID=4711")), 0);
        ASSERT_EQ(env(S("HOME=/\0SLURM_JOB_ID=4711\0SLURM_JOB_USER=ali")), 1);
        ASSERT_STREQ(info.job, "4711");
        ASSERT_STREQ(info.user, "");
        ASSERT_EQ(env(S("SLURM_JOB_ID=4711\0LMK_NOTES=app=demo:size=12")), 1);
        ASSERT_EQ(info.notes.n, 0);

        /* no NUL at all */
        {
                size_t n = 100000;
                _cleanup_free_ char *buf = malloc(n);

                ASSERT_NOT_NULL(buf);
                memset(buf, 'A', n);
                memcpy(buf, "SLURM_JOB_ID=5", 14);
                ASSERT_EQ(env(buf, n), 0);
        }
}

TEST(environ_huge) {
        size_t n = 4 * 1024 * 1024, o = 0;
        _cleanup_free_ char *buf = malloc(n + 65536);

        ASSERT_NOT_NULL(buf);
        while (o < n) {
                memcpy(buf + o, "MODULEPATH=/opt/modules/a:/opt/modules/b", 41);
                o += 41;
        }
        o += (size_t) sprintf(buf + o, "SLURM_JOB_ID=123") + 1;
        /* values past their field are cut */
        o += (size_t) sprintf(buf + o, "SLURM_JOB_NAME=");
        memset(buf + o, 'n', 1000);
        o += 1000;
        buf[o++] = '\0';
        o += (size_t) sprintf(buf + o, "SLURM_JOB_USER=");
        memset(buf + o, 'u', 1000);
        o += 1000;
        buf[o++] = '\0';
        o += (size_t) sprintf(buf + o, "LMK_NOTES=");
        for (int i = 0; i < 200; i++)
                o += (size_t) sprintf(buf + o, "k%d=%0200d:", i, i);
        buf[o++] = '\0';

        ASSERT_EQ(env(buf, o), 1);
        ASSERT_STREQ(info.job, "123");
        ASSERT_EQ(strlen(info.name), JOB_NAME_SIZE - 1);
        ASSERT_EQ(strlen(info.user), JOB_TEXT_SIZE - 1);
        /* 1024 bytes of notes hold five pairs of 202 bytes ("k0".."k4") */
        ASSERT_EQ(info.notes.n, 5);
        ASSERT_EQ(info.notes.rejected, 195);
        ASSERT_NOT_NULL(job_notes_get(&info.notes, "k4"));
}

TEST(environ_text) {
        /* control characters and broken UTF-8 become '?' */
        ASSERT_EQ(env(S("SLURM_JOB_ID=1\0SLURM_JOB_NAME=a\tb\x1b[31m\x7f\xff\xc3(\xed\xa0\x80z\0")), 1);
        ASSERT_STREQ(info.name, "a?b?[31m???" "(???z");
        /* valid UTF-8 stays */
        ASSERT_EQ(env(S("SLURM_JOB_ID=1\0SLURM_JOB_NAME=Grüße \xe2\x82\xac \xf0\x9f\x9a\x80\0")), 1);
        ASSERT_STREQ(info.name, "Grüße € 🚀");
        /* overlong encodings are not UTF-8 */
        ASSERT_EQ(env(S("SLURM_JOB_ID=1\0SLURM_JOB_USER=\xc0\xaf\xe0\x80\xaf\0")), 1);
        ASSERT_STREQ(info.user, "?????");

        /* a cut never splits a character */
        {
                char buf[1024];
                size_t o = (size_t) sprintf(buf, "SLURM_JOB_ID=1%cSLURM_JOB_NAME=", 0);

                for (int i = 0; i < 200; i++) {
                        memcpy(buf + o, "\xe2\x82\xac", 3); /* € */
                        o += 3;
                }
                buf[o++] = '\0';
                ASSERT_EQ(env(buf, o), 1);
                ASSERT_EQ(strlen(info.name), 255); /* 85 × 3 bytes */
                ASSERT_TRUE(memcmp(info.name + 252, "\xe2\x82\xac", 3) == 0);
        }

        /* numbers that are not */
        ASSERT_EQ(env(S("SLURM_JOB_ID=1\0SLURM_JOB_UID=x\0SLURM_JOB_NUM_NODES=0\0SLURM_NNODES=3\0"
                        "SLURM_NTASKS=99999999999\0")), 1);
        ASSERT_EQ(info.uid, JOB_UNSET);
        ASSERT_EQ(info.nodes, JOB_UNSET); /* SLURM_JOB_NUM_NODES was there, bad */
        ASSERT_EQ(info.tasks, JOB_UNSET);
}

/* A program's own environ (lmk-notify, the SPANK plugin): the bound of
 * /proc/<pid>/environ, whole strings only. */
TEST(environ_strv) {
        _cleanup_free_ char *filler = malloc(JOB_ENVIRON_READ_MAX);
        char *none[] = { NULL };
        char *env[] = { (char *) "PATH=/usr/bin", (char *) "SLURM_JOB_ID=31", (char *) "SLURM_JOB_USER=alice",
                        NULL, (char *) "SLURM_JOB_ACCOUNT=p1", NULL };

        ASSERT_NOT_NULL(filler);
        ASSERT_EQ(job_environ_parse_strv(env, &info), 1);
        ASSERT_STREQ(info.job, "31");
        ASSERT_STREQ(info.user, "alice");
        ASSERT_STREQ(info.account, "");
        ASSERT_EQ(job_environ_parse_strv(none, &info), 0);
        ASSERT_EQ(job_environ_parse_strv(NULL, &info), 0);
        /* a string that does not fit ends the read: what follows it is not
         * read, even where it would fit */
        memset(filler, 'x', JOB_ENVIRON_READ_MAX - 1);
        memcpy(filler, "X=", 2);
        filler[JOB_ENVIRON_READ_MAX - 1] = '\0';
        env[3] = filler;
        ASSERT_EQ(job_environ_parse_strv(env, &info), 1);
        ASSERT_STREQ(info.user, "alice");
        ASSERT_STREQ(info.account, "");
        env[3] = (char *) "SLURM_JOB_NAME=x";
        ASSERT_EQ(job_environ_parse_strv(env, &info), 1);
        ASSERT_STREQ(info.account, "p1");
        env[0] = filler;
        ASSERT_EQ(job_environ_parse_strv(env, &info), 0);
}

TEST(environ_read_self) {
        /* Our own environment: the parse must agree with getenv(). */
        const char *job = getenv("SLURM_JOB_ID");
        int r = job_environ_read("/proc", getpid(), &info);

        ASSERT_OK(r);
        if (job && job_id_valid(job, strlen(job))) {
                ASSERT_EQ(r, 1);
                ASSERT_STREQ(info.job, job);
        } else
                ASSERT_EQ(r, 0);
        ASSERT_ERROR(job_environ_read("/proc", -1, &info), EINVAL);
}

/* ---- LMK_NOTES --------------------------------------------------------- */

static JobNotes notes;

static void notes_parse(const char *s) {
        job_notes_parse(s, strlen(s), &notes);
}

TEST(notes) {
        notes_parse("app=demo:size=128");
        ASSERT_EQ(notes.n, 2);
        ASSERT_EQ(notes.rejected, 0);
        ASSERT_STREQ(job_notes_key(&notes, 0), "app");
        ASSERT_STREQ(job_notes_value(&notes, 0), "demo");
        ASSERT_STREQ(job_notes_key(&notes, 1), "size");
        ASSERT_STREQ(job_notes_value(&notes, 1), "128");
        ASSERT_NULL(job_notes_key(&notes, 2));
        ASSERT_NULL(job_notes_get(&notes, "nope"));

        notes_parse("");
        ASSERT_EQ(notes.n, 0);
        ASSERT_EQ(notes.rejected, 0);

        notes_parse(":app=demo::input.file-1=/data/x y, z:");
        ASSERT_EQ(notes.n, 2);
        ASSERT_EQ(notes.rejected, 0);
        ASSERT_STREQ(job_notes_get(&notes, "input.file-1"), "/data/x y, z");

        notes_parse("expr=a=b:empty=");
        ASSERT_STREQ(job_notes_get(&notes, "expr"), "a=b");
        ASSERT_STREQ(job_notes_get(&notes, "empty"), "");

        notes_parse("a b=1:=x:k!=1:novalue:ctl=\x01:utf=\xc3\xa9:tab=\t:ok=1");
        ASSERT_EQ(notes.n, 1);
        ASSERT_EQ(notes.rejected, 7);
        ASSERT_STREQ(job_notes_get(&notes, "ok"), "1");

        notes_parse("app=first:app=second");
        ASSERT_EQ(notes.n, 1);
        ASSERT_EQ(notes.rejected, 1);
        ASSERT_STREQ(job_notes_get(&notes, "app"), "first");

        /* a NUL inside the given length is no printable value */
        job_notes_parse("a=1\0:b=2", 8, &notes);
        ASSERT_EQ(notes.n, 1);
        ASSERT_EQ(notes.rejected, 1);
}

TEST(notes_limits) {
        char buf[4096], key[80];
        size_t o = 0;

        for (int i = 0; i < 40; i++)
                o += (size_t) sprintf(buf + o, "k%d=%d:", i, i);
        notes_parse(buf);
        ASSERT_EQ(notes.n, JOB_NOTES_MAX);
        ASSERT_EQ(notes.rejected, 8);
        ASSERT_STREQ(job_notes_get(&notes, "k31"), "31");
        ASSERT_NULL(job_notes_get(&notes, "k32"));

        memset(key, 'k', 64);
        sprintf(key + 64, "=v");
        notes_parse(key);
        ASSERT_EQ(notes.n, 1);
        memset(key, 'k', 65);
        sprintf(key + 65, "=v");
        notes_parse(key);
        ASSERT_EQ(notes.n, 0);
        ASSERT_EQ(notes.rejected, 1);

        /* 1024 bytes of keys and values: ten 100-byte pairs fit, an eleventh
         * not, a small one after it still does */
        o = 0;
        for (int i = 0; i < 11; i++) {
                o += (size_t) sprintf(buf + o, "k%02d=", i);
                memset(buf + o, 'v', 97);
                o += 97;
                buf[o++] = ':';
        }
        sprintf(buf + o, "z=1");
        notes_parse(buf);
        ASSERT_EQ(notes.n, 11);
        ASSERT_EQ(notes.rejected, 1);
        ASSERT_NULL(job_notes_get(&notes, "k10"));
        ASSERT_STREQ(job_notes_get(&notes, "z"), "1");
}

/* ---- JobInfo ----------------------------------------------------------- */

TEST(merge) {
        JobInfo a, b, copy;
        JobRef r;

        ASSERT_EQ(job_cgroup_parse(S("6:freezer:/slurm/uid_1000/job_4711/step_0\n"), &r), 1);
        job_info_from_ref(&a, &r);
        ASSERT_EQ(a.uid, 1000);
        ASSERT_EQ(a.nodes, JOB_UNSET);

        ASSERT_EQ(job_environ_parse(S("SLURM_JOB_ID=4711\0SLURM_STEP_ID=1\0SLURM_JOB_USER=alice\0"
                                      "SLURM_JOB_UID=1001\0SLURM_JOB_NUM_NODES=4\0LMK_NOTES=app=demo\0"), &b), 1);
        ASSERT_OK(job_info_merge(&a, &b));
        ASSERT_STREQ(a.job, "4711");
        ASSERT_STREQ(a.step, "0");   /* the cgroup's word stands */
        ASSERT_EQ(a.uid, 1000);      /* likewise */
        ASSERT_STREQ(a.user, "alice");
        ASSERT_EQ(a.nodes, 4);
        ASSERT_STREQ(job_notes_get(&a.notes, "app"), "demo");

        /* another job: nothing changes */
        ASSERT_EQ(job_environ_parse(S("SLURM_JOB_ID=4712\0SLURM_JOB_ACCOUNT=p1\0"), &b), 1);
        copy = a;
        ASSERT_ERROR(job_info_merge(&a, &b), EXDEV);
        ASSERT_TRUE(memcmp(&a, &copy, sizeof(a)) == 0);

        /* a SLUID-only cgroup learns its job id from the environment */
        ASSERT_EQ(job_cgroup_parse(S("0::/system.slice/slurmstepd.scope/sEKNKTV3WPV500/step_0/user/task_0\n"), &r), 1);
        job_info_from_ref(&a, &r);
        ASSERT_OK(job_info_merge(&a, &b));
        ASSERT_STREQ(a.job, "4712");
        ASSERT_STREQ(a.sluid, "sEKNKTV3WPV500");
        ASSERT_STREQ(a.account, "p1");
        /* two SLUIDs that differ */
        job_info_init(&b);
        strcpy(b.sluid, "s5K1KKYAYG5D00");
        ASSERT_ERROR(job_info_merge(&a, &b), EXDEV);

        /* heap instances */
        {
                JobInfo *h = job_info_new();

                ASSERT_NOT_NULL(h);
                ASSERT_EQ(h->uid, JOB_UNSET);
                ASSERT_OK(job_info_merge(h, &a));
                ASSERT_STREQ(h->job, "4712");
                ASSERT_NULL(job_info_free(h));
                ASSERT_NULL(job_info_free(NULL));
        }
}

TEST(validators) {
        ASSERT_TRUE(job_id_valid(S("1")));
        ASSERT_TRUE(job_id_valid(S("4294967294")));
        ASSERT_FALSE(job_id_valid(S("")));
        ASSERT_FALSE(job_id_valid(S("0")));
        ASSERT_FALSE(job_id_valid(S("01")));
        ASSERT_FALSE(job_id_valid(S("4294967295")));
        ASSERT_FALSE(job_id_valid(S("4294967296")));
        ASSERT_TRUE(job_step_valid(S("0")));
        ASSERT_TRUE(job_step_valid(S("batch")));
        ASSERT_TRUE(job_step_valid(S("12+3")));
        ASSERT_FALSE(job_step_valid(S("+3")));
        ASSERT_FALSE(job_step_valid(S("00")));
        ASSERT_FALSE(job_step_valid(S("Batch")));
        ASSERT_TRUE(job_sluid_valid(S("s5K1KKYAYG5D00")));
        ASSERT_FALSE(job_sluid_valid(S("S5K1KKYAYG5D00")));
        ASSERT_FALSE(job_sluid_valid(S("s5K1KKYAYG5DU0")));
}

int main(void) {
        RUN(cgroup_v1);
        RUN(cgroup_v2);
        RUN(cgroup_containers);
        RUN(cgroup_no_job);
        RUN(cgroup_user_delegated);
        RUN(cgroup_hostile);
        RUN(cgroup_long);
        RUN(cgroup_every_prefix);
        RUN(cgroup_path);
        RUN(cgroup_read_self);
        RUN(environ_batch);
        RUN(environ_step);
        RUN(environ_array_het);
        RUN(environ_rank);
        RUN(environ_no_job);
        RUN(environ_duplicates);
        RUN(environ_truncated);
        RUN(environ_huge);
        RUN(environ_text);
        RUN(environ_strv);
        RUN(environ_read_self);
        RUN(notes);
        RUN(notes_limits);
        RUN(merge);
        RUN(validators);
        return EXIT_SUCCESS;
}
