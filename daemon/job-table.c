/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job-cpuset.h"
#include "job-stepd.h"
#include "job-table.h"
#include "log.h"
#include "util.h"

int jobs_init(JobTable *t) {
        *t = (JobTable) { .proc_root = "/proc" };
        t->jobs = hashmap_new(&string_hash_ops);
        return t->jobs ? 0 : -ENOMEM;
}

void jobs_done(JobTable *t) {
        hashmap_free_free(t->jobs, NULL);
        *t = (JobTable) {};
}

uint32_t job_cpus_allocated(const Job *j) {
        return j->cpus_cgroup != JOB_UNSET ? j->cpus_cgroup : j->info.cpus_on_node;
}

Job *jobs_get(JobTable *t, const char *id) {
        return hashmap_get(t->jobs, id);
}

bool jobs_trusts(const Job *j, uint32_t uid) {
        return j && j->uid_trust != JOB_UID_UNKNOWN && j->info.uid == uid;
}

/* A trusted source says uid is the job's user. Root's word replaces a
 * member's; the first of each kind stands (root's sources do not
 * disagree; a notice's uid was merged already). The user's name is
 * the notice's, or (when unknown) the system's name for the uid at output:
 * never one a process's environment gave. */
static void job_trust_uid(Job *j, uint32_t uid, JobUidTrust how) {
        if (uid == JOB_UNSET || how <= j->uid_trust)
                return;
        if (j->info.uid != uid)
                j->info.user[0] = '\0';
        j->info.uid = uid;
        j->uid_trust = how;
}

static Job *job_create(JobTable *t, const JobInfo *info, double now) {
        Job *j = jobs_get(t, info->job);

        if (j)
                return j;
        if (hashmap_size(t->jobs) >= 65536)
                return NULL; /* bounded: a node does not run that many jobs at once */
        j = calloc(1, sizeof(*j));
        if (!j)
                return NULL;
        j->info = *info;
        /* the info of a cgroup path (uid_<u>, v1) or a notice: both root's */
        j->uid_trust = info->uid != JOB_UNSET ? JOB_UID_SLURM : JOB_UID_UNKNOWN;
        j->cpus_cgroup = JOB_UNSET;
        job_info_display_id(&j->info, j->display);
        j->first_seen = j->last_seen = now;
        if (hashmap_put(t->jobs, j->info.job, j) < 0) {
                free(j);
                return NULL;
        }
        return j;
}

/* The job a process's reference names, created with what the reference says. */
static Job *job_for_ref(JobTable *t, const JobRef *ref, double now) {
        Job *j = jobs_get(t, ref->job);
        JobInfo info;

        if (j) {
                job_trust_uid(j, ref->uid, JOB_UID_SLURM);
                return j;
        }
        job_info_init(&info);
        job_info_from_ref(&info, ref);
        return job_create(t, &info, now);
}

Job *jobs_from_cgroup(JobTable *t, const JobRef *ref, double now) {
        Job *j = job_for_ref(t, ref, now);

        if (j) {
                j->seen = true;
                j->last_seen = now;
        }
        return j;
}

void jobs_cgroup_gone(JobTable *t, const char *id, double now) {
        Job *j = jobs_get(t, id);

        /* lmkd may still hold exited processes of it for a moment: their
         * release (jobs_release()) ends it then */
        if (!j || j->live > 0)
                return;
        j->ended = true;
        j->last_seen = now;
        j->seen = true;
}

static void job_merge(Job *j, const JobInfo *info) {
        if (job_info_merge(&j->info, info) >= 0)
                job_info_display_id(&j->info, j->display);
}

bool jobs_is_launcher(const char *comm) {
        /* Open MPI's mpirun/orted/prted, MPICH's and Intel MPI's hydra, and
         * Slurm's own: a launcher srun starts as a task of a numbered step
         * carries that task's SLURM_PROCID, but it is no rank */
        static const char *const launchers[] = {
                "mpirun", "mpiexec", "orterun", "orted", "prted", "prterun", "hydra_pmi_proxy",
                "mpiexec.hydra", "pmi_proxy", "srun", "slurmstepd",
        };

        for (size_t i = 0; i < ELEMENTSOF(launchers); i++)
                if (streq(comm, launchers[i]))
                        return true;
        return false;
}

