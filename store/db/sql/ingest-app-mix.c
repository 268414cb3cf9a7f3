/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A batch in the application mix (schema/0013): each job's time under the
 * key its application and metadata name, moved when the key changes. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db/sql/ingest-app-mix.h"

static int app_day_add(IngestCtx *x, int64_t day, int64_t key, int64_t samples, double cpu_seconds, int64_t runs) {
        /* a refused guard changes fewer rows than the one, or the key's four */
        static const struct {
                Stmt stmt;
                int64_t rows;
        } stmts[] = { { STMT_APP_DAY_UPSERT, 1 }, { STMT_APP_DIM_UPSERT, 4 } };

        for (size_t i = 0; i < ELEMENTSOF(stmts); i++) {
                DbStmt *st;
                int r;

                if ((r = conn_stmt(&x->s->writer, stmts[i].stmt, &st)) < 0 ||
                    (r = db_bind_int(st, 1, day)) < 0 ||
                    (r = db_bind_int(st, 2, key)) < 0 ||
                    (r = db_bind_int(st, 3, samples)) < 0 ||
                    (r = bind_sum(st, 4, cpu_seconds)) < 0 ||
                    (r = db_bind_int(st, 5, runs)) < 0)
                        return r;
                r = db_execute(st, stmts[i].rows);
                if (r == -EOVERFLOW)
                        return overflow(x, "rows", "adding this batch to the site's application mix of that day "
                                        "would overflow");
                if (r < 0)
                        return r;
        }
        return 0;
}

static int app_day_take(IngestCtx *x, int64_t day, int64_t key, int64_t samples, double cpu_seconds, int64_t runs) {
        static const Stmt stmts[] = { STMT_APP_DAY_TAKE, STMT_APP_DIM_TAKE };
        DbStmt *st;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(stmts); i++)
                if ((r = conn_stmt(&x->s->writer, stmts[i], &st)) < 0 ||
                    (r = db_bind_int(st, 1, day)) < 0 ||
                    (r = db_bind_int(st, 2, key)) < 0 ||
                    (r = db_bind_int(st, 3, samples)) < 0 ||
                    (r = bind_nullable_double(st, 4, cpu_seconds)) < 0 ||
                    (r = db_bind_int(st, 5, runs)) < 0 ||
                    (r = db_execute(st, 0)) < 0)
                        return r;
        if ((r = conn_stmt(&x->s->writer, STMT_APP_DIM_PRUNE, &st)) < 0 ||
            (r = db_bind_int(st, 1, day)) < 0 ||
            (r = db_bind_int(st, 2, key)) < 0 ||
            (r = db_execute(st, 0)) < 0 ||
            (r = conn_stmt(&x->s->writer, STMT_APP_DAY_PRUNE, &st)) < 0 ||
            (r = db_bind_int(st, 1, day)) < 0 ||
            (r = db_bind_int(st, 2, key)) < 0)
                return r;
        return db_execute(st, 0);
}

/* Moves what a job counted under one key of the application mix to
 * another: its days from its time line (grain 86400, which already holds
 * this batch) and its run. */
static int app_mix_move(IngestCtx *x, int64_t job_id, int64_t from, int64_t to, int64_t run_day) {
        DbStmt *st;
        int64_t n = 0;
        struct { int64_t day, samples; double cpu_seconds; } *days = NULL;
        int r, rc;

        r = conn_stmt(&x->s->writer, STMT_JOB_DAYS, &st);
        if (r < 0 || (r = db_bind_int(st, 1, job_id)) < 0)
                return r;
        /* a job's days are few (JOB_TIMELINE_MAX_STEPS at grain 86400 is four
         * months); read them all before writing, the statement stays open */
        while ((rc = db_step(st)) == 1) {
                void *p = reallocarray(days, (size_t) n + 1, sizeof(*days));

                if (!p) {
                        db_reset(st);
                        free(days);
                        return -ENOMEM;
                }
                days = p;
                days[n].day = db_column_int(st, 0);
                days[n].samples = db_column_int(st, 1);
                days[n].cpu_seconds = db_column_double(st, 2);
                n++;
        }
        db_reset(st);
        r = rc == 0 ? 0 : step_errno(rc);
        for (int64_t i = 0; r >= 0 && i < n; i++)
                if ((r = app_day_take(x, days[i].day, from, days[i].samples, days[i].cpu_seconds, 0)) >= 0)
                        r = app_day_add(x, days[i].day, to, days[i].samples, days[i].cpu_seconds, 0);
        free(days);
        if (r >= 0 && run_day != STORAGE_NULL && (r = app_day_take(x, run_day, from, 0, 0, 1)) >= 0)
                r = app_day_add(x, run_day, to, 0, 0, 1);
        return r;
}

/* What key (columns col … col + 5 of a row: id, app, app_object, user,
 * account, partition) job j's columns name now. */
