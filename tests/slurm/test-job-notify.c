/* SPDX-License-Identifier: GPL-2.0-or-later */
/* collectors/job-notify.c: the Prolog/Epilog notice format. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job-notify.h"
#include "macro.h"
#include "tests.h"

#define S(lit) (lit), (sizeof(lit) - 1)

static JobNotice notice;

static int parse(const char *msg, size_t len) {
        JobNotice before;
        int r;

        memset(&notice, 0x5a, sizeof(notice));
        before = notice;
        r = job_notice_parse(msg, len, &notice);
        if (r < 0)
                ASSERT_TRUE(memcmp(&before, &notice, sizeof(notice)) == 0);
        return r;
}

static int parse_str(const char *msg) {
        return parse(msg, strlen(msg));
}

TEST(parse_example) {
        /* The example in docs/slurm.md. */
        ASSERT_OK(parse_str("LMK1 job-start job=4711 uid=1000 user=alice account=p123 partition=batch "
                            "name=lulesh%20run nodes=4 cluster=demo\n"));
        ASSERT_EQ(notice.event, JOB_NOTICE_START);
        ASSERT_STREQ(notice.info.job, "4711");
        ASSERT_EQ(notice.info.uid, 1000);
        ASSERT_STREQ(notice.info.user, "alice");
        ASSERT_STREQ(notice.info.account, "p123");
        ASSERT_STREQ(notice.info.partition, "batch");
        ASSERT_STREQ(notice.info.name, "lulesh run");
        ASSERT_EQ(notice.info.nodes, 4);
        ASSERT_EQ(notice.info.tasks, JOB_UNSET);
        ASSERT_STREQ(notice.info.cluster, "demo");
        ASSERT_EQ(notice.unknown_fields, 0);

        ASSERT_OK(parse_str("LMK1 job-end job=4714 array_job=4711 array_task=3 notes=app%3Ddemo%3Asize%3D128"));
        ASSERT_EQ(notice.event, JOB_NOTICE_END);
        ASSERT_EQ(notice.info.array_job, 4711);
        ASSERT_EQ(notice.info.array_task, 3);
        ASSERT_STREQ(job_notes_get(&notice.info.notes, "size"), "128");

        /* what the user asked with sbatch --lmk (the SPANK plugin) */
        ASSERT_OK(parse_str("LMK1 job-start job=7 lmk=off"));
        ASSERT_EQ(notice.info.lmk, JOB_LMK_OFF);
        ASSERT_OK(parse_str("LMK1 job-start job=7 lmk=nocounters notes=a%3Db"));
        ASSERT_EQ(notice.info.lmk, JOB_LMK_NOCOUNTERS);
        ASSERT_OK(parse_str("LMK1 job-start job=7"));
        ASSERT_EQ(notice.info.lmk, JOB_LMK_UNSET);
        /* a later plugin's word: the notice still counts, the job measured as usual */
        ASSERT_OK(parse_str("LMK1 job-start job=7 lmk=gpus-only"));
        ASSERT_EQ(notice.info.lmk, JOB_LMK_UNSET);
        ASSERT_EQ(notice.unknown_fields, 1);

        /* newer senders' fields are skipped and counted */
        ASSERT_OK(parse_str("LMK1 job-start job=1 gpus=4 node=cn001"));
        ASSERT_EQ(notice.unknown_fields, 2);
        ASSERT_STREQ(notice.info.job, "1");

        /* sanitised like any text from outside */
        ASSERT_OK(parse_str("LMK1 job-start job=1 name=a%0Ab%1B%FF"));
        ASSERT_STREQ(notice.info.name, "a?b??");
        ASSERT_OK(parse_str("LMK1 job-start job=1 name=Gr%C3%BC%C3%9Fe"));
        ASSERT_STREQ(notice.info.name, "Grüße");
        ASSERT_OK(parse_str("LMK1 job-start job=1 name="));
        ASSERT_STREQ(notice.info.name, "");
}

