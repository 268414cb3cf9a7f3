/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The write queue: ingest() calls wait here for the one writer, which
 * stores what queued up meanwhile in one transaction (group commit). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ingest.h"
#include "log.h"
#include "util.h"

/* A batch waiting for the writer. Batches that arrive while one is being
 * written are written together in the next transaction, each inside its own
 * savepoint: one commit (and one write of the hot pages to the WAL) for many
 * batches, and each batch still stored whole or not at all. */
struct Pending {
        IngestCtx *ctx;
        int64_t now;
        IngestResult res;
        int r;
        /* The database's message for a failed r: it was met on the
         * writing thread, and is logged on the batch's own. */
        char error[512];
        bool done;
        Pending *next;
};

/* Rows per group transaction: bounds how long one commit keeps others waiting. */
#define GROUP_MAX_ROWS 200000

/* How often a group is run again when the database refused it for a
 * conflict with another writer (PostgreSQL's deadlocks and serialization
 * failures, -EAGAIN), before its batches fail and their nodes retry. */
#define GROUP_TRIES 3

static void note_error(Pending *p) {
        snprintf(p->error, sizeof(p->error), "%s", db_error_last() ?: "");
}

/* A driver that defers statements (PostgreSQL's pipeline) reports that a
 * guarded sum refused the batch (-EOVERFLOW) at a later statement, too late
 * for the storage code to say which field: the batch is stored again with
 * every statement answering at once, to refuse it as SQLite does, naming
 * the same field. */
static int ingest_again_in_order(SqlStorage *s, Pending *p) {
        Conn *c = &s->writer;
        int r;

        r = conn_exec(c, "ROLLBACK TO batch");
        if (r < 0)
                return r;
        caches_clear(s);
        ingest_ctx_reset(p->ctx);
        p->ctx->in_order = true;
        p->res = (IngestResult) {};
        db_set_deferring(c->db, false);
        r = ingest_locked(p->ctx, p->now, &p->res);
        db_set_deferring(c->db, true);
        if (r >= 0 && !p->res.duplicate)
                r = conn_exec(c, "RELEASE batch");
        return r;
}

/* Runs sql on c through a statement kept in *st: one that a driver may
 * send without waiting for its answer (PostgreSQL's pipeline), unlike
 * conn_exec(). Its errors are reported by a later call at the latest. */
static int exec_kept(Conn *c, DbStmt **st, const char *sql) {
        if (!*st) {
                int r = db_prepare(c->db, sql, true, st);

                if (r < 0)
                        return r;
        } else
                db_reset(*st);
        return db_execute(*st, 0);
}

/* The writer looks for live jobs gone quiet at most this often. */
#define JOBS_SETTLE_EVERY_S 60

int sql_jobs_settle(SqlStorage *s) {
        DbStmt *st;
        int r;

        if ((r = conn_stmt(&s->writer, STMT_JOBS_SETTLE, &st)) < 0 ||
            (r = db_bind_int(st, 1, (int64_t) time(NULL) - JOBS_LIVE_S)) < 0)
                return r;
        return db_execute(st, 0);
}

/* After a group: live jobs gone quiet join the job list's indexes, in a
 * transaction of their own, so that a failure here loses no batch; a
 * later group tries again. */
static void jobs_settle(SqlStorage *s) {
        uint64_t t = now_ns(CLOCK_MONOTONIC);
        Conn *c = &s->writer;
        int r;

        if (s->settled_ns != 0 && t - s->settled_ns < JOBS_SETTLE_EVERY_S * UINT64_C(1000000000))
                return;
        s->settled_ns = t;
        db_error_clear();
        r = db_begin_write(c->db);
        if (r >= 0)
                r = sql_jobs_settle(s);
        if (r >= 0)
                r = conn_exec(c, "COMMIT");
        if (r < 0) {
                log_warning_errno(r, "Could not move quiet jobs into the job list's indexes: %m (%s); "
                                  "trying again later.", db_error_last() ?: "no message");
                if (db_in_transaction(c->db))
                        (void) conn_exec(c, "ROLLBACK");
        }
}

/* Writes the group in one transaction. < 0: the transaction failed as a
 * whole; each batch's own outcome is in its p->r. */
