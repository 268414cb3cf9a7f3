/* SPDX-License-Identifier: GPL-2.0-or-later */
/* db.h over libpq: lmk-store's PostgreSQL backend.
 *
 * Statements are prepared by name per connection and run with text
 * parameters and text results, so that the storage code's int64 and double
 * values cross as decimal strings (doubles exactly: extra_float_digits).
 * Blobs (BYTEA) are the one parameter sent in binary: as they are, where
 * text would double them into hex.
 *
 * A lost server is noticed by the call that fails (-ECONNRESET); a later
 * call connects again, with backoff, and statements are prepared again
 * lazily: each remembers the connection generation it was prepared in.
 *
 * Pipelining (writers): inside a transaction, execute() only sends the
 * statement; its outcome is read at the next call that needs a result
 * (step, exec, begin_write, in_transaction, size), one round trip for many
 * statements. An error found there is "sticky": every later call reports
 * it until ROLLBACK or ROLLBACK TO undoes the statements that caused it,
 * so that a caller that ignores the result of one call (a RELEASE, say)
 * cannot commit a batch that was stored only in part. */
#include <errno.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "db/postgresql/db-postgresql.h"
#include "db/db.h"
#include "macro.h"
#include "db/postgresql/placeholders.h"
#include "db/postgresql/sqlstate.h"

#define RECONNECT_FIRST_MS 100
#define RECONNECT_MAX_MS 5000
/* Deferred statements before execute() reads their results anyway: bounds
 * the results libpq buffers and how late an error is noticed. */
#define PIPELINE_MAX 1024
#define CONNECT_TIMEOUT_S "10"

/* The types of pg_type.h whose binary form the binding writes (that header
 * is the server's, not libpq's; these numbers are fixed). */
#define PG_INT8OID 20
#define PG_INT2OID 21
#define PG_INT4OID 23
#define PG_FLOAT8OID 701

/* A statement sent in the pipeline whose result is not read yet. */
typedef struct Deferred {
        int64_t min_changes;
        char what[64]; /* the start of its SQL, for the message */
} Deferred;

typedef struct PgConn {
        DbConn base;
        PGconn *pg; /* NULL while disconnected */
        char *location;
        bool writer;
        bool pipelining;
        unsigned lock_timeout_ms;

        /* Bumped by every connect: statements prepared in an older one are
         * prepared again. */
        uint64_t generation;
        uint64_t statements;

        /* After a failed connect (at failed_at): no new attempt before
         * retry_at, unless another connection got through since. */
        uint64_t failed_at_ms, retry_at_ms;
        unsigned backoff_ms;
        /* The server went away inside a transaction: calls fail until the
         * caller has seen the transaction end (in_transaction, ROLLBACK,
         * COMMIT, BEGIN), so that what it runs next never lands, without a
         * transaction, on a new connection. */
        bool tx_lost;

        Deferred *deferred;
        size_t n_deferred, n_allocated;
        int deferred_error;
        char deferred_msg[768];

        char connect_error[512];
        char errmsg[768];
} PgConn;

typedef struct PgStmt {
        DbStmt base;
        char *sql;
        bool persistent;
        char name[32];
        uint64_t prepared_generation; /* 0: not prepared */
        unsigned n_params;
        const char **values;
        int *lengths, *formats; /* of blobs and binary numbers; text elsewhere (format 0) */
        char (*numbuf)[32];
        /* Each parameter's type as the server inferred it, once it is
         * known (NULL before): integers and doubles bound to a parameter of
         * their own type travel in binary, which neither side has to print
         * or parse. */
        Oid *types;

        PGresult *result;
        int row;
        bool done;
        int64_t changes;
        unsigned char *blob;    /* the last column_blob, unescaped (PQfreemem) */
} PgStmt;

static _Thread_local char connect_error[512];

/* When a connection of this process last got through to a server: one
 * waiting out its backoff tries again at once, so that the writer is not
 * seconds behind the readers (and /healthz) after a restart. */
static _Atomic uint64_t connected_at_ms;

const char *db_postgresql_connect_error(void) {
        return connect_error;
}

static uint64_t now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

/* libpq's messages end in a newline and may hold more lines (DETAIL,
 * HINT, a caret under the query); the log wants one. */
static void one_line(char *s) {
        size_t n;

        for (char *p = s; *p; p++)
                if (*p == '\n' || *p == '\r' || *p == '\t')
                        *p = ' ';
        n = strlen(s);
        while (n > 0 && s[n - 1] == ' ')
                s[--n] = '\0';
}

_printf_(3, 4) static int set_errmsg(PgConn *c, int r, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(c->errmsg, sizeof(c->errmsg), fmt, ap);
        va_end(ap);
        one_line(c->errmsg);
        if (r < 0)
                db_error_note("%s", c->errmsg);
        return r;
}

/* The primary message and, when there is one, its detail (which names the
 * key a constraint refused). */
