/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The job list. Its SQL is put together per request from the filters it
 * has: one static statement with "? IS NULL OR column = ?" for every
 * filter would keep SQLite from using the index of the filter at hand.
 * Values are always bound (numbered, so that a condition can appear
 * twice), never put into the text. Each filter's index also holds the
 * three sort keys (schema/0006-job-app.sql), so that a page, its offset
 * and the count walk an index without reading the table. */
#include <errno.h>
#include <stdlib.h>

#include "db/sql/job-list.h"

int read_job_info(DbStmt *st, StoredJob *j, int64_t *ret_id) {
        int r = 0;

        *ret_id = db_column_int(st, 0);
        *j = (StoredJob) {
                .job = column_strdup(st, 1, &r),
                .cluster = column_strdup(st, 2, &r),
                .user = column_strdup(st, 3, &r),
                .account = column_strdup(st, 4, &r),
                .partition = column_strdup(st, 5, &r),
                .name = column_strdup(st, 6, &r),
                .nodes_alloc = column_nullable_int(st, 7),
                .tasks = column_nullable_int(st, 8),
                .ended = db_column_int(st, 9) != 0,
                .first_seen = column_nullable_double(st, 10),
                .last_seen = column_nullable_double(st, 11),
                .samples = db_column_int(st, 12),
                .cpu_seconds = db_column_double(st, 13),
                .cpu_time_ns = column_nullable_int(st, 14),
                .cycles = column_nullable_int(st, 15),
                .instructions = column_nullable_int(st, 16),
                .n_nodes = (uint64_t) db_column_int(st, 17),
                .metadata_conflicts = db_column_int(st, 18),
                .app = column_strdup(st, 19, &r),
                .row_id = db_column_int(st, 0),
                .revision = db_column_int(st, 20),
                .node_type_id = db_column_null(st, 21) ? 0 : db_column_int(st, 21),
                .node_type = column_strdup(st, 22, &r),
                .node_types_differ = !db_column_null(st, 21) && db_column_int(st, 21) == 0,
                .has_energy = !db_column_null(st, 23),
                .energy_joules = column_nullable_double(st, 23),
                .energy_alone_joules = column_nullable_double(st, 24),
                .has_exact = !db_column_null(st, 25) || !db_column_null(st, 26) || !db_column_null(st, 27),
                .exact_cpu_time_ns = column_nullable_int(st, 25),
                .exact_cycles = column_nullable_int(st, 26),
                .exact_instructions = column_nullable_int(st, 27),
                .opted_out = db_column_int(st, 28) != 0,
                .counters_released = db_column_int(st, 29) != 0,
        };
        return r;
}

/* Past this many accounts a lead's jobs come from one OR (an IN list)
 * instead of one SELECT per account merged: SQLite allows 500 SELECTs in a
 * compound, and a merge of many walks no fewer rows than the OR. */
#define JOBS_MAX_MERGED 16

void job_query_done(JobQuery *q) {
        if (q->f)
                fclose(q->f);
        free(q->where);
        free(q->accounts);
        free(q->args);
        *q = (JobQuery) {};
}

/* The number of a new argument, -ENOMEM. */
static int job_arg(JobQuery *q, const char *text, int64_t num) {
        int r = grow((void **) &q->args, q->n_args, &q->alloc_args, sizeof(JobArg));

        if (r < 0)
                return r;
        q->args[q->n_args++] = (JobArg) { .text = text, .num = num };
        return (int) q->n_args;
}

/* Appends "AND column op ?N" to the conditions being written to f. */
static int job_cond(JobQuery *q, FILE *f, const char *column, const char *op, const char *text, int64_t num) {
        int n = job_arg(q, text, num);

        if (n < 0)
                return n;
        fprintf(f, "%s%s %s ?%d", ftell(f) > 0 ? " AND " : "", column, op, n);
        return 0;
}

/* Jobs whose nodes are all of a type, by its name: through
 * jobs_by_node_type (schema/0015) like the other filters' indexes. */
