/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "hashmap.h"
#include "job-notify.h"
#include "job-slurm.h"
#include "lmk-bpf.h"
#include "process.h"

/* How lmkd knows a job's user (info.uid). Never from an environment: a
 * process's environment is its owner's claim (docs/slurm.md, "Trust"). */
typedef enum JobUidTrust {
        JOB_UID_UNKNOWN,
        /* a non-root process Slurm placed in the job: in its cgroup (v2
         * paths name no uid), below its slurmstepd, or forked by one */
        JOB_UID_MEMBER,
        /* root's word: a Prolog/Epilog notice, or the cgroup/v1 path uid_<u> */
        JOB_UID_SLURM,
} JobUidTrust;

/* The batch jobs seen on this node: metadata merged from Prolog/Epilog
 * notices, cgroup paths, slurmstepd's process tree and the environment of
 * the job's own user's processes, and their life here (first/last seen,
 * ended). A job is forgotten after the interval in which it was reported
 * ended. */
typedef struct Job {
        JobInfo info;                   /* info.job is the key */
        JobUidTrust uid_trust;          /* how info.uid is known */
        char display[JOB_ID_SIZE];      /* "4711", "4711_3", "4711+1" */
        double first_seen, last_seen;   /* Unix time */
        unsigned live;                  /* processes known to be in it */
        uint32_t cpus_cgroup;           /* CPUs in its cgroup's cpuset here, JOB_UNSET if unknown */
        bool environ_read;              /* metadata from a process's environment merged */
        bool ended;                     /* the epilog said so, or its last process exited */
        bool end_notice;                /* the epilog said so: samples processed late do not undo it */
        bool seen;                      /* active in the current interval */
        uint64_t samples;               /* attributed to it since it was created */
        /* --lmk=off (info.lmk): its samples in the interval, counted
         * here and nowhere else (no row, object, phase or function) */
        uint64_t private_samples;
        /* its energy (energy.h): samples at the last read, and its joules
         * in the interval, in all and while it was alone on the node */
        uint64_t energy_mark;
        double energy_joules, energy_alone_joules;
        /* exact counts of the configured counters in the interval, from
         * the job's cgroup (job-counters.h): counted says there are some,
         * counted_valid which counters (bit per counter) counted on every
         * CPU of the job */
        bool counted;
        bool counted_multiplexed;       /* some count was scaled */
        uint32_t counted_valid;
        uint64_t counts[LMK_MAX_COUNTERS];
} Job;

typedef struct JobTable {
        Hashmap *jobs;                  /* info.job → Job* */
        const char *proc_root;          /* "/proc", or a fake tree in tests */
        uint64_t notices, bad_notices;
        bool opt_out_forbidden;         /* lmkd.conf opt-out = forbidden: --lmk=off is measured as usual */
        uint64_t opt_outs_refused;      /* notices whose --lmk=off that refused (reported as
                                         * job_opt_outs_refused, lmkd_job_opt_outs_refused_total) */
} JobTable;

/* The job's user opted out (sbatch --lmk=off): only its CPU time and
 * sample count leave lmkd (docs/slurm.md, "What opting out keeps"). */
static inline bool job_opted_out(const Job *j) {
        return j && j->info.lmk == JOB_LMK_OFF;
}

/* The job's user took the hardware counters (sbatch --lmk=nocounters). */
static inline bool job_counters_released(const Job *j) {
        return j && j->info.lmk == JOB_LMK_NOCOUNTERS;
}

/* The CPUs the job was given on this node: its cgroup's cpuset where
 * Slurm constrains cores, else SLURM_CPUS_ON_NODE; JOB_UNSET when unknown. */
uint32_t job_cpus_allocated(const Job *j);

int jobs_init(JobTable *t);
void jobs_done(JobTable *t);

Job *jobs_get(JobTable *t, const char *id);

/* Works out the job of a live process of (real) uid, once per process and
 * exec: its cgroup; root's slurmstepd's title; the job it inherited at its
 * fork; root's slurmstepd above it (when its environment names a job);
 * else the job its environment names, but only when lmkd knows from a
 * trusted source that the job's user is uid (jobs_trusts()). A claim not
 * trusted yet is kept (p->claim) and accepted once trust exists: until
 * then the process is outside any job. Its MPI rank (p->rank) and the
 * job's metadata come from its environment only when that names its job
 * and uid is the job's user, and never a launcher's rank. Returns the job
 * or NULL for work outside jobs. */
Job *jobs_resolve(JobTable *t, Process *p, uint32_t uid, double now);

/* Whether lmkd knows from a trusted source that uid is the job's user. */
bool jobs_trusts(const Job *j, uint32_t uid);

/* A process forked (its record arrived): when its parent's cgroup was not
 * read yet, it is read now and the child starts where the parent is, so
 * that processes that exit before lmkd samples them are still filed under
 * their job (their exact CPU time). A parent outside jobs is read once:
 * its children inherit the answer. */
void jobs_learn_fork(JobTable *t, Process *child, Process *parent);

/* A process exec'd (its record arrived): one outside jobs so far has its
 * cgroup read now, since launchers move their children into the job's
 * cgroup between fork and exec. */
void jobs_learn_exec(JobTable *t, Process *p);

/* Whether a process of this command name launches MPI ranks (mpirun,
 * orted, hydra_pmi_proxy, srun, …) and so is never a rank itself. */
bool jobs_is_launcher(const char *comm);

/* The job has a cgroup v2 directory here (job-counters.h): created with
 * what its path says when not known yet. */
Job *jobs_from_cgroup(JobTable *t, const JobRef *ref, double now);
/* The job's directory is gone: no process of it runs here any more. */
void jobs_cgroup_gone(JobTable *t, const char *id, double now);

/* A process left a job (it was forgotten after its exit). */
void jobs_release(JobTable *t, Process *p, double now);

void jobs_apply_notice(JobTable *t, const JobNotice *n, double now);

/* The wall clock stepped by delta seconds (interval-clock.h): the times of
 * the jobs lmkd holds were read on the old clock and move with it, so that
 * a job's last_seen never falls before its first_seen. */
void jobs_clock_stepped(JobTable *t, double delta);

/* After a flush: forget jobs reported ended, clear "seen". */
void jobs_end_interval(JobTable *t);