static int write_group_once(SqlStorage *s, Pending *group) {
        Conn *c = &s->writer;
        int r;

        db_error_clear();
        r = db_begin_write(c->db);
        if (r >= 0 && sql_dialect(c->db->driver->dialect)->ingest_setup)
                r = exec_kept(c, &c->ingest_setup, sql_dialect(c->db->driver->dialect)->ingest_setup);
        for (Pending *p = group; p && r >= 0; p = p->next) {
                db_error_clear(); /* each batch's own message (note_error()) */
                /* its outcome comes with the batch's first answer */
                p->r = exec_kept(c, &c->savepoint, "SAVEPOINT batch");
                if (p->r >= 0)
                        p->r = ingest_locked(p->ctx, p->now, &p->res);
                /* A driver that pipelines reports what the batch's writes
                 * did by here at the latest. */
                if (p->r >= 0 && !p->res.duplicate)
                        p->r = conn_exec(c, "RELEASE batch");
                if (p->r == -EOVERFLOW && !p->ctx->err.field[0])
                        p->r = ingest_again_in_order(s, p);
                if (p->r < 0 || p->res.duplicate) {
                        (void) conn_exec(c, "ROLLBACK TO batch");
                        (void) conn_exec(c, "RELEASE batch");
                }
                if (p->r < 0) {
                        note_error(p);
                        /* Ids interned in what was rolled back are gone. */
                        caches_clear(s);
                        /* Some errors (I/O, full disk, a lost server) end
                         * the transaction itself, and a conflict with
                         * another writer wants all of it run again: then
                         * the group cannot be committed. */
                        if (!db_in_transaction(c->db) || p->r == -EAGAIN || p->r == -ECONNRESET)
                                r = p->r;
                }
        }
        if (r >= 0) {
                r = conn_exec(c, "COMMIT");
                if (r < 0) {
                        (void) conn_exec(c, "ROLLBACK");
                        caches_clear(s);
                } else
                        jobs_settle(s);
        } else if (db_in_transaction(c->db))
                (void) conn_exec(c, "ROLLBACK");
        return r;
}

static void write_group(SqlStorage *s, Pending *group) {
        int r;

        pthread_mutex_lock(&s->write_lock);
        for (unsigned tries = 1;; tries++) {
                r = write_group_once(s, group);
                if (r != -EAGAIN || tries == GROUP_TRIES)
                        break;
                for (Pending *p = group; p; p = p->next) {
                        ingest_ctx_reset(p->ctx);
                        p->r = 0;
                        p->res = (IngestResult) {};
                }
        }
        pthread_mutex_unlock(&s->write_lock);

        if (r < 0)
                for (Pending *p = group; p; p = p->next)
                        if (p->r >= 0) {
                                p->r = r;
                                note_error(p);
                        }
}

static Pending *take_group(SqlStorage *s) {
        Pending *group = s->queue_head, *last = group;
        size_t rows = last->ctx->b->n_rows;

        while (last->next && rows + last->next->ctx->b->n_rows <= GROUP_MAX_ROWS) {
                last = last->next;
                rows += last->ctx->b->n_rows;
        }
        s->queue_head = last->next;
        if (!s->queue_head)
                s->queue_tail = NULL;
        last->next = NULL;
        return group;
}

int sql_ingest(Storage *base, const Batch *b, int64_t now, IngestResult *ret, BatchError *err) {
        SqlStorage *s = (SqlStorage *) base;
        IngestCtx x;
        Pending me = { .ctx = &x, .now = now };

        db_purpose_set("storing a batch");
        me.r = ingest_ctx_init(&x, s, b);
        if (me.r < 0)
                goto finish;
        /* the rows' ids from the caches here, not in the writer, which
         * one batch at a time waits for */
        x.ids_ok = intern_lookup_rows(s, b, x.row_ids, &x.ids_generation) > 0;

        pthread_mutex_lock(&s->queue_lock);
        if (s->queue_tail)
                s->queue_tail->next = &me;
        else
                s->queue_head = &me;
        s->queue_tail = &me;
        while (!me.done) {
                Pending *group, *next;

                if (s->writing) {
                        pthread_cond_wait(&s->queue_cond, &s->queue_lock);
                        continue;
                }
                /* Nobody is writing: write what is queued, ours or not. */
                group = take_group(s);
                s->writing = true;
                pthread_mutex_unlock(&s->queue_lock);
                write_group(s, group);
                pthread_mutex_lock(&s->queue_lock);
                for (Pending *p = group; p; p = next) {
                        next = p->next; /* p belongs to its waiting thread once done */
                        p->done = true;
                }
                s->writing = false;
                pthread_cond_broadcast(&s->queue_cond);
        }
        pthread_mutex_unlock(&s->queue_lock);

finish:
        ingest_ctx_done(&x);
        /* This thread may have written other batches' groups: only the
         * message of its own batch goes to its log line. */
        db_error_clear();
        if (me.r < 0 && me.error[0])
                db_error_note("%s", me.error);
        if (me.r >= 0)
                *ret = me.res;
        else if (me.r == -EOVERFLOW) {
                *err = x.err;
                if (!err->field[0])
                        *err = (BatchError) { .field = "rows", .message = "a derived value (CPU seconds) is not finite" };
        }
        return me.r;
}
