/* SPDX-License-Identifier: GPL-2.0-or-later */
/* db_postgresql_driver against a real server: started by
 * test-db-postgresql.py, which passes its URI and keyword string in
 * LMK_TEST_PG_URI / LMK_TEST_PG_DSN and restarts it when asked through the
 * pipe in LMK_TEST_PG_CONTROL ("WRITE_FD READ_FD"). */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "db/postgresql/db-postgresql.h"
#include "db/db.h"
#include "migrations.h"
#include "tests.h"

static const char *uri, *dsn;
static int control_w = -1, control_r = -1;

/* Asks the launcher to "restart", "halt" or "resume" the server and waits
 * until it has. */
static void server(const char *what) {
        char cmd[32], reply[8] = "";
        ssize_t n;

        snprintf(cmd, sizeof(cmd), "%s\n", what);
        ASSERT_EQ(write(control_w, cmd, strlen(cmd)), (ssize_t) strlen(cmd));
        n = read(control_r, reply, sizeof(reply) - 1);
        ASSERT_TRUE(n > 0);
        ASSERT_STREQ(reply, "ok\n");
}

static void sleep_ms(unsigned ms) {
        struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long) (ms % 1000) * 1000000 };
        nanosleep(&ts, NULL);
}

static DbConn *connect_as(const char *location, bool writer, bool pipeline) {
        StorageOptions opts = { .readers = 1, .busy_timeout_ms = 0 };
        DbConn *c = NULL;

        setenv(DB_POSTGRESQL_PIPELINE_ENV, pipeline ? "1" : "0", 1);
        if (db_postgresql_driver.connect(location, &opts, writer, &c) < 0)
                test_fail("connecting to %s: %s", location, db_postgresql_connect_error());
        return c;
}

#define EXEC_OK(c, sql)                                                                         \
        do {                                                                                    \
                int _r = db_exec((c), (sql));                                                  \
                if (_r < 0)                                                                     \
                        test_fail("%s: %s (%s)", (sql), strerror(-_r), db_errmsg(c));          \
        } while (0)

/* The one integer a query gives. */
static int64_t query_int(DbConn *c, const char *sql) {
        DbStmt *st;
        int64_t v;
        int r;

        ASSERT_OK(db_prepare(c, sql, false, &st));
        r = db_step(st);
        if (r != 1)
                test_fail("%s: step gave %d (%s)", sql, r, db_errmsg(c));
        v = db_column_int(st, 0);
        ASSERT_EQ(db_step(st), 0);
        db_finalize(st);
        return v;
}

TEST(connect_failure) {
        StorageOptions opts = { .readers = 1 };
        DbConn *c = NULL;
        char bad[1024];

        snprintf(bad, sizeof(bad), "%s dbname=nosuchdb", dsn);
        ASSERT_ERROR(db_postgresql_driver.connect(bad, &opts, true, &c), ECONNREFUSED);
        ASSERT_NULL(c);
        ASSERT_TRUE(strstr(db_postgresql_connect_error(), "nosuchdb") != NULL);
}

TEST(migrations) {
        /* What lmk-store will do: each embedded file in a transaction. */
        DbConn *c = connect_as(uri, true, true);

        ASSERT_EQ(schema_postgresql_migrations_count, schema_migrations_count);
        for (unsigned i = 0; i < schema_postgresql_migrations_count; i++) {
                ASSERT_EQ(schema_postgresql_migrations[i].version, i + 1);
                ASSERT_STREQ(schema_postgresql_migrations[i].name, schema_migrations[i].name);
                ASSERT_OK(db_begin_write(c));
                EXEC_OK(c, schema_postgresql_migrations[i].sql);
                EXEC_OK(c, "COMMIT");
        }
        ASSERT_EQ(query_int(c, "SELECT count(*) FROM pg_tables WHERE tablename IN ('jobs', 'samples')"), 2);

        uint64_t size = 0;
        ASSERT_OK(db_postgresql_driver.size(c, &size));
        ASSERT_TRUE(size > 1000000);
        db_postgresql_driver.disconnect(c);
}

