/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The site's functions over a range (list_site_functions, schema/0024):
 * the day and week sums of the range added up here, per function, kept
 * where their application-mix key and node type are in view; then named,
 * merged over builds of one path, with the distinct users and
 * applications that ran each. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db/sql/sql-internal.h"

/* A mix key in view: its user's and application's index in the list's
 * users and apps. */
typedef struct KeyInView {
        size_t user, app;
} KeyInView;

/* A function run by a user (app false) or in an application. */
typedef struct Pair {
        int64_t id;
        size_t other;
        bool app;
        int64_t samples;
} Pair;

/* A function's sums while they are added up, by function id. */
typedef struct FunctionSum {
        int64_t id, samples, jobs;
        double cpu_seconds, cycles, instructions; /* NAN: none counted */
        size_t group;           /* after naming: the merged function it is part of */
        char *object, *kind, *build_id, *name;
        int64_t offset;
} FunctionSum;

typedef struct RankCtx {
        Conn *c;
        const FunctionFilter *f;
        int64_t node_type;      /* 0: any */
        Hashmap *keys;          /* mix key id → KeyInView + 1 (index into views) */
        KeyInView *views;
        size_t n_views;
        Hashmap *only;          /* function ids of f->object, or NULL */
        Hashmap *index;         /* function id → FunctionSum index + 1 */
        FunctionSum *v;
        size_t n, alloc;
        Hashmap *pairs;         /* (function id, user or app) seen */
        Pair *pair_v;           /* the same, in the order seen */
        size_t n_pairs, pairs_alloc;
        SiteFunctionList *l;
        size_t users_alloc, apps_alloc;
} RankCtx;

static double add_nullable(double sum, double v) {
        return isnan(v) ? sum : isnan(sum) ? v : sum + v;
}

static int use_add(FunctionUse *u, int64_t samples, double cpu_seconds) {
        u->samples = __builtin_add_overflow(u->samples, samples, &u->samples) ? INT64_MAX : u->samples;
        u->cpu_seconds += cpu_seconds;
        return 0;
}

/* Interns name into a list of FunctionUse, returning its index. */
static int use_intern(Hashmap *h, FunctionUse **v, size_t *n, size_t *alloc, const char *name, size_t *ret) {
        void *p = hashmap_get(h, name);
        int r;

        if (p) {
                *ret = (uintptr_t) p - 1;
                return 0;
        }
        if ((r = grow((void **) v, *n, alloc, sizeof(FunctionUse))) < 0)
                return r;
        (*v)[*n] = (FunctionUse) { .name = strdup(name) };
        if (!(*v)[*n].name)
                return -ENOMEM;
        r = hashmap_put(h, (*v)[*n].name, (void *) (uintptr_t) (*n + 1));
        if (r < 0) {
                free((*v)[*n].name);
                return r;
        }
        *ret = (*n)++;
        return 0;
}

/* The mix keys whose jobs are in view: of the filter's application,
 * account and user, and that the viewer may see. */
static int read_keys(RankCtx *x) {
        _cleanup_(hashmap_freep) Hashmap *users = hashmap_new(&string_hash_ops), *apps = hashmap_new(&string_hash_ops);
        const FunctionFilter *f = x->f;
        size_t alloc = 0;
        DbStmt *st;
        int r, rc;

        if (!users || !apps)
                return -ENOMEM;
        r = conn_stmt(x->c, STMT_MIX_KEYS_ALL, &st);
        if (r < 0)
                return r;
        while ((rc = db_step(st)) == 1) {
                const char *app = db_column_text(st, 1) ?: "", *user = db_column_text(st, 2) ?: "",
                           *account = db_column_text(st, 3) ?: "";
                KeyInView k;

                if ((f->app && !streq(f->app, app)) || (f->user && !streq(f->user, user)) ||
                    (f->account && !streq(f->account, account)) ||
                    !job_viewer_may_see(f->viewer, *user ? user : NULL, *account ? account : NULL))
                        continue;
                if ((r = use_intern(users, &x->l->users, &x->l->n_users, &x->users_alloc, user, &k.user)) < 0 ||
                    (r = use_intern(apps, &x->l->apps, &x->l->n_apps, &x->apps_alloc, app, &k.app)) < 0 ||
                    (r = grow((void **) &x->views, x->n_views, &alloc, sizeof(KeyInView))) < 0)
                        break;
                x->views[x->n_views++] = k;
                r = hashmap_put(x->keys, INT_TO_KEY(db_column_int(st, 0)), (void *) (uintptr_t) x->n_views);
                if (r < 0)
                        break;
        }
        db_reset(st);
        if (r < 0)
                return r;
        return rc == 0 ? 0 : step_errno(rc);
}

