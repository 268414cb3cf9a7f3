/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The write queue: ingest() calls wait here for the one writer, which
 * stores what queued up meanwhile in one transaction (group commit). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "db/sql/ingest.h"
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

/* Beside other writers, batches per group: bounds the locks a transaction
 * holds (one per node and job it stores) and how long another writer may
 * wait for one of them. */
#define GROUP_MAX_SHARED 64

/* The keys of the nodes' and jobs' locks (SqlDialect.ingest_lock_keys):
 * names hashed into this many. Two names that share a key only wait for
 * each other. */
#define LOCK_STRIPES 4096

/* A group that would lock more nodes and jobs than this runs alone, with
 * the writers' lock for itself (db_begin_write()): PostgreSQL's table of
 * locks is shared by all its sessions, and sized at start. */
#define LOCK_KEYS_MAX 256

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
static int ingest_again_in_order(SqlStorage *s, Pending *p, bool site_locked) {
        Conn *c = &s->writer;
        int r;

        r = conn_exec(c, "ROLLBACK TO batch");
        if (r < 0)
                return r;
        /* what the batch locked went with it */
        c->site_locked = site_locked;
        caches_clear(s);
        ingest_ctx_reset(p->ctx);
        p->ctx->in_order = true;
        p->res = (IngestResult) {};
        db_set_deferring(c->db, false);
        r = ingest_locked(p->ctx, p->now, &p->res);
        db_set_deferring(c->db, true);
        if (r >= 0 && !ingest_result_kept_nothing(&p->res))
                r = conn_exec(c, "RELEASE batch");
        return r;
}

static uint32_t lock_key(char kind, const char *name) {
        uint64_t h = UINT64_C(14695981039346656037); /* FNV-1a */

        h = (h ^ (uint8_t) kind) * UINT64_C(1099511628211);
        for (const char *p = name ?: ""; *p; p++)
                h = (h ^ (uint8_t) *p) * UINT64_C(1099511628211);
        return (uint32_t) (h % LOCK_STRIPES);
}

static int cmp_key(const void *a, const void *b) {
        uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;

        return CMP(x, y);
}

/* The keys of the locks on the nodes and jobs of the group's batches (the
 * jobs it claims, and those its rows, markers and ranks name), sorted, as
 * the text of an array ("{3,17,…}") in *ret; returns how many, and leaves
 * *ret NULL when that is more than LOCK_KEYS_MAX. */
static int group_keys(const Pending *group, char **ret) {
        _cleanup_free_ uint32_t *keys = NULL;
        size_t n = 0, len = 0, count = 0;
        char *text;

        for (const Pending *p = group; p; p = p->next) {
                const Batch *b = p->ctx->b;

                n += 1 + b->n_jobs + b->n_rows + b->n_markers + b->n_ranks;
        }
        keys = calloc(n, sizeof(uint32_t));
        if (!keys)
                return -ENOMEM;
        n = 0;
        for (const Pending *p = group; p; p = p->next) {
                const Batch *b = p->ctx->b;

                keys[n++] = lock_key('n', b->node);
                for (size_t i = 0; i < b->n_jobs; i++)
                        keys[n++] = lock_key('j', b->jobs[i].job);
                /* rows of one job come in runs: each run's job once */
                for (size_t i = 0; i < b->n_rows; i++)
                        if (b->rows[i].job && (i == 0 || !b->rows[i - 1].job || !streq(b->rows[i].job, b->rows[i - 1].job)))
                                keys[n++] = lock_key('j', b->rows[i].job);
                for (size_t i = 0; i < b->n_markers; i++)
                        if (b->markers[i].job)
                                keys[n++] = lock_key('j', b->markers[i].job);
                for (size_t i = 0; i < b->n_ranks; i++)
                        keys[n++] = lock_key('j', b->ranks[i].job);
        }
        qsort(keys, n, sizeof(uint32_t), cmp_key);
        for (size_t i = 0; i < n; i++)
                if (i == 0 || keys[i] != keys[i - 1])
                        keys[count++] = keys[i];
        *ret = NULL;
        if (count > LOCK_KEYS_MAX)
                return (int) count;
        /* "{", keys of at most 4 digits each after a ",", "}" */
        text = malloc(2 + count * 5 + 1);
        if (!text)
                return -ENOMEM;
        text[len++] = '{';
        for (size_t i = 0; i < count; i++)
                len += (size_t) sprintf(text + len, "%s%" PRIu32, i ? "," : "", keys[i]);
        text[len++] = '}';
        text[len] = 0;
        *ret = text;
        return (int) count;
}

