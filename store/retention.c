/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "db.h"
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

/* PostgreSQL's time partitions: those due made, the raw ones wholly
 * before the horizon (0: none) dropped, all of them counted. */
static void partitions_pass(Retention *r, int64_t now, int64_t before) {
        Metrics *m = r->metrics;
        PartitionResult p;
        int e = r->storage->ops->partitions(r->storage, now, before, &p);

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

/* Steps of prune (raw) or prune_rollups until nothing older than the
 * horizon is left; their sum. */
static int prune_steps(Retention *r, bool rollups, int64_t before, PruneResult *sum, uint64_t *steps) {
        for (;;) {
                PruneResult p;
                int e = rollups ? r->storage->ops->prune_rollups(r->storage, before, RETENTION_STEP_ROWS, &p)
                                : r->storage->ops->prune(r->storage, before, RETENTION_STEP_ROWS, &p);

                if (e < 0) {
                        log_warning_errno(e, "Retention: failed to delete old %s, trying again later: %s",
                                          rollups ? "rollups" : "rows", db_error_last() ?: strerror(-e));
                        atomic_fetch_add(&r->metrics->retention_failures, 1);
                        return e;
                }
                (*steps)++;
                sum->batches += p.batches;
                sum->sample_packs += p.sample_packs;
                sum->samples += p.samples;
                sum->timeline += p.timeline;
                sum->rollups += p.rollups;
                atomic_fetch_add(&r->metrics->retention_deleted[0], p.batches);
                atomic_fetch_add(&r->metrics->retention_deleted[1], p.samples);
                atomic_fetch_add(&r->metrics->retention_deleted[2], p.timeline);
                atomic_fetch_add(&r->metrics->retention_deleted[3], p.sample_packs);
                atomic_fetch_add(&r->metrics->retention_rollups_deleted, p.rollups);
                if (!p.more || wait_ms(r, STEP_PAUSE_MS))
                        return 0;
        }
}

/* One pass: steps until nothing older than the horizons is left. */
static void retention_pass(Retention *r) {
        int64_t now = (int64_t) time(NULL);
        int64_t before = now - (int64_t) r->keep_raw_days * 86400;
        int64_t rollups_before = retention_rollup_horizon(now, r->keep_rollup_days);
        uint64_t t0 = now_ns(CLOCK_MONOTONIC), steps = 0;
        PruneResult sum = {};

        if (r->storage->ops->partitions)
                partitions_pass(r, now, r->keep_raw_days > 0 ? before : 0);
        if (r->keep_raw_days > 0) {
                atomic_store(&r->metrics->retention_horizon, (uint64_t) MAX(before, (int64_t) 0));
                (void) prune_steps(r, false, before, &sum, &steps);
        }
        if (rollups_before > 0 && r->storage->ops->prune_rollups) {
                atomic_store(&r->metrics->retention_rollup_horizon, (uint64_t) rollups_before);
                (void) prune_steps(r, true, rollups_before, &sum, &steps);
        }
        if (r->keep_raw_days == 0 && rollups_before == 0)
                return;
        atomic_store(&r->metrics->retention_last_run, (uint64_t) time(NULL));
        if (sum.batches + sum.sample_packs + sum.samples + sum.timeline > 0)
                log_info("Retention: deleted %" PRIu64 " batch receipts, %" PRIu64 " packs of raw rows, %" PRIu64
                         " raw rows from before packs and %" PRIu64 " time-line rows from before %" PRId64 ".",
                         sum.batches, sum.sample_packs, sum.samples, sum.timeline, before);
        if (sum.rollups > 0)
                log_info("Retention: deleted %" PRIu64 " rollup rows from before %" PRId64 ".", sum.rollups,
                         rollups_before);
        if (sum.batches + sum.sample_packs + sum.samples + sum.timeline + sum.rollups > 0)
                log_info("Retention: pass done in %" PRIu64 " steps, %.1f s.", steps,
                         (double) (now_ns(CLOCK_MONOTONIC) - t0) / 1e9);
}

static void *retention_thread(void *userdata) {
        Retention *r = userdata;

        do
                retention_pass(r);
        while (!wait_ms(r, (uint64_t) r->interval_s * 1000));
        return NULL;
}

int retention_start(Retention *r) {
        pthread_condattr_t ca;
        int e;

        atomic_store(&r->metrics->retention_keep_seconds, (uint64_t) r->keep_raw_days * 86400);
        atomic_store(&r->metrics->retention_keep_rollup_seconds, (uint64_t) r->keep_rollup_days * 86400);
        if (r->keep_raw_days == 0)
                log_info("Retention: keeping raw rows for good (--keep-raw-days 0).");
        /* PostgreSQL's partitions are made ahead whether or not any are dropped */
        if ((r->keep_raw_days == 0 || !r->storage->ops->prune) &&
            (r->keep_rollup_days == 0 || !r->storage->ops->prune_rollups) && !r->storage->ops->partitions)
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
        if (r->keep_raw_days > 0 && r->keep_rollup_days == 0)
                log_info("Retention: raw rows kept %u days, checked every %u s; summaries and rollups kept for good.",
                         r->keep_raw_days, r->interval_s);
        else if (r->keep_rollup_days > 0)
                log_info("Retention: raw rows kept %u days%s, site-wide rollups %u days (from the start of a "
                         "28-day period), checked every %u s; per-job summaries kept for good.",
                         r->keep_raw_days, r->keep_raw_days ? "" : " (0: for good)", r->keep_rollup_days,
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
