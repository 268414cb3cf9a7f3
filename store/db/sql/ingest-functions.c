/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Storing a batch's functions (schema/0021): interned like objects,
 * summed per job in memory, then added to each job's packed sums of each
 * object (schema/0025, function-pack.h): the packs the batch touches read
 * in one statement, merged in memory, written back in another; and the
 * site's sums by function, application-mix key and node type in the
 * batch's day (schema/0024), with the jobs' time they are a share of, as
 * one packed row for a fold to add to the tables (schema/0027). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "db/sql/function-pack.h"
#include "db/sql/ingest-functions.h"
#include "db/sql/site-sums.h"

static int cmp_int(int64_t x, int64_t y) {
        return (x > y) - (x < y);
}

/* A job's sums of one object: what is stored, and what the batch adds. */
typedef struct Pack {
        int64_t job_id, object_id;
        JobFunctionSums stored, added;
        uint8_t *packed;
        size_t len;
} Pack;

typedef struct Packs {
        Pack *items;    /* in (job, object) order */
        size_t n;
} Packs;

static void packs_done(Packs *p) {
        for (size_t i = 0; i < p->n; i++) {
                function_sums_done(&p->items[i].stored);
                function_sums_done(&p->items[i].added);
                free(p->items[i].packed);
        }
        free(p->items);
        *p = (Packs) {};
}

static Pack *pack_find(const Packs *p, int64_t job_id, int64_t object_id) {
        size_t lo = 0, hi = p->n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                const Pack *k = &p->items[mid];
                int c = cmp_int(job_id, k->job_id) ?: cmp_int(object_id, k->object_id);

                if (c == 0)
                        return &p->items[mid];
                if (c < 0)
                        hi = mid;
                else
                        lo = mid + 1;
        }
        return NULL;
}

/* An entry of the batch's functions, keyed by its pack. */
typedef struct PackEntry {
        int64_t job_id, object_id;
        JobFunctionSum sum;
} PackEntry;

static int compare_entries(const void *x, const void *y) {
        const PackEntry *p = x, *q = y;

        return cmp_int(p->job_id, q->job_id) ?: cmp_int(p->object_id, q->object_id) ?:
               cmp_int(p->sum.phase_id, q->sum.phase_id) ?: cmp_int(p->sum.function_id, q->sum.function_id);
}

/* The packs of the batch's entries (each twice: over phases, phase 0,
 * and in its phase), each with what the batch adds to it. */
static int packs_of(PackEntry *entries, size_t n, Packs *ret) {
        Packs p = {};
        int r;

        qsort(entries, n, sizeof(PackEntry), compare_entries);
        p.items = calloc(MAX(n, (size_t) 1), sizeof(Pack));
        if (!p.items)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                Pack *k = p.n > 0 ? &p.items[p.n - 1] : NULL;

                if (!k || k->job_id != entries[i].job_id || k->object_id != entries[i].object_id) {
                        k = &p.items[p.n++];
                        k->job_id = entries[i].job_id;
                        k->object_id = entries[i].object_id;
                }
                r = function_sums_append(&k->added, &entries[i].sum);
                if (r < 0) {
                        packs_done(&p);
                        return r;
                }
        }
        /* in order already: adds up the entries of one key */
        for (size_t i = 0; i < p.n; i++)
                function_sums_sort(&p.items[i].added);
        *ret = p;
        return 0;
}

static int bind_pack_key(DbStmt *st, int k, size_t i, void *userdata) {
        const Pack *p = &((const Packs *) userdata)->items[i];
        int r;

        if ((r = db_bind_int(st, k, (int64_t) i)) < 0 || (r = db_bind_int(st, k + 1, p->job_id)) < 0 ||
            (r = db_bind_int(st, k + 2, p->object_id)) < 0)
                return r;
        return 0;
}

static int read_pack(DbStmt *st, void *userdata) {
        Packs *p = userdata;
        int64_t i = db_column_int(st, 0);
        const void *data;
        size_t len;

        if (i < 0 || (size_t) i >= p->n)
                return -EIO;
        data = db_column_blob(st, 1, &len);
        return function_pack_decode(data, len, &p->items[i].stored);
}

static int bind_pack_row(DbStmt *st, int k, size_t i, void *userdata) {
        const Pack *p = &((const Packs *) userdata)->items[i];
        int r;

        if ((r = db_bind_int(st, k, p->job_id)) < 0 || (r = db_bind_int(st, k + 1, p->object_id)) < 0 ||
            (r = db_bind_blob(st, k + 2, p->packed, p->len)) < 0)
                return r;
        return 0;
}

static int64_t job_mix_key(const JobAcc *j) {
        return j->mix_key == STORAGE_NULL ? 0 : j->mix_key;
}

/* The site's sums (schema/0024) of the batch's functions, in the batch's
 * day: per function, per (function, mix key, node type), who ran each and
 * in which applications, and its jobs' samples of every kind; kept as one
 * row of function_sums_pending (schema/0027) for a fold to add to the
 * tables (site-sums-fold.c). A job counts for a function when the function
 * is new to it (not in its packs before this batch: x->function_known). */
