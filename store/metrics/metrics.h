/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "db/storage.h"

/* The store's own health, for /metrics (Prometheus text format 0.0.4).
 * Updated lock-free from the HTTP worker threads. */

#define METRICS_LATENCY_BUCKETS 12

typedef struct Metrics {
        atomic_uint_fast64_t requests[600]; /* by HTTP status */
        atomic_uint_fast64_t batches_stored, batches_duplicate, batches_conflicting, batches_rejected;
        atomic_uint_fast64_t rows_stored;
        atomic_uint_fast64_t metadata_conflicts; /* job claims refused since start */
        atomic_uint_fast64_t ingest_latency[METRICS_LATENCY_BUCKETS + 1]; /* last: +Inf */
        atomic_uint_fast64_t ingest_latency_sum_us;
        atomic_uint_fast64_t ingest_count;
        /* Connections cut by the slow-client guard (conn-guard.h). */
        atomic_uint_fast64_t slow_headers_closed, slow_bodies_closed, connections_evicted;
        /* ingests answered with anything but 200, by reason (metrics.c) */
        atomic_uint_fast64_t ingest_rejected[12];
        /* requests refused for who asked, by reason (metrics_denied_reasons) */
        atomic_uint_fast64_t denied[12];
        atomic_uint in_flight;
        int64_t start_time;
        /* The database's disk full (a write refused with -ENOSPC): since
         * when (Unix time; 0: not full now), the episodes so far, and the
         * batches refused in the current one. */
        atomic_int_fast64_t disk_full_since;
        atomic_uint_fast64_t disk_full_episodes, disk_full_refused;
        /* retention (retention.h): rows deleted from batches, samples, the
         * per-batch time line and sample_packs; the horizon and the last
         * pass (Unix time) */
        atomic_uint_fast64_t retention_deleted[4];
        atomic_uint_fast64_t retention_rollups_deleted, retention_rollup_horizon, retention_keep_rollup_seconds;
        atomic_uint_fast64_t retention_jobs_deleted, retention_job_horizon, retention_keep_job_seconds;
        atomic_uint_fast64_t retention_failures;
        atomic_uint_fast64_t retention_horizon, retention_last_run, retention_keep_seconds;
        /* PostgreSQL's time partitions (retention.c): shown once a pass
         * counted them */
        atomic_bool partitions_known;
        atomic_uint_fast64_t partitions[_PARTITIONED_TABLE_MAX], partition_default_rows[_PARTITIONED_TABLE_MAX];
        atomic_uint_fast64_t partitions_created, partitions_dropped, partition_failures;
        /* Names by build-id from debuginfod (store/symbols/), shown when
         * it is on: lookups by result (METRICS_LOOKUP_*), build-ids
         * queued and dropped (the queue full), the queue's length, and
         * unnamed functions named or left unnamed by a found debug file. */
        atomic_bool debuginfod_on;
        atomic_uint_fast64_t debuginfod_lookups[3];
        atomic_uint_fast64_t debuginfod_queued, debuginfod_dropped, debuginfod_queue_length;
        atomic_uint_fast64_t debuginfod_named, debuginfod_unnamed;
} Metrics;

enum { METRICS_LOOKUP_FOUND, METRICS_LOOKUP_MISSING, METRICS_LOOKUP_FAILED };

void metrics_count_request(Metrics *m, unsigned status);
void metrics_observe_ingest(Metrics *m, uint64_t usec);
/* reason: no-identity, bad-token, bad-credential, wrong-role, site-view, not-yours */
void metrics_count_denied(Metrics *m, const char *reason);
/* A batch not taken (any answer but 200). reason: "conflict" (its key was
 * stored with other content: batches_total{result="conflict"}), else one
 * of INGEST_REJECT_REASONS (batches_total{result="rejected"}); NULL: from
 * the HTTP status. */
#define INGEST_REJECT_REASONS "not-json, invalid, version, overflow, too-large, media-type, unauthorized, " \
        "forbidden, busy, disk-full, error, other"
void metrics_count_ingest_rejected(Metrics *m, const char *reason, unsigned status);

/* A full disk is an episode, from the first write it refuses to the next
 * that succeeds. metrics_disk_full(): a write was refused for it at now
 * (the batch is counted as refused); true when this begins an episode.
 * metrics_disk_ok(): a write went through at now; when that ends an
 * episode, true, with how long it lasted and the batches it refused. */
bool metrics_disk_full(Metrics *m, int64_t now);
bool metrics_disk_ok(Metrics *m, int64_t now, int64_t *ret_seconds, uint64_t *ret_refused);

/* Writes the exposition text; db_bytes < 0 leaves the size out. */
void metrics_write(const Metrics *m, int64_t db_bytes, FILE *f);
