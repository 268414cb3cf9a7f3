/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "db/db.h"
#include "log.h"
#include "retention.h"
#include "util.h"

/* Pause between steps: ingest takes the writer meanwhile. */
#define STEP_PAUSE_MS 20

/* Waits ms milliseconds or until told to stop; true when stopping. */
static bool wait_ms(Retention *r, uint64_t ms) {
        struct timespec ts;
        bool stop;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_sec += (time_t) (ms / 1000);
        ts.tv_nsec += (long) (ms % 1000) * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
        }
        pthread_mutex_lock(&r->lock);
        while (!r->stopping && pthread_cond_timedwait(&r->cond, &r->lock, &ts) != ETIMEDOUT)
                ;
        stop = r->stopping;
        pthread_mutex_unlock(&r->lock);
        return stop;
}

/* PostgreSQL's time partitions: those due made, those wholly before their
 * horizon (the raw ones' or the rollups'; 0: none) dropped, all of them
 * counted. */
static void partitions_pass(Retention *r, int64_t now, int64_t raw_before, int64_t rollup_before) {
        Metrics *m = r->metrics;
        PartitionResult p;
        int e = r->storage->ops->partitions(r->storage, now, raw_before, rollup_before, &p);

        atomic_fetch_add(&m->partitions_created, p.created);
        atomic_fetch_add(&m->partitions_dropped, p.dropped);
        atomic_fetch_add(&m->partition_failures, p.failures);
        if (e < 0) {
                log_warning_errno(e, "Partitions: failed to look after the time partitions, trying again later: %m");
                atomic_fetch_add(&m->partition_failures, 1);
                return;
        }
        for (PartitionedTable i = 0; i < _PARTITIONED_TABLE_MAX; i++) {
                atomic_store(&m->partitions[i], p.partitions[i]);
                atomic_store(&m->partition_default_rows[i], p.default_rows[i]);
        }
        atomic_store(&m->partitions_known, true);
        if (p.created + p.dropped > 0)
                log_info("Partitions: made %" PRIu64 ", dropped %" PRIu64 " (%" PRIu64 " rows).", p.created,
                         p.dropped, p.dropped_rows);
}

int64_t retention_rollup_horizon(int64_t now, unsigned days) {
        enum { PERIOD = 28 * 86400 };
        int64_t h = now - (int64_t) days * 86400;

        if (days == 0 || h <= 0)
                return 0;
        return h - h % PERIOD;
}

typedef enum PruneKind {
        PRUNE_RAW,
        PRUNE_ROLLUPS,
        PRUNE_JOBS,
} PruneKind;

static int prune_step(Retention *r, PruneKind kind, int64_t before, PruneResult *ret) {
        const StorageOps *ops = r->storage->ops;

        switch (kind) {
        case PRUNE_RAW:
                return ops->prune(r->storage, before, RETENTION_STEP_ROWS, ret);
        case PRUNE_ROLLUPS:
                return ops->prune_rollups(r->storage, before, RETENTION_STEP_ROWS, ret);
        case PRUNE_JOBS:
                return ops->prune_jobs(r->storage, before, RETENTION_STEP_ROWS, ret);
        }
        return -EINVAL;
}

/* Steps of one kind of prune until nothing older than the horizon is
 * left; their sum. */
static int prune_steps(Retention *r, PruneKind kind, int64_t before, PruneResult *sum, uint64_t *steps) {
        static const char *const what[] = {
                [PRUNE_RAW] = "rows",
                [PRUNE_ROLLUPS] = "rollups",
                [PRUNE_JOBS] = "jobs",
        };

        for (;;) {
                PruneResult p;
                int e = prune_step(r, kind, before, &p);

                if (e < 0) {
                        log_warning_errno(e, "Retention: failed to delete old %s, trying again later: %s",
                                          what[kind], db_error_last() ?: strerror(-e));
                        atomic_fetch_add(&r->metrics->retention_failures, 1);
                        return e;
                }
                (*steps)++;
                sum->batches += p.batches;
                sum->sample_packs += p.sample_packs;
                sum->samples += p.samples;
                sum->timeline += p.timeline;
                sum->rollups += p.rollups;
                sum->jobs += p.jobs;
                sum->job_rows += p.job_rows;
                atomic_fetch_add(&r->metrics->retention_deleted[0], p.batches);
                atomic_fetch_add(&r->metrics->retention_deleted[1], p.samples);
                atomic_fetch_add(&r->metrics->retention_deleted[2], p.timeline);
                atomic_fetch_add(&r->metrics->retention_deleted[3], p.sample_packs);
                atomic_fetch_add(&r->metrics->retention_rollups_deleted, p.rollups);
                atomic_fetch_add(&r->metrics->retention_jobs_deleted, p.jobs);
                if (!p.more || wait_ms(r, STEP_PAUSE_MS))
                        return 0;
        }
}