static int job_cond_node_type(JobQuery *q, FILE *f, const char *name) {
        int n = job_arg(q, name, 0);

        if (n < 0)
                return n;
        fprintf(f, "%sj.node_type_id = (SELECT t.id FROM node_types t WHERE t.name = ?%d)", ftell(f) > 0 ? " AND " : "",
                n);
        return 0;
}

static bool led(char *const *accounts, const char *account) {
        for (char *const *a = accounts; a && *a; a++)
                if (streq(*a, account))
                        return true;
        return false;
}

/* Who may see what (store/auth/identity.h): a person their own jobs and those of
 * the accounts they lead. Nothing to add when the filter already keeps to
 * them (their own user, or an account they lead). */
static int job_query_viewer(JobQuery *q, const JobFilter *f) {
        size_t n = 0;
        int r;

        if (!f->viewer || (f->user && streq(f->user, f->viewer)) || (f->account && led(f->viewer_accounts, f->account)))
                return 0;
        r = q->viewer = job_arg(q, f->viewer, 0);
        if (r < 0)
                return r;
        for (char *const *a = f->viewer_accounts; a && *a; a++)
                n++;
        if (n == 0)
                return 0;
        q->accounts = calloc(n, sizeof(int));
        if (!q->accounts)
                return -ENOMEM;
        for (; q->n_accounts < n; q->n_accounts++) {
                r = q->accounts[q->n_accounts] = job_arg(q, f->viewer_accounts[q->n_accounts], 0);
                if (r < 0)
                        return r;
        }
        return 0;
}

int job_query_init(JobQuery *q, const JobFilter *f) {
        const struct {
                const char *column, *value;
        } eq[] = {
                { "j.user_name", f->user },
                { "j.cluster", f->cluster },
                { "j.account", f->account },
                { "j.partition_name", f->partition },
                { "j.app", f->app },
                { "j.name", f->name },
        };
        int r = 0;

        *q = (JobQuery) {};
        q->f = open_memstream(&q->where, &q->where_size);
        if (!q->f)
                return -ENOMEM;
        if (f->since != INT64_MIN)
                r = job_cond(q, q->f, "j.last_seen", ">=", NULL, f->since);
        if (r >= 0 && f->until != INT64_MAX)
                r = job_cond(q, q->f, "j.first_seen", "<=", NULL, f->until);
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(eq); i++)
                if (eq[i].value)
                        r = job_cond(q, q->f, eq[i].column, "=", eq[i].value, 0);
        if (r >= 0 && f->node_type)
                r = job_cond_node_type(q, q->f, f->node_type);
        if (r >= 0 && f->state != JOB_STATE_ANY)
                r = job_cond(q, q->f, "j.ended", "=", NULL, f->state == JOB_STATE_ENDED);
        if (r >= 0)
                r = job_query_viewer(q, f);
        if (fclose(q->f) != 0 && r >= 0)
                r = -ENOMEM;
        q->f = NULL;
        return r;
}

/* "WHERE ..." with what the viewer may see as one condition (alt < 0), or
 * only one part of it: their own jobs (alt 0) or an account's (alt k);
 * and of the jobs that are live or not (schema/0018): the job list's
 * indexes hold only those that are not, and an index that holds some rows
 * serves only a query that asks for no others. */
static void job_query_where(const JobQuery *q, FILE *f, ssize_t alt, int live) {
        fprintf(f, " WHERE j.live = %d", live);
        if (q->where[0])
                fprintf(f, " AND %s", q->where);
        if (q->viewer == 0)
                return;
        fputs(" AND ", f);
        if (alt == 0 || (alt < 0 && q->n_accounts == 0))
                fprintf(f, "j.user_name = ?%d", q->viewer);
        else if (alt > 0)
                fprintf(f, "j.account = ?%d", q->accounts[alt - 1]);
        else {
                /* live in each branch too: an index of one branch (an OR
                 * walks one per branch) must see that it may serve it */
                fprintf(f, "((j.user_name = ?%d AND j.live = %d) OR (j.live = %d AND j.account IN (", q->viewer, live,
                        live);
                for (size_t i = 0; i < q->n_accounts; i++)
                        fprintf(f, "%s?%d", i ? ", " : "", q->accounts[i]);
                fputs(")))", f);
        }
}

