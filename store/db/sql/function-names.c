/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Names of unnamed functions found after the fact by build-id (schema/0022):
 * which are still to be named, and what a lookup found. The lookups
 * (store/symbols/) run in a thread of their own, never in an ingest. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "db/sql/sql-internal.h"

int sql_list_unnamed_builds(Storage *base, const char *after, size_t limit, char ***ret, size_t *ret_n) {
        SqlStorage *s = (SqlStorage *) base;
        char **v = NULL;
        size_t n = 0, alloc = 0;
        DbStmt *st;
        Conn *c;
        int r, rc = 0;

        db_purpose_set("finding builds with unnamed functions");
        reader_acquire(s, &c);
        r = conn_begin_read(c);
        if (r < 0) {
                reader_release(s, c);
                return r;
        }
        r = conn_stmt(c, STMT_UNNAMED_BUILDS, &st);
        if (r >= 0 && (r = db_bind_text(st, 1, after ?: "")) >= 0 && (r = db_bind_int(st, 2, (int64_t) limit)) >= 0)
                while ((rc = db_step(st)) == 1) {
                        r = grow((void **) &v, n, &alloc, sizeof(char *));
                        if (r < 0)
                                break;
                        v[n] = column_strdup(st, 0, &r);
                        if (r < 0)
                                break;
                        n++;
                }
        if (r >= 0 && rc != 0)
                r = step_errno(rc);
        if (r < 0 || rc == 1)
                db_reset(st);
        reader_end_read(s, c);
        if (r < 0) {
                strv_free_n(v, n);
                return r;
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

int sql_list_unnamed_functions(Storage *base, const char *build_id, size_t limit, FunctionName **ret,
                               size_t *ret_n) {
        SqlStorage *s = (SqlStorage *) base;
        FunctionName *v = NULL;
        size_t n = 0, alloc = 0;
        DbStmt *st;
        Conn *c;
        int r, rc = 0;

        db_purpose_set("reading a build's unnamed functions");
        reader_acquire(s, &c);
        r = conn_begin_read(c);
        if (r < 0) {
                reader_release(s, c);
                return r;
        }
        r = conn_stmt(c, STMT_UNNAMED_FUNCTIONS, &st);
        if (r >= 0 && (r = db_bind_text(st, 1, build_id)) >= 0 && (r = db_bind_int(st, 2, (int64_t) limit)) >= 0)
                while ((rc = db_step(st)) == 1) {
                        r = grow((void **) &v, n, &alloc, sizeof(FunctionName));
                        if (r < 0)
                                break;
                        v[n++] = (FunctionName) { db_column_int(st, 0), db_column_int(st, 1) != 0, NULL };
                }
        if (r >= 0 && rc != 0)
                r = step_errno(rc);
        if (r < 0 || rc == 1)
                db_reset(st);
        reader_end_read(s, c);
        if (r < 0) {
                function_names_free(v, n);
                return r;
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

int sql_put_function_names(Storage *base, const char *build_id, const FunctionName *names, size_t n) {
        SqlStorage *s = (SqlStorage *) base;
        Conn *c = &s->writer;
        int64_t changed;
        DbStmt *st;
        int r;

        if (n == 0)
                return 0;
        db_purpose_set("storing names of functions found by build-id");
        /* One transaction for the build's names, on the writer between
         * batches; no batch writes these rows, so no writers' lock, and a
         * name another store stored first stays. */
        pthread_mutex_lock(&s->write_lock);
        r = conn_exec(c, "BEGIN");
        for (size_t i = 0; r >= 0 && i < n; i++)
                if ((r = conn_stmt(c, STMT_FUNCTION_NAME_PUT, &st)) >= 0 &&
                    (r = db_bind_text(st, 1, build_id)) >= 0 && (r = db_bind_int(st, 2, names[i].offset)) >= 0 &&
                    (r = db_bind_int(st, 3, names[i].entry)) >= 0 &&
                    (r = db_bind_text(st, 4, names[i].name ?: "")) >= 0)
                        r = step_changes(st, &changed);
        if (r >= 0)
                r = conn_exec(c, "COMMIT");
        if (r < 0 && db_in_transaction(c->db))
                (void) conn_exec(c, "ROLLBACK");
        pthread_mutex_unlock(&s->write_lock);
        return r;
}