/* One pass: steps until nothing older than the horizons is left. */
static void retention_pass(Retention *r) {
        int64_t now = (int64_t) time(NULL);
        int64_t before = now - (int64_t) r->keep_raw_days * 86400;
        int64_t rollups_before = retention_rollup_horizon(now, r->keep_rollup_days);
        int64_t jobs_before = r->keep_job_days > 0 ? MAX(now - (int64_t) r->keep_job_days * 86400, (int64_t) 0) : 0;
        uint64_t t0 = now_ns(CLOCK_MONOTONIC), steps = 0, job_steps = 0, job_raw;
        /* the jobs' apart: their raw rows are not "from before" the raw horizon */
        PruneResult sum = {}, jobs = {};

        if (r->storage->ops->partitions)
                partitions_pass(r, now, r->keep_raw_days > 0 ? before : 0, rollups_before);
        if (r->keep_raw_days > 0) {
                atomic_store(&r->metrics->retention_horizon, (uint64_t) MAX(before, (int64_t) 0));
                (void) prune_steps(r, PRUNE_RAW, before, &sum, &steps);
        }
        if (rollups_before > 0 && r->storage->ops->prune_rollups) {
                atomic_store(&r->metrics->retention_rollup_horizon, (uint64_t) rollups_before);
                (void) prune_steps(r, PRUNE_ROLLUPS, rollups_before, &sum, &steps);
        }
        if (jobs_before > 0 && r->storage->ops->prune_jobs) {
                atomic_store(&r->metrics->retention_job_horizon, (uint64_t) jobs_before);
                (void) prune_steps(r, PRUNE_JOBS, jobs_before, &jobs, &job_steps);
        }
        if (r->keep_raw_days == 0 && rollups_before == 0 && jobs_before == 0)
                return;
        atomic_store(&r->metrics->retention_last_run, (uint64_t) time(NULL));
        if (sum.batches + sum.sample_packs + sum.samples + sum.timeline > 0)
                log_info("Retention: deleted %" PRIu64 " batch receipts, %" PRIu64 " packs of raw rows, %" PRIu64
                         " raw rows from before packs and %" PRIu64 " time-line rows from before %" PRId64 ".",
                         sum.batches, sum.sample_packs, sum.samples, sum.timeline, before);
        if (sum.rollups > 0)
                log_info("Retention: deleted %" PRIu64 " rollup rows from before %" PRId64 ".", sum.rollups,
                         rollups_before);
        job_raw = jobs.sample_packs + jobs.samples + jobs.timeline;
        if (jobs.jobs + jobs.job_rows + job_raw > 0)
                log_info("Retention: deleted %" PRIu64 " jobs last seen before %" PRId64 " and %" PRIu64
                         " rows of their summaries (and %" PRIu64 " raw rows the raw window had left), in %"
                         PRIu64 " steps.", jobs.jobs, jobs_before, jobs.job_rows, job_raw, job_steps);
        if (sum.batches + sum.sample_packs + sum.samples + sum.timeline + sum.rollups + jobs.jobs + jobs.job_rows +
            job_raw > 0)
                log_info("Retention: pass done in %" PRIu64 " steps, %.1f s.", steps + job_steps,
                         (double) (now_ns(CLOCK_MONOTONIC) - t0) / 1e9);
}

static void *retention_thread(void *userdata) {
        Retention *r = userdata;

        do
                retention_pass(r);
        while (!wait_ms(r, (uint64_t) r->interval_s * 1000));
        return NULL;
}

/* "for good", or "N days" and what follows */
static const char *window(unsigned days, const char *suffix, char *buf, size_t size) {
        if (days == 0)
                return "for good";
        snprintf(buf, size, "%u days%s", days, suffix);
        return buf;
}

int retention_start(Retention *r) {
        const StorageOps *ops = r->storage->ops;
        char raw[32], rollups[96], jobs[64];
        pthread_condattr_t ca;
        int e;

        atomic_store(&r->metrics->retention_keep_seconds, (uint64_t) r->keep_raw_days * 86400);
        atomic_store(&r->metrics->retention_keep_rollup_seconds, (uint64_t) r->keep_rollup_days * 86400);
        atomic_store(&r->metrics->retention_keep_job_seconds, (uint64_t) r->keep_job_days * 86400);
        if (r->keep_raw_days == 0)
                log_info("Retention: keeping raw rows for good (--keep-raw-days 0).");
        /* PostgreSQL's partitions are made ahead whether or not any are dropped */
        if ((r->keep_raw_days == 0 || !ops->prune) && (r->keep_rollup_days == 0 || !ops->prune_rollups) &&
            (r->keep_job_days == 0 || !ops->prune_jobs) && !ops->partitions)
                return 0;
        pthread_mutex_init(&r->lock, NULL);
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&r->cond, &ca);
        pthread_condattr_destroy(&ca);
        e = pthread_create(&r->thread, NULL, retention_thread, r);
        if (e != 0)
                return log_error_errno(-e, "Failed to start the retention thread: %m");
        r->started = true;
        if (r->keep_raw_days + r->keep_rollup_days + r->keep_job_days > 0)
                log_info("Retention: raw rows kept %s, site-wide rollups %s, jobs and their summaries %s; "
                         "checked every %u s.",
                         window(r->keep_raw_days, "", raw, sizeof(raw)),
                         window(r->keep_rollup_days, " (from the start of a 28-day period)", rollups,
                                sizeof(rollups)),
                         window(r->keep_job_days, " after they were last seen", jobs, sizeof(jobs)),
                         r->interval_s);
        return 0;
}

void retention_stop(Retention *r) {
        if (!r->started)
                return;
        pthread_mutex_lock(&r->lock);
        r->stopping = true;
        pthread_cond_signal(&r->cond);
        pthread_mutex_unlock(&r->lock);
        pthread_join(r->thread, NULL);
        pthread_cond_destroy(&r->cond);
        pthread_mutex_destroy(&r->lock);
        r->started = false;
}