static int read_mix_key(DbStmt *st, int col, JobAcc *j) {
        static const int dims[] = { 1, 3, 4, 5 }; /* app, user, account, partition */

        j->mix_key = column_nullable_int(st, col);
        j->mix_app_object = db_column_int(st, col + 2);
        for (size_t k = 0; k < ELEMENTSOF(dims); k++) {
                free(j->mix_dims[k]);
                j->mix_dims[k] = strdup(db_column_text(st, col + dims[k]) ?: "");
                if (!j->mix_dims[k])
                        return -ENOMEM;
        }
        return 0;
}

/* The key a job's columns name now (STMT_JOB_MIX's third on). */
static int job_mix_key(IngestCtx *x, JobAcc *j) {
        DbStmt *st;
        int r, rc;

        if ((r = conn_stmt(&x->s->writer, STMT_JOB_MIX, &st)) < 0 || (r = db_bind_int(st, 1, j->id)) < 0)
                return r;
        rc = db_step(st);
        if (rc == 1 && db_column_null(st, 2))
                rc = 0;
        r = rc == 1 ? read_mix_key(st, 2, j) : rc == 0 ? -ENOENT : step_errno(rc);
        db_reset(st);
        return r;
}

/* Inserts the key job j's columns name. */
static int insert_mix_key(IngestCtx *x, JobAcc *j) {
        DbStmt *st;
        int r, rc;

        if ((r = conn_stmt(&x->s->writer, STMT_MIX_KEY_INSERT, &st)) < 0 || (r = db_bind_int(st, 1, j->id)) < 0)
                return r;
        rc = db_step(st);
        r = rc == 1 ? read_mix_key(st, 0, j) : step_errno(rc);
        db_reset(st);
        /* Another store sharing the database inserted the key since: it is
         * there now. */
        if (r >= 0 && rc == 0)
                r = job_mix_key(x, j);
        return r;
}

static int bind_job_row(DbStmt *st, int k, size_t i, void *userdata) {
        int r = db_bind_int(st, k, (int64_t) i);

        return r < 0 ? r : db_bind_int(st, k + 1, ((const IngestCtx *) userdata)->job_pool[i].id);
}

static int read_job_mix(DbStmt *st, void *userdata) {
        IngestCtx *x = userdata;
        int64_t i = db_column_int(st, 0);
        JobAcc *j;

        if (i < 0 || (size_t) i >= x->n_jobs)
                return -EPROTO;
        j = &x->job_pool[i];
        j->mix_old = column_nullable_int(st, 1);
        j->mix_run_day = column_nullable_int(st, 2);
        j->mix_key = STORAGE_NULL;
        j->mix_read = true;
        return db_column_null(st, 3) ? 0 : read_mix_key(st, 3, j);
}

/* A row of app_days or app_dim_days this batch adds to: its key (the mix
 * key, or a dimension's value and app object) and its sums. */
typedef struct MixRow {
        int64_t key, dim, app_object;
        const char *value;
        int64_t samples, runs;
        double cpu_seconds;
} MixRow;

static int mix_row_cmp(const void *p, const void *q) {
        const MixRow *a = p, *b = q;
        int c;

        if (a->dim != b->dim)
                return a->dim < b->dim ? -1 : 1;
        if (a->key != b->key)
                return a->key < b->key ? -1 : 1;
        c = strcmp(a->value ?: "", b->value ?: "");
        if (c != 0)
                return c;
        return a->app_object < b->app_object ? -1 : a->app_object > b->app_object;
}

/* Sums rows of the same key: each row of a statement is another row of
 * its table, as PostgreSQL's upsert wants. Returns how many are left. */
static size_t merge_mix_rows(MixRow *rows, size_t n) {
        size_t m = 0;

        qsort(rows, n, sizeof(MixRow), mix_row_cmp);
        for (size_t i = 0; i < n; i++)
                if (m > 0 && mix_row_cmp(&rows[m - 1], &rows[i]) == 0) {
                        rows[m - 1].samples += rows[i].samples;
                        rows[m - 1].cpu_seconds += rows[i].cpu_seconds;
                        rows[m - 1].runs += rows[i].runs;
                } else
                        rows[m++] = rows[i];
        return m;
}

typedef struct MixRows {
        const MixRow *rows;
        int64_t day;
} MixRows;

static int bind_app_day_row(DbStmt *st, int k, size_t i, void *userdata) {
        const MixRows *m = userdata;
        const MixRow *row = &m->rows[i];
        int r;

        if ((r = db_bind_int(st, k, m->day)) < 0 ||
            (r = db_bind_int(st, k + 1, row->key)) < 0 ||
            (r = db_bind_int(st, k + 2, row->samples)) < 0 ||
            (r = bind_sum(st, k + 3, row->cpu_seconds)) < 0 ||
            (r = db_bind_int(st, k + 4, row->runs)) < 0)
                return r;
        return 0;
}

