/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "db/sql/rollup-events.h"
#include "db/sql/rollup.h"
#include "db/sql/sample-pack.h"
#include "db/sql/sql-internal.h"

/* Per-batch state of one job: its metadata (if the batch had any), its id
 * once upserted, and its totals over the batch's rows. */
typedef struct JobAcc {
        const char *job;
        const BatchJob *meta;
        const char *cluster;    /* the batch's claim, or the named cluster an unnamed one joins */
        char *named_cluster;    /* the latter, owned */
        int64_t stored_id;      /* its row before the batch, STORAGE_NULL: none */
        bool app_by_note;       /* its stored app is its stored app= note (which stays) */
        unsigned differs;       /* metadata fields the batch claims otherwise (ingest-jobs.c) */
        int64_t id;
        int64_t conflicts; /* 1 when meta differs from the stored first claim */
        int64_t samples;
        double cpu_seconds;
        int64_t cpu_time_ns, cycles, instructions;
        /* its rows of the batch, packed; the buffer stays with the pool's
         * slot from batch to batch */
        SamplePack pack;
        /* the application mix (ingest-app-mix.c): the key its time is
         * counted under, the day of its run, the key its columns name now
         * (STORAGE_NULL: none) and what that names (the dimensions: app,
         * user, account, partition; owned), what this batch adds there */
        int64_t mix_old, mix_run_day, mix_key;
        char *mix_dims[4];
        int64_t mix_app_object, mix_runs;
        bool mix_read, mix_adds;
} JobAcc;

typedef struct IngestCtx {
        SqlStorage *s;
        const Batch *b;
        int64_t node_id, bucket;
        Hashmap *jobs; /* job string → JobAcc */
        JobAcc *job_pool;
        size_t n_jobs, max_jobs;
        AccMap job_objects, job_phases, job_tasks, object_hours;
        /* functions[] per (job, function, object) (ingest-functions.c) */
        AccMap job_functions;
        /* which of job_functions' keys the job had before (schema/0024),
         * and whether the batch's site sums went to function_sums_pending
         * (schema/0027) */
        bool *function_known;
        bool site_sums_pending;
        SamplePack outside;    /* the rows of work outside jobs, packed */
        /* the rows' object, phase and task ids, looked up in the caches
         * before the writer took the batch (intern_lookup_rows()), and the
         * caches' generation they are of; ids_ok: all were there. After
         * ingest_rows(), all of them, as the writer has them. */
        int64_t *row_ids;
        uint64_t ids_generation;
        bool ids_ok;
        /* what the multi-row statements go through (conn_write_rows()):
         * the jobs whose packs are written (NULL: outside's), places of
         * jobs or notes (ingest-jobs.c), the objects last seen now */
        const JobAcc **packs;
        size_t *rows_of, max_notes;
        size_t *seen;
        /* what lmkd measures beyond samples (ingest-measured.c) */
        int64_t node_type_id;   /* the batch's node.type; STORAGE_NULL: it has none */
        int64_t role_ids[BATCH_MAX_ROLES]; /* event_roles of b->roles */
        EventMap object_events, phase_events, job_events, bursts;
        BatchError err;        /* for -EOVERFLOW */
        /* Stored again with every statement answering at once (the write
         * queue's second attempt): nothing is assumed that only a later
         * answer would correct (ingest.c). */
        bool in_order;
        uint64_t conflicts;
        char conflict[256];
} IngestCtx;

/* stored + add within int64, where either may be NULL (STORAGE_NULL). */
static inline bool sum_fits(int64_t stored, int64_t add) {
        int64_t t;

        return stored == STORAGE_NULL || add == STORAGE_NULL || !__builtin_add_overflow(stored, add, &t);
}

/* Frees what a slot of the job pool owns, for another job. */
void job_acc_clear(JobAcc *j);

/* Gathers and frees what storing batch b needs. */
int ingest_ctx_init(IngestCtx *x, SqlStorage *s, const Batch *b);
void ingest_ctx_done(IngestCtx *x);
/* Forgets what an attempt to store the batch gathered, for another. */
void ingest_ctx_reset(IngestCtx *x);

/* Records in x->err which field would overflow and why; -EOVERFLOW. */
_printf_(3, 4)
int overflow(IngestCtx *x, const char *field, const char *fmt, ...);