static void set_errmsg_result(PgConn *c, const PGresult *res, const char *what) {
        const char *primary = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
        const char *detail = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL) : NULL;
        const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

        if (!primary)
                primary = c->pg ? PQerrorMessage(c->pg) : "no connection";
        if (!primary || !*primary)
                primary = "unknown error";
        (void) set_errmsg(c, 0, "%s%s%s%s [%s]%s%.64s",
                          primary, detail ? " (" : "", detail ?: "", detail ? ")" : "",
                          state ?: "libpq", what ? " in: " : "", what ?: "");
        db_error_note("%s", c->errmsg);
}

static bool in_transaction_now(PgConn *c) {
        return c->pg && (PQpipelineStatus(c->pg) != PQ_PIPELINE_OFF ||
                         PQtransactionStatus(c->pg) != PQTRANS_IDLE);
}

static int conn_lost(PgConn *c, bool in_tx) {
        PQfinish(c->pg);
        c->pg = NULL;
        c->n_deferred = 0;
        c->deferred_error = 0;
        c->tx_lost = in_tx;
        /* The first attempt to come back is made at once: a restarted
         * server is usually there again. */
        c->retry_at_ms = 0;
        c->backoff_ms = 0;
        return -ECONNRESET;
}

/* The error of a failed command: res may be NULL (libpq's own failure). */
static int conn_fail(PgConn *c, const PGresult *res, bool in_tx, const char *what) {
        const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
        int r = pg_sqlstate_to_errno(state);

        set_errmsg_result(c, res, what);
        /* The server's errors all carry a SQLSTATE; one without is
         * libpq's own, mostly a connection that died under a command
         * ("server closed the connection unexpectedly"), which PQstatus()
         * may not say yet when a write failed: start afresh. */
        if (r == -ECONNRESET || !state || PQstatus(c->pg) == CONNECTION_BAD)
                return conn_lost(c, in_tx);
        return r;
}

static void ignore_notice(void *userdata, const char *message) {
        /* Warnings such as "there is no transaction in progress" would
         * otherwise go to stderr: library code does not print. */
}

static int conn_open(PgConn *c) {
        /* Later keywords override what the location says, earlier ones are
         * defaults it may override: a site can name its own
         * application_name or connect_timeout, but not the encoding the
         * storage code's text is in. */
        const char *keys[] = { "fallback_application_name", "connect_timeout", "dbname", "client_encoding", NULL };
        const char *values[] = { "lmk-store", CONNECT_TIMEOUT_S, c->location, "UTF8", NULL };
        char setup[256];
        PGconn *pg;
        PGresult *res;
        int r;

        pg = PQconnectdbParams(keys, values, 1);
        if (!pg) {
                snprintf(c->connect_error, sizeof(c->connect_error), "out of memory");
                return -ENOMEM;
        }
        if (PQstatus(pg) != CONNECTION_OK) {
                r = PQconnectionNeedsPassword(pg) ? -EACCES : -ECONNREFUSED;
                snprintf(c->connect_error, sizeof(c->connect_error), "%s", PQerrorMessage(pg));
                one_line(c->connect_error);
                PQfinish(pg);
                return r;
        }
        PQsetNoticeProcessor(pg, ignore_notice, NULL);

        /* Session settings, whatever the server's or the role's defaults:
         * ISO dates in UTC, doubles printed so that they read back
         * exactly, readers that cannot write, and SQLite's busy timeout as
         * the longest wait for a lock. */
        snprintf(setup, sizeof(setup),
                 "SET DateStyle = 'ISO, YMD'; SET extra_float_digits = 3; SET TimeZone = 'UTC'; "
                 "SET lock_timeout = %u;%s",
                 c->lock_timeout_ms, c->writer ? "" : " SET default_transaction_read_only = on;");
        res = PQexec(pg, setup);
        if (PQresultStatus(res) != PGRES_COMMAND_OK) {
                snprintf(c->connect_error, sizeof(c->connect_error), "setting up the session: %s",
                         res ? PQresultErrorMessage(res) : PQerrorMessage(pg));
                one_line(c->connect_error);
                r = pg_sqlstate_to_errno(res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL);
                PQclear(res);
                PQfinish(pg);
                return r == -ECONNRESET ? -ECONNREFUSED : r;
        }
        PQclear(res);

        c->pg = pg;
        c->generation++;
        c->connect_error[0] = '\0';
        return 0;
}

/* A connection to send on: the one there is, or a new one unless the last
 * attempt was too recent. */
static int conn_ready(PgConn *c) {
        uint64_t now;
        int r;

        if (c->tx_lost)
                return set_errmsg(c, -ECONNRESET,
                                  "the connection to PostgreSQL was lost in a transaction, which must be ended first");
        if (c->pg)
                return 0;

        now = now_ms();
        if (now < c->retry_at_ms && atomic_load_explicit(&connected_at_ms, memory_order_relaxed) <= c->failed_at_ms)
                return set_errmsg(c, -ECONNREFUSED, "not connected to PostgreSQL (next attempt in %" PRIu64 " ms): %s",
                                  c->retry_at_ms - now, c->connect_error);
        r = conn_open(c);
        if (r < 0) {
                c->backoff_ms = c->backoff_ms ? MIN(c->backoff_ms * 2, RECONNECT_MAX_MS) : RECONNECT_FIRST_MS;
                c->retry_at_ms = now + c->backoff_ms;
                c->failed_at_ms = now;
                return set_errmsg(c, r == -ENOMEM ? r : -ECONNREFUSED, "connecting to PostgreSQL: %s",
                                  c->connect_error);
        }
        c->backoff_ms = 0;
        atomic_store_explicit(&connected_at_ms, now, memory_order_relaxed);
        return 0;
}