static int bind_app_dim_row(DbStmt *st, int k, size_t i, void *userdata) {
        const MixRows *m = userdata;
        const MixRow *row = &m->rows[i];
        int r;

        if ((r = db_bind_int(st, k, row->dim)) < 0 ||
            (r = db_bind_int(st, k + 1, m->day)) < 0 ||
            (r = bind_nullable_text(st, k + 2, row->value)) < 0 ||
            (r = db_bind_int(st, k + 3, row->app_object)) < 0 ||
            (r = db_bind_int(st, k + 4, row->samples)) < 0 ||
            (r = bind_sum(st, k + 5, row->cpu_seconds)) < 0 ||
            (r = db_bind_int(st, k + 6, row->runs)) < 0)
                return r;
        return 0;
}

/* What the batch adds to the mix of its day, for the jobs whose key stayed
 * (or that start): the keys' rows of app_days, and their four dimensions'
 * of app_dim_days (schema/0013), each summed over the jobs, written at
 * once. */
static int write_mix_adds(IngestCtx *x, int64_t day) {
        _cleanup_free_ MixRow *keys = NULL, *dims = NULL;
        size_t n_keys = 0, n_dims = 0;
        int r;

        keys = calloc(MAX(x->n_jobs, (size_t) 1), sizeof(MixRow));
        dims = calloc(MAX(4 * x->n_jobs, (size_t) 1), sizeof(MixRow));
        if (!keys || !dims)
                return -ENOMEM;
        for (size_t i = 0; i < x->n_jobs; i++) {
                const JobAcc *j = &x->job_pool[i];

                if (!j->mix_adds)
                        continue;
                keys[n_keys++] = (MixRow) { .key = j->mix_key, .samples = j->samples, .cpu_seconds = j->cpu_seconds,
                                            .runs = j->mix_runs };
                for (int64_t d = 0; d < 4; d++)
                        dims[n_dims++] = (MixRow) { .dim = d, .value = j->mix_dims[d],
                                                    .app_object = d == 0 ? j->mix_app_object : 0,
                                                    .samples = j->samples, .cpu_seconds = j->cpu_seconds,
                                                    .runs = j->mix_runs };
        }
        n_keys = merge_mix_rows(keys, n_keys);
        n_dims = merge_mix_rows(dims, n_dims);
        r = conn_write_rows(&x->s->writer, STMT_APP_DAY_UPSERT, n_keys, bind_app_day_row,
                            &(MixRows) { keys, day }, true);
        if (r >= 0)
                r = conn_write_rows(&x->s->writer, STMT_APP_DIM_ROW_UPSERT, n_dims, bind_app_dim_row,
                                    &(MixRows) { dims, day }, true);
        if (r == -EOVERFLOW)
                return overflow(x, "rows", "adding this batch to the site's application mix of that day "
                                "would overflow");
        return r;
}

/* After the apps: each job's time in this batch, in the application mix
 * of the batch's day, under the key its app and metadata name. Where the
 * jobs stand is read for all of them at once; what they add is written
 * at once too, but for a job whose key changed: its time moves to the new
 * key in order (app_mix_move()). */
int update_app_mix(IngestCtx *x) {
        int64_t day = (int64_t) floor(x->b->start / 86400.0) * 86400;
        int r;

        for (size_t i = 0; i < x->n_jobs; i++) {
                x->job_pool[i].mix_read = false;
                x->job_pool[i].mix_adds = false;
        }
        r = conn_read_rows(&x->s->writer, STMT_JOB_MIXES, x->n_jobs, bind_job_row, read_job_mix, x);
        if (r < 0)
                return r;
        for (size_t i = 0; i < x->n_jobs; i++) {
                JobAcc *j = &x->job_pool[i];
                int64_t old = j->mix_old, run_day = j->mix_run_day;
                DbStmt *st;

                if (!j->mix_read)
                        return -ENOENT;
                if (j->mix_key == STORAGE_NULL && (r = insert_mix_key(x, j)) < 0)
                        return r;

                if (old == STORAGE_NULL || old == j->mix_key) {
                        /* the job's first batch: its run counts on this day */
                        j->mix_runs = old == STORAGE_NULL;
                        j->mix_adds = old == STORAGE_NULL || j->samples > 0;
                        if (old == j->mix_key)
                                continue;
                        run_day = day;
                } else if ((j->samples > 0 && (r = app_day_add(x, day, old, j->samples, j->cpu_seconds, 0)) < 0) ||
                           (r = app_mix_move(x, j->id, old, j->mix_key, run_day)) < 0)
                        return r;
                if ((r = conn_stmt(&x->s->writer, STMT_JOB_MIX_SET, &st)) < 0 ||
                    (r = db_bind_int(st, 1, j->id)) < 0 ||
                    (r = db_bind_int(st, 2, j->mix_key)) < 0 ||
                    (r = bind_nullable_int(st, 3, run_day)) < 0 ||
                    (r = db_execute(st, 0)) < 0)
                        return r;
        }
        return write_mix_adds(x, day);
}
