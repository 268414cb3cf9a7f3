/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "job-slurm.h"
#include "macro.h"
#include "util.h"

/* Step ids Slurm gives its special steps (slurm.h, unchanged since 20.11);
 * SLURM_STEP_ID may carry them as numbers where a cgroup path has names. */
#define SLURM_INTERACTIVE_STEP UINT32_C(0xfffffffa)
#define SLURM_BATCH_SCRIPT UINT32_C(0xfffffffb)
#define SLURM_EXTERN_CONT UINT32_C(0xfffffffc)
#define SLURM_MAX_NORMAL_STEP_ID UINT32_C(0xfffffff0)

#define SLUID_LEN 14

static bool has_prefix(const char *s, size_t len, const char *prefix) {
        size_t n = strlen(prefix);

        return len >= n && memcmp(s, prefix, n) == 0;
}

static bool has_suffix(const char *s, size_t len, const char *suffix) {
        size_t n = strlen(suffix);

        return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

static bool is_equal(const char *s, size_t len, const char *word) {
        return len == strlen(word) && memcmp(s, word, len) == 0;
}

/* A decimal uint32 as Slurm prints one: no sign, no leading zero (so that
 * "job_07" and "job_7" cannot name one job twice). */
static bool parse_u32(const char *s, size_t len, uint32_t *ret) {
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

        return parse_u32(s, len, &v) && v > 0 && v != JOB_UNSET;
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
                return parse_u32(s, len, &v);
        return parse_u32(s, (size_t) (plus - s), &v) &&
               parse_u32(plus + 1, len - (size_t) (plus - s) - 1, &v);
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

static void copy_token(char *dst, size_t size, const char *s, size_t len) {
        /* Callers validated len against size; the MIN keeps that local. */
        len = MIN(len, size - 1);
        memcpy(dst, s, len);
        dst[len] = '\0';
}

/* ---- /proc/<pid>/cgroup ------------------------------------------------ */

typedef enum CgroupState {
        CG_SEARCH,   /* no Slurm anchor yet */
        CG_V1_UID,   /* after slurm[_<node>]: expect uid_<uid> */
        CG_V1_JOB,   /* after uid_<uid>: expect job_<id> */
        CG_V2_JOB,   /* after [<node>_]slurmstepd.scope: expect job_<id> or a SLUID */
        CG_STEP,     /* after the job: expect step_<step> */
        CG_DONE,     /* decided; the rest only gets checked for sanity */
} CgroupState;

static bool is_v1_top(const char *c, size_t n) {
        return is_equal(c, n, "slurm") || (has_prefix(c, n, "slurm_") && n > strlen("slurm_"));
}

static bool is_v2_scope(const char *c, size_t n) {
        return is_equal(c, n, "slurmstepd.scope") ||
               (has_suffix(c, n, "_slurmstepd.scope") && n > strlen("_slurmstepd.scope"));
}

/* A subtree its user may create cgroups in (systemd delegates the user
 * manager's tree): nothing below it is Slurm's word. */
static bool is_user_delegated(const char *c, size_t n) {
        return has_prefix(c, n, "user@") && has_suffix(c, n, ".service");
}

/* Parses one cgroup path. 1: in a job (ret filled, and ret_job_end, if
 * given, the length of the path up to the end of the job's own directory),
 * 0: not, -EBADMSG. */
static int parse_cgroup_path(const char *path, size_t len, JobRef *ret, size_t *ret_job_end) {
        CgroupState state = CG_SEARCH;
        JobRef ref = { .uid = JOB_UNSET };
        bool untrusted = false;
        size_t i = 1, job_end = 0;

        if (len == 0 || path[0] != '/')
                return -EBADMSG;
        if (len == 1)
                return 0;

        while (i <= len) {
                const char *c = path + i, *slash = memchr(c, '/', len - i);
                size_t n = slash ? (size_t) (slash - c) : len - i;

                if (n == 0 || is_equal(c, n, ".") || is_equal(c, n, ".."))
                        return -EBADMSG;
                i += n + 1;

                if (state == CG_V1_UID) {
                        uint32_t uid;

                        if (has_prefix(c, n, "uid_") && parse_u32(c + 4, n - 4, &uid) && uid != JOB_UNSET) {
                                ref.uid = uid;
                                state = CG_V1_JOB;
                                continue;
                        }
                        /* Not Slurm's top after all (a container named "slurm"?): look on. */
                        state = CG_SEARCH;
                }

                switch (state) {
                case CG_SEARCH:
                        if (is_user_delegated(c, n))
                                untrusted = true;
                        if (untrusted)
                                break;
                        if (is_v1_top(c, n))
                                state = CG_V1_UID;
                        else if (is_v2_scope(c, n))
                                state = CG_V2_JOB;
                        break;
                case CG_V1_JOB:
                case CG_V2_JOB:
                        if (has_prefix(c, n, "job_")) {
                                if (!job_id_valid(c + 4, n - 4))
                                        return -EBADMSG;
                                copy_token(ref.job, sizeof(ref.job), c + 4, n - 4);
                                job_end = (size_t) (c - path) + n;
                                state = CG_STEP;
                        } else if (state == CG_V2_JOB && job_sluid_valid(c, n)) {
                                copy_token(ref.sluid, sizeof(ref.sluid), c, n);
                                job_end = (size_t) (c - path) + n;
                                state = CG_STEP;
                        } else
                                /* slurmstepd.scope/system holds slurmstepd itself, not a job;
                                 * and a later look-alike would sit in a tree users may own. */
                                state = CG_DONE;
                        break;
                case CG_STEP:
                        if (has_prefix(c, n, "step_")) {
                                if (!job_step_valid(c + 5, n - 5))
                                        return -EBADMSG;
                                copy_token(ref.step, sizeof(ref.step), c + 5, n - 5);
                        }
                        state = CG_DONE;
                        break;
                case CG_V1_UID:
                case CG_DONE:
                        break;
                }
        }

        if (!ref.job[0] && !ref.sluid[0])
                return 0;
        *ret = ref;
        if (ret_job_end)
                *ret_job_end = job_end;
        return 1;
}

int job_cgroup_path_parse(const char *path, size_t len, JobRef *ret, size_t *ret_job_end) {
        if (!path && len > 0)
                return -EINVAL;
        if (len > 0 && memchr(path, '\0', len))
                return -EBADMSG;
        return parse_cgroup_path(path, len, ret, ret_job_end);
}

/* Two hierarchies agree when they name the same job (and uid); a step known
 * in one and not the other (a hierarchy holding the job but not the step)
 * is filled in. */
static int merge_ref(JobRef *acc, const JobRef *r) {
        if (!streq(acc->job, r->job) || !streq(acc->sluid, r->sluid) || acc->uid != r->uid)
                return -EBADMSG;
        if (!acc->step[0])
                memcpy(acc->step, r->step, sizeof(acc->step));
        else if (r->step[0] && !streq(acc->step, r->step))
                return -EBADMSG;
        return 0;
}

int job_cgroup_parse(const char *buf, size_t len, JobRef *ret) {
        JobRef acc;
        bool found = false;
        size_t i = 0;

        if (!buf && len > 0)
                return -EINVAL;
        if (len > 0 && memchr(buf, '\0', len))
                return -EBADMSG;

        while (i < len) {
                const char *line = buf + i, *nl = memchr(line, '\n', len - i);
                const char *colon1, *colon2;
                size_t n;
                JobRef r;
                int k;

                /* The kernel ends every line: a line without its '\n' was
                 * cut, and a cut "job_4711" would name job 47. */
                if (!nl)
                        return -EBADMSG;
                n = (size_t) (nl - line);
                i += n + 1;

                colon1 = memchr(line, ':', n);
                if (!colon1 || colon1 == line)
                        return -EBADMSG;
                for (const char *p = line; p < colon1; p++)
                        if (*p < '0' || *p > '9')
                                return -EBADMSG;
                colon2 = memchr(colon1 + 1, ':', n - (size_t) (colon1 + 1 - line));
                if (!colon2)
                        return -EBADMSG;

                k = parse_cgroup_path(colon2 + 1, n - (size_t) (colon2 + 1 - line), &r, NULL);
                if (k < 0)
                        return k;
                if (k == 0)
                        continue;
                if (!found) {
                        acc = r;
                        found = true;
                } else {
                        k = merge_ref(&acc, &r);
                        if (k < 0)
                                return k;
                }
        }

        if (!found)
                return 0;
        *ret = acc;
        return 1;
}

int job_cgroup_read(const char *proc_root, pid_t pid, JobRef *ret) {
        _cleanup_free_ char *buf = NULL;
        char path[PATH_MAX];
        size_t size;
        int r;

        if (pid <= 0)
                return -EINVAL;
        if (snprintf(path, sizeof(path), "%s/%d/cgroup", proc_root, (int) pid) >= (int) sizeof(path))
                return -ENAMETOOLONG;
        r = read_full_file(path, JOB_CGROUP_READ_MAX, &buf, &size);
        if (r < 0)
                return r;
        return job_cgroup_parse(buf, size, ret);
}

/* ---- text from outside ------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n) {
        size_t len;
        uint32_t cp;

        if (s[0] < 0x80)
                return 1;
        if (s[0] >= 0xc2 && s[0] <= 0xdf) {
                len = 2;
                cp = s[0] & 0x1f;
        } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
                len = 3;
                cp = s[0] & 0x0f;
        } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
                len = 4;
                cp = s[0] & 0x07;
        } else
                return 0;
        if (n < len)
                return 0;
        for (size_t i = 1; i < len; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                cp = (cp << 6) | (s[i] & 0x3f);
        }
        /* Overlong forms, surrogates and code points past U+10FFFF. */
        if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        return len;
}

void job_text_copy(char *dst, size_t size, const char *src, size_t len) {
        const unsigned char *s = (const unsigned char *) src;
        size_t o = 0;

        for (size_t i = 0; i < len;) {
                size_t k = utf8_len(s + i, len - i);

                if (k == 0 || s[i] < 0x20 || s[i] == 0x7f) {
                        if (o + 1 >= size)
                                break;
                        dst[o++] = '?';
                        i += MAX(k, (size_t) 1);
                        continue;
                }
                if (o + k >= size)
                        break;
                memcpy(dst + o, s + i, k);
                o += k;
                i += k;
        }
        dst[o] = '\0';
}

/* ---- LMK_NOTES --------------------------------------------------------- */

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

/* ---- JobInfo ----------------------------------------------------------- */

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
        return 0;
}

