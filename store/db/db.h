/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db/options.h"
#include "macro.h"

/* The small SQL interface that lmk-store's storage code (store/db/sql/) is
 * written against, so that a backend is only its connection handling and
 * the few statements its dialect spells differently. A driver implements
 * DbDriver: store/db/sqlite/db-sqlite.c (embedded, the default) and
 * store/db/postgresql/db-postgresql.c (libpq).
 *
 * The model is SQLite's, which the storage code was first written for:
 * statements prepared once per connection, parameters bound by position
 * (1-based, '?' in the SQL text; a driver whose server wants $1, $2, ...
 * renumbers them), stepped row by row, columns read by position (0-based).
 *
 * Threading: a DbConn and its statements are used by one thread at a time.
 *
 * Errors are negative errno values, the same for every driver:
 *   -EBUSY        the database is locked or busy (SQLite's busy timeout ran out)
 *   -EAGAIN       a serialization failure or deadlock: the transaction was
 *                 rolled back and may simply be run again
 *   -ECONNRESET   the connection to the server was lost; the open
 *                 transaction is gone. The driver reconnects by itself on a
 *                 later call (with backoff) and prepares its statements anew.
 *   -ECONNREFUSED no connection could be made (yet)
 *   -EEXIST       a constraint refused the row
 *   -EOVERFLOW    a value out of range (or a guarded sum refused, db_execute)
 *   -ENOSPC, -EACCES, -ENOENT, -EUCLEAN (corrupt), -ENOMEM, -E2BIG, -EPROTO
 *   -EIO          anything else; db_errmsg() says what */

typedef enum DbDialect {
        DB_DIALECT_SQLITE,
        DB_DIALECT_POSTGRESQL,
} DbDialect;

typedef struct DbConn DbConn;
typedef struct DbStmt DbStmt;
typedef struct DbDriver DbDriver;

struct DbDriver {
        const char *name;
        DbDialect dialect;

        /* Connects to the database named by location (a file path for SQLite;
         * a postgresql:// URI or libpq keyword string for PostgreSQL).
         * writer: the connection transactions that write go through (SQLite
         * sets WAL and its pragmas there); readers refuse writes. */
        int (*connect)(const char *location, const StorageOptions *opts, bool writer, DbConn **ret);
        void (*disconnect)(DbConn *c);

        /* Runs SQL without parameters whose rows, if any, are not needed;
         * it may hold several statements separated by ';'. */
        int (*exec)(DbConn *c, const char *sql);

        /* Starts a writing transaction that runs alone among the
         * database's writers (SQLite: BEGIN IMMEDIATE, so that it never
         * fails half-way for a lock; PostgreSQL: BEGIN and the writers'
         * advisory lock). Readers use exec("BEGIN"). */
        int (*begin_write)(DbConn *c);
        /* Starts the transaction a writer stores a group of batches in,
         * beside other writers of the database, which then lock what they
         * change as SqlDialect.ingest_lock_keys says (PostgreSQL: the
         * writers' lock, shared). NULL: begin_write. */
        int (*begin_ingest)(DbConn *c);
        /* Whether a transaction is open (one may have been ended by an
         * error: SQLite ends it on I/O errors, a lost server ends it too). */
        bool (*in_transaction)(DbConn *c);

        /* Prepares sql. persistent: kept for the connection's life and
         * re-prepared by the driver after a reconnect; else finalized soon
         * (dynamic SQL of one query). */
        int (*prepare)(DbConn *c, const char *sql, bool persistent, DbStmt **ret);
        void (*finalize)(DbStmt *st);
        /* Forgets the bindings and rows of the last run. */
        void (*reset)(DbStmt *st);

        int (*bind_null)(DbStmt *st, int i);
        int (*bind_int)(DbStmt *st, int i, int64_t v);
        int (*bind_double)(DbStmt *st, int i, double v);
        /* v is not copied: it stays valid until the statement has run. */
        int (*bind_text)(DbStmt *st, int i, const char *v);
        /* n bytes at v as a BLOB (PostgreSQL: BYTEA); not copied either. */
        int (*bind_blob)(DbStmt *st, int i, const void *v, size_t n);

        /* Runs the statement on the first call after binding; each call
         * then moves to the next row. 1: a row is there, 0: no (more)
         * rows, < 0: an error. */
        int (*step)(DbStmt *st);
        /* Runs a statement whose rows are not needed, to the end.
         * min_changes: -EOVERFLOW if it inserted or updated fewer rows (the
         * guarded upserts of stored sums, FITS in store/db/sql/, which change
         * each of their rows unless a sum would overflow); 0: no check. A
         * driver may
         * send it and report its outcome with a later call on the same
         * connection (PostgreSQL's pipeline); every error of it is reported
         * by the next begin/exec/step/commit at the latest. */
        int (*execute)(DbStmt *st, int64_t min_changes);
        /* Whether execute() may defer (default: yes). Off, each execute()
         * reports its own outcome: the storage code turns it off to find
         * which statement of a batch refused a sum. NULL: never defers. */
        void (*set_deferring)(DbConn *c, bool on);
        /* Rows changed by the statement's last run (after step returned 0). */
        int64_t (*changes)(DbStmt *st);