/* The order of each sort: its key, then the other two, then the row, all
 * in one direction, which is the order of the key's index. */
static const char *const job_sort_keys[_JOB_SORT_MAX][3] = {
        [JOB_SORT_LAST_SEEN] = { "last_seen", "first_seen", "cpu_seconds" },
        [JOB_SORT_FIRST_SEEN] = { "first_seen", "last_seen", "cpu_seconds" },
        [JOB_SORT_CPU_SECONDS] = { "cpu_seconds", "last_seen", "first_seen" },
};

void job_query_order(const JobFilter *f, FILE *out, const char *prefix) {
        const char *dir = f->ascending ? "ASC" : "DESC";
        const char *const *k = job_sort_keys[f->sort];

        fprintf(out, " ORDER BY %s%s %s, %s%s %s, %s%s %s, %sid %s", prefix, k[0], dir, prefix, k[1], dir,
                prefix, k[2], dir, prefix, dir);
}

/* The SQL of a page of ids (?L and ?L+1: limit and offset). Each part
 * walks an index in the list's order, and the database merges them: the
 * jobs that are not live through the filter's or the sort's index, the
 * live ones (a few thousand at most) through jobs_live, sorted apart. With
 * a viewer who leads accounts and the default order, that for their own
 * jobs and for each account: an OR would read every job the viewer may
 * see and sort them. A job may be both the viewer's and an account's, so
 * those parts are a UNION; the live and the others never overlap. */
void job_query_page(const JobQuery *q, const JobFilter *f, FILE *out) {
        bool merged = q->n_accounts > 0 && q->n_accounts <= JOBS_MAX_MERGED && f->sort == JOB_SORT_LAST_SEEN;
        size_t parts = merged ? q->n_accounts + 1 : 1;
        int l = (int) q->n_args + 1;

        for (size_t i = 0; i < parts; i++)
                for (int live = 0; live <= 1; live++) {
                        fprintf(out, "%sSELECT j.id AS id, j.last_seen AS last_seen, j.first_seen AS first_seen, "
                                "j.cpu_seconds AS cpu_seconds FROM jobs j",
                                i == 0 && live == 0 ? "" : merged ? " UNION " : " UNION ALL ");
                        job_query_where(q, out, merged ? (ssize_t) i : -1, live);
                }
        job_query_order(f, out, "");
        fprintf(out, " LIMIT ?%d OFFSET ?%d", l, l + 1);
}

/* Prepares sql (not cached: it depends on the filter) and binds the
 * query's arguments, then extra[] as integers after them. */
int job_query_prepare(Conn *c, const JobQuery *q, const char *sql, const int64_t *extra, size_t n_extra,
                      DbStmt **ret) {
        DbStmt *st;
        int r;

        r = db_prepare(c->db, sql, false, &st);
        if (r < 0)
                return r;
        for (size_t i = 0; r >= 0 && i < q->n_args; i++)
                r = q->args[i].text ? bind_nullable_text(st, (int) i + 1, q->args[i].text)
                                    : db_bind_int(st, (int) i + 1, q->args[i].num);
        for (size_t i = 0; r >= 0 && i < n_extra; i++)
                r = db_bind_int(st, (int) (q->n_args + i + 1), extra[i]);
        if (r < 0) {
                db_finalize(st);
                return r;
        }
        *ret = st;
        return 0;
}

int job_query_sql(const JobQuery *q, const JobFilter *f, JobQueryWriter fn, char **ret) {
        char *sql = NULL;
        size_t size;
        FILE *out = open_memstream(&sql, &size);

        if (!out)
                return -ENOMEM;
        fn(q, f, out);
        if (fclose(out) != 0) {
                free(sql);
                return -ENOMEM;
        }
        *ret = sql;
        return 0;
}

