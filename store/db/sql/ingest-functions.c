/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Storing a batch's functions (schema/0021): interned like objects,
 * summed per job in memory, then one guarded upsert per (job, function)
 * and per (job, phase, function), as the rows' rollups are. */
#include <errno.h>

#include "db/sql/ingest-functions.h"

typedef struct FunctionRows {
        const AccMap *sums;
        bool phases;            /* keys (job, phase, function); else (job, function, 0) */
} FunctionRows;

static int bind_function_row(DbStmt *st, int k, size_t i, void *userdata) {
        const FunctionRows *f = userdata;
        const Acc *a = &f->sums->pool[i];
        int r;

        if ((r = db_bind_int(st, k++, a->a)) < 0 ||
            (r = db_bind_int(st, k++, a->b)) < 0 ||
            (f->phases && (r = db_bind_int(st, k++, a->c)) < 0) ||
            (r = db_bind_int(st, k, a->samples)) < 0 ||
            (r = bind_sum(st, k + 1, a->cpu_seconds)) < 0 ||
            (r = bind_nullable_int(st, k + 2, a->cycles)) < 0 ||
            (r = bind_nullable_int(st, k + 3, a->instructions)) < 0)
                return r;
        return 0;
}

static int write_function_sums(IngestCtx *x, const AccMap *m, bool phases) {
        FunctionRows f = { m, phases };
        int r = conn_write_rows(&x->s->writer, phases ? STMT_JOB_PHASE_FUNCTION_UPSERT : STMT_JOB_FUNCTION_UPSERT,
                                m->n, bind_function_row, &f, true);

        if (r == -EOVERFLOW)
                return overflow(x, "functions", "adding this batch's functions to a job's stored sums per %s would "
                                "overflow", phases ? "phase and function" : "function");
        return r;
}

int ingest_functions(IngestCtx *x) {
        const Batch *b = x->b;
        double cps = 1.0 / b->frequency_hz;
        int r;

        for (size_t i = 0; i < b->n_functions; i++) {
                const BatchFunction *f = &b->functions[i];
                const JobAcc *j = f->job ? hashmap_get(x->jobs, f->job) : NULL;
                int64_t object_id, phase_id, function_id;
                double cpu_seconds = (double) f->samples * cps;

                if (!j)
                        continue;
                /* its rows' object and phase, interned by them already,
                 * unless it is of several builds (build_id "") */
                if ((r = intern(x->s, x->s->object_ids, STMT_OBJECT_SELECT, STMT_OBJECT_INSERT, f->object,
                                code_kind_to_string(f->kind), f->build_id, 3, &object_id)) < 0 ||
                    (r = intern(x->s, x->s->phase_ids, STMT_PHASE_SELECT, STMT_PHASE_INSERT, f->phase, NULL, NULL, 1,
                                &phase_id)) < 0 ||
                    (r = intern_function(x->s, object_id, f->function ?: "", f->offset != BATCH_NULL ? f->offset : -1,
                                         f->entry, &function_id)) < 0)
                        return r;
                if ((r = acc_add_function(&x->job_functions, j->id, function_id, 0, f, cpu_seconds)) < 0 ||
                    (r = acc_add_function(&x->job_phase_functions, j->id, phase_id, function_id, f, cpu_seconds)) < 0)
                        return r;
        }
        r = write_function_sums(x, &x->job_functions, false);
        if (r < 0)
                return r;
        return write_function_sums(x, &x->job_phase_functions, true);
}
