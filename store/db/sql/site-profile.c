/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The functions of many jobs summed (GET /api/v1/profile): the jobs of
 * the job list's filter, then their job_functions or job_phase_functions
 * (schema/0021) added up per function (and phase). */
#include <errno.h>
#include <stdlib.h>

#include "db/sql/job-list.h"

/* The sums of the page's jobs, per function or per function and phase;
 * ?L and ?L+1 after the query's arguments are the jobs' limit and offset,
 * ?L+2 the functions' limit. */
static void profile_sql(const JobQuery *q, const JobFilter *f, bool per_phase, FILE *out) {
        const char *phase = per_phase ? ", s.phase_id" : "";

        fputs("WITH page AS MATERIALIZED (", out);
        job_query_page(q, f, out);
        /* cycles and instructions are not summed: the profile has no use
         * for them, and many jobs' sums may not fit */
        fprintf(out, "), x AS (SELECT s.function_id%s, CAST(sum(s.samples) AS BIGINT) AS samples, "
                "sum(s.cpu_seconds) AS cpu_seconds, NULL AS cycles, NULL AS instructions "
                "FROM %s s JOIN page ON page.id = s.job_id GROUP BY s.function_id%s) "
                "SELECT " FUNCTION_COLUMNS("x") "%s FROM x " FUNCTION_JOINS("x") "%s ORDER BY "
                FUNCTION_ORDER("x") "%s LIMIT ?%zu",
                phase, per_phase ? "job_phase_functions" : "job_functions", phase,
                per_phase ? ", p.path, 0" : "", per_phase ? "JOIN phases p ON p.id = x.phase_id " : "",
                per_phase ? ", p.path" : "", q->n_args + 3);
}

static void profile_functions_sql(const JobQuery *q, const JobFilter *f, FILE *out) {
        profile_sql(q, f, false, out);
}

static void profile_phase_functions_sql(const JobQuery *q, const JobFilter *f, FILE *out) {
        profile_sql(q, f, true, out);
}

/* The jobs the page would hold with one more (?L and ?L+1: f->limit + 1
 * and 0): whether there are more. */
static void page_count_sql(const JobQuery *q, const JobFilter *f, FILE *out) {
        fputs("SELECT count(*) FROM (", out);
        job_query_page(q, f, out);
        fputs(") AS c", out);
}

int sql_get_profile(Storage *base, const JobFilter *f, bool per_phase, unsigned limit, SiteProfile *ret) {
        SqlStorage *s = (SqlStorage *) base;
        const int64_t extra[3] = { f->limit, 0, (int64_t) limit + 1 }, page[2] = { (int64_t) f->limit + 1, 0 };
        _cleanup_(job_query_done) JobQuery q = {};
        _cleanup_free_ char *sql = NULL;
        SiteProfile p = {};
        DbStmt *st = NULL;
        int64_t n = 0;
        Conn *c;
        int r;

        db_purpose_set("summing the functions of jobs");
        if (f->sort < 0 || f->sort >= _JOB_SORT_MAX || f->limit == 0)
                return -EINVAL;
        if ((r = job_query_init(&q, f)) < 0 ||
            (r = job_query_sql(&q, f, per_phase ? profile_phase_functions_sql : profile_functions_sql, &sql)) < 0)
                return r;
        reader_acquire(s, &c);
        /* the count and the sums of one moment */
        r = conn_begin_read(c);
        if (r < 0) {
                reader_release(s, c);
                return r;
        }
        r = job_query_step_int(c, &q, f, page_count_sql, page, ELEMENTSOF(page), &n);
        if (r >= 0)
                r = job_query_prepare(c, &q, sql, extra, ELEMENTSOF(extra), &st);
        if (r >= 0) {
                r = read_function_rows(st, per_phase, limit, &p.functions);
                db_finalize(st);
        }
        reader_end_read(s, c);
        if (r < 0)
                return r;
        p.jobs = MIN((uint64_t) n, (uint64_t) f->limit);
        p.jobs_truncated = (uint64_t) n > f->limit;
        *ret = p;
        return 0;
}