static int sticky_error(PgConn *c) {
        return set_errmsg(c, c->deferred_error, "an earlier statement of this transaction failed: %s",
                          c->deferred_msg);
}

/* Reads the results of the deferred statements and leaves pipeline mode.
 * Returns the first error among them, which stays (sticky) until a
 * rollback. With want, one statement more was sent after the deferred ones
 * (pipeline_run()): its result, when all went well, is handed back there,
 * in the same round trip. */
static int pipeline_sync_want(PgConn *c, const char *want_sql, PGresult **want) {
        PGresult *res, *kept = NULL;
        int r = 0;

        if (!c->pg || PQpipelineStatus(c->pg) == PQ_PIPELINE_OFF)
                return c->deferred_error < 0 ? sticky_error(c) : 0;

        if (PQpipelineSync(c->pg) != 1) {
                set_errmsg_result(c, NULL, NULL);
                return conn_lost(c, true);
        }
        for (size_t i = 0; i < c->n_deferred; i++) {
                const Deferred *d = &c->deferred[i];

                /* Each statement's results end with NULL. After an error
                 * the rest of the pipeline is PGRES_PIPELINE_ABORTED. */
                while ((res = PQgetResult(c->pg))) {
                        ExecStatusType s = PQresultStatus(res);

                        if (r < 0 || s == PGRES_PIPELINE_ABORTED)
                                ;
                        else if (s == PGRES_FATAL_ERROR)
                                r = conn_fail(c, res, true, d->what);
                        else if (d->min_changes > 0 && (s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK) &&
                                 strtoll(PQcmdTuples(res), NULL, 10) < d->min_changes)
                                r = set_errmsg(c, -EOVERFLOW, "fewer rows than %" PRId64 " were changed by: %s",
                                               d->min_changes, d->what);
                        PQclear(res);
                        if (!c->pg) /* conn_fail() found it lost */
                                return r;
                }
        }
        c->n_deferred = 0;
        if (want)
                while ((res = PQgetResult(c->pg))) {
                        ExecStatusType s = PQresultStatus(res);

                        if (r < 0 || s == PGRES_PIPELINE_ABORTED || kept)
                                PQclear(res);
                        else if (s == PGRES_TUPLES_OK || s == PGRES_COMMAND_OK)
                                kept = res;
                        else {
                                r = conn_fail(c, res, true, want_sql);
                                PQclear(res);
                                if (!c->pg)
                                        return r;
                        }
                }

        res = PQgetResult(c->pg);
        if (PQresultStatus(res) != PGRES_PIPELINE_SYNC) {
                if (r == 0)
                        r = conn_fail(c, res, true, NULL);
                PQclear(res);
                if (!c->pg) {
                        PQclear(kept);
                        return r;
                }
        } else
                PQclear(res);

        if (PQexitPipelineMode(c->pg) != 1 || PQstatus(c->pg) == CONNECTION_BAD) {
                if (r == 0)
                        set_errmsg_result(c, NULL, NULL);
                PQclear(kept);
                return conn_lost(c, true);
        }

        if (r < 0 && c->deferred_error == 0) {
                c->deferred_error = r;
                snprintf(c->deferred_msg, sizeof(c->deferred_msg), "%s", c->errmsg);
        }
        /* An earlier send that failed (execute_deferred) counts too. */
        if (r == 0 && c->deferred_error < 0)
                r = sticky_error(c);
        if (r < 0 || !want)
                PQclear(kept);
        else
                *want = kept;
        return r;
}

static int pipeline_sync(PgConn *c) {
        return pipeline_sync_want(c, NULL, NULL);
}

static int pg_connect(const char *location, const StorageOptions *opts, bool writer, DbConn **ret) {
        _cleanup_free_ PgConn *c = NULL;
        const char *env;
        int r;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->base.driver = &db_postgresql_driver;
        c->writer = writer;
        c->lock_timeout_ms = opts ? opts->busy_timeout_ms : 0;
        env = getenv(DB_POSTGRESQL_PIPELINE_ENV);
        c->pipelining = writer && !(env && streq(env, "0"));
        c->location = strdup(location);
        if (!c->location)
                return -ENOMEM;

        r = conn_open(c);
        if (r < 0) {
                snprintf(connect_error, sizeof(connect_error), "%s", c->connect_error);
                free(c->location);
                return r;
        }
        connect_error[0] = '\0';
        *ret = &TAKE_PTR(c)->base;
        return 0;
}

static void pg_disconnect(DbConn *dc) {
        PgConn *c = (PgConn *) dc;

        if (!c)
                return;
        /* An open transaction, and anything still in the pipeline, is
         * rolled back by the server when the session ends. */
        PQfinish(c->pg);
        free(c->deferred);
        free(c->location);
        free(c);
}