/* A job of no application-mix key yet (key 0) is the viewer's only for
 * an admin with no narrowing. */
static const KeyInView *key_in_view(RankCtx *x, int64_t key, int64_t node_type) {
        void *p;

        if (x->node_type && node_type != x->node_type)
                return NULL;
        p = hashmap_get(x->keys, INT_TO_KEY(key));
        return p ? &x->views[(uintptr_t) p - 1] : NULL;
}

/* ids and indexes are far below 2^31: one 64-bit key of the three */
static uint64_t pair_key(int64_t id, size_t other, bool app) {
        return ((uint64_t) id << 32) ^ ((uint64_t) other << 1) ^ app;
}

static int pair_add(RankCtx *x, int64_t id, size_t other, bool app, int64_t samples) {
        uint64_t k = pair_key(id, other, app);
        uintptr_t at = (uintptr_t) hashmap_get(x->pairs, INT_TO_KEY(k));
        int r;

        if (at == 0) {
                if ((r = grow((void **) &x->pair_v, x->n_pairs, &x->pairs_alloc, sizeof(Pair))) < 0 ||
                    (r = hashmap_put(x->pairs, INT_TO_KEY(k), (void *) (uintptr_t) (x->n_pairs + 1))) < 0)
                        return r;
                x->pair_v[x->n_pairs] = (Pair) { id, other, app, 0 };
                at = ++x->n_pairs;
        }
        x->pair_v[at - 1].samples = __builtin_add_overflow(x->pair_v[at - 1].samples, samples,
                                                           &x->pair_v[at - 1].samples) ? INT64_MAX
                                                                                       : x->pair_v[at - 1].samples;
        return 0;
}

static int add_function_rows(RankCtx *x, Stmt which, int64_t since, int64_t until) {
        DbStmt *st;
        int r = 0, rc;

        if (since >= until)
                return 0;
        r = conn_stmt(x->c, which, &st);
        if (r < 0 || (r = db_bind_int(st, 1, since)) < 0 || (r = db_bind_int(st, 2, until)) < 0)
                return r;
        while ((rc = db_step(st)) == 1) {
                int64_t id = db_column_int(st, 0), samples = db_column_int(st, 3);
                const KeyInView *k = key_in_view(x, db_column_int(st, 1), db_column_int(st, 2));
                double cpu = db_column_double(st, 4);
                FunctionSum *y;
                void *p;

                if (!k || (x->only && !hashmap_get(x->only, INT_TO_KEY(id))))
                        continue;
                p = hashmap_get(x->index, INT_TO_KEY(id));
                if (p)
                        y = &x->v[(uintptr_t) p - 1];
                else {
                        if ((r = grow((void **) &x->v, x->n, &x->alloc, sizeof(FunctionSum))) < 0 ||
                            (r = hashmap_put(x->index, INT_TO_KEY(id), (void *) (uintptr_t) (x->n + 1))) < 0)
                                break;
                        y = &x->v[x->n++];
                        *y = (FunctionSum) { .id = id, .cycles = NAN, .instructions = NAN };
                }
                y->samples = __builtin_add_overflow(y->samples, samples, &y->samples) ? INT64_MAX : y->samples;
                y->cpu_seconds += cpu;
                y->cycles = add_nullable(y->cycles, column_nullable_double(st, 5));
                y->instructions = add_nullable(y->instructions, column_nullable_double(st, 6));
                y->jobs += db_column_int(st, 7);
                use_add(&x->l->users[k->user], samples, cpu);
                use_add(&x->l->apps[k->app], samples, cpu);
                if ((r = pair_add(x, id, k->user, false, samples)) < 0 ||
                    (r = pair_add(x, id, k->app, true, samples)) < 0)
                        break;
        }
        db_reset(st);
        if (r < 0)
                return r;
        return rc == 0 ? 0 : step_errno(rc);
}

