/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "job-cgroup2.h"
#include "job-counters.h"
#include "log.h"
#include "util.h"

struct JobCounterSet {
        char job[JOB_ID_SIZE];          /* the key: JobRef.job */
        char *path;                     /* below the root, with its leading '/' */
        uint64_t ino;                   /* the directory's inode: the cgroup's id */
        int dir_fd;                     /* the job's directory, for CPUs that come online */
        CpuSet cpus;                    /* the job's cpuset here, else every possible CPU */
        int *fds;                       /* [event * n_possible + cpu] */
        uint64_t (*last)[3];            /* the same: value, time enabled, time running at the last read */
        double pending[LMK_MAX_COUNTERS]; /* counted since the last collect */
        bool opened[LMK_MAX_COUNTERS];  /* opened on at least one CPU */
        bool failed[LMK_MAX_COUNTERS];  /* failed on a CPU of the job: its count would be short */
        bool multiplexed;               /* some count was scaled */
        size_t n_fds;
};

static int open_cgroup_event(const struct perf_event_attr *spec, int cgroup_fd, unsigned cpu) {
        struct perf_event_attr attr = *spec;
        long fd;

        attr.disabled = 0;
        attr.inherit = 0;
        attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
        fd = syscall(SYS_perf_event_open, &attr, cgroup_fd, (int) cpu, -1,
                     PERF_FLAG_PID_CGROUP | PERF_FLAG_FD_CLOEXEC);
        return fd < 0 ? -errno : (int) fd;
}

static size_t slot(const JobCounters *jc, size_t event, unsigned cpu) {
        return event * jc->n_possible + cpu;
}

/* What an event counted since its last read, scaled where the PMU
 * multiplexed it. */
static double read_delta(JobCounterSet *s, size_t k) {
        uint64_t v[3], d[3];

        if (read(s->fds[k], v, sizeof(v)) != (ssize_t) sizeof(v))
                return 0;
        for (int i = 0; i < 3; i++) {
                d[i] = v[i] >= s->last[k][i] ? v[i] - s->last[k][i] : 0;
                s->last[k][i] = v[i];
        }
        /* Only a PMU that shared its counters makes running < enabled;
         * software events keep no such times per cgroup and are exact. */
        if (d[2] > 0 && d[2] < d[1]) {
                s->multiplexed = true;
                return (double) d[0] * (double) d[1] / (double) d[2];
        }
        return (double) d[0];
}

static void close_cpu(JobCounters *jc, JobCounterSet *s, unsigned cpu) {
        for (size_t i = 0; i < jc->n_events; i++) {
                size_t k = slot(jc, i, cpu);

                if (s->fds[k] < 0)
                        continue;
                s->pending[i] += read_delta(s, k);
                s->fds[k] = safe_close(s->fds[k]);
                s->n_fds--;
                jc->n_fds--;
        }
}

static void open_cpu(JobCounters *jc, JobCounterSet *s, unsigned cpu) {
        if (!cpu_set_has(&s->cpus, cpu))
                return;
        for (size_t i = 0; i < jc->n_events; i++) {
                size_t k = slot(jc, i, cpu);
                int fd;

                if (s->fds[k] >= 0 || !jc->events[i].resolved)
                        continue;
                fd = open_cgroup_event(&jc->events[i].attr, s->dir_fd, cpu);
                if (fd < 0) {
                        if (!s->failed[i])
                                log_debug("Job %s: counter %s does not open on CPU %u for %s: %s", s->job,
                                          jc->events[i].name, cpu, s->path, strerror(-fd));
                        s->failed[i] = true;
                        continue;
                }
                s->fds[k] = fd;
                memset(s->last[k], 0, sizeof(s->last[k]));
                s->opened[i] = true;
                s->n_fds++;
                jc->n_fds++;
        }
}

static JobCounterSet *set_free(JobCounters *jc, JobCounterSet *s) {
        if (!s)
                return NULL;
        for (unsigned c = 0; s->fds && c < jc->n_possible; c++)
                close_cpu(jc, s, c);
        safe_close(s->dir_fd);
        cpu_set_done(&s->cpus);
        free(s->fds);
        free(s->last);
        free(s->path);
        free(s);
        return NULL;
}

int job_counters_init(JobCounters *jc, int root_fd, const EventSpec *events, size_t n_events, uint32_t usable,
                      unsigned n_possible, const CpuSet *online, size_t max_fds) {
        bool any = false;

        *jc = (JobCounters) { .root_fd = -EBADF, .n_events = MIN(n_events, (size_t) LMK_MAX_COUNTERS),
                              .n_possible = n_possible, .online = online, .max_fds = max_fds ?: JOB_COUNTERS_MAX_FDS };
        for (size_t i = 0; i < jc->n_events; i++) {
                jc->events[i] = events[i];
                jc->events[i].resolved = events[i].resolved && (usable & (UINT32_C(1) << i));
                any = any || jc->events[i].resolved;
        }
        if (root_fd < 0 || !any) {
                safe_close(root_fd);
                return 0;
        }
        jc->sets = hashmap_new(&string_hash_ops);
        if (!jc->sets) {
                safe_close(root_fd);
                return -ENOMEM;
        }
        jc->root_fd = root_fd;
        return 0;
}