enum {
        SQL_OTHER,
        SQL_BEGIN,
        SQL_COMMIT,
        SQL_ROLLBACK,
        SQL_ROLLBACK_TO,
};

static const char *skip_word(const char *p, const char *word) {
        size_t n = strlen(word);

        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
                p++;
        if (strncasecmp(p, word, n) != 0 || (p[n] && p[n] != ' ' && p[n] != '\t' && p[n] != '\n' &&
                                             p[n] != '\r' && p[n] != ';'))
                return NULL;
        return p + n;
}

/* What a statement given to exec() does to the transaction. */
static int classify(const char *sql) {
        const char *p;

        if (skip_word(sql, "BEGIN") || skip_word(sql, "START"))
                return SQL_BEGIN;
        if (skip_word(sql, "COMMIT") || skip_word(sql, "END"))
                return SQL_COMMIT;
        p = skip_word(sql, "ROLLBACK") ?: skip_word(sql, "ABORT");
        if (!p)
                return SQL_OTHER;
        p = skip_word(p, "WORK") ?: skip_word(p, "TRANSACTION") ?: p;
        return skip_word(p, "TO") ? SQL_ROLLBACK_TO : SQL_ROLLBACK;
}

static int pg_exec(DbConn *dc, const char *sql) {
        PgConn *c = (PgConn *) dc;
        int kind = classify(sql), r;
        bool in_tx, failed_tx;
        PGresult *res;
        ExecStatusType s;

        r = pipeline_sync(c);
        if (c->tx_lost) {
                /* The transaction ended with the connection: a rollback
                 * has nothing left to do, a commit cannot be done, and
                 * other statements would run outside it. */
                if (kind == SQL_ROLLBACK || kind == SQL_BEGIN || kind == SQL_COMMIT)
                        c->tx_lost = false;
                if (kind == SQL_ROLLBACK)
                        return 0;
                if (kind != SQL_BEGIN)
                        return r < 0 ? r : set_errmsg(c, -ECONNRESET,
                                                      "the connection to PostgreSQL was lost in a transaction");
        } else if (r < 0 && kind != SQL_ROLLBACK && kind != SQL_ROLLBACK_TO)
                /* A rollback goes ahead: it undoes the statements that
                 * failed. Anything else would build on them. */
                return r;

        for (unsigned tries = 1;; tries++) {
                r = conn_ready(c);
                if (r < 0)
                        return r;

                in_tx = in_transaction_now(c);
                failed_tx = PQtransactionStatus(c->pg) == PQTRANS_INERROR;
                res = PQexec(c->pg, sql);
                s = PQresultStatus(res);
                if (s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK || s == PGRES_EMPTY_QUERY)
                        break;
                r = conn_fail(c, res, in_tx, sql);
                PQclear(res);
                /* A connection found dead by the BEGIN that would have used
                 * it first since the server restarted (it sat idle
                 * meanwhile): nothing had started, so begin once more on a
                 * new one rather than fail the request. */
                if (r != -ECONNRESET || kind != SQL_BEGIN || in_tx || tries > 1)
                        return r;
        }
        PQclear(res);

        if (kind == SQL_ROLLBACK || kind == SQL_ROLLBACK_TO || kind == SQL_COMMIT)
                c->deferred_error = 0;
        /* COMMIT of a failed transaction succeeds as a ROLLBACK. */
        if (kind == SQL_COMMIT && failed_tx)
                return set_errmsg(c, -EIO, "the transaction had failed and was rolled back instead of committed");
        return 0;
}

/* The key of the advisory lock every writing transaction holds (the
 * migrations' is another). */
#define WRITE_LOCK_KEY "7813018771411003251"

static int pg_begin_write(DbConn *dc) {
        /* READ COMMITTED: the storage code's upserts take the row locks
         * they need, and never have to be retried for a serialization
         * failure. Maintenance (retention, settling jobs) runs alone, as
         * SQLite's BEGIN IMMEDIATE makes its writers do: it changes rows
         * of many jobs, in an order of its own. The wait is bounded by
         * lock_timeout (-EBUSY). */
        return pg_exec(dc, "BEGIN; SELECT pg_advisory_xact_lock(" WRITE_LOCK_KEY ")");
}

static int pg_begin_ingest(DbConn *dc) {
        /* Stores, and the writers of one store, store batches side by
         * side; each then locks its batches' nodes and jobs, and the site's
         * shared rows, in an order that cannot deadlock (statements.h,
         * SqlDialect.ingest_lock_keys). */
        return pg_exec(dc, "BEGIN; SELECT pg_advisory_xact_lock_shared(" WRITE_LOCK_KEY ")");
}

static bool pg_in_transaction(DbConn *dc) {
        PgConn *c = (PgConn *) dc;

        (void) pipeline_sync(c); /* an error stays and is reported by the next call */
        if (c->tx_lost) {
                c->tx_lost = false;
                return false;
        }
        return c->pg && PQtransactionStatus(c->pg) != PQTRANS_IDLE &&
               PQtransactionStatus(c->pg) != PQTRANS_UNKNOWN;
}

