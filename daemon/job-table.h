/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "hashmap.h"
#include "job-notify.h"
#include "job-slurm.h"
#include "lmk-bpf.h"
#include "process.h"

/* The batch jobs seen on this node: metadata merged from the job's
 * processes (cgroup, environ) and Prolog/Epilog notices, and their life
 * here (first/last seen, ended). A job is forgotten after the interval in
 * which it was reported ended. */
typedef struct Job {
        JobInfo info;                   /* info.job is the key */
        char display[JOB_ID_SIZE];      /* "4711", "4711_3", "4711+1" */
        double first_seen, last_seen;   /* Unix time */
        unsigned live;                  /* processes known to be in it */
        uint32_t cpus_cgroup;           /* CPUs in its cgroup's cpuset here, JOB_UNSET if unknown */
        bool environ_read;              /* metadata from a process's environment merged */
        bool ended;                     /* the epilog said so, or its last process exited */
        bool end_notice;                /* the epilog said so: samples processed late do not undo it */
        bool seen;                      /* active in the current interval */
        uint64_t samples;               /* attributed to it since it was created */
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
        uint64_t notices, bad_notices;
} JobTable;

/* The CPUs the job was given on this node: its cgroup's cpuset where
 * Slurm constrains cores, else SLURM_CPUS_ON_NODE; JOB_UNSET when unknown. */
uint32_t job_cpus_allocated(const Job *j);

int jobs_init(JobTable *t);
void jobs_done(JobTable *t);

Job *jobs_get(JobTable *t, const char *id);

/* Works out the job of a live process of uid (cgroup; root's slurmstepd's
 * title; environ, for the job's own user only) and its MPI rank (p->rank,
 * from the environment when that names the same job; never for a
 * launcher) and files its metadata. Returns the job or
 * NULL for work outside jobs. */
Job *jobs_resolve(JobTable *t, Process *p, uint32_t uid, double now);

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

/* After a flush: forget jobs reported ended, clear "seen". */
void jobs_end_interval(JobTable *t);

/* Parses slurmstepd's process title "slurmstepd: [4711.batch]". */
int jobs_parse_stepd_title(const char *cmdline, size_t len, JobRef *ret);
