/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What lmk knows of a job (JobInfo): filled from the cgroup, the
 * environment or a notice, merged with the trusted source first; and the
 * user's notes about it (LMK_NOTES). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job-slurm.h"
#include "macro.h"

static bool note_key_valid(const char *s, size_t len) {
        if (len == 0 || len > JOB_NOTES_KEY_MAX)
                return false;
        for (size_t i = 0; i < len; i++) {
                char c = s[i];

                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '.' || c == '-'))
                        return false;
        }
        return true;
}

static bool note_value_valid(const char *s, size_t len) {
        for (size_t i = 0; i < len; i++)
                if (s[i] < 0x20 || s[i] > 0x7e)
                        return false;
        return true;
}

const char *job_notes_key(const JobNotes *notes, size_t i) {
        return i < notes->n ? notes->text + notes->pair[i].key : NULL;
}

const char *job_notes_value(const JobNotes *notes, size_t i) {
        return i < notes->n ? notes->text + notes->pair[i].value : NULL;
}

const char *job_notes_get(const JobNotes *notes, const char *key) {
        for (size_t i = 0; i < notes->n; i++)
                if (streq(job_notes_key(notes, i), key))
                        return job_notes_value(notes, i);
        return NULL;
}

void job_notes_parse(const char *s, size_t len, JobNotes *ret) {
        size_t used = 0, o = 0, i = 0;

        ret->n = 0;
        ret->rejected = 0;
        ret->text[0] = '\0';

        while (i < len) {
                const char *e = s + i, *colon = memchr(e, ':', len - i), *eq;
                size_t n = colon ? (size_t) (colon - e) : len - i, klen, vlen;
                bool dup = false;

                i += n + 1;
                if (n == 0)
                        continue;

                eq = memchr(e, '=', n);
                if (!eq) {
                        ret->rejected++;
                        continue;
                }
                klen = (size_t) (eq - e);
                vlen = n - klen - 1;
                if (!note_key_valid(e, klen) || !note_value_valid(eq + 1, vlen) ||
                    ret->n >= JOB_NOTES_MAX || used + klen + vlen > JOB_NOTES_TEXT_MAX) {
                        ret->rejected++;
                        continue;
                }
                for (size_t k = 0; k < ret->n && !dup; k++) {
                        const char *key = job_notes_key(ret, k);

                        dup = strlen(key) == klen && memcmp(key, e, klen) == 0;
                }
                if (dup) {
                        ret->rejected++;
                        continue;
                }

                ret->pair[ret->n].key = (uint16_t) o;
                memcpy(ret->text + o, e, klen);
                o += klen;
                ret->text[o++] = '\0';
                ret->pair[ret->n].value = (uint16_t) o;
                memcpy(ret->text + o, eq + 1, vlen);
                o += vlen;
                ret->text[o++] = '\0';
                used += klen + vlen;
                ret->n++;
        }
}


void job_info_init(JobInfo *info) {
        *info = (JobInfo) {
                .array_job = JOB_UNSET,
                .array_task = JOB_UNSET,
                .het_job = JOB_UNSET,
                .het_offset = JOB_UNSET,
                .uid = JOB_UNSET,
                .nodes = JOB_UNSET,
                .tasks = JOB_UNSET,
                .cpus_on_node = JOB_UNSET,
                .rank = JOB_UNSET,
        };
}

JobInfo *job_info_new(void) {
        JobInfo *info = malloc(sizeof(*info));

        if (info)
                job_info_init(info);
        return info;
}

JobInfo *job_info_free(JobInfo *info) {
        free(info);
        return NULL;
}

void job_info_from_ref(JobInfo *ret, const JobRef *ref) {
        job_info_init(ret);
        memcpy(ret->job, ref->job, sizeof(ret->job));
        memcpy(ret->sluid, ref->sluid, sizeof(ret->sluid));
        memcpy(ret->step, ref->step, sizeof(ret->step));
        ret->uid = ref->uid;
}

#define FILL_STR(dst, src, f)                                   \
        do {                                                    \
                if (!(dst)->f[0])                               \
                        memcpy((dst)->f, (src)->f, sizeof((dst)->f)); \
        } while (0)
#define FILL_U32(dst, src, f)                                   \
        do {                                                    \
                if ((dst)->f == JOB_UNSET)                      \
                        (dst)->f = (src)->f;                    \
        } while (0)

int job_info_merge(JobInfo *dst, const JobInfo *src) {
        if ((dst->job[0] && src->job[0] && !streq(dst->job, src->job)) ||
            (dst->sluid[0] && src->sluid[0] && !streq(dst->sluid, src->sluid)))
                return -EXDEV;

        FILL_STR(dst, src, job);
        FILL_STR(dst, src, sluid);
        FILL_STR(dst, src, step);
        FILL_U32(dst, src, array_job);
        FILL_U32(dst, src, array_task);
        FILL_U32(dst, src, het_job);
        FILL_U32(dst, src, het_offset);
        FILL_STR(dst, src, user);
        FILL_U32(dst, src, uid);
        FILL_STR(dst, src, account);
        FILL_STR(dst, src, partition);
        FILL_STR(dst, src, cluster);
        FILL_STR(dst, src, name);
        FILL_U32(dst, src, nodes);
        FILL_U32(dst, src, tasks);
        FILL_U32(dst, src, cpus_on_node);
        if (dst->notes.n == 0 && dst->notes.rejected == 0)
                dst->notes = src->notes;
        if (dst->lmk == JOB_LMK_UNSET)
                dst->lmk = src->lmk;
        return 0;
}

static const char *const lmk_names[_JOB_LMK_MAX] = {
        [JOB_LMK_ON] = "on",
        [JOB_LMK_OFF] = "off",
        [JOB_LMK_NOCOUNTERS] = "nocounters",
};

const char *job_lmk_to_string(JobLmk lmk) {
        return lmk > JOB_LMK_UNSET && lmk < _JOB_LMK_MAX ? lmk_names[lmk] : NULL;
}

int job_lmk_from_string(const char *s, size_t len) {
        for (int i = JOB_LMK_UNSET + 1; i < _JOB_LMK_MAX; i++)
                if (len == strlen(lmk_names[i]) && memcmp(s, lmk_names[i], len) == 0)
                        return i;
        return -EINVAL;
}

void job_info_display_id(const JobInfo *info, char ret[static JOB_ID_SIZE]) {
        if (info->array_job != JOB_UNSET && info->array_task != JOB_UNSET)
                snprintf(ret, JOB_ID_SIZE, "%" PRIu32 "_%" PRIu32, info->array_job, info->array_task);
        else if (info->het_job != JOB_UNSET && info->het_offset != JOB_UNSET)
                snprintf(ret, JOB_ID_SIZE, "%" PRIu32 "+%" PRIu32, info->het_job, info->het_offset);
        else
                snprintf(ret, JOB_ID_SIZE, "%s", info->job);
}