static void stmt_clear_blob(PgStmt *st) {
        PQfreemem(st->blob);
        st->blob = NULL;
}

static void stmt_clear_result(PgStmt *st) {
        stmt_clear_blob(st);
        PQclear(st->result);
        st->result = NULL;
        st->row = -1;
        st->done = false;
}

/* The types the server gave the parameters of a prepared statement. They
 * follow from its text and the schema, so they are asked for once, on the
 * first connection it is prepared on. Without them (a failed describe)
 * every value goes as text. */
static void stmt_learn_types(PgStmt *st) {
        PgConn *c = (PgConn *) st->base.conn;
        PGresult *res = PQdescribePrepared(c->pg, st->name);

        if (PQresultStatus(res) == PGRES_COMMAND_OK && PQnparams(res) == (int) st->n_params) {
                st->types = calloc(st->n_params, sizeof(*st->types));
                for (unsigned i = 0; st->types && i < st->n_params; i++)
                        st->types[i] = PQparamtype(res, (int) i);
        }
        PQclear(res);
}

static int stmt_prepare_on_server(PgStmt *st) {
        PgConn *c = (PgConn *) st->base.conn;
        bool in_tx = in_transaction_now(c);
        PGresult *res;
        int r = 0;

        res = PQprepare(c->pg, st->name, st->sql, (int) st->n_params, NULL);
        if (PQresultStatus(res) != PGRES_COMMAND_OK) {
                const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
                /* duplicate_prepared_statement: prepared after all, by a
                 * call whose answer was lost. */
                if (!state || !streq(state, "42P05"))
                        r = conn_fail(c, res, in_tx, st->sql);
        }
        PQclear(res);
        if (r < 0)
                return r;
        st->prepared_generation = c->generation;
        if (!st->types && st->n_params > 0)
                stmt_learn_types(st);
        return 0;
}

static int pg_prepare(DbConn *dc, const char *sql, bool persistent, DbStmt **ret) {
        PgConn *c = (PgConn *) dc;
        PgStmt *st;
        int r;

        st = calloc(1, sizeof(*st));
        if (!st)
                return -ENOMEM;
        st->base.conn = dc;
        st->persistent = persistent;
        st->row = -1;
        r = pg_rewrite_placeholders(sql, &st->sql, &st->n_params);
        if (r < 0) {
                free(st);
                return set_errmsg(c, r, "rewriting the parameters of: %.64s", sql);
        }
        if (st->n_params > 0) {
                st->values = calloc(st->n_params, sizeof(*st->values));
                st->lengths = calloc(st->n_params, sizeof(*st->lengths));
                st->formats = calloc(st->n_params, sizeof(*st->formats));
                st->numbuf = calloc(st->n_params, sizeof(*st->numbuf));
                if (!st->values || !st->lengths || !st->formats || !st->numbuf) {
                        r = -ENOMEM;
                        goto fail;
                }
        }
        if (persistent) {
                snprintf(st->name, sizeof(st->name), "lmk_%" PRIu64, ++c->statements);
                /* Prepared now when that is possible, so that a mistake in
                 * the SQL is reported here, as SQLite does; else (no
                 * connection, an aborted or pipelined transaction) at its
                 * first run. */
                if (c->pg && !c->tx_lost && c->deferred_error == 0 &&
                    PQpipelineStatus(c->pg) == PQ_PIPELINE_OFF &&
                    PQtransactionStatus(c->pg) != PQTRANS_INERROR) {
                        r = stmt_prepare_on_server(st);
                        if (r < 0)
                                goto fail;
                }
        }
        *ret = &st->base;
        return 0;

fail:
        free(st->values);
        free(st->lengths);
        free(st->formats);
        free(st->numbuf);
        free(st->sql);
        free(st);
        return r;
}

static void pg_finalize(DbStmt *dst) {
        PgStmt *st = (PgStmt *) dst;

        /* A persistent statement is not DEALLOCATEd: db.h keeps it for the
         * connection's life, so it is finalized only when the connection
         * closes, and the session's end frees it with all others. */
        stmt_clear_blob(st);
        PQclear(st->result);
        free(st->values);
        free(st->lengths);
        free(st->formats);
        free(st->numbuf);
        free(st->types);
        free(st->sql);
        free(st);
}

static void pg_reset(DbStmt *dst) {
        PgStmt *st = (PgStmt *) dst;

        stmt_clear_result(st);
        for (unsigned i = 0; i < st->n_params; i++) {
                st->values[i] = NULL;
                st->formats[i] = 0;
        }
}

static int bind_check(PgStmt *st, int i) {
        if (i < 1 || (unsigned) i > st->n_params)
                return set_errmsg((PgConn *) st->base.conn, -ERANGE, "parameter %d of %u bound in: %.64s", i,
                                  st->n_params, st->sql);
        return 0;
}

/* Parameter i as n bytes in network order: the binary form of int2, int4,
 * int8 and (the bits of) float8. */