TEST(placeholders) {
        DbConn *c = connect_as(uri, true, false);
        DbStmt *st;

        ASSERT_OK(db_prepare(c,
                             "SELECT CAST(? AS text) AS \"a?\", '?''?' AS q, -- what? nothing\n"
                             " CAST(? AS bigint) /* ? */, $$?$$",
                             true, &st));
        ASSERT_OK(db_bind_text(st, 1, "x"));
        ASSERT_OK(db_bind_int(st, 2, 42));
        ASSERT_ERROR(db_bind_int(st, 3, 1), ERANGE);
        ASSERT_ERROR(db_bind_int(st, 0, 1), ERANGE);
        ASSERT_EQ(db_step(st), 1);
        ASSERT_STREQ(db_column_text(st, 0), "x");
        ASSERT_STREQ(db_column_text(st, 1), "?'?");
        ASSERT_EQ(db_column_int(st, 2), 42);
        ASSERT_STREQ(db_column_text(st, 3), "?");
        ASSERT_EQ(db_step(st), 0);
        db_finalize(st);

        /* A mistake in persistent SQL is reported by prepare, as SQLite does. */
        ASSERT_ERROR(db_prepare(c, "SELEC 1", true, &st), EIO);
        ASSERT_TRUE(strstr(db_errmsg(c), "syntax error") != NULL);
        db_postgresql_driver.disconnect(c);
}

TEST(values) {
        static const int64_t ints[] = { INT64_MIN, -1, 0, 1, (INT64_C(1) << 53) + 1, INT64_MAX };
        static const double doubles[] = { 0.0, -0.0, 0.1, 1.0 / 3.0, 1e-300, -1e300, 5e-324, DBL_MAX,
                                          9007199254740993.0, INFINITY, -INFINITY };
        static const char *texts[] = { "", "plain", "Grüße, 東京 🙂", "quote ' and \" and \\ and ?" };
        DbConn *c = connect_as(uri, true, false);
        DbStmt *ins, *sel;
        int n = 0;

        EXEC_OK(c, "CREATE TABLE vals (n bigint PRIMARY KEY, i bigint, d double precision, s text)");
        ASSERT_OK(db_prepare(c, "INSERT INTO vals (n, i, d, s) VALUES (?, ?, ?, ?)", true, &ins));
        for (size_t k = 0; k < ELEMENTSOF(ints); k++) {
                ASSERT_OK(db_bind_int(ins, 1, n++));
                ASSERT_OK(db_bind_int(ins, 2, ints[k]));
                ASSERT_OK(db_execute(ins, 1));
                db_reset(ins);
        }
        for (size_t k = 0; k < ELEMENTSOF(doubles); k++) {
                ASSERT_OK(db_bind_int(ins, 1, n++));
                ASSERT_OK(db_bind_double(ins, 3, doubles[k]));
                ASSERT_OK(db_execute(ins, 1));
                db_reset(ins);
        }
        for (size_t k = 0; k < ELEMENTSOF(texts); k++) {
                ASSERT_OK(db_bind_int(ins, 1, n++));
                ASSERT_OK(db_bind_text(ins, 4, texts[k]));
                ASSERT_OK(db_execute(ins, 1));
                db_reset(ins);
        }
        ASSERT_OK(db_bind_int(ins, 1, n++));
        ASSERT_OK(db_bind_double(ins, 3, NAN));
        ASSERT_OK(db_bind_null(ins, 4));
        ASSERT_OK(db_execute(ins, 1));
        db_finalize(ins);

        /* Several rows, read back exactly. */
        ASSERT_OK(db_prepare(c, "SELECT n, i, d, s FROM vals ORDER BY n", true, &sel));
        n = 0;
        for (size_t k = 0; k < ELEMENTSOF(ints); k++, n++) {
                ASSERT_EQ(db_step(sel), 1);
                ASSERT_EQ(db_column_int(sel, 0), n);
                ASSERT_FALSE(db_column_null(sel, 1));
                ASSERT_TRUE(db_column_int(sel, 1) == ints[k]);
                ASSERT_TRUE(db_column_null(sel, 2));
                ASSERT_TRUE(db_column_null(sel, 3));
                ASSERT_NULL(db_column_text(sel, 3));
        }
        for (size_t k = 0; k < ELEMENTSOF(doubles); k++, n++) {
                double d;
                ASSERT_EQ(db_step(sel), 1);
                d = db_column_double(sel, 2);
                if (memcmp(&d, &doubles[k], sizeof(d)) != 0)
                        test_fail("double %zu: %.17g came back as %.17g (\"%s\")", k, doubles[k], d,
                                  db_column_text(sel, 2));
        }
        for (size_t k = 0; k < ELEMENTSOF(texts); k++, n++) {
                ASSERT_EQ(db_step(sel), 1);
                ASSERT_STREQ(db_column_text(sel, 3), texts[k]);
        }
        ASSERT_EQ(db_step(sel), 1);
        ASSERT_TRUE(isnan(db_column_double(sel, 2)));
        ASSERT_TRUE(db_column_null(sel, 3));
        ASSERT_EQ(db_step(sel), 0);
        /* A step after the end runs it again, as SQLite's does. */
        ASSERT_EQ(db_step(sel), 1);
        ASSERT_EQ(db_column_int(sel, 0), 0);
        db_finalize(sel);

        /* Integers that arrive as numeric or double. */
        ASSERT_EQ(query_int(c, "SELECT sum(i) FROM vals WHERE i > 0 AND i < 10000"), 1);
        ASSERT_EQ(query_int(c, "SELECT 1.5e3::float8"), 1500);
        ASSERT_EQ(query_int(c, "SELECT 123::numeric"), 123);
        ASSERT_EQ(query_int(c, "SELECT 1e30::numeric"), INT64_MAX);
        ASSERT_EQ(query_int(c, "SELECT 2 > 1"), 1);

        /* changes: rows an UPDATE touched. */
        ASSERT_OK(db_prepare(c, "UPDATE vals SET s = 'u' WHERE n < ?", false, &sel));
        ASSERT_OK(db_bind_int(sel, 1, 3));
        ASSERT_EQ(db_step(sel), 0);
        ASSERT_EQ(db_changes(sel), 3);
        db_finalize(sel);

        /* A value out of range for the type the server inferred. */
        ASSERT_OK(db_prepare(c, "SELECT CAST(? AS integer)", false, &sel));
        ASSERT_OK(db_bind_int(sel, 1, INT64_C(1) << 40));
        ASSERT_ERROR(db_step(sel), EOVERFLOW);
        db_finalize(sel);

        EXEC_OK(c, "DROP TABLE vals");
        db_postgresql_driver.disconnect(c);
}

