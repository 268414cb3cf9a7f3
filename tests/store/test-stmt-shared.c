/* SPDX-License-Identifier: GPL-2.0-or-later */
/* stmt_changes_shared() against the statements' own SQL: a statement is in
 * that list exactly when it writes a table whose rows batches of any node
 * and job change (the writers' site lock, docs/postgresql.md). The table
 * each statement writes is read from its text in both dialects, and every
 * table written must be classified below: a new table or statement of the
 * ingest fails here until someone has decided which lock it needs. */
#include <ctype.h>
#include <stdbool.h>

#include "macro.h"
#include "db/sql/statements.h"
#include "tests.h"

/* Rows that batches of any node and job change: under the site lock. */
static const char *const shared_tables[] = {
        "objects", "phases", "tasks", "event_roles", "node_types", "packages", "package_files", "mix_keys",
        "object_hours", "object_days", "object_weeks", "object_periods", "app_days", "app_dim_days", "functions",
        "function_days", "function_weeks", "function_key_days", "function_key_weeks", "function_users",
        "function_apps", "function_total_days", "function_total_weeks", "function_scope_days",
        "function_scope_weeks",
};

/* Rows of one node or job: under that node's or job's key. The markers
 * outside jobs (job_markers of job 0) are the ingest's own exception, not a
 * statement's: ingest_markers() takes the site lock for them. */
static const char *const keyed_tables[] = {
        "nodes", "node_packages", "batches", "samples", "sample_packs", "jobs", "job_notes", "job_tasks",
        "job_objects", "job_phases", "job_nodes", "job_timeline", "job_markers", "job_ranks", "job_counters",
        "job_events", "job_object_events", "job_phase_events", "job_bursts", "job_function_packs",
};

/* Rows each batch inserts of its own, which no other batch changes: the
 * site's function sums of a batch (schema/0027); the fold that deletes
 * them takes the site lock itself (store/db/sql/site-sums-fold.c). */
static const char *const appended_tables[] = {
        "function_sums_pending",
};

/* Changed only by maintenance, which runs alone (DbDriver.begin_write). */
static const char *const alone_tables[] = {
        "retention",
};

/* Changed outside the ingest, by transactions of their own with no
 * writers' lock, and touched by no batch: the login tickets used
 * (store/db/sql/tickets.c), names found by build-id
 * (store/db/sql/function-names.c). */
static const char *const own_tables[] = {
        "used_tickets", "function_names",
};

static bool listed(const char *const *list, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (streq(list[i], name))
                        return true;
        return false;
}

static bool startswith(const char *s, const char *prefix) {
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool name_char(char c) {
        return isalnum((unsigned char) c) || c == '_';
}

/* Whether the words (one space apart) begin at p, standing alone. */
static bool words_at(const char *p, const char *start, const char *words) {
        size_t n = strlen(words);

        return strncmp(p, words, n) == 0 && (p == start || !name_char(p[-1])) && p[n] == ' ';
}

/* The table a statement writes: the name after its first INSERT INTO,
 * UPDATE or DELETE FROM outside parentheses and quotes (after a WITH's
 * common table expressions, before an ON CONFLICT … DO UPDATE). Empty for
 * a statement that writes nothing. */
static void written_table(const char *sql, char *ret, size_t size) {
        static const char *const verbs[] = { "INSERT INTO", "UPDATE", "DELETE FROM" };
        int depth = 0;

        ret[0] = '\0';
        for (const char *p = sql; *p; p++) {
                if (*p == '\'') {
                        p = strchr(p + 1, '\'');
                        ASSERT_NOT_NULL(p);
                        continue;
                }
                depth += *p == '(';
                depth -= *p == ')';
                if (depth != 0)
                        continue;
                for (size_t v = 0; v < ELEMENTSOF(verbs); v++) {
                        size_t n = 0;

                        if (!words_at(p, sql, verbs[v]))
                                continue;
                        p += strlen(verbs[v]) + 1;
                        while (n + 1 < size && name_char(p[n])) {
                                ret[n] = p[n];
                                n++;
                        }
                        ret[n] = '\0';
                        ASSERT_TRUE(n > 0);
                        return;
                }
        }
}

TEST(parser) {
        char t[64];

        written_table("SELECT id FROM objects WHERE path = ?", t, sizeof(t));
        ASSERT_STREQ(t, "");
        written_table("INSERT INTO job_tasks (a) VALUES (?) ON CONFLICT (a) DO UPDATE SET a = 1", t, sizeof(t));
        ASSERT_STREQ(t, "job_tasks");
        written_table("WITH c AS (UPDATE objects SET x = 1 RETURNING id) UPDATE jobs SET y = 'DELETE FROM x' "
                      "WHERE id IN (SELECT id FROM c)", t, sizeof(t));
        ASSERT_STREQ(t, "jobs");
        written_table("DELETE FROM app_days WHERE day = ?", t, sizeof(t));
        ASSERT_STREQ(t, "app_days");
        written_table("SELECT last_update FROM nodes", t, sizeof(t));
        ASSERT_STREQ(t, "");
}

TEST(every_statement) {
        unsigned writes = 0, shared = 0;

        for (Stmt id = 0; id < _STMT_MAX; id++)
                for (DbDialect d = DB_DIALECT_SQLITE; d <= DB_DIALECT_POSTGRESQL; d++) {
                        const char *sql = stmt_text(d, id);
                        char table[64];
                        bool is_shared;

                        ASSERT_NOT_NULL(sql);
                        written_table(sql, table, sizeof(table));
                        if (!table[0] && (startswith(sql, "INSERT") || startswith(sql, "UPDATE") ||
                                          startswith(sql, "DELETE")))
                                test_fail("statement %d: no table found in %.120s", (int) id, sql);
                        if (!table[0]) {
                                if (stmt_changes_shared(id))
                                        test_fail("statement %d writes no table, yet stmt_changes_shared() lists it: "
                                                  "%.120s", (int) id, sql);
                                continue;
                        }
                        is_shared = listed(shared_tables, ELEMENTSOF(shared_tables), table);
                        if (!is_shared && !listed(keyed_tables, ELEMENTSOF(keyed_tables), table) &&
                            !listed(alone_tables, ELEMENTSOF(alone_tables), table) &&
                            !listed(appended_tables, ELEMENTSOF(appended_tables), table) &&
                            !listed(own_tables, ELEMENTSOF(own_tables), table))
                                test_fail("statement %d writes table %s, which this test does not classify: are its "
                                          "rows shared by every node and job, or one node's or job's? %.120s",
                                          (int) id, table, sql);
                        if (is_shared != stmt_changes_shared(id))
                                test_fail("statement %d writes %s table %s, and stmt_changes_shared() says %s: %.120s",
                                          (int) id, is_shared ? "the shared" : "the keyed", table,
                                          stmt_changes_shared(id) ? "true" : "false", sql);
                        writes += d == DB_DIALECT_SQLITE;
                        shared += d == DB_DIALECT_SQLITE && is_shared;
                }
        fprintf(stderr, "%u statements write, %u of them shared tables\n", writes, shared);
        /* the parser found the writes at all (75 and 26 when written) */
        ASSERT_TRUE(writes >= 60);
        ASSERT_TRUE(shared >= 20);
}

int main(void) {
        RUN(parser);
        RUN(every_statement);
        return 0;
}
