/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Site-wide time per object (list_objects) from the hourly, daily, weekly
 * and four-weekly sums, or a scope's jobs; and per installed package
 * (list_packages), from the same sums. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db/sql/sql-internal.h"

/* An object's sums over the range, while list_objects adds them up. */
typedef struct ObjectSum {
        int64_t id, samples;
        double cpu_seconds;
        char *path, *kind;
} ObjectSum;

static int by_name(const void *a, const void *b) {
        const ObjectSum *x = a, *y = b;
        int c = strcmp(x->path, y->path);

        return c ? c : strcmp(x->kind, y->kind);
}

static int by_samples(const void *a, const void *b) {
        const ObjectSum *x = a, *y = b;

        if (x->samples != y->samples)
                return CMP(y->samples, x->samples);
        return by_name(a, b);
}

/* Reads the rows of the range (object, samples, CPU seconds) and sums them
 * per object in v, and all of them in ol. */
/* Adds the sums of one grain's rows in [since, until). */
/* Adds one row of sums to the range's: every row counts to the total,
 * only the kind asked for is named. */
static int object_sum_add(int64_t id, int64_t samples, double cpu, Hashmap *only, Hashmap *index, ObjectSum **v,
                          size_t *n, size_t *alloc, ObjectList *ol) {
        ObjectSum *x;
        void *p;
        int r;

        ol->total_samples = __builtin_add_overflow(ol->total_samples, samples, &ol->total_samples)
                                    ? INT64_MAX : ol->total_samples;
        ol->total_cpu_seconds += cpu;
        if (only && !hashmap_get(only, INT_TO_KEY(id)))
                return 0;
        p = hashmap_get(index, INT_TO_KEY(id));
        if (p)
                x = &(*v)[(uintptr_t) p - 1];
        else {
                if ((r = grow((void **) v, *n, alloc, sizeof(ObjectSum))) < 0 ||
                    (r = hashmap_put(index, INT_TO_KEY(id), (void *) (uintptr_t) (*n + 1))) < 0)
                        return r;
                x = &(*v)[(*n)++];
                x->id = id;
        }
        /* each stored sum is within int64, a range of them need not be */
        x->samples = __builtin_add_overflow(x->samples, samples, &x->samples) ? INT64_MAX : x->samples;
        x->cpu_seconds += cpu;
        return 0;
}

static int add_object_rows(Conn *c, Stmt which, int64_t since, int64_t until, Hashmap *only, Hashmap *index,
                           ObjectSum **v, size_t *n, size_t *alloc, ObjectList *ol) {
        DbStmt *st;
        int r, rc;

        if (since >= until)
                return 0;
        r = conn_stmt(c, which, &st);
        if (r < 0 || (r = db_bind_int(st, 1, since)) < 0 || (r = db_bind_int(st, 2, until)) < 0)
                return r;
        while ((rc = db_step(st)) == 1)
                if ((r = object_sum_add(db_column_int(st, 0), db_column_int(st, 1),
                                        db_column_double(st, 2), only, index, v, n, alloc, ol)) < 0) {
                        db_reset(st);
                        return r;
                }
        db_reset(st);
        return rc == 0 ? 0 : step_errno(rc);
}

/* The objects of a scope's jobs that ran in [since, until): each job's
 * sums (job_objects, which has no time) times the part of the job inside
 * the range. The job list's indexes (schema/0006, 0018) find the account's
 * or the partition's jobs by last_seen. */
