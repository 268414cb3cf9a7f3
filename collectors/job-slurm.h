/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* Which Slurm job and step a process belongs to, and what lmk knows about a
 * job, from the two places a node has them: the process's cgroup path
 * (/proc/<pid>/cgroup, set by slurmstepd, so the user cannot choose it) and
 * its environment (/proc/<pid>/environ, which the user can change at will).
 *
 * The parsers are pure functions over a buffer, bounded and fuzzed; the
 * job_*_read() wrappers do the bounded /proc I/O. By file: job-cgroup.c
 * (cgroup paths), job-environ.c (environments), job-info.c (JobInfo and
 * LMK_NOTES), job-slurm.c (ids, steps, SLUIDs, text from outside).
 * Everything is fixed-size and stored inline: copying a JobInfo is a struct
 * assignment, a parse never allocates, and no value can grow past its
 * field.
 *
 * Job ids: the cgroup path and SLURM_JOB_ID carry the same numeric id, also
 * for an array task (which has its own job id; "4711_3" is how squeue shows
 * it) and for a heterogeneous job component ("4711+1"). That numeric id is
 * the key; job_info_display_id() gives the form users know. Slurm >= 26.05
 * names cgroup/v2 job directories by SLUID ("sEKNKTV3WPV500", see
 * docs/slurm.md) unless CgroupJobIdPaths=yes: then only the SLUID is known
 * from the path and the job id must come from another source. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Buffer sizes, NUL included. Slurm's own limits are far below: a job id is
 * a uint32, a SLUID 14 characters, user/account/partition/cluster names are
 * short identifiers. */
#define JOB_ID_SIZE 32
#define JOB_STEP_SIZE 24
#define JOB_TEXT_SIZE 128
#define JOB_NAME_SIZE 256

#define JOB_NOTES_MAX 32           /* key=value pairs kept from LMK_NOTES */
#define JOB_NOTES_KEY_MAX 64       /* bytes of one key */
#define JOB_NOTES_TEXT_MAX 1024    /* bytes of all keys and values together */

/* At most this much of /proc/<pid>/environ is read; a variable past it is
 * not seen (a partly read variable is dropped, never cut). */
#define JOB_ENVIRON_READ_MAX (64U * 1024U)
/* /proc/<pid>/cgroup larger than this is refused (-EFBIG), not cut. */
#define JOB_CGROUP_READ_MAX (64U * 1024U)

/* Numeric fields hold this when the value is unknown. */
#define JOB_UNSET UINT32_MAX

/* What the job's user asked of lmk (sbatch --lmk=..., slurm/spank-lmk.c).
 * Only root's notice carries it, never an environment: a process cannot
 * switch measurement off for a job, nor on for one that opted out. */
typedef enum JobLmk {
        JOB_LMK_UNSET,          /* not said: measured as usual */
        JOB_LMK_ON,             /* --lmk=on, or an opt-out the site refused */
        JOB_LMK_OFF,            /* only CPU time and samples are kept */
        JOB_LMK_NOCOUNTERS,     /* hardware counters released on its CPUs */
        _JOB_LMK_MAX,
} JobLmk;

/* Where a process sits in Slurm's cgroup tree. */
typedef struct JobRef {
        char job[JOB_ID_SIZE];    /* "4711"; "" when the path names the job by SLUID only */
        char sluid[JOB_ID_SIZE];  /* "sEKNKTV3WPV500" (cgroup/v2, Slurm >= 26.05); else "" */
        char step[JOB_STEP_SIZE]; /* "0", "batch", "extern", "interactive", "0+1"; "" if not in a step */
        uint32_t uid;             /* from uid_<uid> (cgroup/v1 only), else JOB_UNSET */
} JobRef;

typedef struct JobNotes {
        uint32_t n;        /* pairs kept */
        uint32_t rejected; /* pairs dropped: bad key or value, duplicate, over a limit */
        struct {
                uint16_t key, value; /* offsets into text */
        } pair[JOB_NOTES_MAX];
        char text[JOB_NOTES_TEXT_MAX + 2 * JOB_NOTES_MAX];
} JobNotes;

