/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What storing one batch gathers on the way, and what it says of an
 * overflow. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "db/sql/ingest-ctx.h"

/* How many sums of named events and bursts the batch's jobs may get at
 * most: one per counted event of a row (per job), exact count of a job,
 * and role of a row's burst. */
static void count_event_keys(const Batch *b, size_t *ret_events, size_t *ret_exact, size_t *ret_bursts) {
        size_t events = 0, exact = 0, bursts = 0;

        for (size_t i = 0; i < b->n_rows; i++) {
                const BatchRow *row = &b->rows[i];

                for (size_t k = 0; row->job && k < b->n_roles; k++) {
                        events += row->events && row->events->count[k] != BATCH_NULL;
                        bursts += row->burst && !isnan(row->burst->counts[k]);
                }
        }
        for (size_t i = 0; i < b->n_jobs; i++)
                for (size_t k = 0; b->jobs[i].events && k < b->n_roles; k++)
                        exact += b->jobs[i].events->count[k] != BATCH_NULL;
        *ret_events = events;
        *ret_exact = exact;
        *ret_bursts = bursts;
}

void job_acc_clear(JobAcc *j) {
        free(j->named_cluster);
        j->named_cluster = NULL;
        for (size_t k = 0; k < ELEMENTSOF(j->mix_dims); k++) {
                free(j->mix_dims[k]);
                j->mix_dims[k] = NULL;
        }
}

int ingest_ctx_init(IngestCtx *x, SqlStorage *s, const Batch *b) {
        size_t events, exact, bursts;

        count_event_keys(b, &events, &exact, &bursts);
        *x = (IngestCtx) {
                .s = s,
                .b = b,
                .bucket = (int64_t) floor(b->start / BUCKET_SECONDS) * BUCKET_SECONDS,
                .max_jobs = b->n_jobs + b->n_rows + b->n_markers + b->n_ranks,
                .node_type_id = STORAGE_NULL,
        };
        for (size_t i = 0; i < b->n_jobs; i++)
                x->max_notes += b->jobs[i].n_notes;
        x->jobs = hashmap_new(&string_hash_ops);
        x->job_pool = calloc(MAX(x->max_jobs, (size_t) 1), sizeof(JobAcc));
        x->packs = calloc(x->max_jobs + 1, sizeof(*x->packs));
        x->rows_of = calloc(MAX(MAX(x->max_notes, x->max_jobs), (size_t) 1), sizeof(size_t));
        x->seen = calloc(MAX(b->n_rows, (size_t) 1), sizeof(size_t));
        x->row_ids = calloc(MAX(3 * b->n_rows, (size_t) 1), sizeof(int64_t));
        x->function_known = calloc(MAX(b->n_functions, (size_t) 1), sizeof(bool));
        if (!x->jobs || !x->job_pool || !x->packs || !x->rows_of || !x->seen || !x->row_ids || !x->function_known ||
            acc_map_init(&x->job_objects, b->n_rows) < 0 ||
            acc_map_init(&x->job_phases, b->n_rows) < 0 ||
            acc_map_init(&x->job_tasks, b->n_rows) < 0 ||
            acc_map_init(&x->object_hours, b->n_rows) < 0 ||
            acc_map_init(&x->job_functions, b->n_functions) < 0 ||
            event_map_init(&x->object_events, events) < 0 ||
            event_map_init(&x->phase_events, events) < 0 ||
            event_map_init(&x->job_events, events + exact) < 0 ||
            event_map_init(&x->bursts, bursts) < 0)
                return -ENOMEM;
        return 0;
}

void ingest_ctx_done(IngestCtx *x) {
        hashmap_free(x->jobs);
        for (size_t i = 0; x->job_pool && i < x->max_jobs; i++) {
                sample_pack_done(&x->job_pool[i].pack);
                job_acc_clear(&x->job_pool[i]);
        }
        free(x->job_pool);
        free(x->packs);
        free(x->rows_of);
        free(x->seen);
        free(x->row_ids);
        free(x->function_known);
        sample_pack_done(&x->outside);
        acc_map_done(&x->job_objects);
        acc_map_done(&x->job_phases);
        acc_map_done(&x->job_tasks);
        acc_map_done(&x->object_hours);
        acc_map_done(&x->job_functions);
        event_map_done(&x->object_events);
        event_map_done(&x->phase_events);
        event_map_done(&x->job_events);
        event_map_done(&x->bursts);
}

void ingest_ctx_reset(IngestCtx *x) {
        hashmap_clear(x->jobs);
        x->n_jobs = 0;
        acc_map_reset(&x->job_objects);
        acc_map_reset(&x->job_phases);
        acc_map_reset(&x->job_tasks);
        acc_map_reset(&x->object_hours);
        acc_map_reset(&x->job_functions);
        x->site_sums_pending = false;
        event_map_reset(&x->object_events);
        event_map_reset(&x->phase_events);
        event_map_reset(&x->job_events);
        event_map_reset(&x->bursts);
        x->node_id = 0;
        x->node_type_id = STORAGE_NULL;
        x->in_order = false;
        x->err = (BatchError) {};
        x->conflicts = 0;
        x->conflict[0] = 0;
}

int overflow(IngestCtx *x, const char *field, const char *fmt, ...) {
        va_list ap;

        snprintf(x->err.field, sizeof(x->err.field), "%s", field);
        va_start(ap, fmt);
        vsnprintf(x->err.message, sizeof(x->err.message), fmt, ap);
        va_end(ap);
        return -EOVERFLOW;
}