static int add_scoped_object_rows(Conn *c, const JobScope *scope, int64_t since, int64_t until, Hashmap *only,
                                  Hashmap *index, ObjectSum **v, size_t *n, size_t *alloc, ObjectList *ol) {
        char sql[1024];
        DbStmt *st = NULL;
        int r, rc, i = 3;
        char account[32] = "", partition[32] = "", cluster[32] = "";

        /* numbered: the dialects number a '?' after "?2" differently */
        if (scope->account)
                snprintf(account, sizeof(account), " AND j.account = ?%d", i++);
        if (scope->partition)
                snprintf(partition, sizeof(partition), " AND j.partition_name = ?%d", i++);
        if (scope->cluster)
                snprintf(cluster, sizeof(cluster), " AND j.cluster = ?%d", i++);
        i = 3;
        /* the jobs that are not live and the live ones apart: the list's
         * indexes hold only the former (schema/0018) */
        snprintf(sql, sizeof(sql),
                 "SELECT jo.object_id, jo.samples, jo.cpu_seconds, j.first_seen, j.last_seen FROM jobs j "
                 "JOIN job_objects jo ON jo.job_id = j.id WHERE j.live = 0 AND j.last_seen >= ?1 "
                 "AND j.first_seen < ?2%s%s%s UNION ALL "
                 "SELECT jo.object_id, jo.samples, jo.cpu_seconds, j.first_seen, j.last_seen FROM jobs j "
                 "JOIN job_objects jo ON jo.job_id = j.id WHERE j.live = 1 AND j.last_seen >= ?1 "
                 "AND j.first_seen < ?2%s%s%s",
                 account, partition, cluster, account, partition, cluster);
        r = db_prepare(c->db, sql, false, &st);
        if (r < 0 || (r = db_bind_int(st, 1, since)) < 0 || (r = db_bind_int(st, 2, until)) < 0 ||
            (scope->account && (r = bind_nullable_text(st, i++, scope->account)) < 0) ||
            (scope->partition && (r = bind_nullable_text(st, i++, scope->partition)) < 0) ||
            (scope->cluster && (r = bind_nullable_text(st, i++, scope->cluster)) < 0)) {
                db_finalize(st);
                return r;
        }
        while ((rc = db_step(st)) == 1) {
                double first = db_column_double(st, 3), last = db_column_double(st, 4);
                double in = MIN(last, (double) until) - MAX(first, (double) since), part = 1;

                if (last - first > 0)
                        part = MIN(MAX(in / (last - first), 0.0), 1.0);
                r = object_sum_add(db_column_int(st, 0), llround((double) db_column_int(st, 1) * part),
                                   db_column_double(st, 2) * part, only, index, v, n, alloc, ol);
                if (r < 0)
                        break;
        }
        if (r >= 0 && rc != 0)
                r = step_errno(rc);
        db_finalize(st);
        return r;
}

/* The range's rows: hours, or days, with whole weeks inside a range of
 * days read as weeks (the days at its edges as days). */
/* The ids of the objects of a kind, for sum_objects() to name only those. */
static int kind_ids(Conn *c, const char *kind, Hashmap **ret) {
        _cleanup_(hashmap_freep) Hashmap *h = hashmap_new(&uint64_hash_ops);
        DbStmt *st;
        int r, rc;

        if (!h)
                return -ENOMEM;
        r = conn_stmt(c, STMT_OBJECT_IDS_OF_KIND, &st);
        if (r < 0 || (r = bind_nullable_text(st, 1, kind)) < 0)
                return r;
        while ((rc = db_step(st)) == 1)
                if ((r = hashmap_put(h, INT_TO_KEY(db_column_int(st, 0)), (void *) 1)) < 0)
                        return r;
        db_reset(st);
        if (rc != 0)
                return step_errno(rc);
        *ret = TAKE_PTR(h);
        return 0;
}

static int sum_objects(Conn *c, const ObjectList *range, const char *kind, const JobScope *scope, ObjectSum **v,
                       size_t *n, ObjectList *ol) {
        _cleanup_(hashmap_freep) Hashmap *index = hashmap_new(&uint64_hash_ops), *only = NULL;
        size_t alloc = 0;
        int r;

        if (!index)
                return -ENOMEM;
        if (kind && (r = kind_ids(c, kind, &only)) < 0)
                return r;
        if (scope && job_scope_any(scope))
                return add_scoped_object_rows(c, scope, range->since, range->until, only, index, v, n, &alloc, ol);
        if (range->grain != DAY_SECONDS)
                return add_object_rows(c, STMT_OBJECT_HOURS, range->since, range->until, only, index, v, n, &alloc,
                                       ol);
        /* [since, until) in the coarsest whole buckets: days at the edges,
         * then weeks, then four-week periods in the middle (a period is
         * four weeks from the epoch, so its edges are weeks' edges) */
        {
                static const struct {
                        Stmt stmt;
                        int64_t seconds;
                } ladder[] = {
                        { STMT_OBJECT_DAYS, DAY_SECONDS },
                        { STMT_OBJECT_WEEKS, WEEK_SECONDS },
                        { STMT_OBJECT_PERIODS, PERIOD_SECONDS },
                };
                int64_t lo = range->since, hi = range->until;

                for (size_t g = 0;; g++) {
                        int64_t next, a, b;

                        if (g + 1 == ELEMENTSOF(ladder))
                                return add_object_rows(c, ladder[g].stmt, lo, hi, only, index, v, n, &alloc, ol);
                        next = ladder[g + 1].seconds;
                        a = lo + (next - lo % next) % next;
                        b = hi - hi % next;
                        if (b <= a) /* no whole bucket of the next grain */
                                return add_object_rows(c, ladder[g].stmt, lo, hi, only, index, v, n, &alloc, ol);
                        if ((r = add_object_rows(c, ladder[g].stmt, lo, a, only, index, v, n, &alloc, ol)) < 0 ||
                            (r = add_object_rows(c, ladder[g].stmt, b, hi, only, index, v, n, &alloc, ol)) < 0)
                                return r;
                        lo = a;
                        hi = b;
                }
        }
}

static int by_id(const void *a, const void *b) {
        const ObjectSum *x = a, *y = b;

        return CMP(x->id, y->id);
}

