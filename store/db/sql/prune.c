/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Retention (prune): raw detail, and with windows of their own the
 * site-wide rollups and the per-job summaries, from before a horizon
 * deleted in short write transactions of bounded size, each going on where
 * the last left. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "db/sql/sql-internal.h"

typedef struct PruneStep {
        SqlStorage *s;
        int64_t before;
        int64_t budget;         /* rows this step may still delete */
        PruneResult *res;
} PruneStep;

static int prune_exec(PruneStep *p, DbStmt *st, uint64_t *count) {
        int64_t n;
        int r = step_changes(st, &n);

        if (r < 0)
                return r;
        *count += (uint64_t) n;
        p->budget -= n;
        return 0;
}

/* The tables of raw rows by (job, hour): the packs (schema/0017), and the
 * rows from before them, which are written no more. */
static const struct {
        Stmt job_bucket, job, idle_next, idle;
        size_t count; /* where in PruneResult the rows deleted count */
} raw_tables[] = {
        { STMT_PRUNE_JOB_PACKS_BUCKET, STMT_PRUNE_JOB_PACKS, STMT_PRUNE_IDLE_PACKS_NEXT, STMT_PRUNE_IDLE_PACKS,
          offsetof(PruneResult, sample_packs) },
        { STMT_PRUNE_JOB_SAMPLES_BUCKET, STMT_PRUNE_JOB_SAMPLES, STMT_PRUNE_IDLE_SAMPLES_NEXT,
          STMT_PRUNE_IDLE_SAMPLES, offsetof(PruneResult, samples) },
};

static uint64_t *raw_count(PruneStep *p, size_t t) {
        return (uint64_t *) ((char *) p->res + raw_tables[t].count);
}

/* One job's raw rows: its per-batch time line, then its rows of each raw
 * table an hour at a time. 1: all gone, 0: the budget ran out first. */
static int prune_job(PruneStep *p, int64_t job_id) {
        Conn *c = &p->s->writer;
        DbStmt *st;
        int r;

        if ((r = conn_stmt(c, STMT_PRUNE_JOB_TIMELINE, &st)) < 0 || (r = db_bind_int(st, 1, job_id)) < 0 ||
            (r = prune_exec(p, st, &p->res->timeline)) < 0)
                return r;
        for (size_t t = 0; t < ELEMENTSOF(raw_tables); t++)
                for (;;) {
                        int64_t bucket;
                        int rc;

                        if (p->budget <= 0)
                                return 0;
                        if ((r = conn_stmt(c, raw_tables[t].job_bucket, &st)) < 0 ||
                            (r = db_bind_int(st, 1, job_id)) < 0)
                                return r;
                        rc = db_step(st);
                        if (rc != 1) {
                                db_reset(st);
                                return step_errno(rc);
                        }
                        if (db_column_null(st, 0)) {
                                db_reset(st);
                                break;
                        }
                        bucket = db_column_int(st, 0);
                        db_reset(st);
                        if ((r = conn_stmt(c, raw_tables[t].job, &st)) < 0 || (r = db_bind_int(st, 1, job_id)) < 0 ||
                            (r = db_bind_int(st, 2, bucket)) < 0 || (r = prune_exec(p, st, raw_count(p, t))) < 0)
                                return r;
                }
        return 1;
}

/* The jobs last seen before the horizon, in the order of (last_seen, id)
 * from where the last step left off (schema/0014). 1: every such job done. */
