/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Storing a batch's functions (schema/0021): interned like objects,
 * summed per job in memory, then one guarded upsert per (job, function)
 * and per (job, phase, function), as the rows' rollups are; and the
 * site's sums by function, application-mix key and node type in the
 * batch's day and week (schema/0024), with the jobs' time they are a
 * share of. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db/sql/ingest-functions.h"

static int cmp_int(int64_t x, int64_t y) {
        return (x > y) - (x < y);
}

static int compare_abc(const void *x, const void *y, void *userdata) {
        const Acc *pool = userdata, *p = &pool[*(const size_t *) x], *q = &pool[*(const size_t *) y];

        return cmp_int(p->a, q->a) ?: cmp_int(p->b, q->b) ?: cmp_int(p->c, q->c);
}

static int compare_bca(const void *x, const void *y, void *userdata) {
        const Acc *pool = userdata, *p = &pool[*(const size_t *) x], *q = &pool[*(const size_t *) y];

        return cmp_int(p->b, q->b) ?: cmp_int(p->c, q->c) ?: cmp_int(p->a, q->a);
}

/* The order a map's sums are written in: their table's key order, so that
 * each upsert descends the B-tree to the pages the one before it touched,
 * still in the CPU's caches (in the order the batch named them, they were
 * scattered over the table). by_key: (b, c, a), the order of the tables
 * keyed (mix key, bucket, node type, function); else (a, b, c). */
static size_t *sums_order(const AccMap *m, bool by_key) {
        size_t *order = malloc(MAX(m->n, (size_t) 1) * sizeof(size_t));

        if (!order)
                return NULL;
        for (size_t i = 0; i < m->n; i++)
                order[i] = i;
        qsort_r(order, m->n, sizeof(size_t), by_key ? compare_bca : compare_abc, m->pool);
        return order;
}

typedef struct FunctionRows {
        const AccMap *sums;
        const size_t *order;
        bool phases;            /* keys (job, phase, function); else (job, function, 0) */
} FunctionRows;

static int bind_function_row(DbStmt *st, int k, size_t i, void *userdata) {
        const FunctionRows *f = userdata;
        const Acc *a = &f->sums->pool[f->order[i]];
        int r;

        if ((r = db_bind_int(st, k++, a->a)) < 0 ||
            (r = db_bind_int(st, k++, a->b)) < 0 ||
            (f->phases && (r = db_bind_int(st, k++, a->c)) < 0) ||
            (r = db_bind_int(st, k, a->samples)) < 0 ||
            (r = bind_sum(st, k + 1, a->cpu_seconds)) < 0 ||
            (r = bind_nullable_int(st, k + 2, a->cycles)) < 0 ||
            (r = bind_nullable_int(st, k + 3, a->instructions)) < 0)
                return r;
        return 0;
}

static int write_function_sums(IngestCtx *x, const AccMap *m, bool phases) {
        _cleanup_free_ size_t *order = sums_order(m, false);
        FunctionRows f = { m, order, phases };
        int r;

        if (!order)
                return -ENOMEM;
        r = conn_write_rows(&x->s->writer, phases ? STMT_JOB_PHASE_FUNCTION_UPSERT : STMT_JOB_FUNCTION_UPSERT, m->n,
                            bind_function_row, &f, true);

        if (r == -EOVERFLOW)
                return overflow(x, "functions", "adding this batch's functions to a job's stored sums per %s would "
                                "overflow", phases ? "phase and function" : "function");
        return r;
}

static int bind_known_row(DbStmt *st, int k, size_t i, void *userdata) {
        const Acc *a = &((const IngestCtx *) userdata)->job_functions.pool[i];
        int r;

        if ((r = db_bind_int(st, k, (int64_t) i)) < 0 ||
            (r = db_bind_int(st, k + 1, a->a)) < 0 ||
            (r = db_bind_int(st, k + 2, a->b)) < 0)
                return r;
        return 0;
}

static int read_known_row(DbStmt *st, void *userdata) {
        IngestCtx *x = userdata;
        int64_t i = db_column_int(st, 0);

        if (i < 0 || (size_t) i >= x->job_functions.n)
                return -EIO;
        x->function_known[i] = true;
        return 0;
}

