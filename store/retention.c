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

/* One pass: steps until nothing older than the horizon is left. */
static void retention_pass(Retention *r) {
        int64_t now = (int64_t) time(NULL);
        int64_t before = now - (int64_t) r->keep_raw_days * 86400;
        uint64_t t0 = now_ns(CLOCK_MONOTONIC), steps = 0;
        PruneResult sum = {};

        if (r->storage->ops->partitions)
                partitions_pass(r, now, r->keep_raw_days > 0 ? before : 0);
        if (r->keep_raw_days == 0)
                return;
        atomic_store(&r->metrics->retention_horizon, (uint64_t) MAX(before, (int64_t) 0));
        for (;;) {
                PruneResult p;
                int e = r->storage->ops->prune(r->storage, before, RETENTION_STEP_ROWS, &p);

                if (e < 0) {
                        log_warning_errno(e, "Retention: failed to delete old rows, trying again later: %s",
                                          db_error_last() ?: strerror(-e));
                        atomic_fetch_add(&r->metrics->retention_failures, 1);
                        break;
                }
                steps++;
                sum.batches += p.batches;
                sum.samples += p.samples;
                sum.timeline += p.timeline;
                atomic_fetch_add(&r->metrics->retention_deleted[0], p.batches);
                atomic_fetch_add(&r->metrics->retention_deleted[1], p.samples);
                atomic_fetch_add(&r->metrics->retention_deleted[2], p.timeline);
                if (!p.more || wait_ms(r, STEP_PAUSE_MS))
                        break;
        }
        atomic_store(&r->metrics->retention_last_run, (uint64_t) time(NULL));
        if (sum.batches + sum.samples + sum.timeline > 0)
                log_info("Retention: deleted %" PRIu64 " batch receipts, %" PRIu64 " sample rows and %" PRIu64
                         " time-line rows from before %" PRId64 " in %" PRIu64 " steps, %.1f s.",
                         sum.batches, sum.samples, sum.timeline, before, steps,
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
        if (r->keep_raw_days == 0)
                log_info("Retention: keeping raw rows for good (--keep-raw-days 0).");
        /* PostgreSQL's partitions are made ahead whether or not any are dropped */
        if ((r->keep_raw_days == 0 || !r->storage->ops->prune) && !r->storage->ops->partitions)
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
        if (r->keep_raw_days > 0)
                log_info("Retention: raw rows kept %u days, checked every %u s; summaries and rollups kept for good.",
                         r->keep_raw_days, r->interval_s);
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