static int prune_jobs(PruneStep *p) {
        enum { JOBS_PER_STEP = 64 };
        Conn *c = &p->s->writer;
        int64_t ids[JOBS_PER_STEP], mark_id;
        double seen[JOBS_PER_STEP], mark_seen;
        DbStmt *st;
        bool done = true;
        size_t n = 0;
        int r = 0, rc;

        if ((r = conn_stmt(c, STMT_PRUNE_MARK_GET, &st)) < 0)
                return r;
        rc = db_step(st);
        if (rc != 1) {
                db_reset(st);
                return rc == 0 ? -EIO : step_errno(rc);
        }
        mark_seen = db_column_double(st, 0);
        mark_id = (int64_t) db_column_double(st, 1);
        db_reset(st);
        if (mark_seen >= (double) p->before)
                return 1;
        if ((r = conn_stmt(c, STMT_PRUNE_JOBS, &st)) < 0 || (r = bind_nullable_double(st, 1, mark_seen)) < 0 ||
            (r = db_bind_int(st, 2, mark_id)) < 0 || (r = db_bind_int(st, 3, p->before)) < 0 ||
            (r = db_bind_int(st, 4, JOBS_PER_STEP)) < 0)
                return r;
        while (n < JOBS_PER_STEP && (rc = db_step(st)) == 1) {
                ids[n] = db_column_int(st, 0);
                seen[n++] = db_column_double(st, 1);
        }
        db_reset(st);
        if (n < JOBS_PER_STEP && rc != 0)
                return step_errno(rc);
        for (size_t i = 0; i < n; i++) {
                r = prune_job(p, ids[i]);
                if (r < 0)
                        return r;
                if (r == 0) {
                        done = false;
                        break;
                }
                mark_seen = seen[i];
                mark_id = ids[i];
        }
        /* fewer jobs than asked for and all done: everything before the horizon */
        if (n < JOBS_PER_STEP && done) {
                mark_seen = (double) p->before;
                mark_id = 0;
        }
        if ((r = conn_stmt(c, STMT_PRUNE_MARK_SET, &st)) < 0 || (r = bind_nullable_double(st, 1, mark_seen)) < 0 ||
            (r = db_bind_int(st, 2, mark_id)) < 0 || (r = db_execute(st, 0)) < 0)
                return r;
        return mark_seen >= (double) p->before;
}

/* Raw rows of work outside jobs (job 0) before the horizon, table by
 * table, an hour and a node at a time. 1: none left. */
static int prune_outside_jobs(PruneStep *p) {
        Conn *c = &p->s->writer;
        DbStmt *st;
        int r, rc;

        for (size_t t = 0; t < ELEMENTSOF(raw_tables); t++)
                for (;;) {
                        int64_t bucket, node;

                        if (p->budget <= 0)
                                return 0;
                        if ((r = conn_stmt(c, raw_tables[t].idle_next, &st)) < 0 ||
                            (r = db_bind_int(st, 1, p->before)) < 0)
                                return r;
                        rc = db_step(st);
                        if (rc != 1) {
                                db_reset(st);
                                if (rc == 0)
                                        break;
                                return step_errno(rc);
                        }
                        bucket = db_column_int(st, 0);
                        node = db_column_int(st, 1);
                        db_reset(st);
                        if ((r = conn_stmt(c, raw_tables[t].idle, &st)) < 0 || (r = db_bind_int(st, 1, bucket)) < 0 ||
                            (r = db_bind_int(st, 2, node)) < 0 || (r = prune_exec(p, st, raw_count(p, t))) < 0)
                                return r;
                }
        return 1;
}

/* The receipts of batches received before the horizon: per (node, boot,
 * spool), whose sequence numbers grow with time, the oldest prefix. The
 * walk over the groups goes on where the last step left it. 1: a whole
 * walk done. */
static int prune_batches(PruneStep *p) {
        SqlStorage *s = p->s;
        Conn *c = &s->writer;
        DbStmt *st;
        int r, rc;

        while (p->budget > 0) {
                int64_t last = -1, node;
                char boot[sizeof(s->prune_boot)], spool[sizeof(s->prune_spool)];
                const unsigned char *t, *sp;

                if ((r = conn_stmt(c, STMT_PRUNE_BATCH_GROUP, &st)) < 0 ||
                    (r = db_bind_int(st, 1, s->prune_node)) < 0 ||
                    (r = bind_nullable_text(st, 2, s->prune_boot)) < 0 ||
                    (r = bind_nullable_text(st, 3, s->prune_spool)) < 0)
                        return r;
                rc = db_step(st);
                if (rc != 1) {
                        db_reset(st);
                        s->prune_node = 0;
                        s->prune_boot[0] = s->prune_spool[0] = 0;
                        return rc == 0 ? 1 : step_errno(rc);
                }
                t = db_column_text(st, 1);
                sp = db_column_text(st, 2);
                node = db_column_int(st, 0);
                snprintf(boot, sizeof(boot), "%s", t ? (const char *) t : "");
                snprintf(spool, sizeof(spool), "%s", sp ? (const char *) sp : "");
                db_reset(st);

                if ((r = conn_stmt(c, STMT_PRUNE_BATCH_SEQS, &st)) < 0 || (r = db_bind_int(st, 1, node)) < 0 ||
                    (r = bind_nullable_text(st, 2, boot)) < 0 || (r = bind_nullable_text(st, 3, spool)) < 0 ||
                    (r = db_bind_int(st, 4, p->budget)) < 0)
                        return r;
                while ((rc = db_step(st)) == 1 && db_column_int(st, 1) < p->before)
                        last = db_column_int(st, 0);
                db_reset(st);
                if (rc != 1 && rc != 0)
                        return step_errno(rc);
                if (last >= 0 && ((r = conn_stmt(c, STMT_PRUNE_BATCHES, &st)) < 0 ||
                                  (r = db_bind_int(st, 1, node)) < 0 ||
                                  (r = bind_nullable_text(st, 2, boot)) < 0 ||
                                  (r = bind_nullable_text(st, 3, spool)) < 0 ||
                                  (r = db_bind_int(st, 4, last)) < 0 ||
                                  (r = prune_exec(p, st, &p->res->batches)) < 0))
                        return r;
                /* the group's old prefix may go on beyond what was read: the
                 * next step starts with this group again */
                if (p->budget <= 0)
                        break;
                s->prune_node = node;
                memcpy(s->prune_boot, boot, sizeof(boot));
                memcpy(s->prune_spool, spool, sizeof(spool));
        }
        return 0;
}