static int bind_binary(PgStmt *st, int i, uint64_t v, unsigned n) {
        uint8_t *p = (uint8_t *) st->numbuf[i - 1];

        for (unsigned k = 0; k < n; k++)
                p[k] = (uint8_t) (v >> (8 * (n - 1 - k)));
        st->values[i - 1] = st->numbuf[i - 1];
        st->lengths[i - 1] = (int) n;
        st->formats[i - 1] = 1;
        return 0;
}

/* Parameter i as a number in text: the server converts it, or says why it
 * cannot (out of range for its column). */
_printf_(3, 4)
static int bind_number_text(PgStmt *st, int i, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(st->numbuf[i - 1], sizeof(st->numbuf[i - 1]), fmt, ap);
        va_end(ap);
        st->values[i - 1] = st->numbuf[i - 1];
        st->formats[i - 1] = 0;
        return 0;
}

static int pg_bind_int(DbStmt *dst, int i, int64_t v) {
        PgStmt *st = (PgStmt *) dst;
        int r = bind_check(st, i);

        if (r < 0)
                return r;
        switch (st->types ? st->types[i - 1] : 0) {
        case PG_INT8OID:
                return bind_binary(st, i, (uint64_t) v, 8);
        case PG_INT4OID:
                if (v >= INT32_MIN && v <= INT32_MAX)
                        return bind_binary(st, i, (uint64_t) v, 4);
                break;
        case PG_INT2OID:
                if (v >= INT16_MIN && v <= INT16_MAX)
                        return bind_binary(st, i, (uint64_t) v, 2);
                break;
        }
        return bind_number_text(st, i, "%" PRId64, v);
}

static int pg_bind_double(DbStmt *dst, int i, double v) {
        PgStmt *st = (PgStmt *) dst;
        int r = bind_check(st, i);
        uint64_t bits;

        if (r < 0)
                return r;
        if (st->types && st->types[i - 1] == PG_FLOAT8OID) {
                memcpy(&bits, &v, sizeof(bits));
                return bind_binary(st, i, bits, 8);
        }
        /* %.17g round-trips every double; the special values in the
         * spelling float8in documents. */
        if (isnan(v))
                return bind_number_text(st, i, "NaN");
        if (isinf(v))
                return bind_number_text(st, i, "%sInfinity", v < 0 ? "-" : "");
        return bind_number_text(st, i, "%.17g", v);
}

static int pg_bind_text(DbStmt *dst, int i, const char *v) {
        PgStmt *st = (PgStmt *) dst;
        int r = bind_check(st, i);

        if (r < 0)
                return r;
        st->values[i - 1] = v;
        st->formats[i - 1] = 0;
        return 0;
}

/* libpq reads a parameter without a value as SQL NULL. */
static int pg_bind_null(DbStmt *dst, int i) {
        return pg_bind_text(dst, i, NULL);
}

static int pg_bind_blob(DbStmt *dst, int i, const void *v, size_t n) {
        PgStmt *st = (PgStmt *) dst;
        int r = bind_check(st, i);

        if (r < 0)
                return r;
        if (n > INT_MAX)
                return set_errmsg((PgConn *) st->base.conn, -E2BIG, "a blob of %zu bytes for: %.64s", n, st->sql);
        /* libpq takes a non-NULL value for a binary one, even when empty */
        st->values[i - 1] = n > 0 ? v : "";
        st->lengths[i - 1] = (int) n;
        st->formats[i - 1] = 1;
        return 0;
}

/* Makes sure the connection is there and the statement prepared on it,
 * outside pipeline mode. */
static int stmt_ready(PgStmt *st) {
        PgConn *c = (PgConn *) st->base.conn;
        int r;

        r = pipeline_sync(c);
        if (r < 0)
                return r;
        r = conn_ready(c);
        if (r < 0)
                return r;
        if (st->persistent && st->prepared_generation != c->generation)
                return stmt_prepare_on_server(st);
        return 0;
}

/* A reader's connection found dead by its first use since the server
 * restarted (it sat idle meanwhile): a read outside a transaction is run
 * once more, on a new connection, rather than failing the request. */
static bool retry_read(const PgConn *c, int r, unsigned tries) {
        return r == -ECONNRESET && !c->writer && !c->tx_lost && tries == 1;
}

/* Whether execute() may only send st: on a pipelining writer, inside a
 * transaction, where nothing is wrong yet. */
static bool may_defer(PgStmt *st) {
        PgConn *c = (PgConn *) st->base.conn;

        if (!c->pipelining || !c->pg || c->tx_lost || c->deferred_error < 0)
                return false;
        if (PQpipelineStatus(c->pg) == PQ_PIPELINE_ON)
                return true;
        return PQpipelineStatus(c->pg) == PQ_PIPELINE_OFF && PQtransactionStatus(c->pg) == PQTRANS_INTRANS;
}