#define UPSERT "INSERT INTO sums AS t (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = t.v + excluded.v " \
               "WHERE t.v <= 9223372036854775807 - excluded.v"

static int upsert(DbStmt *st, int64_t k, int64_t v) {
        int r;

        ASSERT_OK(db_bind_int(st, 1, k));
        ASSERT_OK(db_bind_int(st, 2, v));
        r = db_execute(st, 1);
        db_reset(st);
        return r;
}

/* Synchronous execute: the error comes from the call itself. */
TEST(execute_sync) {
        DbConn *c = connect_as(uri, true, false);
        DbStmt *st, *ins;

        EXEC_OK(c, "CREATE TABLE sums (k bigint PRIMARY KEY, v bigint NOT NULL)");
        ASSERT_OK(db_prepare(c, UPSERT, true, &st));
        ASSERT_OK(upsert(st, 1, INT64_MAX - 1));
        ASSERT_OK(upsert(st, 1, 1));
        ASSERT_ERROR(upsert(st, 1, 1), EOVERFLOW);
        ASSERT_EQ(query_int(c, "SELECT v FROM sums WHERE k = 1"), INT64_MAX);

        ASSERT_OK(db_prepare(c, "INSERT INTO sums (k, v) VALUES (?, ?)", true, &ins));
        ASSERT_OK(db_bind_int(ins, 1, 1));
        ASSERT_OK(db_bind_int(ins, 2, 5));
        ASSERT_ERROR(db_execute(ins, 0), EEXIST);
        ASSERT_TRUE(strstr(db_errmsg(c), "sums_pkey") != NULL);
        db_finalize(ins);
        db_finalize(st);
        EXEC_OK(c, "DROP TABLE sums");
        db_postgresql_driver.disconnect(c);
}

