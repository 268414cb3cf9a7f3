/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job-cpuset.h"
#include "job-table.h"
#include "util.h"

int jobs_init(JobTable *t) {
        *t = (JobTable) {};
        t->jobs = hashmap_new(&string_hash_ops);
        return t->jobs ? 0 : -ENOMEM;
}

void jobs_done(JobTable *t) {
        Job *j;
        size_t i;

        if (t->jobs) {
                HASHMAP_FOREACH(j, t->jobs, i)
                        free(j);
                hashmap_free(t->jobs);
        }
        *t = (JobTable) {};
}

uint32_t job_cpus_allocated(const Job *j) {
        return j->cpus_cgroup != JOB_UNSET ? j->cpus_cgroup : j->info.cpus_on_node;
}

Job *jobs_get(JobTable *t, const char *id) {
        return hashmap_get(t->jobs, id);
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

        if (j)
                return j;
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

int jobs_parse_stepd_title(const char *cmdline, size_t len, JobRef *ret) {
        static const char prefix[] = "slurmstepd: [";
        const char *p, *end, *dot;
        JobRef ref = { .uid = JOB_UNSET };

        if (len < sizeof(prefix) || memcmp(cmdline, prefix, sizeof(prefix) - 1) != 0)
                return 0;
        p = cmdline + sizeof(prefix) - 1;
        end = memchr(p, ']', len - (size_t) (p - cmdline));
        if (!end)
                return 0;
        dot = memchr(p, '.', (size_t) (end - p));
        if (!dot)
                dot = end; /* "slurmstepd: [4711]": the job's extern/batch holder */
        if (!job_id_valid(p, (size_t) (dot - p)))
                return -EBADMSG;
        job_text_copy(ref.job, sizeof(ref.job), p, (size_t) (dot - p));
        if (dot < end) {
                if (!job_step_valid(dot + 1, (size_t) (end - dot - 1)))
                        return -EBADMSG;
                job_text_copy(ref.step, sizeof(ref.step), dot + 1, (size_t) (end - dot - 1));
        }
        *ret = ref;
        return 1;
}

static int read_stepd_title(uint32_t pid, JobRef *ret) {
        _cleanup_free_ char *buf = NULL;
        char path[64];
        size_t n;
        int r;

        snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
        r = read_full_file(path, 4096, &buf, &n);
        if (r < 0)
                return r;
        return jobs_parse_stepd_title(buf, n, ret);
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

Job *jobs_resolve(JobTable *t, Process *p, uint32_t uid, double now) {
        JobInfo env;
        JobRef ref;
        bool have_env = false;
        Job *j;
        int r;

        if (p->job_state == JOB_UNRESOLVED && p->exit_time == 0) {
                /* cgroup first: a process cannot leave its job's cgroup */
                r = job_cgroup_read("/proc", (pid_t) p->pid, &ref);
                /* anyone can name a process slurmstepd and set its title: only
                 * root's is Slurm's */
                if (r <= 0 && uid == 0 && streq(p->comm, "slurmstepd"))
                        r = read_stepd_title(p->pid, &ref);
                bool in_cgroup = r > 0 && ref.job[0];
                if (in_cgroup)
                        p->job = ref;
                p->cgroup_read = p->cgroup_read || r >= 0;
                r = job_environ_read("/proc", (pid_t) p->pid, &env);
                /* the environment is the process's to change: believe its job
                 * only where nothing better says, and only for the job's own user */
                if (r > 0 && env.job[0]) {
                        if (p->job.job[0] == '\0' && (env.uid == JOB_UNSET || env.uid == uid)) {
                                job_text_copy(p->job.job, sizeof(p->job.job), env.job, strlen(env.job));
                                job_text_copy(p->job.step, sizeof(p->job.step), env.step, strlen(env.step));
                        }
                        have_env = streq(env.job, p->job.job);
                }
                p->rank = have_env && !jobs_is_launcher(p->comm) ? env.rank : JOB_UNSET;
                p->job_state = JOB_RESOLVED;
                if (p->job.job[0]) {
                        j = job_for_ref(t, &p->job, now);
                        if (j && !streq(p->live_job, j->info.job)) {
                                /* an exec that changed the process's job (its environment) */
                                jobs_release(t, p, now);
                                j->live++;
                                snprintf(p->live_job, sizeof(p->live_job), "%s", j->info.job);
                        }
                        if (j) {
                                /* a process of a job we thought over; lmkd processes samples
                                 * up to a tick late, so the epilog's word stands */
                                j->ended = j->end_notice;
                                unsigned cpus;
                                if (in_cgroup && j->cpus_cgroup == JOB_UNSET &&
                                    job_cpuset_read((pid_t) p->pid, &cpus) >= 0)
                                        j->cpus_cgroup = cpus;
                                if (have_env && !j->environ_read) {
                                        job_merge(j, &env);
                                        j->environ_read = true;
                                }
                        }
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

static void learn_cgroup(Process *p) {
        JobRef ref;
        int r;

        r = job_cgroup_read("/proc", (pid_t) p->pid, &ref);
        if (r < 0)
                return; /* gone: nothing to learn */
        p->cgroup_read = true;
        if (r > 0 && ref.job[0])
                p->job = ref;
}

void jobs_learn_exec(JobTable *t, Process *p) {
        (void) t;
        /* Outside any job so far: maybe just moved into one. Read now,
         * while it lives, so that its exact totals go to the job even if
         * it is never sampled (a job's only process, exiting before the
         * next reading of the totals). Inside a job, it stays there. */
        if (p && !p->job.job[0] && !p->cgroup_read && p->exit_time == 0)
                learn_cgroup(p);
}

void jobs_learn_fork(JobTable *t, Process *child, Process *parent) {
        (void) t;
        if (!child || child->job.job[0] || child->cgroup_read || child->exit_time != 0)
                return;
        if (parent && !parent->job.job[0] && !parent->cgroup_read && parent->exit_time == 0)
                learn_cgroup(parent);
        /* At its fork the child was where its parent is; where it went
         * since (a task Slurm moves into its step) it says when it is
         * sampled. Its own cgroup is read only when the parent is gone. */
        if (parent && (parent->cgroup_read || parent->job.job[0])) {
                child->job = parent->job;
                child->cgroup_read = parent->cgroup_read;
        } else
                learn_cgroup(child);
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

                if (job_info_merge(&merged, &j->info) >= 0) {
                        j->info = merged;
                        job_info_display_id(&j->info, j->display);
                }
        }
        j->seen = true;
        if (n->event == JOB_NOTICE_END) {
                j->ended = j->end_notice = true;
                j->last_seen = now;
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
                                j->counted = j->counted_multiplexed = false;
                                j->counted_valid = 0;
                                memset(j->counts, 0, sizeof(j->counts));
                        }
                }
                for (size_t k = 0; k < n; k++)
                        free(hashmap_remove(t->jobs, victims[k]));
        } while (n == ELEMENTSOF(victims));
}
