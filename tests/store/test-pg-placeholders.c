/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The PostgreSQL driver's parts that need no server: '?' renumbered to $n
 * outside literals, identifiers and comments, and SQLSTATEs mapped to
 * db.h's errors. */
#include "db/postgresql/placeholders.h"
#include "db/postgresql/sqlstate.h"
#include "tests.h"

static void check(const char *sql, const char *want, unsigned want_n) {
        char *out = NULL;
        unsigned n = 0;

        ASSERT_OK(pg_rewrite_placeholders(sql, &out, &n));
        ASSERT_STREQ(out, want);
        ASSERT_EQ(n, want_n);
        free(out);
}

TEST(plain) {
        check("SELECT 1", "SELECT 1", 0);
        check("", "", 0);
        check("INSERT INTO t (a, b, c) VALUES (?, ?,?)", "INSERT INTO t (a, b, c) VALUES ($1, $2,$3)", 3);
        check("?", "$1", 1);
        check("SELECT a FROM t WHERE a = ? AND b IS NOT DISTINCT FROM ? LIMIT ?",
              "SELECT a FROM t WHERE a = $1 AND b IS NOT DISTINCT FROM $2 LIMIT $3", 3);
}

TEST(literals) {
        check("SELECT '?', ?", "SELECT '?', $1", 1);
        check("SELECT 'it''s ?', ?", "SELECT 'it''s ?', $1", 1);
        check("SELECT '', ?", "SELECT '', $1", 1);
        /* A backslash ends nothing in a standard literal ... */
        check("SELECT 'a\\', ?", "SELECT 'a\\', $1", 1);
        /* ... but escapes the quote in an E'' one. */
        check("SELECT E'a\\'?', ?", "SELECT E'a\\'?', $1", 1);
        check("SELECT e'\\\\', ?", "SELECT e'\\\\', $1", 1);
        /* "type'...'" is a plain literal after a word ending in e. */
        check("SELECT date'2024-01-01', ?", "SELECT date'2024-01-01', $1", 1);
        check("SELECT $$a ? b$$, ?", "SELECT $$a ? b$$, $1", 1);
        check("SELECT $q$ $$ ? $q$, ?", "SELECT $q$ $$ ? $q$, $1", 1);
        /* Unterminated: copied as it is, the server will say so. */
        check("SELECT '?", "SELECT '?", 0);
}

TEST(identifiers) {
        check("SELECT \"a?b\" FROM t WHERE x = ?", "SELECT \"a?b\" FROM t WHERE x = $1", 1);
        check("SELECT \"a\"\"?\" , ?", "SELECT \"a\"\"?\" , $1", 1);
        /* $ inside a word is not a dollar quote. */
        check("SELECT a$b$ FROM t WHERE c = ?", "SELECT a$b$ FROM t WHERE c = $1", 1);
}

TEST(comments) {
        check("SELECT ? -- why? because\n, ?", "SELECT $1 -- why? because\n, $2", 2);
        check("SELECT ? -- ? at the end", "SELECT $1 -- ? at the end", 1);
        check("SELECT /* ? /* ? */ ? */ ?", "SELECT /* ? /* ? */ ? */ $1", 1);
        check("SELECT 1 - -?", "SELECT 1 - -$1", 1);
}

TEST(many) {
        char sql[4 * 200 + 1] = "", want[8 * 200 + 1] = "";
        char *out = NULL;
        unsigned n;

        for (unsigned i = 1; i <= 200; i++) {
                strcat(sql, "?, ");
                sprintf(want + strlen(want), "$%u, ", i);
        }
        check(sql, want, 200);

        /* 65536 parameters: one past what the protocol can carry. */
        char *big = malloc(65537);
        ASSERT_NOT_NULL(big);
        memset(big, '?', 65536);
        big[65536] = '\0';
        ASSERT_ERROR(pg_rewrite_placeholders(big, &out, &n), E2BIG);
        ASSERT_NULL(out);
        big[65535] = '\0';
        ASSERT_OK(pg_rewrite_placeholders(big, &out, &n));
        ASSERT_EQ(n, 65535);
        ASSERT_TRUE(strlen(out) > 65535 * 2);
        ASSERT_STREQ(out + strlen(out) - 6, "$65535");
        free(out);
        free(big);
}