TEST(pipeline) {
        DbConn *c = connect_as(uri, true, true);
        DbStmt *st, *ins, *cnt;

        EXEC_OK(c, "CREATE TABLE sums (k bigint PRIMARY KEY, v bigint NOT NULL)");
        ASSERT_OK(db_prepare(c, UPSERT, true, &st));
        ASSERT_OK(db_prepare(c, "INSERT INTO sums (k, v) VALUES (?, ?)", true, &ins));
        ASSERT_OK(db_prepare(c, "SELECT count(*), coalesce(sum(v), 0) FROM sums", true, &cnt));

        /* Outside a transaction execute() runs at once. */
        ASSERT_OK(db_bind_int(ins, 1, 100));
        ASSERT_OK(db_bind_int(ins, 2, 1));
        ASSERT_OK(db_execute(ins, 0));
        db_reset(ins);
        ASSERT_OK(db_bind_int(ins, 1, 100));
        ASSERT_OK(db_bind_int(ins, 2, 1));
        ASSERT_ERROR(db_execute(ins, 0), EEXIST);
        db_reset(ins);

        /* A batch whose fourth statement fails: the three before and the
         * two after are only sent, the error comes at the next call that
         * waits for the server, and stays until the rollback. */
        ASSERT_OK(db_begin_write(c));
        EXEC_OK(c, "SAVEPOINT batch");
        for (int k = 1; k <= 3; k++)
                ASSERT_OK(upsert(st, k, 10));
        ASSERT_OK(db_bind_int(ins, 1, 100));
        ASSERT_OK(db_bind_int(ins, 2, 1));
        ASSERT_OK(db_execute(ins, 0)); /* duplicate key, not known yet */
        db_reset(ins);
        for (int k = 4; k <= 5; k++)
                ASSERT_OK(upsert(st, k, 10));
        ASSERT_ERROR(db_exec(c, "RELEASE batch"), EEXIST);
        ASSERT_TRUE(strstr(db_errmsg(c), "INSERT INTO sums") != NULL);
        /* Sticky: nothing builds on the failed batch. */
        ASSERT_ERROR(upsert(st, 6, 10), EEXIST);
        ASSERT_ERROR(db_step(cnt), EEXIST);
        ASSERT_ERROR(db_exec(c, "RELEASE batch"), EEXIST);
        ASSERT_ERROR(db_exec(c, "COMMIT"), EEXIST);
        ASSERT_TRUE(db_in_transaction(c));
        EXEC_OK(c, "ROLLBACK TO batch");
        EXEC_OK(c, "RELEASE batch");

        /* The next batch of the same transaction is stored. */
        EXEC_OK(c, "SAVEPOINT batch");
        for (int k = 1; k <= 3; k++)
                ASSERT_OK(upsert(st, k, 7));
        /* A step sees what was sent before it. */
        ASSERT_EQ(db_step(cnt), 1);
        ASSERT_EQ(db_column_int(cnt, 0), 4);
        ASSERT_EQ(db_column_int(cnt, 1), 22);
        db_reset(cnt);
        EXEC_OK(c, "RELEASE batch");
        EXEC_OK(c, "COMMIT");
        ASSERT_FALSE(db_in_transaction(c));
        ASSERT_EQ(query_int(c, "SELECT sum(v) FROM sums"), 22);

        /* A guarded sum refused in the pipeline: no server error, but the
         * commit must not happen. */
        ASSERT_OK(upsert(st, 50, INT64_MAX));
        ASSERT_OK(db_begin_write(c));
        ASSERT_OK(upsert(st, 51, 1));
        ASSERT_OK(upsert(st, 50, 1));
        ASSERT_OK(upsert(st, 52, 1));
        ASSERT_ERROR(db_exec(c, "COMMIT"), EOVERFLOW);
        ASSERT_TRUE(db_in_transaction(c));
        EXEC_OK(c, "ROLLBACK");
        ASSERT_FALSE(db_in_transaction(c));
        ASSERT_EQ(query_int(c, "SELECT count(*) FROM sums WHERE k IN (51, 52)"), 0);

        /* in_transaction syncs too; the error waits for the next call. */
        ASSERT_OK(db_begin_write(c));
        ASSERT_OK(upsert(st, 50, 1));
        ASSERT_TRUE(db_in_transaction(c));
        ASSERT_ERROR(db_exec(c, "SAVEPOINT x"), EOVERFLOW);
        EXEC_OK(c, "ROLLBACK");

        /* More statements than one pipeline holds, and a one-off statement. */
        ASSERT_OK(db_begin_write(c));
        for (int k = 1000; k < 4000; k++)
                ASSERT_OK(upsert(st, k, 1));
        DbStmt *once;
        ASSERT_OK(db_prepare(c, "DELETE FROM sums WHERE k = ?", false, &once));
        ASSERT_OK(db_bind_int(once, 1, 1000));
        ASSERT_OK(db_execute(once, 1));
        db_finalize(once);
        EXEC_OK(c, "COMMIT");
        ASSERT_EQ(query_int(c, "SELECT count(*) FROM sums WHERE k >= 1000"), 2999);

        db_finalize(st);
        db_finalize(ins);
        db_finalize(cnt);
        EXEC_OK(c, "DROP TABLE sums");
        db_postgresql_driver.disconnect(c);
}