typedef struct JobInfo {
        char job[JOB_ID_SIZE];
        char sluid[JOB_ID_SIZE];
        char step[JOB_STEP_SIZE];
        uint32_t array_job, array_task; /* SLURM_ARRAY_JOB_ID / SLURM_ARRAY_TASK_ID */
        uint32_t het_job, het_offset;   /* SLURM_HET_JOB_ID / SLURM_HET_JOB_OFFSET */
        char user[JOB_TEXT_SIZE];
        uint32_t uid;
        char account[JOB_TEXT_SIZE];
        char partition[JOB_TEXT_SIZE];
        char cluster[JOB_TEXT_SIZE];
        char name[JOB_NAME_SIZE];
        uint32_t nodes, tasks;
        uint32_t cpus_on_node;          /* SLURM_CPUS_ON_NODE: the job's CPUs on this node */
        JobNotes notes;
        JobLmk lmk;                     /* from root's notice only */
        /* The MPI rank of the process whose environment was parsed, or
         * JOB_UNSET: a property of one process, not of the job, so
         * job_info_merge() leaves it alone. */
        uint32_t rank;
} JobInfo;

/* The largest rank accepted (MPI ranks are C ints). */
#define JOB_RANK_MAX (UINT32_C(0x7ffffffe))

/* ---- job-cgroup.c ---- */

/* Parses the contents of /proc/<pid>/cgroup (every hierarchy line, each
 * ending in '\n'). Recognised, also below a container's prefix:
 *   cgroup/v1  …/slurm/uid_<uid>/job_<id>[/step_<step>[/…]]
 *              …/slurm_<node>/uid_<uid>/job_<id>/…   (multiple-slurmd builds, Debian's)
 *   cgroup/v2  …/slurmstepd.scope/job_<id>[/step_<step>[/user/task_<n>|/slurm]]
 *              …/<node>_slurmstepd.scope/…           (multiple-slurmd builds)
 *              …/slurmstepd.scope/<SLUID>/step_<step>/…   (Slurm >= 26.05)
 * The outermost match in a path counts, so a user who may create cgroups
 * inside their own job cannot claim another job by nesting a look-alike.
 * A look-alike below a user's own systemd instance (user@<uid>.service) or
 * session scope, where users may create cgroups, is not a job.
 * Returns 1 and fills *ret when the process is in a job; 0 when it is not;
 * -EBADMSG when the contents are malformed (a line without its '\n', NULs,
 * empty, "." or ".." components, a bad job_/step_ component, lines naming
 * different jobs or steps). */
int job_cgroup_parse(const char *buf, size_t len, JobRef *ret);

/* Parses one cgroup path ("/system.slice/slurmstepd.scope/job_4711/step_0"),
 * as a line of /proc/<pid>/cgroup or a cgroup record of the kernel has it,
 * by the rules above. Returns 1 and fills *ret when it lies in a job, with
 * *ret_job_end (if not NULL) the length of the path's prefix that is the
 * job's own directory ("/system.slice/slurmstepd.scope/job_4711"); 0 when
 * it does not; -EBADMSG when malformed. */
int job_cgroup_path_parse(const char *path, size_t len, JobRef *ret, size_t *ret_job_end);

/* Reads <proc_root>/<pid>/cgroup (proc_root is "/proc", or a fake tree in
 * tests; at most JOB_CGROUP_READ_MAX) and parses it. -ENOENT/-ESRCH when
 * the process is gone. */
int job_cgroup_read(const char *proc_root, pid_t pid, JobRef *ret);

/* ---- job-environ.c ---- */

/* Parses an environment block as in /proc/<pid>/environ: NUL-terminated
 * NAME=value entries; a last entry without its NUL (a cut read) is ignored.
 * Like getenv(), the first of duplicate names counts. Reads SLURM_JOB_ID,
 * SLURM_STEP_ID (or SLURM_STEPID), SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID,
 * SLURM_HET_JOB_ID, SLURM_HET_JOB_OFFSET, SLURM_JOB_USER, SLURM_JOB_UID,
 * SLURM_JOB_ACCOUNT, SLURM_JOB_PARTITION, SLURM_JOB_NAME,
 * SLURM_JOB_NUM_NODES (or SLURM_NNODES), SLURM_NTASKS, SLURM_CPUS_ON_NODE,
 * SLURM_CLUSTER_NAME and LMK_NOTES. Ids and numbers that do not parse are left unset; text is
 * cut to its field at a UTF-8 boundary, with control characters and
 * invalid UTF-8 replaced by '?'.
 * The process's MPI rank (ret->rank) is the first valid one of
 * OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK, MV2_COMM_WORLD_RANK (set by
 * the MPI launcher for each rank), else SLURM_PROCID, but only in a
 * numbered step: the batch script has SLURM_PROCID=0 and is no rank, and
 * neither are mpirun and the programs a batch script runs. A rank is a
 * decimal 0 … JOB_RANK_MAX.
 * Returns 1 and fills *ret when SLURM_JOB_ID holds a valid job id, 0 when
 * there is none (not a Slurm process; *ret untouched). */