/* Sends st into the pipeline, its bindings as they are. */
static int pipeline_send(PgStmt *st) {
        PgConn *c = (PgConn *) st->base.conn;
        int ok;

        stmt_clear_result(st);
        if (st->persistent)
                ok = PQsendQueryPrepared(c->pg, st->name, (int) st->n_params, st->values, st->lengths, st->formats,
                                         0);
        else
                ok = PQsendQueryParams(c->pg, st->sql, (int) st->n_params, NULL, st->values, st->lengths,
                                       st->formats, 0);
        if (ok == 1)
                return 0;
        set_errmsg_result(c, NULL, st->sql);
        if (PQstatus(c->pg) == CONNECTION_BAD)
                return conn_lost(c, true);
        /* Not sent, so not in libpq's queue: what was sent before is still
         * read in order. */
        c->deferred_error = -EIO;
        snprintf(c->deferred_msg, sizeof(c->deferred_msg), "%s", c->errmsg);
        return -EIO;
}

/* Whether a statement whose answer is wanted can follow the deferred
 * statements into their pipeline: one round trip for all of them, where
 * reading theirs first and then running it took two. */
static bool may_pipeline(PgStmt *st) {
        PgConn *c = (PgConn *) st->base.conn;

        return may_defer(st) && PQpipelineStatus(c->pg) == PQ_PIPELINE_ON &&
               (!st->persistent || st->prepared_generation == c->generation);
}

static int pipeline_run(PgStmt *st, PGresult **ret) {
        PgConn *c = (PgConn *) st->base.conn;
        PGresult *res = NULL;
        int r;

        r = pipeline_send(st);
        if (r < 0)
                return r;
        r = pipeline_sync_want(c, st->sql, &res);
        if (r < 0)
                return r;
        if (!res)
                return set_errmsg(c, -EIO, "no result from PostgreSQL for: %.64s", st->sql);
        st->changes = strtoll(PQcmdTuples(res), NULL, 10);
        *ret = res;
        return 0;
}

/* Runs the statement and waits for its result. */
static int stmt_run(PgStmt *st, PGresult **ret) {
        PgConn *c = (PgConn *) st->base.conn;
        PGresult *res;
        ExecStatusType s;
        bool in_tx;
        int r;

        stmt_clear_result(st);
        if (may_pipeline(st))
                return pipeline_run(st, ret);
        for (unsigned tries = 1;; tries++) {
                r = stmt_ready(st);
                if (r < 0) {
                        if (retry_read(c, r, tries))
                                continue;
                        return r;
                }

                in_tx = in_transaction_now(c);
                if (st->persistent)
                        res = PQexecPrepared(c->pg, st->name, (int) st->n_params, st->values, st->lengths,
                                             st->formats, 0);
                else
                        res = PQexecParams(c->pg, st->sql, (int) st->n_params, NULL, st->values, st->lengths,
                                           st->formats, 0);
                s = PQresultStatus(res);
                if (s == PGRES_TUPLES_OK || s == PGRES_COMMAND_OK)
                        break;
                r = conn_fail(c, res, in_tx, st->sql);
                PQclear(res);
                if (!retry_read(c, r, tries))
                        return r;
        }
        st->changes = strtoll(PQcmdTuples(res), NULL, 10);
        *ret = res;
        return 0;
}

static int pg_step(DbStmt *dst) {
        PgStmt *st = (PgStmt *) dst;
        int r;

        /* As SQLite: a step after the last row runs the statement again. */
        if (!st->result || st->done) {
                PGresult *res;

                r = stmt_run(st, &res);
                if (r < 0)
                        return r;
                st->result = res;
        }
        stmt_clear_blob(st);
        if (++st->row < PQntuples(st->result))
                return 1;
        st->done = true;
        return 0;
}

static int execute_deferred(PgStmt *st, int64_t min_changes) {
        PgConn *c = (PgConn *) st->base.conn;
        Deferred *d;
        int r;

        /* Preparing needs an answer: done outside the pipeline, once per
         * statement and connection. */
        if (st->persistent && st->prepared_generation != c->generation) {
                r = stmt_ready(st);
                if (r < 0)
                        return r;
                if (!may_defer(st))
                        return 1;
        }

        if (c->n_deferred == c->n_allocated) {
                size_t n = MAX(c->n_allocated * 2, (size_t) 64);
                Deferred *p = reallocarray(c->deferred, n, sizeof(*p));
                if (!p)
                        return set_errmsg(c, -ENOMEM, "out of memory");
                c->deferred = p;
                c->n_allocated = n;
        }
        if (PQpipelineStatus(c->pg) == PQ_PIPELINE_OFF && PQenterPipelineMode(c->pg) != 1)
                return 1;

        r = pipeline_send(st);
        if (r < 0)
                return r;

        d = &c->deferred[c->n_deferred++];
        d->min_changes = min_changes;
        snprintf(d->what, sizeof(d->what), "%s", st->sql);
        /* Not known until the result is read. */
        st->changes = 0;

        if (c->n_deferred >= PIPELINE_MAX)
                return pipeline_sync(c);
        return 0;
}