int job_query_step_int(Conn *c, const JobQuery *q, const JobFilter *f, JobQueryWriter fn, const int64_t *extra,
                       size_t n_extra, int64_t *ret) {
        _cleanup_free_ char *sql = NULL;
        DbStmt *st;
        int r;

        r = job_query_sql(q, f, fn, &sql);
        if (r < 0)
                return r;
        r = job_query_prepare(c, q, sql, extra, n_extra, &st);
        if (r < 0)
                return r;
        r = step_id(st, ret);
        db_finalize(st);
        return r;
}

static void job_query_list(const JobQuery *q, const JobFilter *f, FILE *out) {
        /* The page's ids first, from indexes alone; the columns (and the
         * count of nodes) then only for those. */
        fputs("WITH page AS MATERIALIZED (", out);
        job_query_page(q, f, out);
        fputs(") SELECT " JOB_COLUMNS " FROM page JOIN jobs j ON j.id = page.id", out);
        job_query_order(f, out, "j.");
}

/* Counts up to a limit (?N after the arguments): a capped count walks no
 * more of an index than the pages before it. */
static void job_query_count(const JobQuery *q, const JobFilter *f, FILE *out) {
        fputs("SELECT count(*) FROM (SELECT 1 FROM jobs j", out);
        job_query_where(q, out, -1, 0);
        fputs(" UNION ALL SELECT 1 FROM jobs j", out);
        job_query_where(q, out, -1, 1);
        fprintf(out, " LIMIT ?%zu) AS c", q->n_args + 1);
}

int sql_list_jobs(Storage *base, const JobFilter *f, JobList *ret) {
        SqlStorage *s = (SqlStorage *) base;
        /* one more than asked, to tell whether there are more */
        const int64_t page[2] = { (int64_t) f->limit + 1, f->offset };
        _cleanup_(job_query_done) JobQuery q = {};
        _cleanup_free_ char *sql = NULL;
        DbStmt *st = NULL;
        JobList l = {};
        size_t alloc = 0;
        Conn *c;
        int r, rc;

        db_purpose_set("listing jobs");
        if (f->sort < 0 || f->sort >= _JOB_SORT_MAX)
                return -EINVAL;
        if ((r = job_query_init(&q, f)) < 0 ||
            (r = job_query_sql(&q, f, job_query_list, &sql)) < 0)
                return r;

        reader_acquire(s, &c);
        /* one read transaction, so that the count and the page agree */
        r = conn_begin_read(c);
        if (r < 0) {
                reader_release(s, c);
                return r;
        }
        r = job_query_prepare(c, &q, sql, page, ELEMENTSOF(page), &st);
        if (r < 0)
                goto finish;
        while ((rc = db_step(st)) == 1) {
                int64_t id;

                if (l.n == f->limit) {
                        l.more = true;
                        break;
                }
                r = grow((void **) &l.items, l.n, &alloc, sizeof(StoredJob));
                if (r < 0)
                        goto finish;
                r = read_job_info(st, &l.items[l.n++], &id);
                if (r < 0)
                        goto finish;
        }
        if (rc != 1 && rc != 0) {
                r = step_errno(rc);
                goto finish;
        }
        if (f->count) {
                int64_t cap = (int64_t) f->offset + f->limit + JOBS_COUNT_AHEAD, total;

                r = job_query_step_int(c, &q, f, job_query_count, &(int64_t) { cap + 1 }, 1, &total);
                if (r < 0)
                        goto finish;
                l.total = (uint64_t) MIN(total, cap);
                l.total_exact = total <= cap;
        }

finish:
        db_finalize(st);
        reader_end_read(s, c);
        if (r < 0) {
                job_list_free(&l);
                return r;
        }
        *ret = l;
        return 0;
}