/* Metadata from the environment of a process of the job's own user: what
 * it says of the job, but not who the job's user is (job_trust_uid()). */
static void job_merge_environ(Job *j, JobInfo *env) {
        env->user[0] = '\0';
        env->uid = JOB_UNSET;
        job_merge(j, env);
        j->environ_read = true;
}

/* Reads the live process's job from /proc and files it (jobs_resolve()). */
static void resolve(JobTable *t, Process *p, uint32_t uid, double now) {
        JobInfo env;
        JobRef ref;
        bool in_cgroup, env_job, placed;
        Job *j = NULL;
        int r;

        /* cgroup first: a process cannot leave its job's cgroup */
        r = job_cgroup_read(t->proc_root, (pid_t) p->pid, &ref);
        p->cgroup_read = p->cgroup_read || r >= 0;
        in_cgroup = r > 0 && ref.job[0];
        /* anyone can name a process slurmstepd and set its title: only
         * root's is Slurm's */
        if (!in_cgroup && uid == 0 && streq(p->comm, "slurmstepd"))
                in_cgroup = job_stepd_read(t->proc_root, p->pid, &ref) > 0;
        if (in_cgroup)
                p->job = ref;

        r = job_environ_read(t->proc_root, (pid_t) p->pid, &env);
        env_job = r > 0 && env.job[0];
        /* Where no cgroup says and it inherited no job (it was running
         * before lmkd, or its parent was never resolved), root's
         * slurmstepd above it places it. Asked only of processes that
         * claim a job, so that work outside jobs costs no walk. */
        if (env_job && !p->job.job[0] && job_stepd_find(t->proc_root, p->pid, &ref) > 0)
                p->job = ref;
        placed = p->job.job[0] != '\0';
        p->claim[0] = '\0';
        if (placed) {
                j = job_for_ref(t, &p->job, now);
                /* root is no job's user by being in it: slurmstepd and its
                 * children before they exec are root's */
                if (j && uid != 0)
                        job_trust_uid(j, uid, JOB_UID_MEMBER);
        } else if (env_job) {
                /* the environment is the process's to change: its job counts
                 * only for the job's own user, as a trusted source names it */
                j = jobs_get(t, env.job);
                if (jobs_trusts(j, uid)) {
                        p->job = (JobRef) { .uid = JOB_UNSET };
                        job_text_copy(p->job.job, sizeof(p->job.job), env.job, strlen(env.job));
                        job_text_copy(p->job.step, sizeof(p->job.step), env.step, strlen(env.step));
                } else {
                        j = NULL;
                        snprintf(p->claim, sizeof(p->claim), "%s", env.job);
                }
        }
        /* what the environment says of its job, from the job's own user only */
        bool own = j && env_job && streq(env.job, j->info.job) && jobs_trusts(j, uid);
        p->rank = own && !jobs_is_launcher(p->comm) ? env.rank : JOB_UNSET;
        p->job_state = JOB_RESOLVED;
        if (!j)
                return;
        if (!streq(p->live_job, j->info.job)) {
                /* an exec that changed the process's job (its cgroup) */
                jobs_release(t, p, now);
                j->live++;
                snprintf(p->live_job, sizeof(p->live_job), "%s", j->info.job);
        }
        /* a process of a job we thought over; lmkd processes samples up to
         * a tick late, so the epilog's word stands */
        j->ended = j->end_notice;
        unsigned cpus;
        if (in_cgroup && j->cpus_cgroup == JOB_UNSET && job_cpuset_read((pid_t) p->pid, &cpus) >= 0)
                j->cpus_cgroup = cpus;
        if (own && !j->environ_read)
                job_merge_environ(j, &env);
}

Job *jobs_resolve(JobTable *t, Process *p, uint32_t uid, double now) {
        Job *j;

        if (p->job_state == JOB_UNRESOLVED && p->exit_time == 0)
                resolve(t, p, uid, now);
        else if (!p->job.job[0] && p->claim[0] && jobs_trusts(jobs_get(t, p->claim), uid)) {
                /* a claim trusted since (the job's notice came after the
                 * process): read again while it lives, for its step, rank
                 * and the job's metadata; else its word stands for the job */
                if (p->exit_time == 0)
                        resolve(t, p, uid, now);
                else {
                        p->job = (JobRef) { .uid = JOB_UNSET };
                        snprintf(p->job.job, sizeof(p->job.job), "%s", p->claim);
                        p->claim[0] = '\0';
                }
        }
        if (p->job.job[0] == '\0')
                return NULL;
        /* also for a job inherited from a parent whose job we already forgot */
        j = job_for_ref(t, &p->job, now);
        if (j) {
                j->last_seen = now;
                j->seen = true;
        }
        return j;
}

