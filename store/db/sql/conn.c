/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A connection of the storage and its statements, prepared once each; the
 * pool of readers; binding and reading values as storage.h has them. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db/sql/sql-internal.h"

/* What a loop over db_step() ended with: an error, else 0. */
int step_errno(int rc) {
        return rc < 0 ? rc : 0;
}

int conn_exec(Conn *c, const char *sql) {
        return db_exec(c->db, sql);
}

/* A read transaction: one snapshot for all its statements. */
int conn_begin_read(Conn *c) {
        return conn_exec(c, sql_dialect(c->db->driver->dialect)->read_begin);
}

int conn_exec_kept(Conn *c, DbStmt **st, const char *sql) {
        if (!*st) {
                int r = db_prepare(c->db, sql, true, st);

                if (r < 0)
                        return r;
        } else
                db_reset(*st);
        return db_execute(*st, 0);
}

int conn_lock_site(Conn *c) {
        int r;

        if (!c->shares_writes || c->site_locked)
                return 0;
        r = conn_exec_kept(c, &c->lock_site, sql_dialect(c->db->driver->dialect)->ingest_lock_site);
        if (r < 0)
                return r;
        c->site_locked = true;
        return 0;
}

static int lock_if_shared(Conn *c, Stmt id) {
        return stmt_changes_shared(id) ? conn_lock_site(c) : 0;
}

/* Hands out statement id of connection c, prepared on first use, reset and
 * with no bindings; one that changes shared rows after the site lock. */
int conn_stmt(Conn *c, Stmt id, DbStmt **ret) {
        int r = lock_if_shared(c, id);

        if (r < 0)
                return r;
        if (!c->stmts[id]) {
                r = db_prepare(c->db, stmt_text(c->db->driver->dialect, id), true, &c->stmts[id]);

                if (r < 0)
                        return r;
        } else
                db_reset(c->stmts[id]);
        *ret = c->stmts[id];
        return 0;
}

/* Statement id prepared for rows rows (1 … ROWS_MAX). */
static int conn_stmt_rows(Conn *c, Stmt id, size_t rows, DbStmt **ret) {
        DbStmt **st;
        int r = lock_if_shared(c, id);

        if (r < 0)
                return r;
        if (!c->rows_stmts[id]) {
                c->rows_stmts[id] = calloc(ROWS_MAX, sizeof(DbStmt *));
                if (!c->rows_stmts[id])
                        return -ENOMEM;
        }
        st = &c->rows_stmts[id][rows - 1];
        if (!*st) {
                _cleanup_free_ char *sql = NULL;

                r = stmt_text_rows(stmt_text(c->db->driver->dialect, id), rows, &sql, &c->rows_cols[id]);

                if (r < 0)
                        return r;
                r = db_prepare(c->db, sql, true, st);
                if (r < 0)
                        return r;
        } else
                db_reset(*st);
        *ret = *st;
        return 0;
}

/* Statement id for rows i … i + *rows of n, bound. */
static int bind_rows(Conn *c, Stmt id, size_t i, size_t n, BindRow bind, void *userdata, size_t *rows,
                     DbStmt **ret) {
        DbStmt *st;
        int r;

        *rows = MIN(n - i, (size_t) ROWS_MAX);
        r = conn_stmt_rows(c, id, *rows, &st);
        if (r < 0)
                return r;
        for (size_t k = 0; k < *rows; k++) {
                r = bind(st, 1 + (int) (k * c->rows_cols[id]), i + k, userdata);
                if (r < 0)
                        return r;
        }
        *ret = st;
        return 0;
}

int conn_write_rows(Conn *c, Stmt id, size_t n, BindRow bind, void *userdata, bool must_change) {
        for (size_t i = 0, rows; i < n; i += rows) {
                DbStmt *st;
                int r;

                r = bind_rows(c, id, i, n, bind, userdata, &rows, &st);
                if (r < 0)
                        return r;
                r = db_execute(st, must_change ? (int64_t) rows : 0);
                if (r < 0)
                        return r;
        }
        return 0;
}

int conn_read_rows(Conn *c, Stmt id, size_t n, BindRow bind, ReadRow read, void *userdata) {
        for (size_t i = 0, rows; i < n; i += rows) {
                DbStmt *st;
                int r, rc;

                r = bind_rows(c, id, i, n, bind, userdata, &rows, &st);
                if (r < 0)
                        return r;
                while ((rc = db_step(st)) == 1) {
                        r = read(st, userdata);
                        if (r < 0) {
                                db_reset(st);
                                return r;
                        }
                }
                db_reset(st);
                if (rc < 0)
                        return rc;
        }
        return 0;
}

