/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A job's functions, over its phases or per phase, the most samples first.
 * Their sums are packed per (job, object) (schema/0025, function-pack.h):
 * decoded here, named by the database (a multi-row statement of the sums,
 * joined to functions, objects and the names found since), then ordered
 * here as the tables' rows were by SQL. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "db/sql/function-pack.h"
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

/* What a function is ordered by besides its FunctionShare. */
typedef struct OrderKey {
        char *name;             /* functions.name: '' unless lmkd named it */
        int64_t file_offset, object_id, function_id, phase_id;
} OrderKey;

typedef struct Naming {
        const JobFunctionSum **sums;       /* bound, by place */
        size_t n;
        bool per_phase;
        int64_t job_id;                 /* whose phases' samples; -1: none */
        FunctionShare *items;           /* answered, in any order */
        OrderKey *keys;
        size_t n_items;
} Naming;

static int bind_sum_row(DbStmt *st, int k, size_t i, void *userdata) {
        const Naming *g = userdata;
        const JobFunctionSum *x = g->sums[i];
        int r;

        if ((r = db_bind_int(st, k, (int64_t) i)) < 0 || (r = db_bind_int(st, k + 1, x->function_id)) < 0 ||
            (r = db_bind_int(st, k + 2, x->samples)) < 0 || (r = db_bind_double(st, k + 3, x->cpu_seconds)) < 0 ||
            (r = bind_nullable_int(st, k + 4, x->cycles)) < 0 ||
            (r = bind_nullable_int(st, k + 5, x->instructions)) < 0)
                return r;
        if (g->per_phase &&
            ((r = db_bind_int(st, k + 6, g->job_id)) < 0 || (r = db_bind_int(st, k + 7, x->phase_id)) < 0))
                return r;
        return 0;
}

static int read_named_row(DbStmt *st, void *userdata) {
        Naming *g = userdata;
        int col = g->per_phase ? 13 : 11;
        int64_t place = db_column_int(st, col + 2);
        FunctionShare *x;
        OrderKey *k;
        int r;

        if (place < 0 || (size_t) place >= g->n || g->n_items == g->n)
                return -EIO;
        x = &g->items[g->n_items];
        k = &g->keys[g->n_items++];
        r = read_function_row(st, 0, x);
        if (r >= 0 && g->per_phase) {
                x->phase = column_strdup(st, 11, &r);
                x->phase_samples = db_column_int(st, 12);
        }
        k->name = column_strdup(st, col, &r);
        k->file_offset = db_column_int(st, 4);
        k->object_id = db_column_int(st, col + 1);
        k->function_id = g->sums[place]->function_id;
        k->phase_id = g->sums[place]->phase_id;
        return r;
}

static int cmp_int(int64_t x, int64_t y) {
        return (x > y) - (x < y);
}

static int cmp_text(const char *x, const char *y) {
        return strcmp(x ?: "", y ?: "");
}

/* As the tables' rows were read: samples DESC, o.path, f.name,
 * f.file_offset, o.id (then p.path); text in byte order, as SQLite's and
 * PostgreSQL's "C" collation compare it. The ids last, so that no two
 * compare equal. */
static int compare_named(const void *a, const void *b, void *userdata) {
        const Naming *g = userdata;
        size_t i = *(const size_t *) a, j = *(const size_t *) b;
        const FunctionShare *x = &g->items[i], *y = &g->items[j];
        const OrderKey *p = &g->keys[i], *q = &g->keys[j];

        return cmp_int(y->samples, x->samples) ?: cmp_text(x->object, y->object) ?: cmp_text(p->name, q->name) ?:
               cmp_int(p->file_offset, q->file_offset) ?: cmp_int(p->object_id, q->object_id) ?:
               cmp_text(x->phase, y->phase) ?: cmp_int(p->function_id, q->function_id) ?:
               cmp_int(p->phase_id, q->phase_id);
}

static int compare_samples(const void *a, const void *b) {
        const JobFunctionSum *x = *(const JobFunctionSum *const *) a, *y = *(const JobFunctionSum *const *) b;

        return cmp_int(y->samples, x->samples);
}