static int pg_execute(DbStmt *dst, int64_t min_changes) {
        PgStmt *st = (PgStmt *) dst;
        PgConn *c = (PgConn *) st->base.conn;
        PGresult *res;
        int r;

        if (may_defer(st)) {
                r = execute_deferred(st, min_changes);
                if (r <= 0)
                        return r;
                /* r > 0: it could not be pipelined after all; run it now. */
        }

        r = stmt_run(st, &res);
        if (r < 0)
                return r;
        PQclear(res);
        if (min_changes > 0 && st->changes < min_changes)
                return set_errmsg(c, -EOVERFLOW, "fewer rows than %" PRId64 " were changed by: %.64s", min_changes,
                                  st->sql);
        return 0;
}

static void pg_set_deferring(DbConn *dc, bool on) {
        PgConn *c = (PgConn *) dc;
        const char *env = getenv(DB_POSTGRESQL_PIPELINE_ENV);

        c->pipelining = on && c->writer && !(env && streq(env, "0"));
}

static int64_t pg_changes(DbStmt *dst) {
        return ((PgStmt *) dst)->changes;
}

/* The value at column i of the current row, or NULL. */
static const char *value_at(PgStmt *st, int i) {
        if (!st->result || st->row < 0 || st->row >= PQntuples(st->result) || i < 0 ||
            i >= PQnfields(st->result) || PQgetisnull(st->result, st->row, i))
                return NULL;
        return PQgetvalue(st->result, st->row, i);
}

static bool pg_column_null(DbStmt *dst, int i) {
        return !value_at((PgStmt *) dst, i);
}

static int64_t pg_column_int(DbStmt *dst, int i) {
        const char *s = value_at((PgStmt *) dst, i);
        char *end;
        long long v;
        double d;

        if (!s)
                return 0;
        /* Booleans (what a comparison gives) as SQLite has them. */
        if (streq(s, "t"))
                return 1;
        if (streq(s, "f"))
                return 0;
        errno = 0;
        v = strtoll(s, &end, 10);
        if (errno == 0 && end != s && *end == '\0')
                return v;
        /* A numeric or double where an integer was expected (an average,
         * a sum past int64): truncated and clamped, as SQLite converts. */
        d = strtod(s, &end);
        if (end == s || isnan(d))
                return 0;
        if (d >= 9223372036854775808.0)
                return INT64_MAX;
        if (d < -9223372036854775808.0)
                return INT64_MIN;
        return (int64_t) d;
}

static double pg_column_double(DbStmt *dst, int i) {
        const char *s = value_at((PgStmt *) dst, i);

        /* strtod reads float8out's "NaN", "Infinity" and "-Infinity" too. */
        return s ? strtod(s, NULL) : 0.0;
}

static const char *pg_column_text(DbStmt *dst, int i) {
        return value_at((PgStmt *) dst, i);
}

/* Text results hold a BYTEA as bytea_output writes it (hex after \x). */
static const void *pg_column_blob(DbStmt *dst, int i, size_t *ret_len) {
        PgStmt *st = (PgStmt *) dst;
        const char *s = value_at(st, i);
        size_t n = 0;

        stmt_clear_blob(st);
        if (s)
                st->blob = PQunescapeBytea((const unsigned char *) s, &n);
        *ret_len = st->blob ? n : 0;
        return st->blob;
}

static const char *pg_errmsg(DbConn *dc) {
        return ((PgConn *) dc)->errmsg;
}

static int pg_size(DbConn *dc, uint64_t *ret) {
        PgConn *c = (PgConn *) dc;
        PGresult *res;
        bool in_tx;
        char *end;
        unsigned long long v;
        int r;

        r = pipeline_sync(c);
        if (r < 0)
                return r;
        r = conn_ready(c);
        if (r < 0)
                return r;
        in_tx = in_transaction_now(c);
        res = PQexec(c->pg, "SELECT pg_database_size(current_database())");
        if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
                r = conn_fail(c, res, in_tx, "pg_database_size");
                PQclear(res);
                return r;
        }
        errno = 0;
        v = strtoull(PQgetvalue(res, 0, 0), &end, 10);
        r = errno != 0 || *end ? -EPROTO : 0;
        PQclear(res);
        if (r < 0)
                return set_errmsg(c, r, "pg_database_size() gave no number");
        *ret = v;
        return 0;
}

const DbDriver db_postgresql_driver = {
        .name = "postgresql",
        .dialect = DB_DIALECT_POSTGRESQL,
        .connect = pg_connect,
        .disconnect = pg_disconnect,
        .exec = pg_exec,
        .begin_write = pg_begin_write,
        .begin_ingest = pg_begin_ingest,
        .in_transaction = pg_in_transaction,
        .prepare = pg_prepare,
        .finalize = pg_finalize,
        .reset = pg_reset,
        .bind_null = pg_bind_null,
        .bind_int = pg_bind_int,
        .bind_double = pg_bind_double,
        .bind_text = pg_bind_text,
        .bind_blob = pg_bind_blob,
        .step = pg_step,
        .execute = pg_execute,
        .set_deferring = pg_set_deferring,
        .changes = pg_changes,
        .column_null = pg_column_null,
        .column_int = pg_column_int,
        .column_double = pg_column_double,
        .column_text = pg_column_text,
        .column_blob = pg_column_blob,
        .errmsg = pg_errmsg,
        .size = pg_size,
};
