/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Slurm's words as lmk reads them anywhere: job ids, step ids and SLUIDs,
 * and text from outside made safe to send on. The parsers are job-cgroup.c
 * (/proc/<pid>/cgroup), job-environ.c (/proc/<pid>/environ), job-stepd.c
 * (slurmstepd above a process) and job-notify.c (root's notices); what they
 * fill is job-info.c's. */
#include <string.h>

#include "job-internal.h"
#include "job-slurm.h"
#include "macro.h"
#include "utf8.h"

#define SLUID_LEN 14

bool job_parse_u32(const char *s, size_t len, uint32_t *ret) {
        uint64_t v = 0;

        if (len == 0 || len > 10 || (s[0] == '0' && len > 1))
                return false;
        for (size_t i = 0; i < len; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return false;
                v = v * 10 + (uint64_t) (s[i] - '0');
        }
        if (v > UINT32_MAX)
                return false;
        *ret = (uint32_t) v;
        return true;
}

bool job_id_valid(const char *s, size_t len) {
        uint32_t v;

        return job_parse_u32(s, len, &v) && v > 0 && v != JOB_UNSET;
}

bool job_step_valid(const char *s, size_t len) {
        const char *plus;
        uint32_t v;

        if (len == 0 || len >= JOB_STEP_SIZE)
                return false;
        if (s[0] >= 'a' && s[0] <= 'z') {
                for (size_t i = 0; i < len; i++)
                        if (s[i] < 'a' || s[i] > 'z')
                                return false;
                return true;
        }
        plus = memchr(s, '+', len);
        if (!plus)
                return job_parse_u32(s, len, &v);
        return job_parse_u32(s, (size_t) (plus - s), &v) &&
               job_parse_u32(plus + 1, len - (size_t) (plus - s) - 1, &v);
}

bool job_sluid_valid(const char *s, size_t len) {
        static const char cb32[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

        if (len != SLUID_LEN || s[0] != 's')
                return false;
        for (size_t i = 1; i < len; i++)
                if (!memchr(cb32, s[i], sizeof(cb32) - 1))
                        return false;
        return true;
}

void job_copy_token(char *dst, size_t size, const char *s, size_t len) {
        /* Callers validated len against size; the MIN keeps that local. */
        len = MIN(len, size - 1);
        memcpy(dst, s, len);
        dst[len] = '\0';
}

void job_text_copy(char *dst, size_t size, const char *src, size_t len) {
        size_t o = 0;

        for (size_t i = 0; i < len;) {
                size_t k = utf8_char_len(src + i, len - i);
                unsigned char c = (unsigned char) src[i];

                if (k == 0 || c < 0x20 || c == 0x7f) {
                        if (o + 1 >= size)
                                break;
                        dst[o++] = '?';
                        i += MAX(k, (size_t) 1);
                        continue;
                }
                if (o + k >= size)
                        break;
                memcpy(dst + o, src + i, k);
                o += k;
                i += k;
        }
        dst[o] = '\0';
}