static int add_scope_rows(RankCtx *x, Stmt which, int64_t since, int64_t until) {
        DbStmt *st;
        int r, rc;

        if (since >= until)
                return 0;
        r = conn_stmt(x->c, which, &st);
        if (r < 0 || (r = db_bind_int(st, 1, since)) < 0 || (r = db_bind_int(st, 2, until)) < 0)
                return r;
        while ((rc = db_step(st)) == 1) {
                int64_t samples = db_column_int(st, 2);

                if (!key_in_view(x, db_column_int(st, 0), db_column_int(st, 1)))
                        continue;
                x->l->total_samples = __builtin_add_overflow(x->l->total_samples, samples, &x->l->total_samples)
                                              ? INT64_MAX : x->l->total_samples;
                x->l->total_cpu_seconds += db_column_double(st, 3);
        }
        db_reset(st);
        return rc == 0 ? 0 : step_errno(rc);
}

/* [since, until) in whole weeks where there are, days at the edges. */
static int add_range(RankCtx *x, bool scope) {
        Stmt days = scope ? STMT_FUNCTION_SCOPE_DAYS : STMT_FUNCTION_DAYS;
        Stmt weeks = scope ? STMT_FUNCTION_SCOPE_WEEKS : STMT_FUNCTION_WEEKS;
        int (*add)(RankCtx *, Stmt, int64_t, int64_t) = scope ? add_scope_rows : add_function_rows;
        int64_t lo = x->l->since, hi = x->l->until;
        int64_t a = lo + (WEEK_SECONDS - lo % WEEK_SECONDS) % WEEK_SECONDS, b = hi - hi % WEEK_SECONDS;
        int r;

        if (b <= a)
                return add(x, days, lo, hi);
        if ((r = add(x, days, lo, a)) < 0 || (r = add(x, days, b, hi)) < 0)
                return r;
        return add(x, weeks, a, b);
}

static int by_id(const void *p, const void *q) {
        const FunctionSum *a = p, *b = q;

        return (a->id > b->id) - (a->id < b->id);
}

#define NAME_CHUNK 256

/* Names x->v's functions (object, kind, build, name, offset, the name
 * found since), NAME_CHUNK ids to a query. */
