/* SPDX-License-Identifier: GPL-2.0-or-later */
/* db.h over SQLite: one sqlite3 handle per DbConn, one sqlite3_stmt per
 * DbStmt. The writer runs in WAL mode so that readers (query_only
 * connections to the same file) read while a batch is written. */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "db/db.h"
#include "db/sqlite/wal-checkpoint.h"

typedef struct SqliteConn {
        DbConn base;
        sqlite3 *db;
        char *path;
        bool writer;
        WalCheckpointer *checkpointer; /* the writer's */
} SqliteConn;

typedef struct SqliteStmt {
        DbStmt base;
        sqlite3_stmt *st;
} SqliteStmt;

static SqliteConn *sqlite_conn(DbConn *c) {
        return (SqliteConn *) c;
}

static sqlite3_stmt *sqlite_stmt(DbStmt *st) {
        return ((SqliteStmt *) st)->st;
}

static int sqlite_errno(int rc) {
        switch (rc & 0xff) {
        case SQLITE_OK:
        case SQLITE_ROW:
        case SQLITE_DONE:
                return 0;
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
                return -EBUSY;
        case SQLITE_NOMEM:
                return -ENOMEM;
        case SQLITE_FULL:
                return -ENOSPC;
        case SQLITE_READONLY:
        case SQLITE_PERM:
        case SQLITE_AUTH:
                return -EACCES;
        case SQLITE_CANTOPEN:
                return -ENOENT;
        case SQLITE_NOTADB:
        case SQLITE_CORRUPT:
                return -EUCLEAN;
        case SQLITE_CONSTRAINT:
                return -EEXIST;
        case SQLITE_TOOBIG:
                return -E2BIG;
        default:
                return -EIO;
        }
}

/* An error of db, noted for the log (db_error_last()) with the start of
 * the statement it came from. */
static int sqlite_fail(sqlite3 *db, const char *sql, int rc) {
        int r = sqlite_errno(rc);

        if (r < 0)
                db_error_note("%s [SQLite %d] in: %.64s", db ? sqlite3_errmsg(db) : sqlite3_errstr(rc), rc,
                              sql ?: "");
        return r;
}

static int stmt_fail(sqlite3_stmt *st, int rc) {
        return sqlite_fail(sqlite3_db_handle(st), sqlite3_sql(st), rc);
}

static int db_sqlite_exec(DbConn *c, const char *sql) {
        return sqlite_fail(sqlite_conn(c)->db, sql, sqlite3_exec(sqlite_conn(c)->db, sql, NULL, NULL, NULL));
}