/* Objects named per statement: a round trip per object was most of a
 * 30-day site query's time on PostgreSQL (1,700 libraries, ~0.1 ms each). */
#define NAME_CHUNK 256

/* Names v's objects (path and kind) from the objects table, NAME_CHUNK ids
 * to a query. Leaves v sorted by id. */
static int name_objects(Conn *c, ObjectSum *v, size_t n) {
        char sql[64 + NAME_CHUNK * 2];

        if (n > 1)
                qsort(v, n, sizeof(*v), by_id);
        for (size_t at = 0; at < n; at += NAME_CHUNK) {
                size_t k = MIN(n - at, (size_t) NAME_CHUNK), named = 0, len;
                DbStmt *st = NULL;
                int r, rc = 0;

                len = (size_t) snprintf(sql, sizeof(sql), "SELECT id, path, kind FROM objects WHERE id IN (");
                for (size_t i = 0; i < k; i++) {
                        sql[len++] = i ? ',' : '?';
                        if (i)
                                sql[len++] = '?';
                }
                sql[len++] = ')';
                sql[len] = '\0';
                r = db_prepare(c->db, sql, false, &st);
                for (size_t i = 0; r >= 0 && i < k; i++)
                        r = db_bind_int(st, (int) i + 1, v[at + i].id);
                while (r >= 0 && (rc = db_step(st)) == 1) {
                        ObjectSum key = { .id = db_column_int(st, 0) }, *x;

                        x = bsearch(&key, v + at, k, sizeof(*v), by_id);
                        if (!x || x->path)
                                continue;
                        x->path = column_strdup(st, 1, &r);
                        x->kind = column_strdup(st, 2, &r);
                        named++;
                }
                if (r >= 0 && rc != 0)
                        r = step_errno(rc);
                db_finalize(st);
                if (r < 0)
                        return r;
                if (named != k)
                        return -ENOENT; /* a summed object without its row */
        }
        return 0;
}

/* Site-wide time per object: the sums of the range are added up here, not
 * by SQL, whose GROUP BY sorts every row first; then named, merged over
 * build ids (same path and kind), and the largest kept. Ranges of a week or
 * more read whole days, shorter ones whole hours. */
int sql_list_objects(Storage *base, const ObjectFilter *f, ObjectList *ret) {
        SqlStorage *s = (SqlStorage *) base;
        const char *kind = f->kind >= 0 ? code_kind_to_string(f->kind) : NULL;
        ObjectSum *v = NULL;
        ObjectList ol = {};
        size_t n = 0, m = 0;
        Conn *c;
        int r;

        db_purpose_set("listing objects");
        ol.grain = f->until - f->since >= OBJECT_DAYS_FROM ? DAY_SECONDS : BUCKET_SECONDS;
        /* whole hours or days: the rollups have no finer grain; a scope's
         * jobs are prorated to the range as it is */
        if (job_scope_any(&f->scope))
                ol.grain = 0;
        ol.since = ol.grain ? f->since - ((f->since % ol.grain) + ol.grain) % ol.grain : f->since;
        ol.until = f->until;

        reader_acquire(s, &c);
        /* one read transaction, not one per name looked up */
        r = conn_begin_read(c);
        if (r >= 0)
                r = sum_objects(c, &ol, kind, &f->scope, &v, &n, &ol);
        if (r >= 0)
                r = name_objects(c, v, n);
        reader_end_read(s, c);
        if (r < 0)
                goto finish;

        /* the kind asked for, each path once */
        if (n > 1)
                qsort(v, n, sizeof(*v), by_name);
        for (size_t i = 0; i < n; i++) {
                if (kind && !streq(v[i].kind, kind))
                        continue;
                if (m > 0 && by_name(&v[m - 1], &v[i]) == 0) {
                        if (__builtin_add_overflow(v[m - 1].samples, v[i].samples, &v[m - 1].samples))
                                v[m - 1].samples = INT64_MAX;
                        v[m - 1].cpu_seconds += v[i].cpu_seconds;
                        continue;
                }
                if (m != i) {
                        ObjectSum t = v[m];

                        v[m] = v[i];
                        v[i] = t;
                }
                m++;
        }
        if (m > 1)
                qsort(v, m, sizeof(*v), by_samples);

        ol.objects.items = calloc(MIN(m, (size_t) f->limit) ?: 1, sizeof(Share));
        if (!ol.objects.items) {
                r = -ENOMEM;
                goto finish;
        }
        for (size_t i = 0; i < m && i < f->limit; i++) {
                Share *x = &ol.objects.items[ol.objects.n++];

                x->name = TAKE_PTR(v[i].path);
                x->kind = TAKE_PTR(v[i].kind);
                x->samples = v[i].samples;
                x->cpu_seconds = v[i].cpu_seconds;
                x->cpu_time_ns = x->cycles = x->instructions = STORAGE_NULL;
                x->first_seen = x->last_seen = NAN;
        }

finish:
        for (size_t i = 0; i < n; i++) {
                free(v[i].path);
                free(v[i].kind);
        }
        free(v);
        if (r < 0) {
                object_list_free(&ol);
                return r;
        }
        *ret = ol;
        return 0;
}