/* Ends a step begun with the writer locked and a write transaction:
 * committed if r says it went well, else rolled back and counted as
 * nothing. Unlocks the writer; returns r or the commit's error. */
static int end_step(SqlStorage *s, int r, PruneResult *ret) {
        Conn *c = &s->writer;

        if (r >= 0)
                r = conn_exec(c, "COMMIT");
        if (r < 0) {
                if (db_in_transaction(c->db))
                        (void) conn_exec(c, "ROLLBACK");
                *ret = (PruneResult) {};
        }
        pthread_mutex_unlock(&s->write_lock);
        return r;
}

int sql_prune(Storage *base, int64_t before, unsigned max_rows, PruneResult *ret) {
        SqlStorage *s = (SqlStorage *) base;
        PruneStep p = { .s = s, .before = before, .budget = MAX(max_rows, 1u), .res = ret };
        Conn *c = &s->writer;
        int r, jobs = 0, outside = 0, batches = 0;

        db_purpose_set("deleting old rows (retention)");
        *ret = (PruneResult) {};
        pthread_mutex_lock(&s->write_lock);
        r = db_begin_write(c->db);
        /* prune_jobs() walks only the jobs that are not live */
        if (r >= 0 && !s->pruning_raw)
                r = sql_jobs_settle(s);
        if (r >= 0 && (jobs = prune_jobs(&p)) < 0)
                r = jobs;
        if (r >= 0 && (outside = prune_outside_jobs(&p)) < 0)
                r = outside;
        if (r >= 0 && (batches = prune_batches(&p)) < 0)
                r = batches;
        r = end_step(s, r, ret);
        ret->more = r >= 0 && !(jobs == 1 && outside == 1 && batches == 1);
        s->pruning_raw = ret->more;
        return r;
}

/* The site-wide rollups before the horizon, table by table, a time unit
 * (an hour, a day, …) at a time: the oldest first, so that a step cut
 * short leaves each table's rows a suffix in time. */
