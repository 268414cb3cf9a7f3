/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Summaries of many jobs, for the findings: a few reads for a whole page of jobs: the page's row ids and revisions
 * first (from the indexes), then, for the jobs wanted, their rows and
 * each part of their summaries by one statement over the list of their
 * ids. The parts carry object and node ids: their names are looked up once
 * per distinct id (thousands, against tens of thousands of rows), and the
 * summaries point to them (JobSummaryList.strings). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "db/sql/job-list.h"

enum { PART_OBJECTS, PART_NODES, PART_MARKERS, _PART_MAX };

static const Stmt summary_parts[_PART_MAX] = {
        [PART_OBJECTS] = STMT_SUMMARY_OBJECTS,
        [PART_NODES] = STMT_SUMMARY_NODES,
        [PART_MARKERS] = STMT_SUMMARY_MARKERS,
};

/* An object's (path, kind, build_id) or a node's (name, installed, -). */
typedef struct Names {
        char *s[3];
} Names;

typedef struct SummaryRead {
        Conn *c;
        JobSummaryList *l;
        Hashmap *jobs;          /* job row id → index + 1 */
        Hashmap *names[2];      /* object id, node id → Names */
        size_t (*alloc)[_PART_MAX];
        size_t alloc_strings;
} SummaryRead;

static int keep_string(SummaryRead *x, DbStmt *st, int col, char **ret) {
        JobSummaryList *l = x->l;
        int r = 0;

        *ret = column_strdup(st, col, &r);
        if (r < 0 || !*ret)
                return r;
        r = grow((void **) &l->strings, l->n_strings, &x->alloc_strings, sizeof(char *));
        if (r < 0) {
                free(*ret);
                return r;
        }
        l->strings[l->n_strings++] = *ret;
        return 0;
}

/* The names of object or node id, looked up on first use. */
static int summary_names(SummaryRead *x, int which, int64_t id, const Names **ret) {
        Names *n = hashmap_get(x->names[which], INT_TO_KEY(id));
        DbStmt *st;
        int r, rc;

        if (n) {
                *ret = n;
                return 0;
        }
        if ((r = conn_stmt(x->c, which == PART_OBJECTS ? STMT_OBJECT_NAME : STMT_NODE_NAME, &st)) < 0 ||
            (r = db_bind_int(st, 1, id)) < 0)
                return r;
        rc = db_step(st);
        if (rc != 1)
                return rc == 0 ? -ENOENT : step_errno(rc);
        n = calloc(1, sizeof(Names));
        if (!n)
                return -ENOMEM;
        r = hashmap_put(x->names[which], INT_TO_KEY(id), n);
        if (r < 0) {
                free(n);
                return r;
        }
        for (int i = 0; r >= 0 && i < (which == PART_OBJECTS ? 3 : 2); i++)
                r = keep_string(x, st, i, &n->s[i]);
        db_reset(st);
        *ret = n;
        return r;
}

static int read_summary_row(SummaryRead *x, DbStmt *st, int part, JobSummary *js, size_t *alloc) {
        const Names *n;
        int r;

        switch (part) {
        case PART_OBJECTS:
                if ((r = summary_names(x, PART_OBJECTS, db_column_int(st, 1), &n)) < 0 ||
                    (r = grow((void **) &js->objects.items, js->objects.n, alloc, sizeof(Share))) < 0)
                        return r;
                js->objects.items[js->objects.n++] = (Share) {
                        .name = n->s[0], .kind = n->s[1], .build_id = n->s[2] && *n->s[2] ? n->s[2] : NULL,
                        .samples = db_column_int(st, 2),
                        .cpu_seconds = db_column_double(st, 3),
                        .cpu_time_ns = column_nullable_int(st, 4),
                        .cycles = column_nullable_int(st, 5),
                        .instructions = column_nullable_int(st, 6),
                        .first_seen = NAN, .last_seen = NAN,
                };
                return 0;
        case PART_NODES:
                if ((r = summary_names(x, PART_NODES, db_column_int(st, 1), &n)) < 0 ||
                    (r = grow((void **) &js->nodes.items, js->nodes.n, alloc, sizeof(Share))) < 0)
                        return r;
                js->nodes.items[js->nodes.n++] = (Share) {
                        .name = n->s[0], .installed = n->s[1],
                        .samples = db_column_int(st, 2),
                        .first_seen = db_column_double(st, 3),
                        .last_seen = db_column_double(st, 4),
                        .cpu_seconds = db_column_double(st, 5),
                        .cpus_alloc = column_nullable_int(st, 6),
                        .cpu_time_ns = STORAGE_NULL, .cycles = STORAGE_NULL, .instructions = STORAGE_NULL,
                };
                return 0;
        default:
                r = grow((void **) &js->markers, js->n_markers, alloc, sizeof(Marker));
                if (r < 0)
                        return r;
                return read_marker_row(st, 1, &js->markers[js->n_markers++]);
        }
}

