/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What storing one batch gathers on the way, and what it says of an
 * overflow. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "ingest-ctx.h"

int ingest_ctx_init(IngestCtx *x, SqlStorage *s, const Batch *b) {
        *x = (IngestCtx) {
                .s = s,
                .b = b,
                .bucket = (int64_t) floor(b->start / BUCKET_SECONDS) * BUCKET_SECONDS,
                .max_jobs = b->n_jobs + b->n_rows + b->n_markers + b->n_ranks,
        };
        x->jobs = hashmap_new(&string_hash_ops);
        x->job_pool = calloc(MAX(x->max_jobs, (size_t) 1), sizeof(JobAcc));
        if (!x->jobs || !x->job_pool ||
            acc_map_init(&x->job_objects, b->n_rows) < 0 ||
            acc_map_init(&x->job_phases, b->n_rows) < 0 ||
            acc_map_init(&x->object_hours, b->n_rows) < 0)
                return -ENOMEM;
        return 0;
}

void ingest_ctx_done(IngestCtx *x) {
        hashmap_free(x->jobs);
        free(x->job_pool);
        acc_map_done(&x->job_objects);
        acc_map_done(&x->job_phases);
        acc_map_done(&x->object_hours);
}

void ingest_ctx_reset(IngestCtx *x) {
        hashmap_clear(x->jobs);
        x->n_jobs = 0;
        acc_map_reset(&x->job_objects);
        acc_map_reset(&x->job_phases);
        acc_map_reset(&x->object_hours);
        x->node_id = 0;
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