int sql_prune_rollups(Storage *base, int64_t before, unsigned max_rows, PruneResult *ret) {
        static const Stmt tables[][2] = {
                { STMT_PRUNE_OBJECT_HOURS_NEXT, STMT_PRUNE_OBJECT_HOURS },
                { STMT_PRUNE_OBJECT_DAYS_NEXT, STMT_PRUNE_OBJECT_DAYS },
                { STMT_PRUNE_OBJECT_WEEKS_NEXT, STMT_PRUNE_OBJECT_WEEKS },
                { STMT_PRUNE_OBJECT_PERIODS_NEXT, STMT_PRUNE_OBJECT_PERIODS },
                { STMT_PRUNE_APP_DAYS_NEXT, STMT_PRUNE_APP_DAYS },
                { STMT_PRUNE_APP_DIM_DAYS_NEXT, STMT_PRUNE_APP_DIM_DAYS },
                { STMT_PRUNE_FUNCTION_DAYS_NEXT, STMT_PRUNE_FUNCTION_DAYS },
                { STMT_PRUNE_FUNCTION_WEEKS_NEXT, STMT_PRUNE_FUNCTION_WEEKS },
                { STMT_PRUNE_FUNCTION_SCOPE_DAYS_NEXT, STMT_PRUNE_FUNCTION_SCOPE_DAYS },
                { STMT_PRUNE_FUNCTION_SCOPE_WEEKS_NEXT, STMT_PRUNE_FUNCTION_SCOPE_WEEKS },
                { STMT_PRUNE_FUNCTION_KEY_DAYS_NEXT, STMT_PRUNE_FUNCTION_KEY_DAYS },
                { STMT_PRUNE_FUNCTION_KEY_WEEKS_NEXT, STMT_PRUNE_FUNCTION_KEY_WEEKS },
                { STMT_PRUNE_FUNCTION_TOTAL_DAYS_NEXT, STMT_PRUNE_FUNCTION_TOTAL_DAYS },
                { STMT_PRUNE_FUNCTION_TOTAL_WEEKS_NEXT, STMT_PRUNE_FUNCTION_TOTAL_WEEKS },
        };
        SqlStorage *s = (SqlStorage *) base;
        PruneStep p = { .s = s, .before = before, .budget = MAX(max_rows, 1u), .res = ret };
        Conn *c = &s->writer;
        size_t done = 0;
        int r;

        *ret = (PruneResult) {};
        /* sums of batches not folded yet would bring pruned rows back */
        r = site_sums_fold_for_read(s);
        if (r < 0)
                return r;
        db_purpose_set("deleting old rollups (retention)");
        pthread_mutex_lock(&s->write_lock);
        r = db_begin_write(c->db);
        for (size_t t = 0; r >= 0 && t < ELEMENTSOF(tables); t++) {
                while (p.budget > 0) {
                        DbStmt *st;
                        int64_t unit;
                        int rc;

                        if ((r = conn_stmt(c, tables[t][0], &st)) < 0 || (r = db_bind_int(st, 1, before)) < 0)
                                break;
                        rc = db_step(st);
                        if (rc != 1) {
                                db_reset(st);
                                r = step_errno(rc);
                                break;
                        }
                        if (db_column_null(st, 0)) {
                                db_reset(st);
                                done++;
                                break;
                        }
                        unit = db_column_int(st, 0);
                        db_reset(st);
                        if ((r = conn_stmt(c, tables[t][1], &st)) < 0 || (r = db_bind_int(st, 1, unit)) < 0 ||
                            (r = prune_exec(&p, st, &ret->rollups)) < 0)
                                break;
                }
                if (p.budget <= 0)
                        break;
        }
        r = end_step(s, r, ret);
        ret->more = r >= 0 && done < ELEMENTSOF(tables);
        return r;
}

/* The rows of job job_id besides its jobs row, which is gone already: raw
 * rows the raw window has not reached yet, then every table of its
 * summary, a slice of the step's budget at a time. 1: all gone, 0: the
 * budget ran out first. */
static int expire_job_rows(PruneStep *p, int64_t job_id) {
        static const Stmt tables[] = {
                STMT_EXPIRE_JOB_OBJECTS, STMT_EXPIRE_JOB_PHASES, STMT_EXPIRE_JOB_NODES,
                STMT_EXPIRE_JOB_NOTES, STMT_EXPIRE_JOB_MARKERS, STMT_EXPIRE_JOB_RANKS,
                STMT_EXPIRE_JOB_TIMELINE, STMT_EXPIRE_JOB_COUNTERS, STMT_EXPIRE_JOB_OBJECT_EVENTS,
                STMT_EXPIRE_JOB_PHASE_EVENTS, STMT_EXPIRE_JOB_EVENTS, STMT_EXPIRE_JOB_BURSTS,
                STMT_EXPIRE_JOB_TASKS, STMT_EXPIRE_JOB_FUNCTION_PACKS,
        };
        Conn *c = &p->s->writer;
        int r = prune_job(p, job_id);

        if (r <= 0)
                return r;
        for (size_t t = 0; t < ELEMENTSOF(tables); t++)
                for (;;) {
                        int64_t limit = p->budget, n;
                        DbStmt *st;

                        if (limit <= 0)
                                return 0;
                        if ((r = conn_stmt(c, tables[t], &st)) < 0 || (r = db_bind_int(st, 1, job_id)) < 0 ||
                            (r = db_bind_int(st, 2, limit)) < 0 || (r = prune_exec(p, st, &p->res->job_rows)) < 0)
                                return r;
                        n = limit - p->budget;
                        if (n < limit)
                                break; /* fewer than asked for: none left */
                }
        return 1;
}

