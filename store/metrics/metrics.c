/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <inttypes.h>
#include <stddef.h>

#include "macro.h"
#include "metrics/metrics.h"
#include "util.h"

/* Upper bounds in microseconds: a batch of a few hundred rows takes about a
 * millisecond, a 100,000-row one a second. */
static const uint64_t latency_bounds_us[METRICS_LATENCY_BUCKETS] = {
        250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 1000000, 5000000,
};

void metrics_count_request(Metrics *m, unsigned status) {
        if (status < ELEMENTSOF(m->requests))
                atomic_fetch_add_explicit(&m->requests[status], 1, memory_order_relaxed);
}

void metrics_observe_ingest(Metrics *m, uint64_t usec) {
        size_t i = 0;

        while (i < METRICS_LATENCY_BUCKETS && usec > latency_bounds_us[i])
                i++;
        atomic_fetch_add_explicit(&m->ingest_latency[i], 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&m->ingest_latency_sum_us, usec, memory_order_relaxed);
        atomic_fetch_add_explicit(&m->ingest_count, 1, memory_order_relaxed);
}

static const char *const denied_reasons[] = {
        "no-identity", "bad-token", "bad-credential", "wrong-role", "site-view", "not-yours",
        "bad-session", "conflicting-identity", "repeated-header", "ticket-limit",
};
_Static_assert(ELEMENTSOF(denied_reasons) <= ELEMENTSOF(((Metrics *) NULL)->denied), "Metrics.denied too small");

void metrics_count_denied(Metrics *m, const char *reason) {
        for (size_t i = 0; i < ELEMENTSOF(denied_reasons); i++)
                if (streq(reason, denied_reasons[i])) {
                        atomic_fetch_add_explicit(&m->denied[i], 1, memory_order_relaxed);
                        return;
                }
}

/* Why a batch was not taken: what the node's admin would look at. */
static const char *const ingest_reject_reasons[] = {
        "not-json",     /* not JSON, or not gzip when it said so */
        "invalid",      /* a field missing, of the wrong type or out of range */
        "version",      /* a format or version this store does not know */
        "overflow",     /* its sums would overflow the job's or node's stored ones */
        "too-large",    /* over max-body, max-inflated or the row limits: 413 */
        "media-type",   /* 415 */
        "unauthorized", /* 401: no token or an unknown one */
        "forbidden",    /* 403: not a node token, or one bound to another node */
        "busy",         /* 503: database busy, too many uploads */
        "disk-full",    /* 507: the database's disk is full */
        "error",        /* 500: database error, out of memory */
        "other",
};

void metrics_count_ingest_rejected(Metrics *m, const char *reason, unsigned status) {
        size_t i;

        _Static_assert(ELEMENTSOF(ingest_reject_reasons) <= ELEMENTSOF(m->ingest_rejected), "reasons");
        /* not a bad batch: another batch was stored under its key */
        if (reason && streq(reason, "conflict")) {
                atomic_fetch_add_explicit(&m->batches_conflicting, 1, memory_order_relaxed);
                return;
        }
        atomic_fetch_add_explicit(&m->batches_rejected, 1, memory_order_relaxed);
        if (!reason)
                reason = status == 400 ? "invalid" : status == 401 ? "unauthorized" : status == 403 ? "forbidden" :
                         status == 413 ? "too-large" : status == 415 ? "media-type" : status == 503 ? "busy" :
                         status >= 500 ? "error" : "other";
        for (i = 0; i < ELEMENTSOF(ingest_reject_reasons) - 1; i++)
                if (streq(reason, ingest_reject_reasons[i]))
                        break;
        atomic_fetch_add_explicit(&m->ingest_rejected[i], 1, memory_order_relaxed);
}

bool metrics_disk_full(Metrics *m, int64_t now) {
        int_fast64_t none = 0;

        atomic_fetch_add(&m->disk_full_refused, 1);
        if (!atomic_compare_exchange_strong(&m->disk_full_since, &none, MAX(now, (int64_t) 1)))
                return false;
        atomic_fetch_add(&m->disk_full_episodes, 1);
        return true;
}