/* Steps a statement over the wanted ids (?1, a JSON array). */
static int summary_stmt(SummaryRead *x, Stmt id, const char *ids, DbStmt **ret) {
        int r = conn_stmt(x->c, id, ret);

        return r < 0 ? r : bind_nullable_text(*ret, 1, ids);
}

static int read_summary_part(SummaryRead *x, const char *ids, int part) {
        DbStmt *st;
        int r, rc = 0;

        r = summary_stmt(x, summary_parts[part], ids, &st);
        while (r >= 0 && (rc = db_step(st)) == 1) {
                size_t i = (uintptr_t) hashmap_get(x->jobs, INT_TO_KEY(db_column_int(st, 0)));

                if (i > 0) /* always: the ids are the jobs read */
                        r = read_summary_row(x, st, part, &x->l->items[i - 1], &x->alloc[i - 1][part]);
        }
        if (r >= 0 && rc != 0)
                r = step_errno(rc);
        return r;
}

static void page_rows_sql(const JobQuery *q, const JobFilter *f, FILE *out) {
        fputs("WITH page AS MATERIALIZED (", out);
        job_query_page(q, f, out);
        fputs(") SELECT j.id, j.revision FROM page JOIN jobs j ON j.id = page.id", out);
        job_query_order(f, out, "j.");
}

/* The row ids and revisions of the page; the ids of the jobs wanted into
 * *ids (a JSON array). */
static int summary_page(SummaryRead *x, const JobQuery *q, const JobFilter *f, JobWant want, void *userdata,
                        char **ids) {
        const int64_t page[2] = { (int64_t) f->limit + 1, f->offset };
        _cleanup_fclose_ FILE *out = NULL;
        _cleanup_free_ char *sql = NULL;
        size_t size, n = 0;
        DbStmt *st;
        int r, rc = 0;

        r = job_query_sql(q, f, page_rows_sql, &sql);
        if (r < 0)
                return r;
        r = job_query_prepare(x->c, q, sql, page, ELEMENTSOF(page), &st);
        if (r < 0)
                return r;
        out = open_memstream(ids, &size);
        if (!out) {
                db_finalize(st);
                return -ENOMEM;
        }
        fputc('[', out);
        while ((rc = db_step(st)) == 1) {
                int64_t id = db_column_int(st, 0);

                if (x->l->n_jobs == f->limit) {
                        x->l->more = true;
                        break;
                }
                x->l->n_jobs++;
                if (!want || want(id, db_column_int(st, 1), userdata))
                        fprintf(out, "%s%" PRId64, n++ ? "," : "", id);
        }
        fputc(']', out);
        if (rc != 1 && rc != 0)
                r = step_errno(rc);
        db_finalize(st);
        if (fclose(TAKE_PTR(out)) != 0 && r >= 0)
                r = -ENOMEM;
        return r;
}

static int64_t sum_nullable(int64_t sum, int64_t v) {
        if (v == STORAGE_NULL)
                return sum;
        if (sum == STORAGE_NULL)
                return v;
        return __builtin_add_overflow(sum, v, &sum) ? INT64_MAX : sum;
}

static int by_samples_then_name(const void *a, const void *b) {
        const Share *x = a, *y = b;

        if (x->samples != y->samples)
                return CMP(y->samples, x->samples);
        return strcmp(x->name, y->name);
}

static int by_share_name(const void *a, const void *b) {
        return strcmp(((const Share *) a)->name, ((const Share *) b)->name);
}

static int by_marker(const void *a, const void *b) {
        const Marker *x = a, *y = b;
        int c = strcmp(x->phase, y->phase);

        if (c == 0)
                c = strcmp(x->comm, y->comm);
        return c ? c : strcmp(x->state, y->state);
}

/* Puts a summary read in parts into the order and shape get_job gives:
 * objects by samples (the first JOB_SUMMARY_MAX_OBJECTS), their kinds
 * summed over all of them, nodes by name, markers by phase. */