/* Starts the transaction a group is stored in: beside other writers, with
 * the nodes and jobs of its batches locked, all at once and in the order
 * of their keys, before any of their rows (statements.h,
 * SqlDialect.ingest_lock_keys); alone where the database has one writer,
 * or where the group would hold more than LOCK_KEYS_MAX locks. */
static int group_begin(Conn *c, const Pending *group) {
        const SqlDialect *d = sql_dialect(c->db->driver->dialect);
        _cleanup_free_ char *keys = NULL;
        int r, n = 0;

        c->shares_writes = c->site_locked = false;
        if (d->ingest_lock_keys) {
                n = group_keys(group, &keys);
                if (n < 0)
                        return n;
        }
        if (n == 0 || n > LOCK_KEYS_MAX)
                r = db_begin_write(c->db);
        else {
                r = db_begin_ingest(c->db);
                if (r >= 0 && !c->lock_keys)
                        r = db_prepare(c->db, d->ingest_lock_keys, true, &c->lock_keys);
                if (r >= 0) {
                        db_reset(c->lock_keys);
                        r = bind_nullable_text(c->lock_keys, 1, keys);
                }
                if (r >= 0)
                        r = db_execute(c->lock_keys, 0);
                c->shares_writes = r >= 0;
        }
        if (r >= 0 && d->ingest_setup)
                r = conn_exec_kept(c, &c->ingest_setup, d->ingest_setup);
        return r;
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
        r = group_begin(c, group);
        for (Pending *p = group; p && r >= 0; p = p->next) {
                bool site_locked = c->site_locked;

                db_error_clear(); /* each batch's own message (note_error()) */
                /* its outcome comes with the batch's first answer */
                p->r = conn_exec_kept(c, &c->savepoint, "SAVEPOINT batch");
                if (p->r >= 0)
                        p->r = ingest_locked(p->ctx, p->now, &p->res);
                /* A driver that pipelines reports what the batch's writes
                 * did by here at the latest. */
                if (p->r >= 0 && !ingest_result_kept_nothing(&p->res))
                        p->r = conn_exec(c, "RELEASE batch");
                if (p->r == -EOVERFLOW && !p->ctx->err.field[0])
                        p->r = ingest_again_in_order(s, p, site_locked);
                if (p->r < 0 || ingest_result_kept_nothing(&p->res)) {
                        (void) conn_exec(c, "ROLLBACK TO batch");
                        (void) conn_exec(c, "RELEASE batch");
                        c->site_locked = site_locked;
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
                } else {
                        size_t sums = 0;

                        for (Pending *p = group; p; p = p->next)
                                sums += p->r >= 0 && !ingest_result_kept_nothing(&p->res) &&
                                        p->ctx->site_sums_pending;
                        jobs_settle(s);
                        site_sums_committed(s, sums);
                }
        } else if (db_in_transaction(c->db))
                (void) conn_exec(c, "ROLLBACK");
        c->shares_writes = c->site_locked = false;
        return r;
}

static void write_group(SqlStorage *s, Pending *group) {
        int r;

        pthread_mutex_lock(&s->write_lock);
        for (unsigned tries = 1;; tries++) {
                r = write_group_once(s, group);
                if (r != -EAGAIN || tries == GROUP_TRIES)
                        break;
                /* The writers' order of locks (statements.h) makes this
                 * rare: say so, and what the database said. */
                log_warning("Storing a group of batches conflicted with another writer (%s); trying again.",
                            db_error_last() ?: "no message");
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
        size_t rows = last->ctx->b->n_rows, batches = 1,
               max_batches = sql_dialect(s->driver->dialect)->ingest_lock_keys ? GROUP_MAX_SHARED : SIZE_MAX;

        while (last->next && rows + last->next->ctx->b->n_rows <= GROUP_MAX_ROWS && batches < max_batches) {
                last = last->next;
                rows += last->ctx->b->n_rows;
                batches++;
        }
        s->queue_head = last->next;
        if (!s->queue_head)
                s->queue_tail = NULL;
        last->next = NULL;
        return group;
}

/* The writer a node's batches go to: always the same, so that they are
 * stored in the order they came, and its caches know the node. */
static SqlStorage *lane_of(SqlStorage *s, const char *node) {
        if (s->n_lanes <= 1)
                return s;
        return s->lanes[lock_key('n', node) % s->n_lanes];
}

int sql_ingest(Storage *base, const Batch *b, int64_t now, IngestResult *ret, BatchError *err) {
        SqlStorage *s = lane_of((SqlStorage *) base, b->node);
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