void conn_close(Conn *c) {
        for (size_t i = 0; i < _STMT_MAX; i++) {
                db_finalize(c->stmts[i]);
                for (size_t k = 0; c->rows_stmts[i] && k < ROWS_MAX; k++)
                        db_finalize(c->rows_stmts[i][k]);
                free(c->rows_stmts[i]);
        }
        db_finalize(c->savepoint);
        db_finalize(c->ingest_setup);
        db_finalize(c->lock_keys);
        db_finalize(c->lock_site);
        if (c->db)
                c->db->driver->disconnect(c->db);
        *c = (Conn) {};
}

int conn_open(Conn *c, const DbDriver *driver, const char *location, const StorageOptions *opts,
              bool writer) {
        return driver->connect(location, opts, writer, &c->db);
}

int bind_nullable_text(DbStmt *s, int i, const char *v) {
        return v ? db_bind_text(s, i, v) : db_bind_null(s, i);
}

int bind_nullable_int(DbStmt *s, int i, int64_t v) {
        return v == STORAGE_NULL ? db_bind_null(s, i) : db_bind_int(s, i, v);
}

int bind_nullable_double(DbStmt *s, int i, double v) {
        return isnan(v) ? db_bind_null(s, i) : db_bind_double(s, i, v);
}

/* A derived sum (CPU seconds): an Inf or NaN stored once would make every
 * sum it joins null, so it is refused here whatever let it through. */
int bind_sum(DbStmt *s, int i, double v) {
        if (!isfinite(v))
                return -EOVERFLOW;
        return db_bind_double(s, i, v);
}

/* Runs a statement whose rows are not needed and whose count of changed
 * rows is: stepped to the end, which a pipelining driver must wait for. */
int step_changes(DbStmt *s, int64_t *ret) {
        int r;

        while ((r = db_step(s)) > 0)
                ;
        if (r < 0)
                return r;
        *ret = db_changes(s);
        return 0;
}

/* Steps a statement that returns one integer (an id). -ENOENT for no row. */
int step_id(DbStmt *s, int64_t *ret) {
        int r = db_step(s);

        if (r == 0)
                return -ENOENT;
        if (r < 0)
                return r;
        *ret = db_column_int(s, 0);
        db_reset(s);
        return 0;
}

char *column_strdup(DbStmt *s, int i, int *r) {
        const char *t = db_column_text(s, i);
        char *p;

        if (!t)
                return NULL;
        p = strdup(t);
        if (!p)
                *r = -ENOMEM;
        return p;
}

int64_t column_nullable_int(DbStmt *s, int i) {
        return db_column_null(s, i) ? STORAGE_NULL : db_column_int(s, i);
}

double column_nullable_double(DbStmt *s, int i) {
        return db_column_null(s, i) ? NAN : db_column_double(s, i);
}

int reader_acquire(SqlStorage *s, Conn **ret) {
        pthread_mutex_lock(&s->readers_lock);
        for (;;) {
                for (unsigned i = 0; i < s->n_readers; i++)
                        if (!s->readers[i].busy) {
                                s->readers[i].busy = true;
                                pthread_mutex_unlock(&s->readers_lock);
                                *ret = &s->readers[i];
                                return 0;
                        }
                pthread_cond_wait(&s->readers_cond, &s->readers_lock);
        }
}

/* Resets the statements, which ends an implicit read transaction now, so the
 * WAL can be checkpointed past it. */
static void reader_release_stmts(Conn *c) {
        for (size_t i = 0; i < _STMT_MAX; i++)
                if (c->stmts[i])
                        db_reset(c->stmts[i]);
}

void reader_release(SqlStorage *s, Conn *c) {
        reader_release_stmts(c);
        pthread_mutex_lock(&s->readers_lock);
        c->busy = false;
        pthread_cond_signal(&s->readers_cond);
        pthread_mutex_unlock(&s->readers_lock);
}

void reader_end_read(SqlStorage *s, Conn *c) {
        reader_release_stmts(c);
        (void) conn_exec(c, "COMMIT");
        reader_release(s, c);
}

int grow(void **items, size_t n, size_t *alloc, size_t size) {
        void *p;
        size_t na;

        if (n < *alloc)
                return 0;
        na = *alloc ? *alloc * 2 : 16;
        p = reallocarray(*items, na, size);
        if (!p)
                return -ENOMEM;
        memset((char *) p + *alloc * size, 0, (na - *alloc) * size);
        *items = p;
        *alloc = na;
        return 0;
}
