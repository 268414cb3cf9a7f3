/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Multi-row statements (stmt_text_rows()): the one VALUES tuple repeated,
 * nothing else touched, and statements whose parameters would land in the
 * wrong place refused. */
#include "db/sql/statements.h"
#include "tests.h"

static void expect(const char *sql, size_t rows, const char *want, unsigned want_cols) {
        char *got = NULL;
        unsigned cols = 0;

        ASSERT_OK(stmt_text_rows(sql, rows, &got, &cols));
        ASSERT_STREQ(got, want);
        ASSERT_EQ(cols, want_cols);
        free(got);
}

TEST(repeated) {
        expect("INSERT INTO t (a, b) VALUES (?, ?) ON CONFLICT (a) DO UPDATE SET b = t.b + excluded.b", 1,
               "INSERT INTO t (a, b) VALUES (?, ?) ON CONFLICT (a) DO UPDATE SET b = t.b + excluded.b", 2);
        expect("INSERT INTO t (a, b) VALUES (?, ?) ON CONFLICT (a) DO UPDATE SET b = t.b + excluded.b", 3,
               "INSERT INTO t (a, b) VALUES (?, ?), (?, ?), (?, ?) ON CONFLICT (a) DO UPDATE SET b = t.b + excluded.b",
               2);
        /* a constant in the tuple, and parentheses of its own */
        expect("INSERT INTO t (a, g, b) VALUES (?, 0, max(?, 1))", 2,
               "INSERT INTO t (a, g, b) VALUES (?, 0, max(?, 1)), (?, 0, max(?, 1))", 2);
        expect("UPDATE o SET x = v.column2 FROM (VALUES (CAST(? AS BIGINT), CAST(? AS BIGINT))) AS v "
               "WHERE o.id = v.column1", 2,
               "UPDATE o SET x = v.column2 FROM (VALUES (CAST(? AS BIGINT), CAST(? AS BIGINT)), "
               "(CAST(? AS BIGINT), CAST(? AS BIGINT))) AS v WHERE o.id = v.column1", 2);
}

TEST(refused) {
        char *got = NULL;
        unsigned cols = 0;

        ASSERT_ERROR(stmt_text_rows("SELECT id FROM t WHERE a = ?", 2, &got, &cols), EINVAL);
        ASSERT_ERROR(stmt_text_rows("INSERT INTO t (a) VALUES (?)", 0, &got, &cols), EINVAL);
        ASSERT_ERROR(stmt_text_rows("INSERT INTO t (a) VALUES (1)", 2, &got, &cols), EINVAL);
        ASSERT_ERROR(stmt_text_rows("INSERT INTO t (a) SELECT ? WHERE ? VALUES (?)", 2, &got, &cols), EINVAL);
        ASSERT_ERROR(stmt_text_rows("INSERT INTO t (a) VALUES (?) ON CONFLICT DO UPDATE SET a = ?", 2, &got, &cols),
                     EINVAL);
        ASSERT_ERROR(stmt_text_rows("INSERT INTO t (a) VALUES (?, (?)", 2, &got, &cols), EINVAL);
        ASSERT_NULL(got);
}

/* Every statement the store writes many rows with takes a tuple. */
TEST(store_statements) {
        static const Stmt ids[] = {
                STMT_SAMPLE_PACK_INSERT, STMT_JOB_TASK_UPSERT, STMT_JOB_OBJECT_UPSERT, STMT_JOB_PHASE_UPSERT,
                STMT_JOB_NODE_UPSERT, STMT_JOB_BATCH_UPSERT, STMT_JOB_GRAIN_UPSERT, STMT_NOTE_UPSERT,
                STMT_OBJECT_HOUR_UPSERT, STMT_OBJECT_DAY_UPSERT, STMT_OBJECT_WEEK_UPSERT, STMT_OBJECT_PERIOD_UPSERT,
                STMT_OBJECT_LAST_SEEN, STMT_JOBS_CURRENT, STMT_NOTES_CURRENT, STMT_JOB_MIXES, STMT_JOB_UPSERT,
        };

        for (size_t i = 0; i < ELEMENTSOF(ids); i++)
                for (DbDialect d = DB_DIALECT_SQLITE; d <= DB_DIALECT_POSTGRESQL; d++) {
                        char *got = NULL;
                        unsigned cols = 0;

                        ASSERT_OK(stmt_text_rows(stmt_text(d, ids[i]), 64, &got, &cols));
                        ASSERT_TRUE(cols >= 2);
                        free(got);
                }
}

int main(void) {
        RUN(repeated);
        RUN(refused);
        RUN(store_statements);
        return 0;
}
