/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A job's functions (schema/0021), over its phases or per phase, the most
 * samples first. */
#include <errno.h>
#include <stdlib.h>

#include "db/sql/sql-internal.h"

/* A function from FUNCTION_COLUMNS (statements.c) at col: object, kind,
 * build_id, name, file_offset, entry, the name found since ('' none),
 * samples, cpu_seconds, cycles, instructions. */
static int read_function_row(DbStmt *st, int col, FunctionShare *x) {
        const char *build_id = db_column_text(st, col + 2), *name = db_column_text(st, col + 3);
        int64_t offset = db_column_int(st, col + 4);
        int r = 0;

        x->object = column_strdup(st, col, &r);
        x->kind = column_strdup(st, col + 1, &r);
        x->build_id = build_id && *build_id ? column_strdup(st, col + 2, &r) : NULL;
        /* named by lmkd; unnamed, maybe named since; or the rest */
        if (name && *name)
                x->name = column_strdup(st, col + 3, &r);
        else if (offset >= 0 && !db_column_null(st, col + 6) && *db_column_text(st, col + 6))
                x->name = column_strdup(st, col + 6, &r);
        x->offset = offset >= 0 ? offset : STORAGE_NULL;
        x->entry = db_column_int(st, col + 5) != 0;
        x->other = !(name && *name) && offset < 0;
        x->samples = db_column_int(st, col + 7);
        x->cpu_seconds = db_column_double(st, col + 8);
        x->cycles = column_nullable_int(st, col + 9);
        x->instructions = column_nullable_int(st, col + 10);
        x->phase_samples = STORAGE_NULL;
        return r;
}

int read_function_rows(DbStmt *st, bool per_phase, size_t limit, FunctionList *ret) {
        FunctionList l = {};
        size_t alloc = 0;
        int r = 0, rc;

        while ((rc = db_step(st)) == 1) {
                FunctionShare *x;

                if (l.n == limit) {
                        l.truncated = true;
                        db_reset(st);
                        rc = 0;
                        break;
                }
                r = grow((void **) &l.items, l.n, &alloc, sizeof(FunctionShare));
                if (r < 0)
                        break;
                x = &l.items[l.n++];
                *x = (FunctionShare) {};
                r = read_function_row(st, 0, x);
                if (r >= 0 && per_phase) {
                        x->phase = column_strdup(st, 11, &r);
                        x->phase_samples = db_column_int(st, 12);
                }
                if (r < 0)
                        break;
        }
        if (r >= 0 && rc != 0)
                r = step_errno(rc);
        if (r < 0) {
                db_reset(st);
                function_list_free(&l);
                return r;
        }
        *ret = l;
        return 0;
}

int read_job_functions(Conn *c, int64_t job_id, bool per_phase, size_t limit, FunctionList *ret) {
        DbStmt *st;
        int r;

        r = conn_stmt(c, per_phase ? STMT_JOB_PHASE_FUNCTIONS : STMT_JOB_FUNCTIONS, &st);
        if (r < 0 || (r = db_bind_int(st, 1, job_id)) < 0 || (r = db_bind_int(st, 2, (int64_t) limit + 1)) < 0)
                return r;
        return read_function_rows(st, per_phase, limit, ret);
}