static void learn_cgroup(JobTable *t, Process *p) {
        JobRef ref;
        int r;

        r = job_cgroup_read(t->proc_root, (pid_t) p->pid, &ref);
        if (r < 0)
                return; /* gone: nothing to learn */
        p->cgroup_read = true;
        if (r > 0 && ref.job[0])
                p->job = ref;
}

void jobs_learn_exec(JobTable *t, Process *p) {
        /* Outside any job so far: maybe just moved into one. Read now,
         * while it lives, so that its exact totals go to the job even if
         * it is never sampled (a job's only process, exiting before the
         * next reading of the totals). Inside a job, it stays there. */
        if (p && !p->job.job[0] && !p->cgroup_read && p->exit_time == 0)
                learn_cgroup(t, p);
}

void jobs_learn_fork(JobTable *t, Process *child, Process *parent) {
        if (!child || child->job.job[0] || child->cgroup_read || child->exit_time != 0)
                return;
        if (parent && !parent->job.job[0] && !parent->cgroup_read && parent->exit_time == 0)
                learn_cgroup(t, parent);
        /* At its fork the child was where its parent is; where it went
         * since (a task Slurm moves into its step) it says when it is
         * sampled. Its own cgroup is read only when the parent is gone. */
        if (parent && (parent->cgroup_read || parent->job.job[0])) {
                child->job = parent->job;
                child->cgroup_read = parent->cgroup_read;
        } else
                learn_cgroup(t, child);
}

void jobs_release(JobTable *t, Process *p, double now) {
        Job *j;

        if (!p->live_job[0])
                return;
        j = jobs_get(t, p->live_job);
        p->live_job[0] = '\0';
        if (!j || j->live == 0)
                return;
        if (--j->live == 0) {
                j->ended = true;
                j->last_seen = now;
                j->seen = true;
        }
}

void jobs_apply_notice(JobTable *t, const JobNotice *n, double now) {
        Job *j = jobs_get(t, n->info.job);

        t->notices++;
        if (!j)
                j = job_create(t, &n->info, now);
        if (!j)
                return;
        /* root's Prolog knows the job's owner and placement: it goes first */
        {
                JobInfo merged = n->info;

                if (merged.lmk == JOB_LMK_OFF && t->opt_out_forbidden) {
                        log_info("Job %s asked --lmk=off, which lmkd.conf forbids (opt-out = forbidden): "
                                 "measured as usual.", n->info.job);
                        merged.lmk = JOB_LMK_ON;
                        t->opt_outs_refused++;
                }
                if (job_info_merge(&merged, &j->info) >= 0) {
                        j->info = merged;
                        job_info_display_id(&j->info, j->display);
                }
        }
        job_trust_uid(j, n->info.uid, JOB_UID_SLURM);
        j->seen = true;
        if (n->event == JOB_NOTICE_END) {
                j->ended = j->end_notice = true;
                j->last_seen = now;
        }
}

void jobs_clock_stepped(JobTable *t, double delta) {
        Job *j;
        size_t i;

        HASHMAP_FOREACH(j, t->jobs, i) {
                j->first_seen += delta;
                j->last_seen += delta;
        }
}

void jobs_end_interval(JobTable *t) {
        char *victims[256];
        size_t n;

        do {
                Job *j;
                size_t i;

                n = 0;
                HASHMAP_FOREACH(j, t->jobs, i) {
                        if (j->ended && j->live == 0) {
                                victims[n++] = j->info.job;
                                if (n == ELEMENTSOF(victims))
                                        break;
                        } else {
                                j->seen = false;
                                j->private_samples = 0;
                                j->counted = j->counted_multiplexed = false;
                                j->counted_valid = 0;
                                memset(j->counts, 0, sizeof(j->counts));
                        }
                }
                for (size_t k = 0; k < n; k++)
                        free(hashmap_remove(t->jobs, victims[k]));
        } while (n == ELEMENTSOF(victims));
}