static int pend_site_sums(IngestCtx *x) {
        size_t n = x->job_functions.n;
        const size_t max[_SITE_PARTS] = {
                [SITE_FUNCTION] = n, [SITE_KEY] = n, [SITE_SCOPE] = x->n_jobs, [SITE_TOTAL] = 1,
                [SITE_USER] = n, [SITE_APP] = n,
        };
        _cleanup_(hashmap_freep) Hashmap *by_id = hashmap_new(&uint64_hash_ops);
        _cleanup_(site_sums_done) SiteSums sums = {};
        _cleanup_free_ uint8_t *body = NULL;
        int64_t node_type = x->node_type_id == STORAGE_NULL ? 0 : x->node_type_id;
        size_t len, keys = 0;
        DbStmt *st;
        int r;

        if (!by_id)
                return -ENOMEM;
        for (size_t i = 0; i < x->n_jobs; i++)
                if ((r = hashmap_put(by_id, INT_TO_KEY(x->job_pool[i].id), &x->job_pool[i])) < 0)
                        return r;
        r = site_sums_init(&sums, x->bucket - x->bucket % DAY_SECONDS, max, 2 * x->n_jobs);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                const Acc *a = &x->job_functions.pool[i];
                const JobAcc *j = hashmap_get(by_id, INT_TO_KEY(a->a));
                BatchFunction f = { .samples = a->samples, .cycles = a->cycles, .instructions = a->instructions };
                Acc *by_key, *by_function;
                int64_t who;

                if (!j)
                        return -EIO;
                if ((r = acc_add_function(&sums.parts[SITE_KEY], a->b, job_mix_key(j), node_type, &f,
                                          a->cpu_seconds, &by_key)) < 0 ||
                    (r = acc_add_function(&sums.parts[SITE_FUNCTION], a->b, 0, 0, &f, a->cpu_seconds,
                                          &by_function)) < 0)
                        return r;
                by_key->jobs += !x->function_known[i];
                by_function->jobs += !x->function_known[i];
                /* who: the key's user and application, as its columns name them */
                if (j->mix_dims[1] && *j->mix_dims[1] &&
                    ((r = site_sums_name(&sums, j->mix_dims[1], &who)) < 0 ||
                     (r = acc_add_function(&sums.parts[SITE_USER], a->b, who, 0, &f, 0, NULL)) < 0))
                        return r;
                if (j->mix_dims[0] && *j->mix_dims[0] &&
                    ((r = site_sums_name(&sums, j->mix_dims[0], &who)) < 0 ||
                     (r = acc_add_function(&sums.parts[SITE_APP], a->b, who, 0, &f, 0, NULL)) < 0))
                        return r;
        }
        for (size_t i = 0; i < x->n_jobs; i++) {
                const JobAcc *j = &x->job_pool[i];
                BatchFunction f = { .samples = j->samples, .cycles = STORAGE_NULL, .instructions = STORAGE_NULL };

                if (j->samples > 0 &&
                    ((r = acc_add_function(&sums.parts[SITE_SCOPE], job_mix_key(j), node_type, 0, &f,
                                           j->cpu_seconds, NULL)) < 0 ||
                     (r = acc_add_function(&sums.parts[SITE_TOTAL], 0, 0, 0, &f, j->cpu_seconds, NULL)) < 0))
                        return r;
        }
        for (size_t k = 0; k < _SITE_PARTS; k++)
                keys += sums.parts[k].n;
        if (keys == 0)
                return 0;
        if ((r = site_sums_encode(&sums, &body, &len)) < 0 ||
            (r = conn_stmt(&x->s->writer, STMT_FUNCTION_SUMS_PENDING_INSERT, &st)) < 0 ||
            (r = db_bind_blob(st, 1, body, len)) < 0 ||
            (r = db_execute(st, 0)) < 0)
                return r;
        x->site_sums_pending = true;
        return 0;
}

int ingest_functions(IngestCtx *x) {
        const Batch *b = x->b;
        double cps = 1.0 / b->frequency_hz;
        _cleanup_free_ PackEntry *entries = calloc(MAX(2 * b->n_functions, (size_t) 1), sizeof(PackEntry));
        _cleanup_(packs_done) Packs packs = {};
        size_t n = 0;
        int r;

        if (!entries)
                return -ENOMEM;
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
                if ((r = acc_add_function(&x->job_functions, j->id, function_id, object_id, f, cpu_seconds,
                                          NULL)) < 0)
                        return r;
                /* phase ids start at 1: 0 is the pack's sums over phases */
                for (int k = 0; k < 2; k++)
                        entries[n++] = (PackEntry) { j->id, object_id,
                                                     { k == 0 ? 0 : phase_id, function_id, f->samples, cpu_seconds,
                                                       f->cycles, f->instructions } };
        }
        if (n == 0)
                return pend_site_sums(x);

        /* what the jobs have: which functions are new to them, and the
         * sums this batch adds to, as this transaction has them (an
         * earlier batch of the same group included) */
        if ((r = packs_of(entries, n, &packs)) < 0 ||
            (r = conn_read_rows(&x->s->writer, STMT_JOB_FUNCTION_PACKS_READ, packs.n, bind_pack_key, read_pack,
                                &packs)) < 0)
                return r;
        for (size_t i = 0; i < x->job_functions.n; i++) {
                const Acc *a = &x->job_functions.pool[i];
                const Pack *k = pack_find(&packs, a->a, a->c);

                x->function_known[i] = k && function_sums_find(&k->stored, 0, a->b);
        }
        for (size_t i = 0; i < packs.n; i++) {
                Pack *k = &packs.items[i];

                r = function_sums_merge(&k->stored, &k->added);
                /* the sums over phases come first, and hold the most */
                if (r == -EOVERFLOW)
                        return overflow(x, "functions", "adding this batch's functions to a job's stored sums "
                                        "per function would overflow");
                if (r < 0 || (r = function_pack_encode(&k->stored, &k->packed, &k->len)) < 0)
                        return r;
        }
        r = pend_site_sums(x);
        if (r < 0)
                return r;
        return conn_write_rows(&x->s->writer, STMT_JOB_FUNCTION_PACK_UPSERT, packs.n, bind_pack_row, &packs, false);
}