int job_environ_parse(const char *buf, size_t len, JobInfo *ret);

/* The same of a NULL-terminated list of "NAME=value" strings (a program's
 * own environ), within the bound job_environ_read() applies to
 * /proc/<pid>/environ: the strings that fit whole, up to the first that
 * does not. -ENOMEM, else as job_environ_parse(). */
int job_environ_parse_strv(char *const *env, JobInfo *ret);

/* Reads at most JOB_ENVIRON_READ_MAX bytes of <proc_root>/<pid>/environ and
 * parses them. Needs the right to ptrace-read the process (root). What it
 * says is the process owner's claim (docs/slurm.md, "Trust"). */
int job_environ_read(const char *proc_root, pid_t pid, JobInfo *ret);

/* ---- job-info.c ---- */

/* Parses LMK_NOTES ("key=value:key=value"): keys [A-Za-z0-9_.-]{1,64},
 * values printable ASCII without ':' (may contain '='), at most
 * JOB_NOTES_MAX pairs and JOB_NOTES_TEXT_MAX bytes of keys and values;
 * the first of duplicate keys counts. Bad pairs are skipped and counted in
 * ret->rejected, empty ones (a trailing ':') ignored. Never fails. */
void job_notes_parse(const char *s, size_t len, JobNotes *ret);
const char *job_notes_key(const JobNotes *notes, size_t i);
const char *job_notes_value(const JobNotes *notes, size_t i);
/* The value for key, or NULL. */
const char *job_notes_get(const JobNotes *notes, const char *key);

/* Sets every field to "unknown". */
void job_info_init(JobInfo *info);
JobInfo *job_info_new(void);
JobInfo *job_info_free(JobInfo *info);

/* A JobInfo holding only what the cgroup path told. */
void job_info_from_ref(JobInfo *ret, const JobRef *ref);

/* Fills the fields of dst that are unknown from src: dst's own values win
 * (give the trusted source as dst, e.g. the cgroup, then environ, then the
 * Prolog notice). Returns -EXDEV and changes nothing when the two describe
 * different jobs (both have a job id, or both a SLUID, and they differ) or
 * different steps. */
int job_info_merge(JobInfo *dst, const JobInfo *src);

/* "on", "off", "nocounters" (the notice's and the option's words); NULL
 * for JOB_LMK_UNSET. */
const char *job_lmk_to_string(JobLmk lmk);
/* The JobLmk of one of those words, -EINVAL for another. */
int job_lmk_from_string(const char *s, size_t len);

/* The id users know: "4711_3" for an array task, "4711+1" for a
 * heterogeneous job component, else the job id ("" if unknown). */
void job_info_display_id(const JobInfo *info, char ret[static JOB_ID_SIZE]);

/* ---- job-slurm.c ---- */

/* Copies text from outside (names, user values) so that it is safe in JSON
 * and web pages: cut to size at a character boundary, control characters
 * and invalid UTF-8 (as common/utf8.h tells it) replaced by '?'. size must
 * be at least 1. */
void job_text_copy(char *dst, size_t size, const char *src, size_t len);

/* Whether s is a job id as Slurm writes it in cgroup paths and SLURM_JOB_ID
 * (decimal, no leading zero, > 0, < 2^32 - 1). */
bool job_id_valid(const char *s, size_t len);
/* Whether s is a step id: a number, a number '+' het component, or a
 * lower-case name (batch, extern, interactive, and names of later Slurm). */
bool job_step_valid(const char *s, size_t len);
/* Whether s is a SLUID as Slurm prints it: 's' and 13 Crockford base32 digits. */
bool job_sluid_valid(const char *s, size_t len);