static void db_sqlite_disconnect(DbConn *base) {
        SqliteConn *c = sqlite_conn(base);

        if (!c)
                return;
        /* Lets SQLite refresh its planner statistics where they went stale,
         * and folds the WAL back into the database, so a stopped store is
         * one file. */
        wal_checkpointer_stop(c->checkpointer, c->db);
        if (c->db && c->writer) {
                (void) db_sqlite_exec(base, "PRAGMA optimize");
                sqlite3_wal_checkpoint_v2(c->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
        }
        sqlite3_close_v2(c->db);
        free(c->path);
        free(c);
}

static int db_sqlite_connect(const char *location, const StorageOptions *opts, bool writer, DbConn **ret) {
        SqliteConn *c;
        int rc, r;

        c = calloc(1, sizeof(SqliteConn));
        if (!c)
                return -ENOMEM;
        c->base.driver = &db_sqlite_driver;
        c->writer = writer;
        c->path = strdup(location);
        if (!c->path) {
                db_sqlite_disconnect(&c->base);
                return -ENOMEM;
        }
        rc = sqlite3_open_v2(location, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                             NULL);
        if (rc != SQLITE_OK) {
                r = sqlite_fail(c->db, "opening the database", rc);
                c->writer = false; /* nothing to checkpoint */
                db_sqlite_disconnect(&c->base);
                return r;
        }
        sqlite3_extended_result_codes(c->db, 1);
        sqlite3_busy_timeout(c->db, (int) opts->busy_timeout_ms);
        /* WAL lets queries read while a batch is written; synchronous=NORMAL
         * in WAL mode loses at most the last transactions on power loss, never
         * consistency, and a node re-sends what it got no answer for. The
         * writer's checkpoints run beside it (wal-checkpoint.h). */
        r = db_sqlite_exec(&c->base, writer ? "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; "
                                              "PRAGMA temp_store = MEMORY; PRAGMA cache_size = -65536;"
                                            : "PRAGMA synchronous = NORMAL; PRAGMA temp_store = MEMORY; "
                                              "PRAGMA cache_size = -32768; PRAGMA query_only = ON;");
        if (r >= 0 && writer) {
                r = wal_checkpointer_start(c->db, location, &c->checkpointer);
                if (r < 0)
                        db_error_note("starting the WAL checkpoints of %s: %s", location, strerror(-r));
        }
        if (r < 0) {
                c->writer = false;
                db_sqlite_disconnect(&c->base);
                return r;
        }
        *ret = &c->base;
        return 0;
}

/* IMMEDIATE takes the write lock now, so that the transaction never fails
 * half-way for a lock another connection holds. */
static int db_sqlite_begin_write(DbConn *c) {
        return db_sqlite_exec(c, "BEGIN IMMEDIATE");
}

static bool db_sqlite_in_transaction(DbConn *c) {
        return !sqlite3_get_autocommit(sqlite_conn(c)->db);
}

static int db_sqlite_prepare(DbConn *c, const char *sql, bool persistent, DbStmt **ret) {
        SqliteStmt *s;
        int rc;

        s = calloc(1, sizeof(SqliteStmt));
        if (!s)
                return -ENOMEM;
        s->base.conn = c;
        rc = sqlite3_prepare_v3(sqlite_conn(c)->db, sql, -1, persistent ? SQLITE_PREPARE_PERSISTENT : 0, &s->st,
                                NULL);
        if (rc != SQLITE_OK) {
                free(s);
                return sqlite_fail(sqlite_conn(c)->db, sql, rc);
        }
        *ret = &s->base;
        return 0;
}

static void db_sqlite_finalize(DbStmt *st) {
        sqlite3_finalize(sqlite_stmt(st));
        free(st);
}

static void db_sqlite_reset(DbStmt *st) {
        sqlite3_reset(sqlite_stmt(st));
        sqlite3_clear_bindings(sqlite_stmt(st));
}

static int db_sqlite_bind_null(DbStmt *st, int i) {
        return stmt_fail(sqlite_stmt(st), sqlite3_bind_null(sqlite_stmt(st), i));
}

static int db_sqlite_bind_int(DbStmt *st, int i, int64_t v) {
        return stmt_fail(sqlite_stmt(st), sqlite3_bind_int64(sqlite_stmt(st), i, v));
}

static int db_sqlite_bind_double(DbStmt *st, int i, double v) {
        return stmt_fail(sqlite_stmt(st), sqlite3_bind_double(sqlite_stmt(st), i, v));
}

static int db_sqlite_bind_text(DbStmt *st, int i, const char *v) {
        if (!v)
                return db_sqlite_bind_null(st, i);
        return stmt_fail(sqlite_stmt(st), sqlite3_bind_text(sqlite_stmt(st), i, v, -1, SQLITE_STATIC));
}

static int db_sqlite_bind_blob(DbStmt *st, int i, const void *v, size_t n) {
        return stmt_fail(sqlite_stmt(st), sqlite3_bind_blob64(sqlite_stmt(st), i, v, n, SQLITE_STATIC));
}

static int db_sqlite_step(DbStmt *st) {
        int rc = sqlite3_step(sqlite_stmt(st));

        if (rc == SQLITE_ROW)
                return 1;
        return rc == SQLITE_DONE ? 0 : stmt_fail(sqlite_stmt(st), rc);
}

/* SQLite makes every change of a statement, RETURNING or not, in its first
 * step: the rows after that are only read out. */
static int db_sqlite_execute(DbStmt *st, int64_t min_changes) {
        sqlite3_stmt *s = sqlite_stmt(st);
        int rc = sqlite3_step(s);

        if (rc == SQLITE_ROW)
                rc = sqlite3_reset(s);
        if (rc != SQLITE_OK && rc != SQLITE_DONE)
                return stmt_fail(s, rc);
        if (min_changes > 0 && sqlite3_changes(sqlite3_db_handle(s)) < min_changes)
                return -EOVERFLOW;
        return 0;
}

static int64_t db_sqlite_changes(DbStmt *st) {
        return sqlite3_changes(sqlite3_db_handle(sqlite_stmt(st)));
}

static bool db_sqlite_column_null(DbStmt *st, int i) {
        return sqlite3_column_type(sqlite_stmt(st), i) == SQLITE_NULL;
}

static int64_t db_sqlite_column_int(DbStmt *st, int i) {
        return sqlite3_column_int64(sqlite_stmt(st), i);
}

static double db_sqlite_column_double(DbStmt *st, int i) {
        return sqlite3_column_double(sqlite_stmt(st), i);
}

static const char *db_sqlite_column_text(DbStmt *st, int i) {
        return (const char *) sqlite3_column_text(sqlite_stmt(st), i);
}

static const void *db_sqlite_column_blob(DbStmt *st, int i, size_t *ret_len) {
        const void *v = sqlite3_column_blob(sqlite_stmt(st), i);

        /* after the pointer: the size of the value it converted to */
        *ret_len = v ? (size_t) sqlite3_column_bytes(sqlite_stmt(st), i) : 0;
        return v;
}

static const char *db_sqlite_errmsg(DbConn *c) {
        return sqlite3_errmsg(sqlite_conn(c)->db);
}

/* The database, its WAL and its shared-memory index: what the store takes
 * on disk between checkpoints. */
static int db_sqlite_size(DbConn *c, uint64_t *ret) {
        static const char *const suffixes[] = { "", "-wal", "-shm" };
        uint64_t total = 0;

        for (size_t i = 0; i < ELEMENTSOF(suffixes); i++) {
                _cleanup_free_ char *p = NULL;
                struct stat st;

                if (asprintf(&p, "%s%s", sqlite_conn(c)->path, suffixes[i]) < 0)
                        return -ENOMEM;
                if (stat(p, &st) < 0) {
                        if (errno == ENOENT)
                                continue;
                        return -errno;
                }
                total += (uint64_t) st.st_size;
        }
        *ret = total;
        return 0;
}

const DbDriver db_sqlite_driver = {
        .name = "sqlite",
        .dialect = DB_DIALECT_SQLITE,
        .connect = db_sqlite_connect,
        .disconnect = db_sqlite_disconnect,
        .exec = db_sqlite_exec,
        .begin_write = db_sqlite_begin_write,
        .in_transaction = db_sqlite_in_transaction,
        .prepare = db_sqlite_prepare,
        .finalize = db_sqlite_finalize,
        .reset = db_sqlite_reset,
        .bind_null = db_sqlite_bind_null,
        .bind_int = db_sqlite_bind_int,
        .bind_double = db_sqlite_bind_double,
        .bind_text = db_sqlite_bind_text,
        .bind_blob = db_sqlite_bind_blob,
        .step = db_sqlite_step,
        .execute = db_sqlite_execute,
        .changes = db_sqlite_changes,
        .column_null = db_sqlite_column_null,
        .column_int = db_sqlite_column_int,
        .column_double = db_sqlite_column_double,
        .column_text = db_sqlite_column_text,
        .column_blob = db_sqlite_column_blob,
        .errmsg = db_sqlite_errmsg,
        .size = db_sqlite_size,
};
