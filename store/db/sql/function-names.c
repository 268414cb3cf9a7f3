/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Names of unnamed functions found after the fact by build-id (schema/0022):
 * which are still to be named, and what a lookup found. The lookups
 * (store/symbols/) run in a thread of their own, never in an ingest. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "db/sql/sql-internal.h"

/* Hands read() each row that statement id answers for its key and limit,
 * in one read transaction. */
static int read_list(SqlStorage *s, Stmt id, const char *key, size_t limit, ReadRow read, void *userdata) {
        DbStmt *st;
        Conn *c;
        int r, rc = 0;

        reader_acquire(s, &c);
        r = conn_begin_read(c);
        if (r < 0) {
                reader_release(s, c);
                return r;
        }
        /* st is only there when conn_stmt() succeeds */
        r = conn_stmt(c, id, &st);
        if (r >= 0) {
                if ((r = db_bind_text(st, 1, key)) >= 0 && (r = db_bind_int(st, 2, (int64_t) limit)) >= 0)
                        while ((rc = db_step(st)) == 1 && (r = read(st, userdata)) >= 0)
                                ;
                if (r >= 0 && rc != 0)
                        r = step_errno(rc);
                if (r < 0 || rc == 1)
                        db_reset(st);
        }
        reader_end_read(s, c);
        return r;
}

typedef struct Builds {
        char **v;
        size_t n, alloc;
} Builds;

static int read_build(DbStmt *st, void *userdata) {
        Builds *b = userdata;
        int r = grow((void **) &b->v, b->n, &b->alloc, sizeof(char *));

        if (r < 0)
                return r;
        b->v[b->n] = column_strdup(st, 0, &r);
        if (r < 0)
                return r;
        b->n++;
        return 0;
}

int sql_list_unnamed_builds(Storage *base, const char *after, size_t limit, char ***ret, size_t *ret_n) {
        Builds b = {};
        int r;

        db_purpose_set("finding builds with unnamed functions");
        r = read_list((SqlStorage *) base, STMT_UNNAMED_BUILDS, after ?: "", limit, read_build, &b);
        if (r < 0) {
                strv_free_n(b.v, b.n);
                return r;
        }
        *ret = b.v;
        *ret_n = b.n;
        return 0;
}

typedef struct Names {
        FunctionName *v;
        size_t n, alloc;
} Names;

static int read_name(DbStmt *st, void *userdata) {
        Names *m = userdata;
        int r = grow((void **) &m->v, m->n, &m->alloc, sizeof(FunctionName));

        if (r < 0)
                return r;
        m->v[m->n++] = (FunctionName) { db_column_int(st, 0), db_column_int(st, 1) != 0, NULL };
        return 0;
}

int sql_list_unnamed_functions(Storage *base, const char *build_id, size_t limit, FunctionName **ret,
                               size_t *ret_n) {
        Names m = {};
        int r;

        db_purpose_set("reading a build's unnamed functions");
        r = read_list((SqlStorage *) base, STMT_UNNAMED_FUNCTIONS, build_id, limit, read_name, &m);
        if (r < 0) {
                function_names_free(m.v, m.n);
                return r;
        }
        *ret = m.v;
        *ret_n = m.n;
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