void job_info_display_id(const JobInfo *info, char ret[static JOB_ID_SIZE]) {
        if (info->array_job != JOB_UNSET && info->array_task != JOB_UNSET)
                snprintf(ret, JOB_ID_SIZE, "%" PRIu32 "_%" PRIu32, info->array_job, info->array_task);
        else if (info->het_job != JOB_UNSET && info->het_offset != JOB_UNSET)
                snprintf(ret, JOB_ID_SIZE, "%" PRIu32 "+%" PRIu32, info->het_job, info->het_offset);
        else
                snprintf(ret, JOB_ID_SIZE, "%s", info->job);
}

/* ---- /proc/<pid>/environ ----------------------------------------------- */

typedef enum EnvVar {
        ENV_JOB_ID,
        ENV_JOBID,
        ENV_STEP_ID,
        ENV_STEPID,
        ENV_ARRAY_JOB_ID,
        ENV_ARRAY_TASK_ID,
        ENV_HET_JOB_ID,
        ENV_HET_JOB_OFFSET,
        ENV_JOB_USER,
        ENV_JOB_UID,
        ENV_JOB_ACCOUNT,
        ENV_JOB_PARTITION,
        ENV_JOB_NAME,
        ENV_JOB_NUM_NODES,
        ENV_NNODES,
        ENV_NTASKS,
        ENV_CPUS_ON_NODE,
        ENV_CLUSTER_NAME,
        ENV_LMK_NOTES,
        ENV_OMPI_RANK,
        ENV_PMIX_RANK,
        ENV_PMI_RANK,
        ENV_MV2_RANK,
        ENV_PROCID,
        _ENV_MAX,
} EnvVar;