TEST(parse_errors) {
        static const struct {
                const char *msg;
                int error;
        } bad[] = {
                { "", EBADMSG },
                { "\n", EBADMSG },
                { "LMK1", EBADMSG },
                { "LMK1 ", EBADMSG },
                { "LMK1 job-start", EBADMSG },             /* no job */
                { "LMK1 job-start user=alice", EBADMSG },  /* no job */
                { "LMK2 job-start job=1", EPROTONOSUPPORT },
                { "LMK10 job-start job=1", EPROTONOSUPPORT },
                { "LMK job-start job=1", EBADMSG },
                { "lmk1 job-start job=1", EBADMSG },
                { "LMK1 job-pause job=1", EOPNOTSUPP },
                { "LMK1  job-start job=1", EBADMSG },
                { "LMK1 job-start  job=1", EBADMSG },
                { "LMK1 job-start job=1 ", EBADMSG },
                { " LMK1 job-start job=1", EBADMSG },
                { "LMK1 job-start job=1\n\n", EBADMSG },
                { "LMK1 job-start job=1\r\n", EBADMSG },
                { "LMK1 job-start job=1\tuser=a", EBADMSG },
                { "LMK1 job-start job=1 job=2", EBADMSG },
                { "LMK1 job-start job=1 user=a user=b", EBADMSG },
                { "LMK1 job-start job=", EBADMSG },
                { "LMK1 job-start job=0", EBADMSG },
                { "LMK1 job-start job=007", EBADMSG },
                { "LMK1 job-start job=4711_3", EBADMSG },
                { "LMK1 job-start job=%34%37", 0 },        /* "47", encoded for no reason: fine */
                { "LMK1 job-start job=1 step=x1", EBADMSG },
                { "LMK1 job-start job=1 sluid=s123", EBADMSG },
                { "LMK1 job-start job=1 uid=x", EBADMSG },
                { "LMK1 job-start job=1 uid=4294967295", EBADMSG },
                { "LMK1 job-start job=1 uid=-1", EBADMSG },
                { "LMK1 job-start job=1 nodes=0", EBADMSG },
                { "LMK1 job-start job=1 array_task=0", 0 },
                { "LMK1 job-start job=1 name=%", EBADMSG },
                { "LMK1 job-start job=1 name=%4", EBADMSG },
                { "LMK1 job-start job=1 name=%zz", EBADMSG },
                { "LMK1 job-start job=1 name=%00", EBADMSG },
                { "LMK1 job-start job=1 name=\x01", EBADMSG },
                { "LMK1 job-start job=1 name=\xc3\xa9", EBADMSG }, /* raw bytes must be encoded */
                { "LMK1 job-start job=1 =x", EBADMSG },
                { "LMK1 job-start job=1 Name=x", EBADMSG },
                { "LMK1 job-start job=1 name", EBADMSG },
                { "LMK1 job-start job=1 na-me=x", EBADMSG },
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                int r = parse_str(bad[i].msg);

                if (r != -bad[i].error)
                        test_fail("\"%s\": expected %d, got %d", bad[i].msg, -bad[i].error, r);
        }

        ASSERT_ERROR(parse(S("LMK1 job-start job=1\0 user=a")), EBADMSG);
        ASSERT_ERROR(job_notice_parse(NULL, 1, &notice), EINVAL);

        {
                char *big = malloc(JOB_NOTICE_MAX + 2);
                int n;

                ASSERT_NOT_NULL(big);
                n = sprintf(big, "LMK1 job-start job=1 name=");
                memset(big + n, 'x', JOB_NOTICE_MAX + 1 - (size_t) n);
                ASSERT_ERROR(parse(big, JOB_NOTICE_MAX + 1), EMSGSIZE);
                /* exactly at the limit is fine */
                ASSERT_OK(parse(big, JOB_NOTICE_MAX));
                ASSERT_EQ(strlen(notice.info.name), JOB_NAME_SIZE - 1);
                free(big);
        }
}

static void assert_same(const JobInfo *a, const JobInfo *b) {
        ASSERT_STREQ(a->job, b->job);
        ASSERT_STREQ(a->sluid, b->sluid);
        ASSERT_STREQ(a->step, b->step);
        ASSERT_EQ(a->array_job, b->array_job);
        ASSERT_EQ(a->array_task, b->array_task);
        ASSERT_EQ(a->het_job, b->het_job);
        ASSERT_EQ(a->het_offset, b->het_offset);
        ASSERT_STREQ(a->user, b->user);
        ASSERT_EQ(a->uid, b->uid);
        ASSERT_STREQ(a->account, b->account);
        ASSERT_STREQ(a->partition, b->partition);
        ASSERT_STREQ(a->cluster, b->cluster);
        ASSERT_STREQ(a->name, b->name);
        ASSERT_EQ(a->nodes, b->nodes);
        ASSERT_EQ(a->tasks, b->tasks);
        ASSERT_EQ(a->lmk, b->lmk);
        ASSERT_EQ(a->notes.n, b->notes.n);
        for (size_t i = 0; i < a->notes.n; i++) {
                ASSERT_STREQ(job_notes_key(&a->notes, i), job_notes_key(&b->notes, i));
                ASSERT_STREQ(job_notes_value(&a->notes, i), job_notes_value(&b->notes, i));
        }
}