        bool (*column_null)(DbStmt *st, int i);
        int64_t (*column_int)(DbStmt *st, int i);
        double (*column_double)(DbStmt *st, int i);
        /* Valid until the next step or reset; NULL for SQL NULL. */
        const char *(*column_text)(DbStmt *st, int i);
        /* A BLOB (PostgreSQL: BYTEA) of *ret_len bytes, valid until the
         * next step, reset or column_blob; NULL (and 0) for SQL NULL, an
         * empty value or no memory to hold it. */
        const void *(*column_blob)(DbStmt *st, int i, size_t *ret_len);

        /* What the last failed call on c was, for the log. */
        const char *(*errmsg)(DbConn *c);
        /* Bytes the database takes on disk (SQLite: file, WAL and shm;
         * PostgreSQL: pg_database_size). */
        int (*size)(DbConn *c, uint64_t *ret);
};

/* The part of a connection and a statement every driver shares. */
struct DbConn {
        const DbDriver *driver;
};

struct DbStmt {
        DbConn *conn;
};

extern const DbDriver db_sqlite_driver;
extern const DbDriver db_postgresql_driver;

static inline int db_exec(DbConn *c, const char *sql) { return c->driver->exec(c, sql); }
static inline int db_begin_write(DbConn *c) { return c->driver->begin_write(c); }
static inline int db_begin_ingest(DbConn *c) {
        return (c->driver->begin_ingest ?: c->driver->begin_write)(c);
}
static inline bool db_in_transaction(DbConn *c) { return c->driver->in_transaction(c); }
static inline int db_prepare(DbConn *c, const char *sql, bool persistent, DbStmt **ret) {
        return c->driver->prepare(c, sql, persistent, ret);
}
static inline void db_finalize(DbStmt *st) {
        if (st)
                st->conn->driver->finalize(st);
}
static inline void db_reset(DbStmt *st) { st->conn->driver->reset(st); }
static inline int db_bind_null(DbStmt *st, int i) { return st->conn->driver->bind_null(st, i); }
static inline int db_bind_int(DbStmt *st, int i, int64_t v) { return st->conn->driver->bind_int(st, i, v); }
static inline int db_bind_double(DbStmt *st, int i, double v) { return st->conn->driver->bind_double(st, i, v); }
static inline int db_bind_text(DbStmt *st, int i, const char *v) { return st->conn->driver->bind_text(st, i, v); }
static inline int db_bind_blob(DbStmt *st, int i, const void *v, size_t n) {
        return st->conn->driver->bind_blob(st, i, v, n);
}
static inline int db_step(DbStmt *st) { return st->conn->driver->step(st); }
static inline int db_execute(DbStmt *st, int64_t min_changes) { return st->conn->driver->execute(st, min_changes); }
static inline void db_set_deferring(DbConn *c, bool on) {
        if (c->driver->set_deferring)
                c->driver->set_deferring(c, on);
}
static inline int64_t db_changes(DbStmt *st) { return st->conn->driver->changes(st); }
static inline bool db_column_null(DbStmt *st, int i) { return st->conn->driver->column_null(st, i); }
static inline int64_t db_column_int(DbStmt *st, int i) { return st->conn->driver->column_int(st, i); }
static inline double db_column_double(DbStmt *st, int i) { return st->conn->driver->column_double(st, i); }
static inline const char *db_column_text(DbStmt *st, int i) { return st->conn->driver->column_text(st, i); }
static inline const void *db_column_blob(DbStmt *st, int i, size_t *ret_len) {
        return st->conn->driver->column_blob(st, i, ret_len);
}
static inline const char *db_errmsg(DbConn *c) { return c->driver->errmsg(c); }

/* The first error a driver met on this thread (and the latest), in the database's own words
 * (sqlite3_errmsg(); PostgreSQL's message, detail and SQLSTATE) with the
 * start of the statement: lmk-store logs it once when a request fails
 * (reply_storage_error()), and answers the client without it. NULL when
 * none was noted since db_purpose_set() or db_error_clear(). */
const char *db_error_last(void);
void db_error_clear(void);
_printf_(1, 2) void db_error_note(const char *fmt, ...);

/* What the storage does on this thread, for the log line of a failure
 * ("storing a batch"); also clears the last error. p must be static. */
void db_purpose_set(const char *p);
const char *db_purpose(void);

/* Picks the driver for a --db value: "sqlite:PATH" or a plain path for
 * SQLite; "postgresql://…", "postgres://…" or a libpq keyword string
 * ("host=… dbname=…") for PostgreSQL. -EPROTONOSUPPORT when the driver was
 * not built in. */
int db_driver_for(const char *db, const DbDriver **ret_driver, const char **ret_location);