void job_counters_done(JobCounters *jc) {
        JobCounterSet *s;
        size_t i;

        if (jc->sets) {
                HASHMAP_FOREACH(s, jc->sets, i)
                        set_free(jc, s);
                hashmap_free(jc->sets);
        }
        safe_close(jc->root_fd);
        *jc = (JobCounters) { .root_fd = -EBADF };
}

/* The job's CPUs: its cgroup's effective cpuset where the cpuset controller
 * is on for it (Slurm's ConstrainCores), else every CPU. */
static int job_cpus(JobCounters *jc, int dir_fd, CpuSet *ret) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *list = NULL;
        size_t n;
        int r;

        r = cpu_set_init(ret, jc->n_possible);
        if (r < 0)
                return r;
        fd = openat(dir_fd, "cpuset.cpus.effective", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd >= 0 && read_full_fd(fd, 65536, &list, &n) >= 0) {
                list[strcspn(list, "\n")] = '\0';
                if (list[0] && cpu_set_parse(ret, list) >= 0)
                        return 0;
        }
        for (unsigned c = 0; c < jc->n_possible; c++)
                cpu_set_put(ret, c, true);
        return 0;
}

/* Starts counting the job whose directory is path (below the root). */
static int add_job(JobCounters *jc, JobTable *jobs, const char *path, const JobRef *ref, uint64_t ino, double now) {
        JobCounterSet *s, *old;
        size_t need;
        int r;

        if (!ref->job[0])
                return 0; /* named by SLUID only: no job id to file the counts under */
        if (job_counters_released(jobs_get(jobs, ref->job)))
                return 0; /* its user took the PMU (sbatch --lmk=nocounters) */
        old = hashmap_get(jc->sets, ref->job);
        if (old && old->ino == ino && streq(old->path, path))
                return 0;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->dir_fd = openat(jc->root_fd, path + 1, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (s->dir_fd < 0) {
                r = -errno;
                free(s);
                return r == -ENOENT ? 0 : r;
        }
        snprintf(s->job, sizeof(s->job), "%s", ref->job);
        s->ino = ino;
        s->path = strdup(path);
        s->fds = malloc(jc->n_events * jc->n_possible * sizeof(*s->fds));
        s->last = calloc(jc->n_events * jc->n_possible, sizeof(*s->last));
        r = job_cpus(jc, s->dir_fd, &s->cpus);
        if (!s->path || !s->fds || !s->last || r < 0) {
                set_free(jc, s);
                return -ENOMEM;
        }
        for (size_t k = 0; k < jc->n_events * jc->n_possible; k++)
                s->fds[k] = -EBADF;

        need = cpu_set_count(&s->cpus) * jc->n_events;
        if (jc->n_fds + need > jc->max_fds) {
                jc->jobs_refused++;
                if (!jc->said_refused)
                        log_warning("Job %s: not counted exactly, %zu counter events are open for jobs already "
                                    "(at most %zu); later jobs over the bound are counted in metrics only.",
                                    s->job, jc->n_fds, jc->max_fds);
                jc->said_refused = true;
                set_free(jc, s);
                return 0;
        }

        /* The job's directory came back under the same id (a requeued
         * job): what the old one counted is filed first. */
        if (old) {
                job_counters_collect(jc, jobs, now);
                old = hashmap_remove(jc->sets, ref->job);
                set_free(jc, old);
        }
        for (unsigned c = 0; c < jc->n_possible; c++)
                if (cpu_set_has(jc->online, c))
                        open_cpu(jc, s, c);
        if (s->n_fds == 0) {
                set_free(jc, s);
                return 0;
        }
        r = hashmap_put(jc->sets, s->job, s);
        if (r < 0) {
                set_free(jc, s);
                return r;
        }
        jc->jobs_counted++;
        (void) jobs_from_cgroup(jobs, ref, now);
        log_debug("Job %s: counting %zu events on the cgroup %s.", s->job, s->n_fds, path);
        return 1;
}

typedef struct ScanCtx {
        JobCounters *jc;
        JobTable *jobs;
        double now;
} ScanCtx;

static int scan_one(const char *path, const JobRef *ref, uint64_t ino, void *userdata) {
        ScanCtx *x = userdata;
        int r = add_job(x->jc, x->jobs, path, ref, ino, x->now);

        return r == -ENOMEM ? r : 0;
}

int job_counters_scan(JobCounters *jc, JobTable *jobs, double now) {
        ScanCtx x = { .jc = jc, .jobs = jobs, .now = now };

        if (!job_counters_on(jc))
                return 0;
        return job_cgroup2_scan(jc->root_fd, scan_one, &x);
}

void job_counters_cgroup_made(JobCounters *jc, JobTable *jobs, const char *path, uint64_t id, double now) {
        _cleanup_free_ char *dir = NULL;
        struct stat st;
        size_t job_end;
        JobRef ref;

        if (!job_counters_on(jc) || !path)
                return;
        if (job_cgroup_path_parse(path, strlen(path), &ref, &job_end) != 1 || !ref.job[0])
                return;
        /* a step's or task's cgroup of a job counted already: nothing new */
        {
                JobCounterSet *s = hashmap_get(jc->sets, ref.job);

                if (s && strlen(s->path) == job_end && strncmp(s->path, path, job_end) == 0 &&
                    (job_end < strlen(path) || s->ino == id))
                        return;
        }
        dir = strndup(path, job_end);
        if (!dir)
                return;
        if (fstatat(jc->root_fd, dir + 1, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return; /* gone again, or in a hierarchy other than the unified one */
        if (add_job(jc, jobs, dir, &ref, (uint64_t) st.st_ino, now) == -ENOMEM)
                log_warning("Out of memory: job %s is not counted exactly.", ref.job);
}

void job_counters_cpu_open(JobCounters *jc, unsigned cpu) {
        JobCounterSet *s;
        size_t i;

        if (!job_counters_on(jc) || cpu >= jc->n_possible)
                return;
        HASHMAP_FOREACH(s, jc->sets, i)
                open_cpu(jc, s, cpu);
}

void job_counters_cpu_close(JobCounters *jc, unsigned cpu) {
        JobCounterSet *s;
        size_t i;

        if (!job_counters_on(jc) || cpu >= jc->n_possible)
                return;
        HASHMAP_FOREACH(s, jc->sets, i)
                close_cpu(jc, s, cpu);
}

static bool dir_gone(JobCounters *jc, const JobCounterSet *s) {
        struct stat st;

        if (fstatat(jc->root_fd, s->path + 1, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT || errno == ENOTDIR;
        return (uint64_t) st.st_ino != s->ino;
}

void job_counters_collect(JobCounters *jc, JobTable *jobs, double now) {
        char *gone[64], *released[64];
        size_t n_gone = 0, n_released = 0;
        JobCounterSet *s;
        size_t i;

        if (!job_counters_on(jc))
                return;
        HASHMAP_FOREACH(s, jc->sets, i) {
                /* gone first, read second: nothing of the job runs after its directory went */
                bool is_gone = n_gone < ELEMENTSOF(gone) && dir_gone(jc, s);
                Job *j;

                for (size_t e = 0; e < jc->n_events; e++)
                        for (unsigned c = 0; c < jc->n_possible; c++) {
                                size_t k = slot(jc, e, c);

                                if (s->fds[k] >= 0)
                                        s->pending[e] += read_delta(s, k);
                        }
                j = jobs_get(jobs, s->job);
                if (!j) {
                        JobRef ref = { .uid = JOB_UNSET };

                        snprintf(ref.job, sizeof(ref.job), "%s", s->job);
                        j = jobs_from_cgroup(jobs, &ref, now);
                }
                if (j) {
                        j->counted = true;
                        j->counted_multiplexed = j->counted_multiplexed || s->multiplexed;
                        for (size_t e = 0; e < jc->n_events; e++) {
                                if (s->opened[e] && !s->failed[e])
                                        j->counted_valid |= UINT32_C(1) << e;
                                j->counts[e] += (uint64_t) llround(s->pending[e]);
                        }
                }
                memset(s->pending, 0, sizeof(s->pending));
                s->multiplexed = false;
                if (is_gone)
                        gone[n_gone++] = s->job;
                else if (job_counters_released(j) && n_released < ELEMENTSOF(released))
                        /* the notice came after its cgroup: the PMU goes back now */
                        released[n_released++] = s->job;
        }
        for (size_t k = 0; k < n_released; k++) {
                s = hashmap_remove(jc->sets, released[k]);
                log_debug("Job %s: counters released for its user, its cgroup's counters closed.", released[k]);
                set_free(jc, s);
        }
        for (size_t k = 0; k < n_gone; k++) {
                s = hashmap_remove(jc->sets, gone[k]);
                if (!s)
                        continue;
                jobs_cgroup_gone(jobs, s->job, now);
                log_debug("Job %s: its cgroup %s is gone, its counters closed.", s->job, s->path);
                set_free(jc, s);
        }
}
