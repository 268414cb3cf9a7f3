/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzzes job_environ_parse() and job_notes_parse(): every field of the
 * result stays inside its bounds and is what its checks promise: text that
 * lmkd sends on is strict UTF-8 (checked against common/utf8.h, the
 * validator lmk-store applies) without control characters. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "job-slurm.h"
#include "utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_text(const char *s, size_t size) {
        size_t n = strnlen(s, size);

        if (n == size || !utf8_is_valid(s, n))
                abort();
        for (size_t i = 0; i < n; i++)
                if ((unsigned char) s[i] < 0x20 || s[i] == 0x7f)
                        abort();
}

static void check_notes(const JobNotes *notes) {
        size_t used = 0;

        if (notes->n > JOB_NOTES_MAX)
                abort();
        for (size_t i = 0; i < notes->n; i++) {
                const char *k = job_notes_key(notes, i), *v = job_notes_value(notes, i);

                if (notes->pair[i].key >= sizeof(notes->text) || notes->pair[i].value >= sizeof(notes->text))
                        abort();
                used += strlen(k) + strlen(v);
                if (strlen(k) == 0 || strlen(k) > JOB_NOTES_KEY_MAX || job_notes_get(notes, k) != v)
                        abort();
        }
        if (used > JOB_NOTES_TEXT_MAX)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        JobNotes notes;
        JobInfo info;
        int r;

        job_notes_parse((const char *) data, size, &notes);
        check_notes(&notes);

        r = job_environ_parse((const char *) data, size, &info);
        if (r <= 0)
                return 0;
        if (!job_id_valid(info.job, strnlen(info.job, sizeof(info.job))))
                abort();
        if (info.step[0] && !job_step_valid(info.step, strnlen(info.step, sizeof(info.step))))
                abort();
        check_text(info.user, sizeof(info.user));
        check_text(info.account, sizeof(info.account));
        check_text(info.partition, sizeof(info.partition));
        check_text(info.cluster, sizeof(info.cluster));
        check_text(info.name, sizeof(info.name));
        if (info.nodes == 0 || info.tasks == 0)
                abort();
        check_notes(&info.notes);
        return 0;
}