static const char *const env_names[_ENV_MAX] = {
        [ENV_JOB_ID] = "SLURM_JOB_ID=",
        [ENV_JOBID] = "SLURM_JOBID=",
        [ENV_STEP_ID] = "SLURM_STEP_ID=",
        [ENV_STEPID] = "SLURM_STEPID=",
        [ENV_ARRAY_JOB_ID] = "SLURM_ARRAY_JOB_ID=",
        [ENV_ARRAY_TASK_ID] = "SLURM_ARRAY_TASK_ID=",
        [ENV_HET_JOB_ID] = "SLURM_HET_JOB_ID=",
        [ENV_HET_JOB_OFFSET] = "SLURM_HET_JOB_OFFSET=",
        [ENV_JOB_USER] = "SLURM_JOB_USER=",
        [ENV_JOB_UID] = "SLURM_JOB_UID=",
        [ENV_JOB_ACCOUNT] = "SLURM_JOB_ACCOUNT=",
        [ENV_JOB_PARTITION] = "SLURM_JOB_PARTITION=",
        [ENV_JOB_NAME] = "SLURM_JOB_NAME=",
        [ENV_JOB_NUM_NODES] = "SLURM_JOB_NUM_NODES=",
        [ENV_NNODES] = "SLURM_NNODES=",
        [ENV_NTASKS] = "SLURM_NTASKS=",
        [ENV_CPUS_ON_NODE] = "SLURM_CPUS_ON_NODE=",
        [ENV_CLUSTER_NAME] = "SLURM_CLUSTER_NAME=",
        [ENV_LMK_NOTES] = "LMK_NOTES=",
        [ENV_OMPI_RANK] = "OMPI_COMM_WORLD_RANK=",
        [ENV_PMIX_RANK] = "PMIX_RANK=",
        [ENV_PMI_RANK] = "PMI_RANK=",
        [ENV_MV2_RANK] = "MV2_COMM_WORLD_RANK=",
        [ENV_PROCID] = "SLURM_PROCID=",
};

