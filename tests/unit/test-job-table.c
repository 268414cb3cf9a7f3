/* SPDX-License-Identifier: GPL-2.0-or-later */
/* daemon/job-table.c: slurmstepd's title as outside input, and a job's life from
 * its processes and the epilog's notice. */
#include <unistd.h>

#include "job-table.h"
#include "tests.h"

#define T(lit) (lit), (sizeof(lit) - 1)

TEST(stepd_title) {
        JobRef ref;

        ASSERT_EQ(jobs_parse_stepd_title(T("slurmstepd: [4711.batch]"), &ref), 1);
        ASSERT_STREQ(ref.job, "4711");
        ASSERT_STREQ(ref.step, "batch");
        ASSERT_EQ(jobs_parse_stepd_title(T("slurmstepd: [4711.0]\0ignored"), &ref), 1);
        ASSERT_STREQ(ref.step, "0");
        ASSERT_EQ(jobs_parse_stepd_title(T("slurmstepd: [4711]"), &ref), 1);
        ASSERT_STREQ(ref.step, "");
        /* not a title of slurmstepd's: no job, nothing claimed */
        ASSERT_EQ(jobs_parse_stepd_title(T("slurmstepd"), &ref), 0);
        ASSERT_EQ(jobs_parse_stepd_title(T("slurmstepd: [4711.0"), &ref), 0);
        ASSERT_EQ(jobs_parse_stepd_title(T(""), &ref), 0);
        ASSERT_EQ(jobs_parse_stepd_title(T("/usr/sbin/slurmd -D"), &ref), 0);
        /* hostile ids and steps */
        ASSERT_ERROR(jobs_parse_stepd_title(T("slurmstepd: [.0]"), &ref), EBADMSG);
        ASSERT_ERROR(jobs_parse_stepd_title(T("slurmstepd: [../etc.0]"), &ref), EBADMSG);
        ASSERT_ERROR(jobs_parse_stepd_title(T("slurmstepd: [4711.a b]"), &ref), EBADMSG);
        ASSERT_ERROR(jobs_parse_stepd_title(T("slurmstepd: [47\00011.0]"), &ref), EBADMSG);
        ASSERT_ERROR(jobs_parse_stepd_title(T("slurmstepd: [123456789012345678901234567890123456789.0]"), &ref),
                     EBADMSG);
}

TEST(life) {
        JobTable t;
        Process p = { .pid = 100, .job_state = JOB_RESOLVED };
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

/* An exec re-reads a process's job: the job still counts it once, and its
 * exit ends the job. */
TEST(exec_counts_once) {
        JobTable t;
        Process p = { .pid = (uint32_t) getpid(), .job_state = JOB_UNRESOLVED };
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

int main(void) {
        RUN(stepd_title);
        RUN(life);
        RUN(exec_counts_once);
        return 0;
}
