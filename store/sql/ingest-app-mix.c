/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A batch in the application mix (schema/0013): each job's time under the
 * key its application and metadata name, moved when the key changes. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "ingest-app-mix.h"

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

/* The id of the key a job's columns name now (STMT_JOB_MIX's third). */
static int job_mix_key(IngestCtx *x, int64_t job_id, int64_t *ret) {
        DbStmt *st;
        int r, rc;

        if ((r = conn_stmt(&x->s->writer, STMT_JOB_MIX, &st)) < 0 || (r = db_bind_int(st, 1, job_id)) < 0)
                return r;
        rc = db_step(st);
        if (rc == 1 && db_column_null(st, 2))
                rc = 0;
        if (rc == 1)
                *ret = db_column_int(st, 2);
        db_reset(st);
        if (rc != 1)
                return rc == 0 ? -ENOENT : step_errno(rc);
        return 0;
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
        j->mix_key = column_nullable_int(st, 3);
        j->mix_read = true;
        return 0;
}

/* After the apps: each job's time in this batch, in the application mix
 * of the batch's day, under the key its app and metadata name. Where the
 * jobs stand is read for all of them at once. */
int update_app_mix(IngestCtx *x) {
        int64_t day = (int64_t) floor(x->b->start / 86400.0) * 86400;
        int r;

        for (size_t i = 0; i < x->n_jobs; i++)
                x->job_pool[i].mix_read = false;
        r = conn_read_rows(&x->s->writer, STMT_JOB_MIXES, x->n_jobs, bind_job_row, read_job_mix, x);
        if (r < 0)
                return r;
        for (size_t i = 0; i < x->n_jobs; i++) {
                const JobAcc *j = &x->job_pool[i];
                int64_t old = j->mix_old, run_day = j->mix_run_day, key = j->mix_key;
                DbStmt *st;

                if (!j->mix_read)
                        return -ENOENT;
                if (key == STORAGE_NULL) {
                        if ((r = conn_stmt(&x->s->writer, STMT_MIX_KEY_INSERT, &st)) < 0 ||
                            (r = db_bind_int(st, 1, j->id)) < 0)
                                return r;
                        r = step_id(st, &key);
                        /* Another store sharing the database inserted the
                         * key since: it is there now. */
                        if (r == -ENOENT)
                                r = job_mix_key(x, j->id, &key);
                        if (r < 0)
                                return r;
                }

                if (old == STORAGE_NULL) {
                        /* the job's first batch: its run counts on this day */
                        run_day = day;
                        r = app_day_add(x, day, key, j->samples, j->cpu_seconds, 1);
                } else if (j->samples > 0)
                        r = app_day_add(x, day, old, j->samples, j->cpu_seconds, 0);
                if (r < 0)
                        return r;
                if (old == key)
                        continue;
                if (old != STORAGE_NULL && (r = app_mix_move(x, j->id, old, key, run_day)) < 0)
                        return r;
                if ((r = conn_stmt(&x->s->writer, STMT_JOB_MIX_SET, &st)) < 0 ||
                    (r = db_bind_int(st, 1, j->id)) < 0 ||
                    (r = db_bind_int(st, 2, key)) < 0 ||
                    (r = bind_nullable_int(st, 3, run_day)) < 0 ||
                    (r = db_execute(st, 0)) < 0)
                        return r;
        }
        return 0;
}