TEST(numbered) {
        char *out = NULL;
        unsigned n = 0;

        check("SELECT ?1, ?2, ?1", "SELECT $1, $2, $1", 2);
        check("UPDATE t SET a = ?2 WHERE id = ?1 AND a IS NOT ?2", "UPDATE t SET a = $2 WHERE id = $1 AND a IS NOT $2", 2);
        /* A bare '?' is one past the largest number so far, as in SQLite. */
        check("SELECT ?2, ?", "SELECT $2, $3", 3);
        check("SELECT ?, ?5, ?, ?1", "SELECT $1, $5, $6, $1", 6);
        check("WHERE a >= ?1 AND a < ?2 AND b = ? LIMIT ?", "WHERE a >= $1 AND a < $2 AND b = $3 LIMIT $4", 4);
        check("SELECT ?10", "SELECT $10", 10);
        check("SELECT ?65535", "SELECT $65535", 65535);
        check("SELECT '?1', ?1", "SELECT '?1', $1", 1);
        ASSERT_ERROR(pg_rewrite_placeholders("SELECT ?65536", &out, &n), E2BIG);
        ASSERT_ERROR(pg_rewrite_placeholders("SELECT ?99999999999", &out, &n), E2BIG);
        ASSERT_ERROR(pg_rewrite_placeholders("SELECT ?0", &out, &n), EINVAL);
        ASSERT_ERROR(pg_rewrite_placeholders("SELECT ?01", &out, &n), EINVAL);
        ASSERT_NULL(out);
}

TEST(sqlstates) {
        ASSERT_ERROR(pg_sqlstate_to_errno("40001"), EAGAIN);
        ASSERT_ERROR(pg_sqlstate_to_errno("40P01"), EAGAIN);
        ASSERT_ERROR(pg_sqlstate_to_errno("08006"), ECONNRESET);
        ASSERT_ERROR(pg_sqlstate_to_errno("08000"), ECONNRESET);
        ASSERT_ERROR(pg_sqlstate_to_errno("57P01"), ECONNRESET);
        ASSERT_ERROR(pg_sqlstate_to_errno("57P02"), ECONNRESET);
        ASSERT_ERROR(pg_sqlstate_to_errno("57P03"), ECONNRESET);
        ASSERT_ERROR(pg_sqlstate_to_errno("57014"), EIO); /* query_canceled */
        ASSERT_ERROR(pg_sqlstate_to_errno("23505"), EEXIST);
        ASSERT_ERROR(pg_sqlstate_to_errno("23503"), EEXIST);
        ASSERT_ERROR(pg_sqlstate_to_errno("22003"), EOVERFLOW);
        ASSERT_ERROR(pg_sqlstate_to_errno("22P02"), EIO);
        ASSERT_ERROR(pg_sqlstate_to_errno("53100"), ENOSPC);
        ASSERT_ERROR(pg_sqlstate_to_errno("42501"), EACCES);
        ASSERT_ERROR(pg_sqlstate_to_errno("53200"), ENOMEM);
        ASSERT_ERROR(pg_sqlstate_to_errno("55P03"), EBUSY);
        ASSERT_ERROR(pg_sqlstate_to_errno("XX001"), EUCLEAN);
        ASSERT_ERROR(pg_sqlstate_to_errno("42601"), EIO);
        ASSERT_ERROR(pg_sqlstate_to_errno(NULL), EIO);
        ASSERT_ERROR(pg_sqlstate_to_errno(""), EIO);
        ASSERT_ERROR(pg_sqlstate_to_errno("08"), EIO);
}

int main(void) {
        RUN(plain);
        RUN(literals);
        RUN(identifiers);
        RUN(comments);
        RUN(many);
        RUN(numbered);
        RUN(sqlstates);
        return 0;
}