TEST(reader) {
        DbConn *r = connect_as(dsn, false, true);

        ASSERT_EQ(query_int(r, "SELECT 1"), 1);
        ASSERT_ERROR(db_exec(r, "CREATE TABLE nope (a int)"), EIO);
        ASSERT_TRUE(strstr(db_errmsg(r), "read-only") != NULL);
        db_postgresql_driver.disconnect(r);
}

typedef struct Locker {
        DbConn *c;
        int r;
} Locker;

static void *lock_row_1(void *p) {
        Locker *l = p;
        l->r = db_exec(l->c, "UPDATE locks SET v = v + 1 WHERE k = 1");
        return NULL;
}

TEST(deadlock) {
        DbConn *a = connect_as(uri, true, false), *b = connect_as(uri, true, false);
        Locker lb = { .c = b };
        pthread_t t;
        int ra;

        EXEC_OK(a, "CREATE TABLE locks (k bigint PRIMARY KEY, v bigint); INSERT INTO locks VALUES (1, 0), (2, 0)");
        EXEC_OK(a, "SET deadlock_timeout = '50ms'");
        EXEC_OK(b, "SET deadlock_timeout = '50ms'");
        /* Plain transactions: writers' (begin_write) take turns. */
        EXEC_OK(a, "BEGIN");
        EXEC_OK(b, "BEGIN");
        EXEC_OK(a, "UPDATE locks SET v = v + 1 WHERE k = 1");
        EXEC_OK(b, "UPDATE locks SET v = v + 1 WHERE k = 2");
        ASSERT_EQ(pthread_create(&t, NULL, lock_row_1, &lb), 0);
        sleep_ms(20);
        ra = db_exec(a, "UPDATE locks SET v = v + 1 WHERE k = 2");
        ASSERT_EQ(pthread_join(t, NULL), 0);

        /* One waits for the other: exactly one is chosen as the victim. */
        if (!((ra == -EAGAIN && lb.r == 0) || (ra == 0 && lb.r == -EAGAIN)))
                test_fail("deadlock: a gave %d, b gave %d", ra, lb.r);
        ASSERT_TRUE(strstr(db_errmsg(ra < 0 ? a : b), "deadlock") != NULL);
        EXEC_OK(a, "ROLLBACK");
        EXEC_OK(b, "ROLLBACK");
        EXEC_OK(a, "DROP TABLE locks");
        db_postgresql_driver.disconnect(a);
        db_postgresql_driver.disconnect(b);
}

/* Two writers, as two lmk-store processes on one database: the second
 * begin_write waits for the first transaction to end, at most
 * lock_timeout, then says busy. */
TEST(writers_take_turns) {
        DbConn *a = connect_as(uri, true, false), *b = connect_as(uri, true, false);

        EXEC_OK(b, "SET lock_timeout = '100ms'");
        ASSERT_OK(db_begin_write(a));
        ASSERT_ERROR(db_begin_write(b), EBUSY);
        ASSERT_TRUE(strstr(db_errmsg(b), "lock timeout") != NULL);
        EXEC_OK(b, "ROLLBACK");
        EXEC_OK(a, "COMMIT");
        ASSERT_OK(db_begin_write(b));
        EXEC_OK(b, "COMMIT");
        db_postgresql_driver.disconnect(a);
        db_postgresql_driver.disconnect(b);
}

static int step_value(DbStmt *st, int64_t *ret) {
        int r = db_step(st);
        if (r == 1)
                *ret = db_column_int(st, 0);
        db_reset(st);
        return r;
}