/* The job whose jobs row went in an earlier step and whose other rows are
 * still being deleted, into *ret (left alone when there is none). */
static int expire_left_get(PruneStep *p, int64_t *ret) {
        DbStmt *st;
        int r, rc;

        if ((r = conn_stmt(&p->s->writer, STMT_EXPIRE_LEFT_GET, &st)) < 0)
                return r;
        rc = db_step(st);
        if (rc == 1 && !db_column_null(st, 0))
                *ret = (int64_t) db_column_double(st, 0);
        db_reset(st);
        return step_errno(rc);
}

/* The job last seen longest before the horizon, its jobs row deleted and
 * its id noted in the retention table, into *ret. 1: done, 0: no such job. */
static int expire_next(PruneStep *p, int64_t *ret) {
        Conn *c = &p->s->writer;
        int64_t job_id;
        DbStmt *st;
        int r, rc;

        if ((r = conn_stmt(c, STMT_EXPIRE_JOB_NEXT, &st)) < 0 || (r = db_bind_int(st, 1, p->before)) < 0)
                return r;
        rc = db_step(st);
        job_id = rc == 1 ? db_column_int(st, 0) : 0;
        db_reset(st);
        if (rc != 1)
                return step_errno(rc);
        if ((r = conn_stmt(c, STMT_EXPIRE_JOB, &st)) < 0 || (r = db_bind_int(st, 1, job_id)) < 0 ||
            (r = prune_exec(p, st, &p->res->jobs)) < 0)
                return r;
        if ((r = conn_stmt(c, STMT_EXPIRE_LEFT_SET, &st)) < 0 || (r = db_bind_int(st, 1, job_id)) < 0 ||
            (r = db_execute(st, false)) < 0)
                return r;
        *ret = job_id;
        return 1;
}

/* Jobs last seen before the horizon, the oldest first: each one's jobs row
 * goes first, so that it leaves every answer at once, with a note of its
 * id in the retention table; then its other rows, in this and later
 * steps; then the note. At most JOBS_PER_STEP jobs a step, as each costs a
 * few statements however few rows it has. 1: no such job left. */
static int expire_jobs(PruneStep *p) {
        enum { JOBS_PER_STEP = 64 };
        int64_t job_id = 0; /* none: jobs have ids from 1, work outside jobs is 0 */
        DbStmt *st;
        int r;

        r = expire_left_get(p, &job_id);
        if (r < 0)
                return r;
        for (unsigned n = 0;; n++) {
                if (job_id == 0) {
                        if (p->budget <= 0 || n >= JOBS_PER_STEP)
                                return 0;
                        r = expire_next(p, &job_id);
                        if (r <= 0)
                                return r < 0 ? r : 1;
                }
                r = expire_job_rows(p, job_id);
                if (r <= 0)
                        return r;
                if ((r = conn_stmt(&p->s->writer, STMT_EXPIRE_LEFT_CLEAR, &st)) < 0 ||
                    (r = db_execute(st, false)) < 0)
                        return r;
                job_id = 0;
        }
}

int sql_prune_jobs(Storage *base, int64_t before, unsigned max_rows, PruneResult *ret) {
        SqlStorage *s = (SqlStorage *) base;
        PruneStep p = { .s = s, .before = before, .budget = MAX(max_rows, 1u), .res = ret };
        int r, done = 0;

        db_purpose_set("deleting old jobs (retention)");
        *ret = (PruneResult) {};
        pthread_mutex_lock(&s->write_lock);
        r = db_begin_write(s->writer.db);
        /* expire_jobs() finds only the jobs that are not live */
        if (r >= 0 && !s->pruning_jobs)
                r = sql_jobs_settle(s);
        if (r >= 0 && (done = expire_jobs(&p)) < 0)
                r = done;
        r = end_step(s, r, ret);
        ret->more = r >= 0 && done != 1;
        s->pruning_jobs = ret->more;
        return r;
}