static int name_functions(RankCtx *x) {
        char sql[512 + NAME_CHUNK * 2];

        if (x->n > 1)
                qsort(x->v, x->n, sizeof(*x->v), by_id);
        for (size_t at = 0; at < x->n; at += NAME_CHUNK) {
                size_t k = MIN(x->n - at, (size_t) NAME_CHUNK), len;
                DbStmt *st = NULL;
                int r, rc = 0;

                len = (size_t) snprintf(sql, sizeof(sql),
                                        "SELECT f.id, o.path, o.kind, o.build_id, f.name, f.file_offset, n.name "
                                        "FROM functions f JOIN objects o ON o.id = f.object_id "
                                        "LEFT JOIN function_names n ON f.name = '' AND f.file_offset >= 0 "
                                        "AND n.build_id = o.build_id AND n.file_offset = f.file_offset "
                                        "WHERE f.id IN (");
                for (size_t i = 0; i < k; i++) {
                        if (i)
                                sql[len++] = ',';
                        sql[len++] = '?';
                }
                sql[len++] = ')';
                sql[len] = '\0';
                r = db_prepare(x->c->db, sql, false, &st);
                for (size_t i = 0; r >= 0 && i < k; i++)
                        r = db_bind_int(st, (int) i + 1, x->v[at + i].id);
                while (r >= 0 && (rc = db_step(st)) == 1) {
                        FunctionSum key = { .id = db_column_int(st, 0) }, *y;
                        const char *name = db_column_text(st, 4), *found = db_column_text(st, 6);
                        int64_t offset = db_column_int(st, 5);

                        y = bsearch(&key, x->v + at, k, sizeof(*x->v), by_id);
                        if (!y || y->object)
                                continue;
                        y->object = column_strdup(st, 1, &r);
                        y->kind = column_strdup(st, 2, &r);
                        y->offset = offset >= 0 ? offset : STORAGE_NULL;
                        if (name && *name)
                                y->name = column_strdup(st, 4, &r);
                        else if (offset >= 0 && found && *found)
                                y->name = column_strdup(st, 6, &r);
                        /* an unnamed page is of its build only */
                        if (!y->name && offset >= 0 && db_column_text(st, 3) && *db_column_text(st, 3))
                                y->build_id = column_strdup(st, 3, &r);
                }
                if (r >= 0 && rc != 0)
                        r = step_errno(rc);
                db_finalize(st);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < x->n; i++)
                if (!x->v[i].object)
                        return -ENOENT; /* a summed function without its row */
        return 0;
}

static int streq_null(const char *a, const char *b) {
        return a && b ? streq(a, b) : a == b;
}

/* The same function of another build: same path, kind and name (an
 * unnamed one: same build and offset; "other": the same path). */
static bool same_function(const SiteFunction *a, const FunctionSum *b) {
        return streq(a->object, b->object) && streq(a->kind, b->kind) && streq_null(a->name, b->name) &&
               streq_null(a->build_id, b->build_id) && (a->name || a->offset == b->offset);
}

static int by_identity(const void *p, const void *q) {
        const FunctionSum *a = p, *b = q;
        int c;

        if ((c = strcmp(a->object, b->object)) || (c = strcmp(a->kind, b->kind)))
                return c;
        if ((c = strcmp(a->name ?: "", b->name ?: "")) || (c = (!!a->name) - (!!b->name)))
                return c;
        if ((c = strcmp(a->build_id ?: "", b->build_id ?: "")))
                return c;
        return (a->offset > b->offset) - (a->offset < b->offset);
}

static int by_samples(const void *p, const void *q) {
        const SiteFunction *a = p, *b = q;
        int c;

        if (a->samples != b->samples)
                return a->samples < b->samples ? 1 : -1;
        if ((c = strcmp(a->object, b->object)))
                return c;
        return strcmp(a->name ?: "", b->name ?: "");
}

static int use_by_samples(const void *p, const void *q) {
        const FunctionUse *a = p, *b = q;

        if (a->samples != b->samples)
                return a->samples < b->samples ? 1 : -1;
        return strcmp(a->name, b->name);
}

/* Adds samples of app (an index into the list's apps) to f's top
 * applications: the same app's samples from other builds add up; a new
 * one takes the place of the smallest when it is larger. */
static void top_app_add(SiteFunction *f, size_t app, int64_t samples) {
        FunctionUse *t = f->top_apps;
        size_t at = FUNCTION_TOP_APPS;

        for (size_t j = 0; j < FUNCTION_TOP_APPS; j++)
                if (t[j].samples > 0 && t[j].index == app) {
                        t[j].samples += samples;
                        at = j;
                        break;
                }
        if (at == FUNCTION_TOP_APPS) {
                at = FUNCTION_TOP_APPS - 1;
                if (t[at].samples >= samples)
                        return;
                t[at] = (FunctionUse) { .samples = samples, .index = app };
        }
        /* keep them by samples, the most first */
        for (; at > 0 && t[at].samples > t[at - 1].samples; at--) {
                FunctionUse u = t[at];

                t[at] = t[at - 1];
                t[at - 1] = u;
        }
}

