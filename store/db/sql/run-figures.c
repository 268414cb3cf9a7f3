/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What scaling across runs needs of jobs (get_run_figures). */
#include <errno.h>

#include "db/sql/sql-internal.h"

static int read_run(Conn *c, int64_t job_id, RunFigures *f) {
        DbStmt *st;
        int r = 0, rc;

        if ((r = conn_stmt(c, STMT_RUN_INFO, &st)) < 0 || (r = db_bind_int(st, 1, job_id)) < 0)
                return r;
        rc = db_step(st);
        if (rc == 1) {
                f->size = column_strdup(st, 0, &r);
                f->exe = column_strdup(st, 1, &r);
                f->node_cpus = column_nullable_int(st, 2);
                f->cpus_alloc = column_nullable_int(st, 3);
        } else if (rc != 0)
                return step_errno(rc);
        if (r < 0 || (r = read_job_node_type(c, job_id, &f->node_type)) < 0)
                return r;

        return read_rank_rows(c, STMT_RUN_RANKS, job_id, &f->ranks, &f->n_ranks, &f->ranks_truncated);
}

int sql_get_run_figures(Storage *base, const int64_t *row_ids, size_t n, RunFigures *ret) {
        SqlStorage *s = (SqlStorage *) base;
        Conn *c;
        int r;

        db_purpose_set("reading run figures");
        for (size_t i = 0; i < n; i++)
                ret[i] = (RunFigures) { .node_cpus = STORAGE_NULL, .cpus_alloc = STORAGE_NULL };
        reader_acquire(s, &c);
        r = conn_begin_read(c);
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = read_run(c, row_ids[i], &ret[i]);
        reader_end_read(s, c);
        if (r < 0)
                run_figures_free(ret, n);
        return r;
}