static int finish_summary(JobSummary *js) {
        size_t alloc = 0;
        int r;

        if (js->objects.n > 1)
                qsort(js->objects.items, js->objects.n, sizeof(Share), by_samples_then_name);
        for (size_t i = 0; i < js->objects.n; i++) {
                const Share *o = &js->objects.items[i];
                Share *k = NULL;

                for (size_t j = 0; j < js->kinds.n && !k; j++)
                        if (streq(js->kinds.items[j].name, o->kind))
                                k = &js->kinds.items[j];
                if (!k) {
                        r = grow((void **) &js->kinds.items, js->kinds.n, &alloc, sizeof(Share));
                        if (r < 0)
                                return r;
                        k = &js->kinds.items[js->kinds.n++];
                        *k = (Share) { .name = o->kind, .cpu_time_ns = STORAGE_NULL, .cycles = STORAGE_NULL,
                                       .instructions = STORAGE_NULL, .first_seen = NAN, .last_seen = NAN };
                }
                k->samples = sum_nullable(k->samples, o->samples);
                k->cpu_seconds += o->cpu_seconds;
                k->cpu_time_ns = sum_nullable(k->cpu_time_ns, o->cpu_time_ns);
                k->cycles = sum_nullable(k->cycles, o->cycles);
                k->instructions = sum_nullable(k->instructions, o->instructions);
        }
        if (js->kinds.n > 1)
                qsort(js->kinds.items, js->kinds.n, sizeof(Share), by_samples_then_name);
        if (js->objects.n > JOB_SUMMARY_MAX_OBJECTS) {
                js->objects.n = JOB_SUMMARY_MAX_OBJECTS;
                js->objects_truncated = true;
        }
        if (js->nodes.n > 1)
                qsort(js->nodes.items, js->nodes.n, sizeof(Share), by_share_name);
        if (js->n_markers > 1)
                qsort(js->markers, js->n_markers, sizeof(Marker), by_marker);
        return 0;
}

static void names_free(Hashmap *h) {
        Names *n;
        size_t i;

        HASHMAP_FOREACH(n, h, i)
                free(n);
        hashmap_free(h);
}

int sql_list_job_summaries(Storage *base, const JobFilter *f, JobWant want, void *userdata,
                                     JobSummaryList *ret) {
        SqlStorage *s = (SqlStorage *) base;
        _cleanup_(job_query_done) JobQuery q = {};
        _cleanup_free_ char *ids = NULL;
        JobSummaryList l = {};
        SummaryRead x = { .l = &l };
        DbStmt *st;
        size_t n_alloc = 0;
        int r, rc = 0;

        db_purpose_set("reading job summaries");
        if (f->sort < 0 || f->sort >= _JOB_SORT_MAX)
                return -EINVAL;
        r = job_query_init(&q, f);
        if (r < 0)
                return r;
        x.jobs = hashmap_new(&uint64_hash_ops);
        x.names[0] = hashmap_new(&uint64_hash_ops);
        x.names[1] = hashmap_new(&uint64_hash_ops);
        if (!x.jobs || !x.names[0] || !x.names[1]) {
                r = -ENOMEM;
                goto free;
        }

        reader_acquire(s, &x.c);
        /* one read transaction: the parts of each summary add up */
        r = conn_begin_read(x.c);
        if (r < 0) {
                reader_release(s, x.c);
                goto free;
        }
        r = summary_page(&x, &q, f, want, userdata, &ids);
        if (r >= 0)
                r = summary_stmt(&x, STMT_SUMMARY_JOBS, ids, &st);
        while (r >= 0 && (rc = db_step(st)) == 1) {
                int64_t id;

                if ((r = grow((void **) &l.items, l.n, &n_alloc, sizeof(JobSummary))) < 0 ||
                    (r = read_job_info(st, &l.items[l.n++].info, &id)) < 0 ||
                    (r = hashmap_put(x.jobs, INT_TO_KEY(id), (void *) (uintptr_t) l.n)) < 0)
                        break;
        }
        if (r >= 0 && rc != 0)
                r = step_errno(rc);
        if (r >= 0 && l.n > 0) {
                x.alloc = calloc(l.n, sizeof(*x.alloc));
                if (!x.alloc)
                        r = -ENOMEM;
        }
        for (int part = 0; r >= 0 && l.n > 0 && part < _PART_MAX; part++)
                r = read_summary_part(&x, ids, part);
        reader_end_read(s, x.c);
        for (size_t i = 0; r >= 0 && i < l.n; i++)
                r = finish_summary(&l.items[i]);
free:
        free(x.alloc);
        hashmap_free(x.jobs);
        names_free(x.names[0]);
        names_free(x.names[1]);
        if (r < 0) {
                job_summary_list_free(&l);
                return r;
        }
        *ret = l;
        return 0;
}