/* Installed packages and the samples of their files in the range: the
 * range's object sums (as list_objects adds them), then each package's
 * sampled objects, by path. */
int sql_list_packages(Storage *base, const PackageFilter *f, PackageList *ret) {
        SqlStorage *s = (SqlStorage *) base;
        _cleanup_(hashmap_freep) Hashmap *by_object = NULL, *by_package = hashmap_new(&uint64_hash_ops);
        ObjectList range = {};
        ObjectSum *v = NULL;
        PackageList pl = {};
        size_t n = 0, alloc = 0;
        DbStmt *st;
        Conn *c;
        int r, rc;

        db_purpose_set("listing packages");
        if (!by_package)
                return -ENOMEM;
        range.grain = job_scope_any(&f->scope) ? 0 : f->until - f->since >= OBJECT_DAYS_FROM ? DAY_SECONDS
                                                                                             : BUCKET_SECONDS;
        range.since = range.grain ? f->since - ((f->since % range.grain) + range.grain) % range.grain : f->since;
        range.until = f->until;

        reader_acquire(s, &c);
        r = conn_begin_read(c);
        if (r >= 0)
                r = sum_objects(c, &range, NULL, &f->scope, &v, &n, &range);
        if (r >= 0 && !(by_object = hashmap_new(&uint64_hash_ops)))
                r = -ENOMEM;
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = hashmap_put(by_object, INT_TO_KEY(v[i].id), &v[i]);
        if (r >= 0)
                r = conn_stmt(c, STMT_PACKAGES_INSTALLED, &st);
        while (r >= 0 && (rc = db_step(st)) == 1) {
                PackageUse *p;

                if ((r = grow((void **) &pl.items, pl.n, &alloc, sizeof(PackageUse))) < 0)
                        break;
                p = &pl.items[pl.n++];
                *p = (PackageUse) {
                        .manager = column_strdup(st, 1, &r), .name = column_strdup(st, 2, &r),
                        .version = column_strdup(st, 3, &r), .arch = column_strdup(st, 4, &r),
                        .prefix = column_strdup(st, 5, &r), .size = db_column_int(st, 6),
                        .nodes = db_column_int(st, 7), .last_seen = -1,
                };
                if (r >= 0)
                        r = hashmap_put(by_package, INT_TO_KEY(db_column_int(st, 0)), (void *) (uintptr_t) pl.n);
        }
        if (r >= 0 && rc != 0)
                r = step_errno(rc);
        if (r >= 0)
                r = conn_stmt(c, STMT_PACKAGE_OBJECTS, &st);
        /* grow() may move items: looked up by index */
        while (r >= 0 && (rc = db_step(st)) == 1) {
                uintptr_t k = (uintptr_t) hashmap_get(by_package, INT_TO_KEY(db_column_int(st, 0)));
                ObjectSum *o = hashmap_get(by_object, INT_TO_KEY(db_column_int(st, 1)));
                PackageUse *p;

                if (k == 0)
                        continue;
                p = &pl.items[k - 1];
                p->files++;
                if (!db_column_null(st, 2))
                        p->last_seen = MAX(p->last_seen, db_column_int(st, 2));
                if (o) {
                        p->samples = __builtin_add_overflow(p->samples, o->samples, &p->samples) ? INT64_MAX : p->samples;
                        p->cpu_seconds += o->cpu_seconds;
                }
        }
        if (r >= 0 && rc != 0)
                r = step_errno(rc);
        reader_end_read(s, c);
        for (size_t i = 0; i < n; i++) {
                free(v[i].path);
                free(v[i].kind);
        }
        free(v);
        if (r < 0) {
                package_list_free(&pl);
                return r;
        }
        if (f->unused) {
                size_t m = 0;

                for (size_t i = 0; i < pl.n; i++) {
                        if (pl.items[i].samples == 0) {
                                PackageUse t = pl.items[m];

                                pl.items[m++] = pl.items[i];
                                pl.items[i] = t;
                        }
                }
                for (size_t i = m; i < pl.n; i++) {
                        free(pl.items[i].manager);
                        free(pl.items[i].name);
                        free(pl.items[i].version);
                        free(pl.items[i].arch);
                        free(pl.items[i].prefix);
                }
                pl.n = m;
        }
        pl.total_samples = range.total_samples;
        pl.since = range.since;
        pl.until = range.until;
        pl.grain = range.grain;
        *ret = pl;
        return 0;
}