/* Only what can make the first limit + 1 (the one past tells that there
 * are more): those with at least as many samples as the one at limit,
 * ties included, since the names order them. The rest need no name. */
static size_t cut_to_limit(const JobFunctionSum **sums, size_t n, size_t limit) {
        size_t keep;

        if (n <= limit || n - limit <= 1)
                return n;
        keep = limit + 1;
        qsort(sums, n, sizeof(*sums), compare_samples);
        while (keep < n && sums[keep]->samples == sums[limit]->samples)
                keep++;
        return keep;
}

static void share_free(FunctionShare *x) {
        free(x->object);
        free(x->kind);
        free(x->build_id);
        free(x->name);
        free(x->phase);
}

int name_function_sums(Conn *c, const JobFunctionSums *sums, bool per_phase, int64_t job_id, size_t limit,
                       FunctionList *ret) {
        Naming g = { .per_phase = per_phase, .job_id = job_id };
        _cleanup_free_ size_t *order = NULL;
        FunctionList l = {};
        size_t all;
        int r;

        g.sums = malloc(MAX(sums->n, (size_t) 1) * sizeof(JobFunctionSum *));
        g.items = calloc(MAX(sums->n, (size_t) 1), sizeof(FunctionShare));
        g.keys = calloc(MAX(sums->n, (size_t) 1), sizeof(OrderKey));
        if (!g.sums || !g.items || !g.keys) {
                r = -ENOMEM;
                goto finish;
        }
        for (size_t i = 0; i < sums->n; i++)
                if ((sums->items[i].phase_id != 0) == per_phase)
                        g.sums[g.n++] = &sums->items[i];
        all = g.n;
        g.n = cut_to_limit(g.sums, g.n, limit);
        r = conn_read_rows(c, per_phase ? STMT_PHASE_FUNCTION_ROWS : STMT_FUNCTION_ROWS, g.n, bind_sum_row,
                           read_named_row, &g);
        if (r < 0)
                goto finish;
        order = malloc(MAX(g.n_items, (size_t) 1) * sizeof(size_t));
        l.items = calloc(MAX(MIN(g.n_items, limit), (size_t) 1), sizeof(FunctionShare));
        if (!order || !l.items) {
                r = -ENOMEM;
                goto finish;
        }
        for (size_t i = 0; i < g.n_items; i++)
                order[i] = i;
        qsort_r(order, g.n_items, sizeof(size_t), compare_named, &g);
        for (size_t i = 0; i < g.n_items && i < limit; i++) {
                l.items[l.n++] = g.items[order[i]];
                g.items[order[i]] = (FunctionShare) {};
        }
        l.truncated = g.n_items > limit || all > g.n;
        *ret = l;
        l = (FunctionList) {};
        r = 0;
finish:
        for (size_t i = 0; i < g.n_items; i++) {
                share_free(&g.items[i]);
                free(g.keys[i].name);
        }
        free(g.items);
        free(g.keys);
        free(g.sums);
        function_list_free(&l);
        return r;
}

int read_job_functions(Conn *c, int64_t job_id, bool per_phase, size_t limit, FunctionList *ret) {
        _cleanup_(function_sums_done) JobFunctionSums all = {}, one = {};
        DbStmt *st;
        int r, rc;

        r = conn_stmt(c, STMT_JOB_FUNCTION_PACKS, &st);
        if (r < 0 || (r = db_bind_int(st, 1, job_id)) < 0)
                return r;
        while ((rc = db_step(st)) == 1) {
                size_t len;
                const void *data = db_column_blob(st, 0, &len);

                r = function_pack_decode(data, len, &one);
                for (size_t i = 0; r >= 0 && i < one.n; i++)
                        r = function_sums_append(&all, &one.items[i]);
                if (r < 0) {
                        db_reset(st);
                        return r;
                }
        }
        db_reset(st);
        if (rc < 0)
                return step_errno(rc);
        return name_function_sums(c, &all, per_phase, job_id, limit, ret);
}