bool metrics_disk_ok(Metrics *m, int64_t now, int64_t *ret_seconds, uint64_t *ret_refused) {
        int64_t since;

        /* the common case: no episode, nothing written */
        if (atomic_load_explicit(&m->disk_full_since, memory_order_relaxed) == 0)
                return false;
        since = atomic_exchange(&m->disk_full_since, 0);
        if (since == 0)
                return false;
        *ret_seconds = MAX(now - since, (int64_t) 0);
        *ret_refused = atomic_exchange(&m->disk_full_refused, 0);
        return true;
}

#define LOAD(x) ((uint64_t) atomic_load_explicit(&(x), memory_order_relaxed))

void metrics_write(const Metrics *m, int64_t db_bytes, FILE *f) {
        uint64_t cumulative = 0;

        fputs("# HELP lmk_store_http_requests_total HTTP requests answered, by status code.\n"
              "# TYPE lmk_store_http_requests_total counter\n", f);
        for (size_t i = 100; i < ELEMENTSOF(m->requests); i++) {
                uint64_t n = LOAD(m->requests[i]);

                if (n > 0)
                        fprintf(f, "lmk_store_http_requests_total{code=\"%zu\"} %" PRIu64 "\n", i, n);
        }

        fprintf(f,
                "# HELP lmk_store_batches_total Batches received, by outcome: stored, duplicate (stored "
                "before: a retry), conflict (its key was stored before with other content: refused, 409), "
                "rejected (any other answer but 200).\n"
                "# TYPE lmk_store_batches_total counter\n"
                "lmk_store_batches_total{result=\"stored\"} %" PRIu64 "\n"
                "lmk_store_batches_total{result=\"duplicate\"} %" PRIu64 "\n"
                "lmk_store_batches_total{result=\"conflict\"} %" PRIu64 "\n"
                "lmk_store_batches_total{result=\"rejected\"} %" PRIu64 "\n"
                "# HELP lmk_store_rows_stored_total Rows of stored batches.\n"
                "# TYPE lmk_store_rows_stored_total counter\n"
                "lmk_store_rows_stored_total %" PRIu64 "\n"
                "# HELP lmk_store_job_metadata_conflicts_total Job metadata claims that differed from the "
                "first claim and were not stored.\n"
                "# TYPE lmk_store_job_metadata_conflicts_total counter\n"
                "lmk_store_job_metadata_conflicts_total %" PRIu64 "\n",
                LOAD(m->batches_stored), LOAD(m->batches_duplicate), LOAD(m->batches_conflicting),
                LOAD(m->batches_rejected),
                LOAD(m->rows_stored), LOAD(m->metadata_conflicts));

        fputs("# HELP lmk_store_ingest_rejected_total Batches not taken, by why: not-json, invalid (a field "
              "missing, of the wrong type or out of range), version, overflow, too-large, media-type, "
              "unauthorized, forbidden, busy, disk-full, error, other.\n"
              "# TYPE lmk_store_ingest_rejected_total counter\n", f);
        for (size_t i = 0; i < ELEMENTSOF(ingest_reject_reasons); i++)
                fprintf(f, "lmk_store_ingest_rejected_total{reason=\"%s\"} %" PRIu64 "\n", ingest_reject_reasons[i],
                        LOAD(m->ingest_rejected[i]));

        fputs("# HELP lmk_store_ingest_duration_seconds Time to parse and store a batch.\n"
              "# TYPE lmk_store_ingest_duration_seconds histogram\n", f);
        for (size_t i = 0; i < METRICS_LATENCY_BUCKETS; i++) {
                cumulative += LOAD(m->ingest_latency[i]);
                fprintf(f, "lmk_store_ingest_duration_seconds_bucket{le=\"%g\"} %" PRIu64 "\n",
                        (double) latency_bounds_us[i] / 1e6, cumulative);
        }
        cumulative += LOAD(m->ingest_latency[METRICS_LATENCY_BUCKETS]);
        fprintf(f,
                "lmk_store_ingest_duration_seconds_bucket{le=\"+Inf\"} %" PRIu64 "\n"
                "lmk_store_ingest_duration_seconds_sum %.6f\n"
                "lmk_store_ingest_duration_seconds_count %" PRIu64 "\n",
                cumulative, (double) LOAD(m->ingest_latency_sum_us) / 1e6, LOAD(m->ingest_count));

        fprintf(f,
                "# HELP lmk_store_slow_requests_closed_total Connections closed because a request's headers "
                "missed their deadline or its body fell below the minimum rate.\n"
                "# TYPE lmk_store_slow_requests_closed_total counter\n"
                "lmk_store_slow_requests_closed_total{phase=\"headers\"} %" PRIu64 "\n"
                "lmk_store_slow_requests_closed_total{phase=\"body\"} %" PRIu64 "\n"
                "# HELP lmk_store_connections_evicted_total Connections closed to make room for a new one "
                "from the same address at --max-connections-per-ip.\n"
                "# TYPE lmk_store_connections_evicted_total counter\n"
                "lmk_store_connections_evicted_total %" PRIu64 "\n",
                LOAD(m->slow_headers_closed), LOAD(m->slow_bodies_closed), LOAD(m->connections_evicted));

        fprintf(f, "# HELP lmk_store_denied_total Requests refused for who asked (no identity, a bad token "
                "or MUNGE credential, the wrong role, a site view closed to people, someone else's job, a bad "
                "or expired session or login ticket, two identities that disagree, an identity header sent "
                "twice, too many login tickets).\n"
                "# TYPE lmk_store_denied_total counter\n");
        for (size_t i = 0; i < ELEMENTSOF(denied_reasons); i++)
                fprintf(f, "lmk_store_denied_total{reason=\"%s\"} %" PRIu64 "\n", denied_reasons[i],
                        LOAD(m->denied[i]));

        fprintf(f,
                "# HELP lmk_store_db_disk_full Whether the database's disk is full: 1 from a write it refused "
                "(batches are answered 507) to the next write that goes through.\n"
                "# TYPE lmk_store_db_disk_full gauge\n"
                "lmk_store_db_disk_full %d\n"
                "# HELP lmk_store_db_disk_full_episodes_total Times the database's disk was found full.\n"
                "# TYPE lmk_store_db_disk_full_episodes_total counter\n"
                "lmk_store_db_disk_full_episodes_total %" PRIu64 "\n",
                atomic_load(&m->disk_full_since) != 0, LOAD(m->disk_full_episodes));
        fprintf(f,
                "# HELP lmk_store_http_in_flight Requests being received or answered.\n"
                "# TYPE lmk_store_http_in_flight gauge\n"
                "lmk_store_http_in_flight %u\n"
                "# HELP lmk_store_start_time_seconds When this lmk-store started (Unix time).\n"
                "# TYPE lmk_store_start_time_seconds gauge\n"
                "lmk_store_start_time_seconds %" PRId64 "\n",
                atomic_load(&m->in_flight), m->start_time);
        fprintf(f,
                "# HELP lmk_store_retention_keep_raw_seconds How long raw rows (batch receipts, sample rows, "
                "the per-batch time line) are kept; 0: for good. Summaries and rollups have windows of their "
                "own.\n"
                "# TYPE lmk_store_retention_keep_raw_seconds gauge\n"
                "lmk_store_retention_keep_raw_seconds %" PRIu64 "\n"
                "# HELP lmk_store_retention_deleted_rows_total Raw rows deleted by retention.\n"
                "# TYPE lmk_store_retention_deleted_rows_total counter\n"
                "lmk_store_retention_deleted_rows_total{table=\"batches\"} %" PRIu64 "\n"
                "lmk_store_retention_deleted_rows_total{table=\"sample_packs\"} %" PRIu64 "\n"
                "lmk_store_retention_deleted_rows_total{table=\"samples\"} %" PRIu64 "\n"
                "lmk_store_retention_deleted_rows_total{table=\"job_timeline\"} %" PRIu64 "\n"
                "# HELP lmk_store_retention_failures_total Retention passes that failed (tried again later).\n"
                "# TYPE lmk_store_retention_failures_total counter\n"
                "lmk_store_retention_failures_total %" PRIu64 "\n"
                "# HELP lmk_store_retention_horizon_seconds Raw rows from before this time are deleted "
                "(Unix time; 0: none yet).\n"
                "# TYPE lmk_store_retention_horizon_seconds gauge\n"
                "lmk_store_retention_horizon_seconds %" PRIu64 "\n"
                "# HELP lmk_store_retention_last_run_seconds When the last retention pass ended (Unix time; "
                "0: none yet).\n"
                "# TYPE lmk_store_retention_last_run_seconds gauge\n"
                "lmk_store_retention_last_run_seconds %" PRIu64 "\n",
                LOAD(m->retention_keep_seconds), LOAD(m->retention_deleted[0]), LOAD(m->retention_deleted[3]),
                LOAD(m->retention_deleted[1]), LOAD(m->retention_deleted[2]), LOAD(m->retention_failures), LOAD(m->retention_horizon),
                LOAD(m->retention_last_run));
        fprintf(f,
                "# HELP lmk_store_retention_keep_rollup_seconds How long the site-wide rollups (time per object "
                "by hour, day, week and period; the application mix by day) are kept; 0: for good.\n"
                "# TYPE lmk_store_retention_keep_rollup_seconds gauge\n"
                "lmk_store_retention_keep_rollup_seconds %" PRIu64 "\n"
                "# HELP lmk_store_retention_rollup_horizon_seconds Site-wide rollups from before this time "
                "(the start of a 28-day period) are deleted (Unix time; 0: none).\n"
                "# TYPE lmk_store_retention_rollup_horizon_seconds gauge\n"
                "lmk_store_retention_rollup_horizon_seconds %" PRIu64 "\n"
                "# HELP lmk_store_retention_deleted_rollup_rows_total Site-wide rollup rows deleted by retention.\n"
                "# TYPE lmk_store_retention_deleted_rollup_rows_total counter\n"
                "lmk_store_retention_deleted_rollup_rows_total %" PRIu64 "\n",
                LOAD(m->retention_keep_rollup_seconds), LOAD(m->retention_rollup_horizon),
                LOAD(m->retention_rollups_deleted));
        fprintf(f,
                "# HELP lmk_store_retention_keep_job_seconds How long jobs and their summaries are kept after "
                "they were last seen; 0: for good.\n"
                "# TYPE lmk_store_retention_keep_job_seconds gauge\n"
                "lmk_store_retention_keep_job_seconds %" PRIu64 "\n"
                "# HELP lmk_store_retention_job_horizon_seconds Jobs last seen before this time are deleted "
                "with their summaries (Unix time; 0: none).\n"
                "# TYPE lmk_store_retention_job_horizon_seconds gauge\n"
                "lmk_store_retention_job_horizon_seconds %" PRIu64 "\n"
                "# HELP lmk_store_retention_deleted_jobs_total Jobs deleted with their summaries by retention.\n"
                "# TYPE lmk_store_retention_deleted_jobs_total counter\n"
                "lmk_store_retention_deleted_jobs_total %" PRIu64 "\n",
                LOAD(m->retention_keep_job_seconds), LOAD(m->retention_job_horizon),
                LOAD(m->retention_jobs_deleted));
        if (atomic_load(&m->partitions_known)) {
                static const struct {
                        const char *name, *help;
                        size_t offset;
                } per_table[] = {
                        { "lmk_store_partitions", "Time partitions of a partitioned table, besides its default "
                          "one (PostgreSQL).", offsetof(Metrics, partitions) },
                        { "lmk_store_partition_default_rows", "Rows in a partitioned table's default partition, "
                          "which only data outside the partitions made ahead lands in (PostgreSQL).",
                          offsetof(Metrics, partition_default_rows) },
                };

                for (size_t k = 0; k < ELEMENTSOF(per_table); k++) {
                        const atomic_uint_fast64_t *v =
                                (const atomic_uint_fast64_t *) ((const char *) m + per_table[k].offset);

                        fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", per_table[k].name, per_table[k].help,
                                per_table[k].name);
                        for (PartitionedTable i = 0; i < _PARTITIONED_TABLE_MAX; i++)
                                fprintf(f, "%s{table=\"%s\"} %" PRIu64 "\n", per_table[k].name,
                                        partitioned_table_to_string(i), LOAD(v[i]));
                }
                fprintf(f,
                        "# HELP lmk_store_partitions_created_total Time partitions made ahead.\n"
                        "# TYPE lmk_store_partitions_created_total counter\n"
                        "lmk_store_partitions_created_total %" PRIu64 "\n"
                        "# HELP lmk_store_partitions_dropped_total Time partitions dropped by retention (raw "
                        "ones past --keep-raw-days, object_hours' past --keep-rollup-days).\n"
                        "# TYPE lmk_store_partitions_dropped_total counter\n"
                        "lmk_store_partitions_dropped_total %" PRIu64 "\n"
                        "# HELP lmk_store_partition_failures_total Partitions not made or dropped when due "
                        "(a busy table: tried again on the next pass).\n"
                        "# TYPE lmk_store_partition_failures_total counter\n"
                        "lmk_store_partition_failures_total %" PRIu64 "\n",
                        LOAD(m->partitions_created), LOAD(m->partitions_dropped), LOAD(m->partition_failures));
        }
        if (atomic_load(&m->debuginfod_on))
                fprintf(f,
                        "# HELP lmk_store_debuginfod_lookups_total Lookups of a build's debug file by build-id "
                        "(found; missing: the server has none; failed: an error or a time-out, tried again "
                        "later).\n"
                        "# TYPE lmk_store_debuginfod_lookups_total counter\n"
                        "lmk_store_debuginfod_lookups_total{result=\"found\"} %" PRIu64 "\n"
                        "lmk_store_debuginfod_lookups_total{result=\"missing\"} %" PRIu64 "\n"
                        "lmk_store_debuginfod_lookups_total{result=\"failed\"} %" PRIu64 "\n"
                        "# HELP lmk_store_debuginfod_queued_total Build-ids with unnamed functions queued for "
                        "a lookup.\n"
                        "# TYPE lmk_store_debuginfod_queued_total counter\n"
                        "lmk_store_debuginfod_queued_total %" PRIu64 "\n"
                        "# HELP lmk_store_debuginfod_dropped_total Build-ids not queued, the queue full (found "
                        "again in the database once it drains).\n"
                        "# TYPE lmk_store_debuginfod_dropped_total counter\n"
                        "lmk_store_debuginfod_dropped_total %" PRIu64 "\n"
                        "# HELP lmk_store_debuginfod_queue_length Build-ids waiting for a lookup.\n"
                        "# TYPE lmk_store_debuginfod_queue_length gauge\n"
                        "lmk_store_debuginfod_queue_length %" PRIu64 "\n"
                        "# HELP lmk_store_debuginfod_functions_total Unnamed functions of found debug files, "
                        "named or not (a page of several functions, an address no symbol covers).\n"
                        "# TYPE lmk_store_debuginfod_functions_total counter\n"
                        "lmk_store_debuginfod_functions_total{named=\"yes\"} %" PRIu64 "\n"
                        "lmk_store_debuginfod_functions_total{named=\"no\"} %" PRIu64 "\n",
                        LOAD(m->debuginfod_lookups[METRICS_LOOKUP_FOUND]),
                        LOAD(m->debuginfod_lookups[METRICS_LOOKUP_MISSING]),
                        LOAD(m->debuginfod_lookups[METRICS_LOOKUP_FAILED]), LOAD(m->debuginfod_queued),
                        LOAD(m->debuginfod_dropped), LOAD(m->debuginfod_queue_length), LOAD(m->debuginfod_named),
                        LOAD(m->debuginfod_unnamed));
        if (db_bytes >= 0)
                fprintf(f,
                        "# HELP lmk_store_db_size_bytes Size of the database files on disk.\n"
                        "# TYPE lmk_store_db_size_bytes gauge\n"
                        "lmk_store_db_size_bytes %" PRId64 "\n", db_bytes);
}
