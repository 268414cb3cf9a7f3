/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A job's CPUs from its cgroup: the cpuset file named by /proc/<pid>/cgroup
 * as Slurm's cgroup/v1 and cgroup/v2 plugins lay it out (the CPU list
 * format is test-cpu-list.c's). */
#include <errno.h>
#include <string.h>

#include "job-cpuset.h"
#include "tests.h"

static int path_of(const char *cg, char *buf, size_t size) {
        return job_cpuset_path(cg, strlen(cg), buf, size);
}

TEST(paths) {
        char p[4096];

        ASSERT_EQ(path_of("12:freezer:/slurm_vm/uid_0/job_5/step_batch\n"
                          "7:cpuset:/slurm_vm/uid_0/job_5/step_batch\n"
                          "3:memory:/slurm_vm/uid_0/job_5/step_batch/task_0\n", p, sizeof(p)), 1);
        ASSERT_STREQ(p, "/sys/fs/cgroup/cpuset/slurm_vm/uid_0/job_5/cpuset.cpus");
        /* a cpuset mounted together with cpu,cpuacct */
        ASSERT_EQ(path_of("4:cpu,cpuset,cpuacct:/slurm/uid_1000/job_4711/step_0/task_3\n", p, sizeof(p)), 1);
        ASSERT_STREQ(p, "/sys/fs/cgroup/cpuset/slurm/uid_1000/job_4711/cpuset.cpus");
        ASSERT_EQ(path_of("0::/system.slice/slurmstepd.scope/job_88/step_0/user/task_0\n", p, sizeof(p)), 1);
        ASSERT_STREQ(p, "/sys/fs/cgroup/system.slice/slurmstepd.scope/job_88/cpuset.cpus.effective");
        /* the outermost job_ counts: a user cannot nest a look-alike */
        ASSERT_EQ(path_of("0::/system.slice/slurmstepd.scope/job_88/step_0/user/job_7\n", p, sizeof(p)), 1);
        ASSERT_STREQ(p, "/sys/fs/cgroup/system.slice/slurmstepd.scope/job_88/cpuset.cpus.effective");
        /* not in a job, or no cpuset line */
        ASSERT_EQ(path_of("0::/user.slice/user-1000.slice/session-3.scope\n", p, sizeof(p)), 0);
        ASSERT_EQ(path_of("12:freezer:/slurm_vm/uid_0/job_5/step_batch\n", p, sizeof(p)), 0);
        ASSERT_EQ(path_of("7:cpuset:/slurm_vm/uid_0/job_x/step_batch\n", p, sizeof(p)), 0);
        ASSERT_EQ(path_of("", p, sizeof(p)), 0);
        /* malformed */
        ASSERT_EQ(path_of("7:cpuset:/slurm_vm/uid_0/job_5", p, sizeof(p)), -EBADMSG);
        ASSERT_EQ(path_of("7-cpuset-/x\n", p, sizeof(p)), -EBADMSG);
        ASSERT_EQ(path_of("7:cpuset:relative/job_5\n", p, sizeof(p)), -EBADMSG);
        ASSERT_EQ(path_of("7:cpuset:/slurm_vm/uid_0/job_5/step_0\n", p, 20), -ENAMETOOLONG);
}

int main(void) {
        RUN(paths);
        return 0;
}