/* MPI's own variables, most specific first; SLURM_PROCID comes last and
 * only in numbered steps (see job_environ_parse()). */
static const EnvVar rank_vars[] = { ENV_OMPI_RANK, ENV_PMIX_RANK, ENV_PMI_RANK, ENV_MV2_RANK };

/* A number where 0 and JOB_UNSET mean nothing (counts, uids and ids
 * alike are then better left unknown). Leading zeros are fine here. */
static uint32_t env_u32(const char *s, size_t len, bool zero_ok) {
        char buf[16];
        uint32_t v;

        if (len == 0 || len >= sizeof(buf))
                return JOB_UNSET;
        memcpy(buf, s, len);
        buf[len] = '\0';
        if (safe_atou32(buf, &v) < 0 || (v == 0 && !zero_ok))
                return JOB_UNSET;
        return v;
}

static uint32_t env_rank(const char *s, size_t len) {
        uint32_t v;

        /* strictly decimal, as launchers write it: "007" or "+1" is not a rank */
        if (!parse_u32(s, len, &v) || v > JOB_RANK_MAX)
                return JOB_UNSET;
        return v;
}

static bool step_numbered(const char *step) {
        return step[0] >= '0' && step[0] <= '9';
}

static void env_step(char ret[static JOB_STEP_SIZE], const char *s, size_t len) {
        uint32_t v;

        if (!parse_u32(s, len, &v))
                return;
        if (v <= SLURM_MAX_NORMAL_STEP_ID)
                snprintf(ret, JOB_STEP_SIZE, "%" PRIu32, v);
        else if (v == SLURM_BATCH_SCRIPT)
                snprintf(ret, JOB_STEP_SIZE, "batch");
        else if (v == SLURM_EXTERN_CONT)
                snprintf(ret, JOB_STEP_SIZE, "extern");
        else if (v == SLURM_INTERACTIVE_STEP)
                snprintf(ret, JOB_STEP_SIZE, "interactive");
}