/* What the site's sums of a batch write (schema/0024), per grain. */
typedef enum SiteRowKind {
        SITE_FUNCTION,          /* (function): function_days, _weeks */
        SITE_KEY,               /* (function, mix key, node type): function_key_days, _weeks */
        SITE_SCOPE,             /* (mix key, node type): function_scope_days, _weeks */
        SITE_TOTAL,             /* (): function_total_days, _weeks */
        SITE_SPAN,              /* (function, who): function_users, function_apps */
} SiteRowKind;

typedef struct SiteRows {
        const AccMap *sums;
        const size_t *order;    /* of sums, in the table's key order */
        SiteRowKind kind;
        int64_t bucket;
        char *const *names;     /* SITE_SPAN: who, by the key's b */
} SiteRows;

static int bind_site_row(DbStmt *st, int k, size_t i, void *userdata) {
        const SiteRows *o = userdata;
        const Acc *a = &o->sums->pool[o->order[i]];
        int r;

        switch (o->kind) {
        case SITE_SPAN:
                if ((r = db_bind_int(st, k, a->a)) < 0 ||
                    (r = db_bind_text(st, k + 1, o->names[a->b])) < 0 ||
                    (r = db_bind_int(st, k + 2, o->bucket)) < 0 ||
                    (r = db_bind_int(st, k + 3, o->bucket)) < 0 ||
                    (r = db_bind_int(st, k + 4, a->samples)) < 0)
                        return r;
                return 0;
        case SITE_TOTAL:
                if ((r = db_bind_int(st, k, o->bucket)) < 0 ||
                    (r = db_bind_int(st, k + 1, a->samples)) < 0 ||
                    (r = bind_sum(st, k + 2, a->cpu_seconds)) < 0)
                        return r;
                return 0;
        case SITE_SCOPE:
                if ((r = db_bind_int(st, k, a->a)) < 0 ||
                    (r = db_bind_int(st, k + 1, o->bucket)) < 0 ||
                    (r = db_bind_int(st, k + 2, a->b)) < 0 ||
                    (r = db_bind_int(st, k + 3, a->samples)) < 0 ||
                    (r = bind_sum(st, k + 4, a->cpu_seconds)) < 0)
                        return r;
                return 0;
        case SITE_KEY:
                /* (mix key, bucket, node type, function) */
                if ((r = db_bind_int(st, k++, a->b)) < 0 ||
                    (r = db_bind_int(st, k++, o->bucket)) < 0 ||
                    (r = db_bind_int(st, k++, a->c)) < 0 ||
                    (r = db_bind_int(st, k++, a->a)) < 0)
                        return r;
                break;
        case SITE_FUNCTION:
                if ((r = db_bind_int(st, k++, o->bucket)) < 0 ||
                    (r = db_bind_int(st, k++, a->a)) < 0)
                        return r;
                break;
        }
        if ((r = db_bind_int(st, k, a->samples)) < 0 ||
            (r = bind_sum(st, k + 1, a->cpu_seconds)) < 0 ||
            (r = bind_nullable_double(st, k + 2, a->cycles == STORAGE_NULL ? NAN : (double) a->cycles)) < 0 ||
            (r = bind_nullable_double(st, k + 3, a->instructions == STORAGE_NULL ? NAN : (double) a->instructions)) < 0 ||
            (r = db_bind_int(st, k + 4, a->jobs)) < 0)
                return r;
        return 0;
}

static int64_t job_mix_key(const JobAcc *j) {
        return j->mix_key == STORAGE_NULL ? 0 : j->mix_key;
}

/* The index of name in names (a batch's few users or applications). */
static int64_t name_index(char **names, size_t *n, const char *name) {
        for (size_t i = 0; i < *n; i++)
                if (streq(names[i], name))
                        return (int64_t) i;
        names[*n] = (char *) name;
        return (int64_t) (*n)++;
}

/* The site's sums (schema/0024) of the batch's functions, into the batch's
 * day and week: per function, per (function, mix key, node type), who ran
 * each and in which applications, and its jobs' samples of every kind.
 * A job counts for a function when the function is new to it (not in
 * job_functions before this batch). */