/* Counts each merged function's distinct users and applications: the
 * pairs of its functions' ids, by group. */
static int count_distinct(RankCtx *x) {
        _cleanup_(hashmap_freep) Hashmap *group_of = hashmap_new(&uint64_hash_ops), *seen = hashmap_new(&uint64_hash_ops);
        int r;

        if (!group_of || !seen)
                return -ENOMEM;
        for (size_t i = 0; i < x->n; i++)
                if ((r = hashmap_put(group_of, INT_TO_KEY(x->v[i].id), (void *) (uintptr_t) (x->v[i].group + 1))) < 0)
                        return r;
        for (size_t i = 0; i < x->n_pairs; i++) {
                const Pair *p = &x->pair_v[i];
                uintptr_t g = (uintptr_t) hashmap_get(group_of, INT_TO_KEY(p->id));
                SiteFunction *f;
                uint64_t k;

                if (g == 0)
                        continue;
                f = &x->l->items[g - 1];
                if (p->app)
                        top_app_add(f, p->other, p->samples);
                k = pair_key((int64_t) g - 1, p->other, p->app);
                if (hashmap_get(seen, INT_TO_KEY(k)))
                        continue;
                if ((r = hashmap_put(seen, INT_TO_KEY(k), (void *) 1)) < 0)
                        return r;
                if (p->app)
                        f->apps++;
                else
                        f->users++;
        }
        /* the apps' names, once the sums are whole */
        for (size_t i = 0; i < x->l->n; i++)
                for (size_t j = 0; j < FUNCTION_TOP_APPS && x->l->items[i].top_apps[j].samples > 0; j++) {
                        FunctionUse *u = &x->l->items[i].top_apps[j];

                        u->name = strdup(x->l->apps[u->index].name);
                        if (!u->name)
                                return -ENOMEM;
                }
        return 0;
}

static int node_type_id(Conn *c, const char *name, int64_t *ret) {
        DbStmt *st;
        int r, rc;

        r = conn_stmt(c, STMT_NODE_TYPE_SELECT, &st);
        if (r < 0 || (r = bind_nullable_text(st, 1, name)) < 0)
                return r;
        rc = db_step(st);
        if (rc == 1)
                *ret = db_column_int(st, 0);
        db_reset(st);
        return rc == 1 ? 0 : rc == 0 ? -ENOENT : step_errno(rc);
}

static int object_function_ids(Conn *c, const char *path, Hashmap **ret) {
        _cleanup_(hashmap_freep) Hashmap *h = hashmap_new(&uint64_hash_ops);
        DbStmt *st;
        int r, rc;

        if (!h)
                return -ENOMEM;
        r = conn_stmt(c, STMT_FUNCTION_IDS_OF_PATH, &st);
        if (r < 0 || (r = bind_nullable_text(st, 1, path)) < 0)
                return r;
        while ((rc = db_step(st)) == 1)
                if ((r = hashmap_put(h, INT_TO_KEY(db_column_int(st, 0)), (void *) 1)) < 0) {
                        db_reset(st);
                        return r;
                }
        db_reset(st);
        if (rc != 0)
                return step_errno(rc);
        *ret = TAKE_PTR(h);
        return 0;
}