int job_environ_parse(const char *buf, size_t len, JobInfo *ret) {
        const char *val[_ENV_MAX] = {};
        size_t vlen[_ENV_MAX] = {};
        const char *job = NULL, *step = NULL;
        size_t job_len = 0, step_len = 0;
        JobInfo info;
        size_t i = 0;

        if (!buf && len > 0)
                return -EINVAL;

        while (i < len) {
                const char *e = buf + i, *nul = memchr(e, '\0', len - i);
                size_t n;

                if (!nul)
                        break; /* cut by the bounded read: never use half a value */
                n = (size_t) (nul - e);
                i += n + 1;
                if (n < 4 || !strchr("SLOPM", e[0]))
                        continue;
                for (size_t v = 0; v < _ENV_MAX; v++) {
                        size_t k = strlen(env_names[v]);

                        if (n >= k && memcmp(e, env_names[v], k) == 0) {
                                /* getenv() returns the first: so does the process. */
                                if (!val[v]) {
                                        val[v] = e + k;
                                        vlen[v] = n - k;
                                }
                                break;
                        }
                }
        }

        if (val[ENV_JOB_ID]) {
                job = val[ENV_JOB_ID];
                job_len = vlen[ENV_JOB_ID];
        } else if (val[ENV_JOBID]) {
                job = val[ENV_JOBID];
                job_len = vlen[ENV_JOBID];
        }
        if (!job || !job_id_valid(job, job_len))
                return 0;

        job_info_init(&info);
        copy_token(info.job, sizeof(info.job), job, job_len);

        if (val[ENV_STEP_ID]) {
                step = val[ENV_STEP_ID];
                step_len = vlen[ENV_STEP_ID];
        } else if (val[ENV_STEPID]) {
                step = val[ENV_STEPID];
                step_len = vlen[ENV_STEPID];
        }
        if (step)
                env_step(info.step, step, step_len);

        if (val[ENV_ARRAY_JOB_ID] && val[ENV_ARRAY_TASK_ID]) {
                info.array_job = env_u32(val[ENV_ARRAY_JOB_ID], vlen[ENV_ARRAY_JOB_ID], false);
                info.array_task = env_u32(val[ENV_ARRAY_TASK_ID], vlen[ENV_ARRAY_TASK_ID], true);
                if (info.array_job == JOB_UNSET || info.array_task == JOB_UNSET)
                        info.array_job = info.array_task = JOB_UNSET;
        }
        if (val[ENV_HET_JOB_ID] && val[ENV_HET_JOB_OFFSET]) {
                info.het_job = env_u32(val[ENV_HET_JOB_ID], vlen[ENV_HET_JOB_ID], false);
                info.het_offset = env_u32(val[ENV_HET_JOB_OFFSET], vlen[ENV_HET_JOB_OFFSET], true);
                if (info.het_job == JOB_UNSET || info.het_offset == JOB_UNSET)
                        info.het_job = info.het_offset = JOB_UNSET;
        }
        if (val[ENV_JOB_UID])
                info.uid = env_u32(val[ENV_JOB_UID], vlen[ENV_JOB_UID], true);
        if (val[ENV_JOB_NUM_NODES])
                info.nodes = env_u32(val[ENV_JOB_NUM_NODES], vlen[ENV_JOB_NUM_NODES], false);
        else if (val[ENV_NNODES])
                info.nodes = env_u32(val[ENV_NNODES], vlen[ENV_NNODES], false);
        if (val[ENV_NTASKS])
                info.tasks = env_u32(val[ENV_NTASKS], vlen[ENV_NTASKS], false);
        if (val[ENV_CPUS_ON_NODE])
                info.cpus_on_node = env_u32(val[ENV_CPUS_ON_NODE], vlen[ENV_CPUS_ON_NODE], false);

        if (val[ENV_JOB_USER])
                job_text_copy(info.user, sizeof(info.user), val[ENV_JOB_USER], vlen[ENV_JOB_USER]);
        if (val[ENV_JOB_ACCOUNT])
                job_text_copy(info.account, sizeof(info.account), val[ENV_JOB_ACCOUNT], vlen[ENV_JOB_ACCOUNT]);
        if (val[ENV_JOB_PARTITION])
                job_text_copy(info.partition, sizeof(info.partition), val[ENV_JOB_PARTITION],
                          vlen[ENV_JOB_PARTITION]);
        if (val[ENV_CLUSTER_NAME])
                job_text_copy(info.cluster, sizeof(info.cluster), val[ENV_CLUSTER_NAME], vlen[ENV_CLUSTER_NAME]);
        if (val[ENV_JOB_NAME])
                job_text_copy(info.name, sizeof(info.name), val[ENV_JOB_NAME], vlen[ENV_JOB_NAME]);
        if (val[ENV_LMK_NOTES])
                job_notes_parse(val[ENV_LMK_NOTES], vlen[ENV_LMK_NOTES], &info.notes);

        for (size_t k = 0; k < ELEMENTSOF(rank_vars) && info.rank == JOB_UNSET; k++)
                if (val[rank_vars[k]])
                        info.rank = env_rank(val[rank_vars[k]], vlen[rank_vars[k]]);
        if (info.rank == JOB_UNSET && val[ENV_PROCID] && step_numbered(info.step))
                info.rank = env_rank(val[ENV_PROCID], vlen[ENV_PROCID]);

        *ret = info;
        return 1;
}

int job_environ_read(const char *proc_root, pid_t pid, JobInfo *ret) {
        _cleanup_free_ char *buf = NULL;
        _cleanup_close_ int fd = -EBADF;
        char path[PATH_MAX];
        size_t size = 0;

        if (pid <= 0)
                return -EINVAL;
        if (snprintf(path, sizeof(path), "%s/%d/environ", proc_root, (int) pid) >= (int) sizeof(path))
                return -ENAMETOOLONG;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        buf = malloc(JOB_ENVIRON_READ_MAX);
        if (!buf)
                return -ENOMEM;
        /* Unlike read_full_fd(), a long environment is not an error: what
         * fits is used and a cut last entry dropped by the parser. */
        while (size < JOB_ENVIRON_READ_MAX) {
                ssize_t n = read(fd, buf + size, JOB_ENVIRON_READ_MAX - size);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        break;
                size += (size_t) n;
        }
        return job_environ_parse(buf, size, ret);
}