static void restart_case(bool pipeline) {
        DbConn *c = connect_as(uri, true, pipeline);
        DbStmt *sel, *ins;
        int64_t v = 0;
        int r;

        EXEC_OK(c, "CREATE TABLE kept (k bigint PRIMARY KEY)");
        ASSERT_OK(db_prepare(c, "SELECT count(*) + ? FROM kept", true, &sel));
        ASSERT_OK(db_prepare(c, "INSERT INTO kept VALUES (?)", true, &ins));
        ASSERT_OK(db_bind_int(sel, 1, 0));
        ASSERT_EQ(step_value(sel, &v), 1);

        /* Lost outside a transaction: the next call says so, the one
         * after connects again and prepares the statement anew. */
        server("restart");
        ASSERT_OK(db_bind_int(sel, 1, 0));
        ASSERT_ERROR(step_value(sel, &v), ECONNRESET);
        ASSERT_FALSE(db_in_transaction(c));
        ASSERT_OK(db_bind_int(sel, 1, 5));
        ASSERT_EQ(step_value(sel, &v), 1);
        ASSERT_EQ(v, 5);

        /* Lost inside one: calls fail until the caller has seen the
         * transaction end, so nothing of it runs without one. */
        ASSERT_OK(db_begin_write(c));
        ASSERT_OK(db_bind_int(ins, 1, 1));
        ASSERT_OK(db_execute(ins, 0));
        db_reset(ins);
        server("restart");
        ASSERT_OK(db_bind_int(ins, 1, 2));
        r = db_execute(ins, 0); /* pipelined: may only be sent */
        db_reset(ins);
        if (r == 0)
                ASSERT_ERROR(db_exec(c, "RELEASE nothing"), ECONNRESET);
        else
                ASSERT_ERROR(r, ECONNRESET);
        ASSERT_OK(db_bind_int(ins, 1, 3));
        ASSERT_ERROR(db_execute(ins, 0), ECONNRESET);
        db_reset(ins);
        ASSERT_ERROR(db_exec(c, "ROLLBACK TO batch"), ECONNRESET);
        ASSERT_FALSE(db_in_transaction(c));
        ASSERT_OK(db_bind_int(ins, 1, 4));
        ASSERT_OK(db_execute(ins, 0));
        db_reset(ins);
        ASSERT_EQ(query_int(c, "SELECT sum(k) FROM kept"), 4);

        /* The server stays away for a while: connecting is retried with
         * backoff, -ECONNREFUSED meanwhile. */
        server("halt");
        ASSERT_OK(db_bind_int(sel, 1, 0));
        ASSERT_ERROR(step_value(sel, &v), ECONNRESET);
        ASSERT_OK(db_bind_int(sel, 1, 0));
        ASSERT_ERROR(step_value(sel, &v), ECONNREFUSED);
        ASSERT_OK(db_bind_int(sel, 1, 0));
        ASSERT_ERROR(step_value(sel, &v), ECONNREFUSED);
        ASSERT_TRUE(strstr(db_errmsg(c), "next attempt") != NULL);
        server("resume");
        sleep_ms(250);
        ASSERT_OK(db_bind_int(sel, 1, 1));
        ASSERT_EQ(step_value(sel, &v), 1);
        ASSERT_EQ(v, 2);

        db_finalize(sel);
        db_finalize(ins);
        EXEC_OK(c, "DROP TABLE kept");
        db_postgresql_driver.disconnect(c);
}

TEST(restart_sync) {
        restart_case(false);
}

TEST(restart_pipelined) {
        restart_case(true);
}

int main(void) {
        const char *control = getenv("LMK_TEST_PG_CONTROL");

        uri = getenv("LMK_TEST_PG_URI");
        dsn = getenv("LMK_TEST_PG_DSN");
        if (!uri || !dsn || !control || sscanf(control, "%d %d", &control_w, &control_r) != 2)
                test_skip("run through test-db-postgresql.py, which starts the server");

        RUN(connect_failure);
        RUN(migrations);
        RUN(placeholders);
        RUN(values);
        RUN(execute_sync);
        RUN(pipeline);
        RUN(reader);
        RUN(deadlock);
        RUN(writers_take_turns);
        RUN(restart_sync);
        RUN(restart_pipelined);
        return 0;
}