static int write_site_sums(IngestCtx *x) {
        static const struct {
                Stmt function, key, scope, total;
                int64_t seconds;
                const char *name;
        } grains[] = {
                { STMT_FUNCTION_DAY_UPSERT, STMT_FUNCTION_KEY_DAY_UPSERT, STMT_FUNCTION_SCOPE_DAY_UPSERT,
                  STMT_FUNCTION_TOTAL_DAY_UPSERT, DAY_SECONDS, "day" },
                { STMT_FUNCTION_WEEK_UPSERT, STMT_FUNCTION_KEY_WEEK_UPSERT, STMT_FUNCTION_SCOPE_WEEK_UPSERT,
                  STMT_FUNCTION_TOTAL_WEEK_UPSERT, WEEK_SECONDS, "week" },
        };
        _cleanup_(hashmap_freep) Hashmap *by_id = hashmap_new(&uint64_hash_ops);
        _cleanup_free_ char **users = calloc(MAX(x->n_jobs, (size_t) 1), sizeof(char *));
        _cleanup_free_ char **apps = calloc(MAX(x->n_jobs, (size_t) 1), sizeof(char *));
        int64_t node_type = x->node_type_id == STORAGE_NULL ? 0 : x->node_type_id;
        int64_t day = x->bucket - x->bucket % DAY_SECONDS;
        AccMap functions = {}, scope = {}, total = {}, user_spans = {}, app_spans = {};
        size_t *order[6] = {};  /* of functions, function_sums, scope, total, user_spans, app_spans */
        size_t n_users = 0, n_apps = 0;
        int r;

        if (!by_id || !users || !apps)
                return -ENOMEM;
        for (size_t i = 0; i < x->n_jobs; i++)
                if ((r = hashmap_put(by_id, INT_TO_KEY(x->job_pool[i].id), &x->job_pool[i])) < 0)
                        return r;
        if (x->job_functions.n > 0) {
                memset(x->function_known, 0, x->job_functions.n * sizeof(bool));
                r = conn_read_rows(&x->s->writer, STMT_JOB_FUNCTIONS_KNOWN, x->job_functions.n, bind_known_row,
                                   read_known_row, x);
                if (r < 0)
                        return r;
        }
        if ((r = acc_map_init(&functions, x->job_functions.n)) < 0 ||
            (r = acc_map_init(&user_spans, x->job_functions.n)) < 0 ||
            (r = acc_map_init(&app_spans, x->job_functions.n)) < 0 ||
            (r = acc_map_init(&scope, x->n_jobs)) < 0 ||
            (r = acc_map_init(&total, 1)) < 0)
                goto finish;
        for (size_t i = 0; i < x->job_functions.n; i++) {
                const Acc *a = &x->job_functions.pool[i];
                const JobAcc *j = hashmap_get(by_id, INT_TO_KEY(a->a));
                BatchFunction f = { .samples = a->samples, .cycles = a->cycles, .instructions = a->instructions };
                Acc *by_key, *by_function;

                if (!j) {
                        r = -EIO;
                        goto finish;
                }
                if ((r = acc_add_function(&x->function_sums, a->b, job_mix_key(j), node_type, &f, a->cpu_seconds,
                                          &by_key)) < 0 ||
                    (r = acc_add_function(&functions, a->b, 0, 0, &f, a->cpu_seconds, &by_function)) < 0)
                        goto finish;
                by_key->jobs += !x->function_known[i];
                by_function->jobs += !x->function_known[i];
                /* who: the key's user and application, as its columns name them */
                if (j->mix_dims[1] && *j->mix_dims[1] &&
                    (r = acc_add_function(&user_spans, a->b, name_index(users, &n_users, j->mix_dims[1]), 0, &f,
                                          0, NULL)) < 0)
                        goto finish;
                if (j->mix_dims[0] && *j->mix_dims[0] &&
                    (r = acc_add_function(&app_spans, a->b, name_index(apps, &n_apps, j->mix_dims[0]), 0, &f,
                                          0, NULL)) < 0)
                        goto finish;
        }
        for (size_t i = 0; i < x->n_jobs; i++) {
                const JobAcc *j = &x->job_pool[i];
                BatchFunction f = { .samples = j->samples, .cycles = STORAGE_NULL, .instructions = STORAGE_NULL };

                if (j->samples > 0 &&
                    ((r = acc_add_function(&scope, job_mix_key(j), node_type, 0, &f, j->cpu_seconds, NULL)) < 0 ||
                     (r = acc_add_function(&total, 0, 0, 0, &f, j->cpu_seconds, NULL)) < 0))
                        goto finish;
        }
        {
                const AccMap *maps[ELEMENTSOF(order)] = { &functions, &x->function_sums, &scope, &total, &user_spans,
                                                          &app_spans };

                for (size_t k = 0; k < ELEMENTSOF(order); k++)
                        if (!(order[k] = sums_order(maps[k], k == 1))) {
                                r = -ENOMEM;
                                goto finish;
                        }
        }
        for (size_t g = 0; g < ELEMENTSOF(grains); g++) {
                int64_t bucket = x->bucket - x->bucket % grains[g].seconds;
                const struct {
                        Stmt stmt;
                        SiteRows rows;
                } writes[] = {
                        { grains[g].function, { &functions, order[0], SITE_FUNCTION, bucket, NULL } },
                        { grains[g].key, { &x->function_sums, order[1], SITE_KEY, bucket, NULL } },
                        { grains[g].scope, { &scope, order[2], SITE_SCOPE, bucket, NULL } },
                        { grains[g].total, { &total, order[3], SITE_TOTAL, bucket, NULL } },
                };

                for (size_t w = 0; w < ELEMENTSOF(writes); w++) {
                        r = conn_write_rows(&x->s->writer, writes[w].stmt, writes[w].rows.sums->n, bind_site_row,
                                            (void *) &writes[w].rows, true);
                        if (r == -EOVERFLOW)
                                r = overflow(x, "functions", "adding this batch to the site's samples per function "
                                             "in that %s would overflow", grains[g].name);
                        if (r < 0)
                                goto finish;
                }
        }
        {
                SiteRows u = { &user_spans, order[4], SITE_SPAN, day, users },
                         p = { &app_spans, order[5], SITE_SPAN, day, apps };

                r = conn_write_rows(&x->s->writer, STMT_FUNCTION_USER_UPSERT, user_spans.n, bind_site_row, &u, false);
                if (r >= 0)
                        r = conn_write_rows(&x->s->writer, STMT_FUNCTION_APP_UPSERT, app_spans.n, bind_site_row, &p,
                                            false);
        }
finish:
        for (size_t k = 0; k < ELEMENTSOF(order); k++)
                free(order[k]);
        acc_map_done(&functions);
        acc_map_done(&user_spans);
        acc_map_done(&app_spans);
        acc_map_done(&scope);
        acc_map_done(&total);
        return r;
}

