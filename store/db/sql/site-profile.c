/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The functions of many jobs summed (GET /api/v1/profile): the jobs of
 * the job list's filter, then their packed function sums (schema/0025,
 * function-pack.h) decoded and added up per function (and phase). */
#include <errno.h>
#include <stdlib.h>

#include "db/sql/job-list.h"

/* The packs of the page's jobs; ?L and ?L+1 after the query's arguments
 * are the jobs' limit and offset. In the order of jobs, so that the sums
 * of CPU seconds are added in one order every time. */
static void profile_sql(const JobQuery *q, const JobFilter *f, FILE *out) {
        fputs("WITH page AS MATERIALIZED (", out);
        job_query_page(q, f, out);
        fputs(") SELECT s.packed FROM job_function_packs s JOIN page ON page.id = s.job_id "
              "ORDER BY s.job_id, s.object_id", out);
}

typedef struct Entry {
        JobFunctionSum sum;
        size_t seq;
} Entry;

static int compare_entries(const void *a, const void *b) {
        const Entry *x = a, *y = b;

        if (x->sum.phase_id != y->sum.phase_id)
                return x->sum.phase_id < y->sum.phase_id ? -1 : 1;
        if (x->sum.function_id != y->sum.function_id)
                return x->sum.function_id < y->sum.function_id ? -1 : 1;
        return (x->seq > y->seq) - (x->seq < y->seq);
}

/* The packs' entries over phases (per_phase: per phase) added up per key,
 * in the order read. cycles and instructions are not summed: the profile
 * has no use for them, and many jobs' sums may not fit. -EOVERFLOW: the
 * samples of a function would not fit in an integer. */
static int sum_packs(DbStmt *st, bool per_phase, JobFunctionSums *ret) {
        _cleanup_(function_sums_done) JobFunctionSums one = {};
        _cleanup_free_ Entry *all = NULL;
        size_t n = 0, alloc = 0;
        int r = 0, rc;

        while ((rc = db_step(st)) == 1) {
                size_t len;
                const void *data = db_column_blob(st, 0, &len);

                r = function_pack_decode(data, len, &one);
                for (size_t i = 0; r >= 0 && i < one.n; i++) {
                        if ((one.items[i].phase_id != 0) != per_phase)
                                continue;
                        r = grow((void **) &all, n, &alloc, sizeof(Entry));
                        if (r < 0)
                                break;
                        all[n] = (Entry) { one.items[i], n };
                        all[n].sum.cycles = all[n].sum.instructions = STORAGE_NULL;
                        n++;
                }
                if (r < 0)
                        break;
        }
        db_reset(st);
        if (r < 0)
                return r;
        if (rc < 0)
                return step_errno(rc);
        if (n > 0)
                qsort(all, n, sizeof(Entry), compare_entries);
        for (size_t i = 0; i < n; i++) {
                JobFunctionSum *last = ret->n > 0 ? &ret->items[ret->n - 1] : NULL;

                if (last && last->phase_id == all[i].sum.phase_id && last->function_id == all[i].sum.function_id) {
                        if (__builtin_add_overflow(last->samples, all[i].sum.samples, &last->samples))
                                return -EOVERFLOW;
                        last->cpu_seconds += all[i].sum.cpu_seconds;
                } else if ((r = function_sums_append(ret, &all[i].sum)) < 0)
                        return r;
        }
        return 0;
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
        const int64_t extra[2] = { f->limit, 0 }, page[2] = { (int64_t) f->limit + 1, 0 };
        _cleanup_(function_sums_done) JobFunctionSums sums = {};
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
            (r = job_query_sql(&q, f, profile_sql, &sql)) < 0)
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
                r = sum_packs(st, per_phase, &sums);
                db_finalize(st);
        }
        if (r >= 0)
                r = name_function_sums(c, &sums, per_phase, -1, limit, &p.functions);
        reader_end_read(s, c);
        if (r < 0)
                return r;
        p.jobs = MIN((uint64_t) n, (uint64_t) f->limit);
        p.jobs_truncated = (uint64_t) n > f->limit;
        *ret = p;
        return 0;
}
