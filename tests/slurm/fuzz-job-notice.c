/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzzes job_notice_parse(); a notice that parses must survive
 * job_notice_format() and parse again to the same job. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "job-notify.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static char msg[JOB_NOTICE_MAX + 1];
        static JobNotice a, b;
        int len;

        if (job_notice_parse((const char *) data, size, &a) < 0)
                return 0;
        if (!job_id_valid(a.info.job, strnlen(a.info.job, sizeof(a.info.job))))
                abort();

        len = job_notice_format(a.event, &a.info, msg, sizeof(msg));
        if (len < 0 || (size_t) len > JOB_NOTICE_MAX)
                abort();
        if (job_notice_parse(msg, (size_t) len, &b) < 0)
                abort();
        /* Rejected notes are not sent on; all else must come back the same. */
        a.info.notes.rejected = b.info.notes.rejected = 0;
        a.unknown_fields = b.unknown_fields = 0;
        if (a.event != b.event || memcmp(&a.info, &b.info, offsetof(JobInfo, notes)) != 0 ||
            a.info.notes.n != b.info.notes.n)
                abort();
        for (size_t i = 0; i < a.info.notes.n; i++)
                if (strcmp(job_notes_key(&a.info.notes, i), job_notes_key(&b.info.notes, i)) != 0 ||
                    strcmp(job_notes_value(&a.info.notes, i), job_notes_value(&b.info.notes, i)) != 0)
                        abort();
        return 0;
}