int ingest_functions(IngestCtx *x) {
        const Batch *b = x->b;
        double cps = 1.0 / b->frequency_hz;
        int r;

        for (size_t i = 0; i < b->n_functions; i++) {
                const BatchFunction *f = &b->functions[i];
                const JobAcc *j = f->job ? hashmap_get(x->jobs, f->job) : NULL;
                int64_t object_id, phase_id, function_id;
                double cpu_seconds = (double) f->samples * cps;

                if (!j)
                        continue;
                /* its row's object and phase (f->row: one of its object,
                 * phase and build), as ingest_rows() interned them; unless
                 * it is of several builds (build_id "") and the row of one */
                phase_id = x->row_ids[3 * f->row + 1];
                if (streq(f->build_id, b->rows[f->row].build_id))
                        object_id = x->row_ids[3 * f->row];
                else if ((r = intern(x->s, x->s->object_ids, STMT_OBJECT_SELECT, STMT_OBJECT_INSERT, f->object,
                                     code_kind_to_string(f->kind), f->build_id, 3, &object_id)) < 0)
                        return r;
                if ((r = intern_function(x->s, object_id, f->function ?: "", f->offset != BATCH_NULL ? f->offset : -1,
                                         f->entry, &function_id)) < 0)
                        return r;
                if ((r = acc_add_function(&x->job_functions, j->id, function_id, 0, f, cpu_seconds, NULL)) < 0 ||
                    (r = acc_add_function(&x->job_phase_functions, j->id, phase_id, function_id, f, cpu_seconds,
                                          NULL)) < 0)
                        return r;
        }
        /* before job_functions takes this batch: which functions are new
         * to their jobs */
        r = write_site_sums(x);
        if (r < 0)
                return r;
        r = write_function_sums(x, &x->job_functions, false);
        if (r < 0)
                return r;
        return write_function_sums(x, &x->job_phase_functions, true);
}