TEST(round_trip) {
        char msg[JOB_NOTICE_MAX + 1];
        JobInfo info;
        int len;

        job_info_init(&info);
        strcpy(info.job, "4712");
        strcpy(info.sluid, "sEKNKTV3WPV500");
        strcpy(info.step, "0+1");
        info.het_job = 4711;
        info.het_offset = 1;
        strcpy(info.user, "alice smith");
        info.uid = 0;
        strcpy(info.account, "p=1:2%");
        strcpy(info.partition, "batch");
        strcpy(info.cluster, "demo");
        strcpy(info.name, "Grüße, 50% done & more/+");
        info.nodes = 2;
        info.tasks = 96;
        job_notes_parse(S("app=lulesh:size=128:path=/a b/c=d"), &info.notes);
        info.lmk = JOB_LMK_NOCOUNTERS;

        len = job_notice_format(JOB_NOTICE_END, &info, msg, sizeof(msg));
        ASSERT_TRUE(len > 0);
        ASSERT_EQ((size_t) len, strlen(msg));
        /* one token per field, nothing that needs quoting */
        ASSERT_NULL(strchr(msg, '\n'));
        ASSERT_TRUE(strncmp(msg, "LMK1 job-end job=4712 ", 22) == 0);
        ASSERT_NOT_NULL(strstr(msg, " user=alice%20smith "));
        ASSERT_NOT_NULL(strstr(msg, " uid=0 "));
        ASSERT_NULL(strstr(msg, "array_job"));
        ASSERT_NOT_NULL(strstr(msg, " lmk=nocounters"));

        ASSERT_OK(parse(msg, (size_t) len));
        ASSERT_EQ(notice.event, JOB_NOTICE_END);
        assert_same(&notice.info, &info);

        /* too small a buffer */
        ASSERT_ERROR(job_notice_format(JOB_NOTICE_START, &info, msg, 20), ENOBUFS);
        ASSERT_ERROR(job_notice_format(JOB_NOTICE_START, &info, msg, (size_t) len), ENOBUFS);
        ASSERT_EQ(job_notice_format(JOB_NOTICE_END, &info, msg, (size_t) len + 1), len);
        /* no job, no notice */
        info.job[0] = '\0';
        ASSERT_ERROR(job_notice_format(JOB_NOTICE_START, &info, msg, sizeof(msg)), EINVAL);
        strcpy(info.job, "1");
        ASSERT_ERROR(job_notice_format(_JOB_NOTICE_EVENT_MAX, &info, msg, sizeof(msg)), EINVAL);
}

/* The largest JobInfo, with every byte one that must be encoded, still fits
 * in one notice. */
TEST(largest_fits) {
        char msg[JOB_NOTICE_MAX + 1], notes[2048];
        JobInfo info;
        size_t o = 0;
        int len;

        job_info_init(&info);
        strcpy(info.job, "4294967294");
        strcpy(info.sluid, "sZZZZZZZZZZZZZ");
        memset(info.step, 'z', JOB_STEP_SIZE - 1);
        info.array_job = info.array_task = info.het_job = info.het_offset = 4294967294U;
        info.uid = info.nodes = info.tasks = 4294967294U;
        memset(info.user, '%', JOB_TEXT_SIZE - 1);
        memset(info.account, '%', JOB_TEXT_SIZE - 1);
        memset(info.partition, '%', JOB_TEXT_SIZE - 1);
        memset(info.cluster, '%', JOB_TEXT_SIZE - 1);
        memset(info.name, '%', JOB_NAME_SIZE - 1);
        /* 32 one-byte keys with 31-byte values: all 1024 bytes used */
        for (int i = 0; i < JOB_NOTES_MAX; i++) {
                o += (size_t) sprintf(notes + o, "%c=", 'A' + i % 26 + (i >= 26 ? 32 : 0));
                memset(notes + o, '%', 31);
                o += 31;
                notes[o++] = ':';
        }
        job_notes_parse(notes, o, &info.notes);
        ASSERT_EQ(info.notes.n, JOB_NOTES_MAX);
        ASSERT_EQ(info.notes.rejected, 0);

        len = job_notice_format(JOB_NOTICE_START, &info, msg, sizeof(msg));
        ASSERT_TRUE(len > 0);
        ASSERT_TRUE((size_t) len <= JOB_NOTICE_MAX);
        fprintf(stderr, "largest notice: %d bytes\n", len);
        ASSERT_OK(parse(msg, (size_t) len));
        assert_same(&notice.info, &info);
}

int main(void) {
        RUN(parse_example);
        RUN(parse_errors);
        RUN(round_trip);
        RUN(largest_fits);
        return EXIT_SUCCESS;
}
