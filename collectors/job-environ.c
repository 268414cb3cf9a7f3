/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A job from a process's environment (/proc/<pid>/environ): the process
 * owner's claim (docs/slurm.md, "Trust"), read within a bound. */
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "job-internal.h"
#include "job-slurm.h"
#include "macro.h"
#include "util.h"

/* Step ids Slurm gives its special steps (slurm.h, unchanged since 20.11);
 * SLURM_STEP_ID may carry them as numbers where a cgroup path has names. */
#define SLURM_INTERACTIVE_STEP UINT32_C(0xfffffffa)
#define SLURM_BATCH_SCRIPT UINT32_C(0xfffffffb)
#define SLURM_EXTERN_CONT UINT32_C(0xfffffffc)
#define SLURM_MAX_NORMAL_STEP_ID UINT32_C(0xfffffff0)

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
        if (!job_parse_u32(s, len, &v) || v > JOB_RANK_MAX)
                return JOB_UNSET;
        return v;
}

/* Of a variable and its other spelling, the one the environment has: the
 * first when both are there, even if its value is bad. */
static EnvVar either(const char *const val[static _ENV_MAX], EnvVar first, EnvVar second) {
        return val[first] ? first : second;
}

static bool step_numbered(const char *step) {
        return step[0] >= '0' && step[0] <= '9';
}

static void env_step(char ret[static JOB_STEP_SIZE], const char *s, size_t len) {
        uint32_t v;

        if (!job_parse_u32(s, len, &v))
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
        EnvVar job, step, nodes;
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

        job = either(val, ENV_JOB_ID, ENV_JOBID);
        if (!val[job] || !job_id_valid(val[job], vlen[job]))
                return 0;

        job_info_init(&info);
        job_copy_token(info.job, sizeof(info.job), val[job], vlen[job]);

        step = either(val, ENV_STEP_ID, ENV_STEPID);
        if (val[step])
                env_step(info.step, val[step], vlen[step]);

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
        nodes = either(val, ENV_JOB_NUM_NODES, ENV_NNODES);
        if (val[nodes])
                info.nodes = env_u32(val[nodes], vlen[nodes], false);
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

int job_environ_parse_strv(char *const *env, JobInfo *ret) {
        _cleanup_free_ char *buf = malloc(JOB_ENVIRON_READ_MAX);
        size_t size = 0;

        if (!buf)
                return -ENOMEM;
        for (char *const *e = env; e && *e; e++) {
                size_t n = strlen(*e) + 1;

                if (n > JOB_ENVIRON_READ_MAX - size)
                        break;
                memcpy(buf + size, *e, n);
                size += n;
        }
        return job_environ_parse(buf, size, ret);
}

int job_environ_read(const char *proc_root, pid_t pid, JobInfo *ret) {
        _cleanup_free_ char *buf = NULL;
        _cleanup_close_ int fd = -EBADF;
        char path[PATH_MAX];
        ssize_t n;

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
        n = loop_read(fd, buf, JOB_ENVIRON_READ_MAX);
        if (n < 0)
                return (int) n;
        return job_environ_parse(buf, (size_t) n, ret);
}