static int rank(RankCtx *x) {
        SiteFunctionList *l = x->l;
        size_t groups = 0;
        int r;

        if (x->f->node_type && (r = node_type_id(x->c, x->f->node_type, &x->node_type)) < 0)
                return r;
        if (x->f->object && (r = object_function_ids(x->c, x->f->object, &x->only)) < 0)
                return r;
        if ((r = read_keys(x)) < 0 ||
            (r = add_range(x, false)) < 0 ||
            (r = add_range(x, true)) < 0 ||
            (r = name_functions(x)) < 0)
                return r;
        /* merge builds: sort by identity, one item per run */
        if (x->n > 1)
                qsort(x->v, x->n, sizeof(*x->v), by_identity);
        l->items = calloc(MAX(x->n, (size_t) 1), sizeof(SiteFunction));
        if (!l->items)
                return -ENOMEM;
        for (size_t i = 0; i < x->n; i++) {
                FunctionSum *y = &x->v[i];
                SiteFunction *g;

                if (groups == 0 || !same_function(&l->items[groups - 1], y)) {
                        g = &l->items[groups++];
                        *g = (SiteFunction) { .object = TAKE_PTR(y->object), .kind = TAKE_PTR(y->kind),
                                              .build_id = TAKE_PTR(y->build_id), .name = TAKE_PTR(y->name),
                                              .offset = y->offset, .cycles = NAN, .instructions = NAN };
                        g->other = !g->name && g->offset == STORAGE_NULL;
                } else
                        g = &l->items[groups - 1];
                y->group = groups - 1;
                g->samples = __builtin_add_overflow(g->samples, y->samples, &g->samples) ? INT64_MAX : g->samples;
                g->cpu_seconds += y->cpu_seconds;
                g->cycles = add_nullable(g->cycles, y->cycles);
                g->instructions = add_nullable(g->instructions, y->instructions);
                g->jobs += y->jobs;
        }
        l->n = groups;
        r = count_distinct(x);
        if (r < 0)
                return r;
        if (l->n > 1)
                qsort(l->items, l->n, sizeof(SiteFunction), by_samples);
        return 0;
}

/* Keeps only the users and applications with time in the list. */
static void drop_unused(FunctionUse *v, size_t *n) {
        size_t m = 0;

        for (size_t i = 0; i < *n; i++) {
                if (v[i].samples > 0 || v[i].cpu_seconds > 0)
                        v[m++] = v[i];
                else
                        free(v[i].name);
        }
        *n = m;
        if (m > 1)
                qsort(v, m, sizeof(FunctionUse), use_by_samples);
}

int sql_list_site_functions(Storage *base, const FunctionFilter *f, SiteFunctionList *ret) {
        SqlStorage *s = (SqlStorage *) base;
        SiteFunctionList l = {};
        RankCtx x = { .f = f, .l = &l };
        int r;

        db_purpose_set("listing the site's functions");
        /* whole UTC days: the sums have no finer grain */
        l.since = f->since - ((f->since % DAY_SECONDS) + DAY_SECONDS) % DAY_SECONDS;
        l.until = f->until;
        x.keys = hashmap_new(&uint64_hash_ops);
        x.index = hashmap_new(&uint64_hash_ops);
        x.pairs = hashmap_new(&uint64_hash_ops);
        if (!x.keys || !x.index || !x.pairs)
                r = -ENOMEM;
        else {
                reader_acquire(s, &x.c);
                r = conn_begin_read(x.c);
                if (r >= 0)
                        r = rank(&x);
                reader_end_read(s, x.c);
        }
        for (size_t i = 0; i < x.n; i++) {
                free(x.v[i].object);
                free(x.v[i].kind);
                free(x.v[i].build_id);
                free(x.v[i].name);
        }
        free(x.v);
        free(x.views);
        hashmap_free(x.keys);
        hashmap_free(x.index);
        hashmap_free(x.only);
        hashmap_free(x.pairs);
        free(x.pair_v);
        if (r < 0) {
                site_function_list_free(&l);
                return r;
        }
        drop_unused(l.users, &l.n_users);
        drop_unused(l.apps, &l.n_apps);
        *ret = l;
        return 0;
}
