/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The site's functions over a range (list_site_functions, schema/0024).
 *
 * Over every job (an admin's ranking, not narrowed): the site's sums by
 * day and week, then the users and applications of the functions listed
 * from who ran each and when (function_users, function_apps): the work
 * grows with the functions of the range and those listed, not with the
 * jobs. Narrowed to an application, account, user, node type or object,
 * or to what a person may see: the sums per application-mix key, of the
 * keys mix_keys' indexes find for the application, account, user and
 * viewer (each key's rows found through its primary key: the work grows
 * with the keys and rows in view, not with the site's), or of every key
 * through the bucket's index when nothing narrows the keys (a node type
 * or an object alone), kept where their key and node type are in view,
 * with exact users and applications from the same rows. Then named,
 * merged over builds of one path, ranked. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db/sql/sql-internal.h"

#define NAME_CHUNK 256

/* A mix key in view: its id, its user's and application's index in the
 * list's users and apps. */
typedef struct KeyInView {
        int64_t id;
        size_t user, app;
} KeyInView;

/* A function run by a user (app false) or in an application, and its
 * samples there (narrowed rankings). */
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
        SiteFunctionList *l;
        bool narrowed;
        int64_t node_type;      /* 0: any */
        Hashmap *keys;          /* mix key id → index into views + 1 */
        KeyInView *views;
        size_t n_views;
        /* The condition on mix_keys k that finds the keys in view, and
         * its arguments; NULL: every key (nothing narrows them). */
        char *key_cond;
        const char **key_args;
        size_t n_key_args;
        Hashmap *only;          /* function ids of f->object, or NULL */
        Hashmap *index;         /* function id → index into v + 1 */
        FunctionSum *v;
        size_t n, alloc;
        Hashmap *pairs;         /* pair_key() → index into pair_v + 1 */
        Pair *pair_v;
        size_t n_pairs, pairs_alloc;
        size_t users_alloc, apps_alloc;
        SiteFunction *groups;   /* merged, in the order of v */
        size_t n_groups;
        size_t *rank_of;        /* group → its place in l->items, SIZE_MAX: not listed */
} RankCtx;

static double add_nullable(double sum, double v) {
        return isnan(v) ? sum : isnan(sum) ? v : sum + v;
}

static int64_t add_capped(int64_t a, int64_t b) {
        int64_t t;

        return __builtin_add_overflow(a, b, &t) ? INT64_MAX : t;
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
        x->pair_v[at - 1].samples = add_capped(x->pair_v[at - 1].samples, samples);
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

/* The condition on mix_keys (as k) that its indexes answer: the
 * filter's application, account and user, and for a person their own
 * jobs' and their accounts' (job_viewer_may_see()). NULL and no
 * arguments when none applies: every key is in view. */
static int key_condition(RankCtx *x) {
        const FunctionFilter *f = x->f;
        const JobViewer *v = f->viewer && f->viewer->user ? f->viewer : NULL;
        const char *eq[] = { f->app, f->account, f->user };
        static const char *const column[] = { "k.app", "k.account", "k.user_name" };
        size_t size = 0, n_accounts = 0, n = 0;
        char *sql = NULL;
        FILE *out;
        bool failed;

        for (char *const *a = v ? v->accounts : NULL; a && *a; a++)
                n_accounts++;
        x->key_args = calloc(ELEMENTSOF(eq) + 1 + n_accounts, sizeof(char *));
        if (!x->key_args || !(out = open_memstream(&sql, &size)))
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(eq); i++)
                if (eq[i]) {
                        fprintf(out, "%s%s = ?", n ? " AND " : "", column[i]);
                        x->key_args[n++] = eq[i];
                }
        if (v) {
                fprintf(out, "%s(k.user_name = ?", n ? " AND " : "");
                x->key_args[n++] = v->user;
                if (n_accounts > 0) {
                        fputs(" OR k.account IN (", out);
                        for (size_t i = 0; i < n_accounts; i++) {
                                fputs(i ? ", ?" : "?", out);
                                x->key_args[n++] = v->accounts[i];
                        }
                        fputc(')', out);
                }
                fputc(')', out);
        }
        failed = ferror(out);
        if (fclose(out) != 0 || failed) {
                free(sql);
                return -ENOMEM;
        }
        if (n == 0)
                free(sql);
        else
                x->key_cond = sql;
        x->n_key_args = n;
        return 0;
}

static int bind_key_args(const RankCtx *x, DbStmt *st, int first) {
        int r;

        for (size_t i = 0; i < x->n_key_args; i++)
                if ((r = db_bind_text(st, first + (int) i, x->key_args[i])) < 0)
                        return r;
        return 0;
}

/* The mix keys whose jobs are in view: of the filter's application,
 * account and user, and that the viewer may see (checked here again on
 * each key the condition found). */
static int read_keys(RankCtx *x) {
        _cleanup_(hashmap_freep) Hashmap *users = hashmap_new(&string_hash_ops), *apps = hashmap_new(&string_hash_ops);
        const FunctionFilter *f = x->f;
        _cleanup_free_ char *sql = NULL;
        size_t alloc = 0;
        DbStmt *st = NULL;
        int r, rc = 0;

        if (!users || !apps)
                return -ENOMEM;
        if (asprintf(&sql, "SELECT k.id, k.app, k.user_name, k.account FROM mix_keys k%s%s",
                     x->key_cond ? " WHERE " : "", x->key_cond ?: "") < 0)
                return -ENOMEM;
        r = db_prepare(x->c->db, sql, false, &st);
        if (r >= 0)
                r = bind_key_args(x, st, 1);
        while (r >= 0 && (rc = db_step(st)) == 1) {
                const char *app = db_column_text(st, 1) ?: "", *user = db_column_text(st, 2) ?: "",
                           *account = db_column_text(st, 3) ?: "";
                KeyInView k = { .id = db_column_int(st, 0) };

                if ((f->app && !streq(f->app, app)) || (f->user && !streq(f->user, user)) ||
                    (f->account && !streq(f->account, account)) ||
                    !job_viewer_may_see(f->viewer, *user ? user : NULL, *account ? account : NULL))
                        continue;
                if ((r = use_intern(users, &x->l->users, &x->l->n_users, &x->users_alloc, user, &k.user)) < 0 ||
                    (r = use_intern(apps, &x->l->apps, &x->l->n_apps, &x->apps_alloc, app, &k.app)) < 0 ||
                    (r = grow((void **) &x->views, x->n_views, &alloc, sizeof(KeyInView))) < 0)
                        break;
                x->views[x->n_views++] = k;
                r = hashmap_put(x->keys, INT_TO_KEY(k.id), (void *) (uintptr_t) x->n_views);
        }
        if (r >= 0 && rc != 0)
                r = step_errno(rc);
        db_finalize(st);
        return r;
}

/* Adds a row's sums to its function's; k: its key (narrowed only). */
static int sum_row(RankCtx *x, int64_t id, const KeyInView *k, int64_t samples, double cpu, double cycles,
                   double instructions, int64_t jobs) {
        FunctionSum *y;
        void *p;
        int r;

        if (x->only && !hashmap_get(x->only, INT_TO_KEY(id)))
                return 0;
        p = hashmap_get(x->index, INT_TO_KEY(id));
        if (p)
                y = &x->v[(uintptr_t) p - 1];
        else {
                if ((r = grow((void **) &x->v, x->n, &x->alloc, sizeof(FunctionSum))) < 0 ||
                    (r = hashmap_put(x->index, INT_TO_KEY(id), (void *) (uintptr_t) (x->n + 1))) < 0)
                        return r;
                y = &x->v[x->n++];
                *y = (FunctionSum) { .id = id, .cycles = NAN, .instructions = NAN };
        }
        y->samples = add_capped(y->samples, samples);
        y->cpu_seconds += cpu;
        y->cycles = add_nullable(y->cycles, cycles);
        y->instructions = add_nullable(y->instructions, instructions);
        y->jobs = add_capped(y->jobs, jobs);
        if (!k)
                return 0;
        x->l->users[k->user].samples = add_capped(x->l->users[k->user].samples, samples);
        x->l->users[k->user].cpu_seconds += cpu;
        x->l->apps[k->app].samples = add_capped(x->l->apps[k->app].samples, samples);
        x->l->apps[k->app].cpu_seconds += cpu;
        if ((r = pair_add(x, id, k->user, false, samples)) < 0)
                return r;
        return pair_add(x, id, k->app, true, samples);
}

static void total_add(RankCtx *x, int64_t samples, double cpu) {
        x->l->total_samples = add_capped(x->l->total_samples, samples);
        x->l->total_cpu_seconds += cpu;
}

static const KeyInView *key_in_view(RankCtx *x, int64_t key, int64_t node_type) {
        void *p;

        if (x->node_type && node_type != x->node_type)
                return NULL;
        p = hashmap_get(x->keys, INT_TO_KEY(key));
        return p ? &x->views[(uintptr_t) p - 1] : NULL;
}

/* What one statement of a grain reads. */
typedef enum RowsOf {
        ROWS_SITE,              /* function_days: function, sums */
        ROWS_TOTAL,             /* function_total_days: samples, cpu */
        ROWS_KEY,               /* function_key_days: function, node type, sums, key */
        ROWS_SCOPE,             /* function_scope_days: node type, samples, cpu, key */
} RowsOf;

/* The rows of the keys the condition finds, each key's through its
 * primary key (mix_key, bucket, ...); the columns of STMT_FUNCTION_KEY_*_ALL
 * and STMT_FUNCTION_SCOPE_*_ALL. */
static int prepare_in_view(RankCtx *x, RowsOf what, bool weeks, DbStmt **ret) {
        const char *bucket = weeks ? "week" : "day";
        _cleanup_free_ char *sql = NULL;

        if (asprintf(&sql, "SELECT %s FROM mix_keys k JOIN function_%s_%ss d ON d.mix_key = k.id "
                     "AND d.%s >= ? AND d.%s < ? WHERE %s",
                     what == ROWS_KEY ? "d.function_id, d.node_type_id, d.samples, d.cpu_seconds, d.cycles, "
                                        "d.instructions, d.jobs, d.mix_key"
                                      : "d.node_type_id, d.samples, d.cpu_seconds, d.mix_key",
                     what == ROWS_KEY ? "key" : "scope", bucket, bucket, bucket, x->key_cond) < 0)
                return -ENOMEM;
        return db_prepare(x->c->db, sql, false, ret);
}

static int read_rows(RankCtx *x, RowsOf what, bool weeks, int64_t since, int64_t until) {
        static const Stmt stmts[][2] = {
                [ROWS_SITE] = { STMT_FUNCTION_DAYS, STMT_FUNCTION_WEEKS },
                [ROWS_TOTAL] = { STMT_FUNCTION_TOTAL_DAYS, STMT_FUNCTION_TOTAL_WEEKS },
                [ROWS_KEY] = { STMT_FUNCTION_KEY_DAYS_ALL, STMT_FUNCTION_KEY_WEEKS_ALL },
                [ROWS_SCOPE] = { STMT_FUNCTION_SCOPE_DAYS_ALL, STMT_FUNCTION_SCOPE_WEEKS_ALL },
        };
        bool own = (what == ROWS_KEY || what == ROWS_SCOPE) && x->key_cond;
        DbStmt *st = NULL;
        int r, rc = 0;

        if (since >= until)
                return 0;
        r = own ? prepare_in_view(x, what, weeks, &st) : conn_stmt(x->c, stmts[what][weeks], &st);
        if (r < 0)
                return r;
        if ((r = db_bind_int(st, 1, since)) < 0 || (r = db_bind_int(st, 2, until)) < 0 ||
            (own && (r = bind_key_args(x, st, 3)) < 0))
                goto finish;
        while ((rc = db_step(st)) == 1) {
                const KeyInView *in;

                switch (what) {
                case ROWS_SITE:
                        r = sum_row(x, db_column_int(st, 0), NULL, db_column_int(st, 1), db_column_double(st, 2),
                                    column_nullable_double(st, 3), column_nullable_double(st, 4),
                                    db_column_int(st, 5));
                        break;
                case ROWS_TOTAL:
                        total_add(x, db_column_int(st, 0), db_column_double(st, 1));
                        break;
                case ROWS_KEY:
                        in = key_in_view(x, db_column_int(st, 7), db_column_int(st, 1));
                        if (in)
                                r = sum_row(x, db_column_int(st, 0), in, db_column_int(st, 2),
                                            db_column_double(st, 3), column_nullable_double(st, 4),
                                            column_nullable_double(st, 5), db_column_int(st, 6));
                        break;
                case ROWS_SCOPE:
                        if (key_in_view(x, db_column_int(st, 3), db_column_int(st, 0)))
                                total_add(x, db_column_int(st, 1), db_column_double(st, 2));
                        break;
                }
                if (r < 0)
                        break;
        }
        if (r >= 0 && rc != 0)
                r = step_errno(rc);
finish:
        if (own)
                db_finalize(st);
        else
                db_reset(st);
        return r;
}

/* A function's names from columns col … col + 5 of a row: its object's
 * path, kind and build-id, its name, file offset and the name found since
 * (function_names). */
static int name_from_row(FunctionSum *y, DbStmt *st, int col) {
        const char *name = db_column_text(st, col + 3), *found = db_column_text(st, col + 5),
                   *build = db_column_text(st, col + 2);
        int64_t offset = db_column_int(st, col + 4);
        int r = 0;

        y->object = column_strdup(st, col, &r);
        y->kind = column_strdup(st, col + 1, &r);
        y->offset = offset >= 0 ? offset : STORAGE_NULL;
        if (name && *name)
                y->name = column_strdup(st, col + 3, &r);
        else if (offset >= 0 && found && *found)
                y->name = column_strdup(st, col + 5, &r);
        /* an unnamed page is of its build only */
        if (!y->name && offset >= 0 && build && *build)
                y->build_id = column_strdup(st, col + 2, &r);
        return r;
}

/* [since, until) in whole weeks where there are, days at its edges:
 * days [lo, a) and [b, hi), weeks [a, b); no weeks when a >= b. */
static void range_weeks(const RankCtx *x, int64_t *ret_a, int64_t *ret_b) {
        int64_t lo = x->l->since, hi = x->l->until;

        *ret_a = lo + (WEEK_SECONDS - lo % WEEK_SECONDS) % WEEK_SECONDS;
        *ret_b = hi - hi % WEEK_SECONDS;
}

/* The site's sums of the range per function, summed by the server: on
 * PostgreSQL, where every row of an answer is text to send and parse, the
 * range's rows (a 30-day range of a large site: some 90,000) cost more
 * than the server's summing of them; SQLite's GROUP BY sorts them all,
 * and the rows are cheap: read_rows() adds them up there. */
static int read_site_sums(RankCtx *x) {
        int64_t lo = x->l->since, hi = x->l->until, a, b;
        DbStmt *st;
        int r, rc;

        range_weeks(x, &a, &b);
        if (b <= a)
                a = b = hi;
        r = conn_stmt(x->c, STMT_FUNCTION_SITE_SUMS, &st);
        if (r < 0 || (r = db_bind_int(st, 1, lo)) < 0 || (r = db_bind_int(st, 2, a)) < 0 ||
            (r = db_bind_int(st, 3, b)) < 0 || (r = db_bind_int(st, 4, hi)) < 0 ||
            (r = db_bind_int(st, 5, a)) < 0 || (r = db_bind_int(st, 6, b)) < 0)
                return r;
        while ((rc = db_step(st)) == 1) {
                int64_t id = db_column_int(st, 0);
                void *p;

                if ((r = sum_row(x, id, NULL, db_column_int(st, 1), db_column_double(st, 2),
                                 column_nullable_double(st, 3), column_nullable_double(st, 4),
                                 db_column_int(st, 5))) < 0)
                        break;
                /* named in the same answer: no round trip per 256 of them */
                p = hashmap_get(x->index, INT_TO_KEY(id));
                if (p && !x->v[(uintptr_t) p - 1].object && (r = name_from_row(&x->v[(uintptr_t) p - 1], st, 6)) < 0)
                        break;
        }
        db_reset(st);
        if (r < 0)
                return r;
        return rc == 0 ? 0 : step_errno(rc);
}

static int read_range(RankCtx *x, RowsOf what) {
        int64_t lo = x->l->since, hi = x->l->until, a, b;
        int r;

        range_weeks(x, &a, &b);
        if (b <= a)
                return read_rows(x, what, false, lo, hi);
        if ((r = read_rows(x, what, false, lo, a)) < 0 || (r = read_rows(x, what, false, b, hi)) < 0)
                return r;
        return read_rows(x, what, true, a, b);
}

static int read_sums(RankCtx *x) {
        int r;

        if (!x->narrowed) {
                r = x->c->db->driver->dialect == DB_DIALECT_POSTGRESQL ? read_site_sums(x)
                                                                       : read_range(x, ROWS_SITE);
                if (r < 0)
                        return r;
                return read_range(x, ROWS_TOTAL);
        }
        if ((r = key_condition(x)) < 0 || (r = read_keys(x)) < 0)
                return r;
        if (x->n_views == 0)
                return 0;
        if ((r = read_range(x, ROWS_KEY)) < 0)
                return r;
        return read_range(x, ROWS_SCOPE);
}

static int by_id(const void *p, const void *q) {
        const FunctionSum *a = p, *b = q;

        return CMP(a->id, b->id);
}

/* The one of todo[0 … n) (indexes into v, ascending by id) with this id. */
static FunctionSum *find_id(FunctionSum *v, const size_t *todo, size_t n, int64_t id) {
        size_t lo = 0, hi = n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (v[todo[mid]].id == id)
                        return &v[todo[mid]];
                if (v[todo[mid]].id < id)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NULL;
}

/* Names x->v's functions not named yet, NAME_CHUNK ids to a query. */
static int name_functions(RankCtx *x) {
        _cleanup_free_ size_t *todo = calloc(MAX(x->n, (size_t) 1), sizeof(size_t));
        char sql[512 + NAME_CHUNK * 2];
        size_t n = 0;

        if (!todo)
                return -ENOMEM;
        if (x->n > 1)
                qsort(x->v, x->n, sizeof(*x->v), by_id);
        for (size_t i = 0; i < x->n; i++)
                if (!x->v[i].object)
                        todo[n++] = i;
        for (size_t at = 0; at < n; at += NAME_CHUNK) {
                size_t k = MIN(n - at, (size_t) NAME_CHUNK), len;
                DbStmt *st = NULL;
                int r, rc = 0;

                len = (size_t) snprintf(sql, sizeof(sql),
                                        "SELECT f.id, o.path, o.kind, o.build_id, f.name, f.file_offset, n.name "
                                        "FROM functions f JOIN objects o ON o.id = f.object_id "
                                        "LEFT JOIN function_names n ON f.name = '' AND f.file_offset >= 0 "
                                        "AND n.build_id = o.build_id AND n.file_offset = f.file_offset "
                                        "AND n.entry = f.entry "
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
                        r = db_bind_int(st, (int) i + 1, x->v[todo[at + i]].id);
                while (r >= 0 && (rc = db_step(st)) == 1) {
                        FunctionSum *y = find_id(x->v, todo + at, k, db_column_int(st, 0));

                        if (y && !y->object)
                                r = name_from_row(y, st, 1);
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

static bool streq_null(const char *a, const char *b) {
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
        return CMP(a->offset, b->offset);
}

/* Merges x->v over builds into x->groups. */
static int merge(RankCtx *x) {
        if (x->n > 1)
                qsort(x->v, x->n, sizeof(*x->v), by_identity);
        x->groups = calloc(MAX(x->n, (size_t) 1), sizeof(SiteFunction));
        if (!x->groups)
                return -ENOMEM;
        for (size_t i = 0; i < x->n; i++) {
                FunctionSum *y = &x->v[i];
                SiteFunction *g;

                if (x->n_groups == 0 || !same_function(&x->groups[x->n_groups - 1], y)) {
                        g = &x->groups[x->n_groups++];
                        *g = (SiteFunction) { .object = TAKE_PTR(y->object), .kind = TAKE_PTR(y->kind),
                                              .build_id = TAKE_PTR(y->build_id), .name = TAKE_PTR(y->name),
                                              .offset = y->offset, .cycles = NAN, .instructions = NAN };
                        g->other = !g->name && g->offset == STORAGE_NULL;
                } else
                        g = &x->groups[x->n_groups - 1];
                y->group = x->n_groups - 1;
                g->samples = add_capped(g->samples, y->samples);
                g->cpu_seconds += y->cpu_seconds;
                g->cycles = add_nullable(g->cycles, y->cycles);
                g->instructions = add_nullable(g->instructions, y->instructions);
                g->jobs = add_capped(g->jobs, y->jobs);
        }
        return 0;
}

static int by_samples(const void *p, const void *q, void *groups) {
        const SiteFunction *a = (SiteFunction *) groups + *(const size_t *) p, *b = (SiteFunction *) groups + *(const size_t *) q;
        int c;

        if (a->samples != b->samples)
                return CMP(b->samples, a->samples);
        if ((c = strcmp(a->object, b->object)))
                return c;
        if ((c = strcmp(a->name ?: "", b->name ?: "")))
                return c;
        return CMP(a->offset, b->offset);
}

/* Ranks the groups: the most samples first, those f->want keeps, at
 * most f->limit into l->items (the rest stay in x->groups, freed there);
 * f->each sees them all. */
static int rank_groups(RankCtx *x) {
        _cleanup_free_ size_t *order = calloc(MAX(x->n_groups, (size_t) 1), sizeof(size_t));
        SiteFunctionList *l = x->l;

        x->rank_of = calloc(MAX(x->n_groups, (size_t) 1), sizeof(size_t));
        l->items = calloc(MAX(MIN(x->n_groups, x->f->limit), (size_t) 1), sizeof(SiteFunction));
        if (!order || !x->rank_of || !l->items)
                return -ENOMEM;
        for (size_t i = 0; i < x->n_groups; i++) {
                order[i] = i;
                x->rank_of[i] = SIZE_MAX;
        }
        if (x->n_groups > 1)
                qsort_r(order, x->n_groups, sizeof(size_t), by_samples, x->groups);
        for (size_t i = 0; i < x->n_groups; i++) {
                SiteFunction *g = &x->groups[order[i]];

                if (x->f->each)
                        x->f->each(g, x->f->userdata);
                if (x->f->want && !x->f->want(g, x->f->userdata))
                        continue;
                if (l->n == x->f->limit) {
                        l->more = true;
                        if (!x->f->each)
                                break;
                        continue;
                }
                x->rank_of[order[i]] = l->n;
                l->items[l->n++] = *g;
                *g = (SiteFunction) {};
        }
        return 0;
}

/* Adds samples of app (an index into the list's apps, or any index of
 * names) to f's top applications: the same app's samples add up; a new
 * one takes the place of the smallest when it is larger. */
static void top_app_add(SiteFunction *f, size_t app, int64_t samples) {
        FunctionUse *t = f->top_apps;
        size_t at = FUNCTION_TOP_APPS;

        for (size_t j = 0; j < FUNCTION_TOP_APPS; j++)
                if (t[j].samples > 0 && t[j].index == app) {
                        t[j].samples = add_capped(t[j].samples, samples);
                        at = j;
                        break;
                }
        if (at == FUNCTION_TOP_APPS) {
                at = FUNCTION_TOP_APPS - 1;
                if (t[at].samples >= samples)
                        return;
                t[at] = (FunctionUse) { .samples = samples, .index = app };
        }
        /* kept by samples, the most first */
        for (; at > 0 && t[at].samples > t[at - 1].samples; at--) {
                FunctionUse u = t[at];

                t[at] = t[at - 1];
                t[at - 1] = u;
        }
}

/* Narrowed: each listed function's distinct users and applications, and
 * its top applications, from the pairs its rows gave. */
static int count_from_pairs(RankCtx *x) {
        _cleanup_(hashmap_freep) Hashmap *group_of = hashmap_new(&uint64_hash_ops), *seen = hashmap_new(&uint64_hash_ops);
        int r;

        if (!group_of || !seen)
                return -ENOMEM;
        for (size_t i = 0; i < x->n; i++)
                if (x->rank_of[x->v[i].group] != SIZE_MAX &&
                    (r = hashmap_put(group_of, INT_TO_KEY(x->v[i].id),
                                     (void *) (uintptr_t) (x->rank_of[x->v[i].group] + 1))) < 0)
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
        for (size_t i = 0; i < x->l->n; i++)
                for (size_t j = 0; j < FUNCTION_TOP_APPS && x->l->items[i].top_apps[j].samples > 0; j++) {
                        FunctionUse *u = &x->l->items[i].top_apps[j];

                        u->name = strdup(x->l->apps[u->index].name);
                        if (!u->name)
                                return -ENOMEM;
                }
        return 0;
}

/* The users or applications of listed functions while they are gathered. */
typedef struct Spans {
        Hashmap *index;         /* name → index into names + 1 */
        FunctionUse *names;
        size_t n, alloc;
} Spans;

static void spans_done(Spans *v, size_t n) {
        for (size_t g = 0; v && g < n; g++) {
                hashmap_free(v[g].index);
                for (size_t i = 0; i < v[g].n; i++)
                        free(v[g].names[i].name);
                free(v[g].names);
        }
        free(v);
}

/* Reads who ran the listed functions (app: in which application) in the
 * range, NAME_CHUNK function ids to a query, into spans[their group]:
 * one query for a page of functions, not one per function (a round trip
 * each was most of a ranking's time on PostgreSQL). */
static int read_spans(RankCtx *x, bool app, Spans *spans) {
        _cleanup_free_ int64_t *ids = calloc(MAX(x->n, (size_t) 1), sizeof(int64_t));
        _cleanup_(hashmap_freep) Hashmap *group_of = hashmap_new(&uint64_hash_ops);
        char sql[256 + NAME_CHUNK * 8]; /* ",?NNN" a function */
        size_t n = 0;
        int r;

        if (!ids || !group_of)
                return -ENOMEM;
        for (size_t i = 0; i < x->n; i++) {
                size_t g = x->rank_of[x->v[i].group];

                if (g == SIZE_MAX)
                        continue;
                ids[n++] = x->v[i].id;
                if ((r = hashmap_put(group_of, INT_TO_KEY(x->v[i].id), (void *) (uintptr_t) (g + 1))) < 0)
                        return r;
        }
        for (size_t at = 0; at < n; at += NAME_CHUNK) {
                size_t k = MIN(n - at, (size_t) NAME_CHUNK), len;
                DbStmt *st = NULL;
                int rc = 0;

                /* numbered: the dialects number a '?' after "?2" differently */
                len = (size_t) snprintf(sql, sizeof(sql),
                                        "SELECT function_id, %s, samples FROM %s WHERE last_day >= ?1 "
                                        "AND first_day < ?2 AND function_id IN (",
                                        app ? "app" : "user_name", app ? "function_apps" : "function_users");
                for (size_t i = 0; i < k; i++)
                        len += (size_t) snprintf(sql + len, sizeof(sql) - len, "%s?%zu", i ? "," : "", i + 3);
                snprintf(sql + len, sizeof(sql) - len, ")");
                r = db_prepare(x->c->db, sql, false, &st);
                if (r >= 0 && (r = db_bind_int(st, 1, x->l->since)) >= 0)
                        r = db_bind_int(st, 2, x->l->until);
                for (size_t i = 0; r >= 0 && i < k; i++)
                        r = db_bind_int(st, (int) i + 3, ids[at + i]);
                while (r >= 0 && (rc = db_step(st)) == 1) {
                        uintptr_t g = (uintptr_t) hashmap_get(group_of, INT_TO_KEY(db_column_int(st, 0)));
                        Spans *sp;
                        size_t w;

                        if (g == 0)
                                continue;
                        sp = &spans[g - 1];
                        if (!sp->index && !(sp->index = hashmap_new(&string_hash_ops))) {
                                r = -ENOMEM;
                                break;
                        }
                        r = use_intern(sp->index, &sp->names, &sp->n, &sp->alloc, db_column_text(st, 1) ?: "", &w);
                        if (r >= 0)
                                sp->names[w].samples = add_capped(sp->names[w].samples, db_column_int(st, 2));
                }
                if (r >= 0 && rc != 0)
                        r = step_errno(rc);
                db_finalize(st);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Over every job: each listed function's users and applications whose
 * days overlap the range (function_users, function_apps, of each build's
 * function id), its top applications by their samples of it over all
 * time. */
static int count_from_spans(RankCtx *x) {
        Spans *users = calloc(MAX(x->l->n, (size_t) 1), sizeof(Spans));
        Spans *apps = calloc(MAX(x->l->n, (size_t) 1), sizeof(Spans));
        int r = users && apps ? 0 : -ENOMEM;

        if (r >= 0)
                r = read_spans(x, false, users);
        if (r >= 0)
                r = read_spans(x, true, apps);
        for (size_t g = 0; r >= 0 && g < x->l->n; g++) {
                SiteFunction *f = &x->l->items[g];

                f->users = (int64_t) users[g].n;
                f->apps = (int64_t) apps[g].n;
                for (size_t i = 0; i < apps[g].n; i++)
                        top_app_add(f, i, MAX(apps[g].names[i].samples, (int64_t) 1));
                /* ranked by their samples of it over all time: not the range's */
                for (size_t j = 0; r >= 0 && j < FUNCTION_TOP_APPS && f->top_apps[j].samples > 0; j++) {
                        if (!(f->top_apps[j].name = strdup(apps[g].names[f->top_apps[j].index].name)))
                                r = -ENOMEM;
                        f->top_apps[j].samples = STORAGE_NULL;
                }
        }
        spans_done(users, x->l->n);
        spans_done(apps, x->l->n);
        return r;
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
        int r;

        if (x->f->node_type && (r = node_type_id(x->c, x->f->node_type, &x->node_type)) < 0)
                return r;
        if (x->f->object && (r = object_function_ids(x->c, x->f->object, &x->only)) < 0)
                return r;
        if ((r = read_sums(x)) < 0 ||
            (r = name_functions(x)) < 0 ||
            (r = merge(x)) < 0 ||
            (r = rank_groups(x)) < 0)
                return r;
        if (x->f->no_counts)
                return 0;
        return x->narrowed ? count_from_pairs(x) : count_from_spans(x);
}

static int use_by_samples(const void *p, const void *q) {
        const FunctionUse *a = p, *b = q;

        if (a->samples != b->samples)
                return CMP(b->samples, a->samples);
        return strcmp(a->name, b->name);
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

        /* the batches stored before the question count */
        r = site_sums_fold_for_read(s);
        if (r < 0)
                return r;
        db_purpose_set("listing the site's functions");
        /* whole UTC days: the sums have no finer grain */
        l.since = f->since - ((f->since % DAY_SECONDS) + DAY_SECONDS) % DAY_SECONDS;
        l.until = f->until;
        x.narrowed = f->app || f->account || f->user || f->node_type || f->object || (f->viewer && f->viewer->user);
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
        for (size_t i = 0; i < x.n_groups; i++) {
                free(x.groups[i].object);
                free(x.groups[i].kind);
                free(x.groups[i].build_id);
                free(x.groups[i].name);
        }
        free(x.groups);
        free(x.rank_of);
        free(x.views);
        free(x.key_cond);
        free(x.key_args);
        free(x.pair_v);
        hashmap_free(x.keys);
        hashmap_free(x.index);
        hashmap_free(x.only);
        hashmap_free(x.pairs);
        if (r < 0) {
                site_function_list_free(&l);
                return r;
        }
        drop_unused(l.users, &l.n_users);
        drop_unused(l.apps, &l.n_apps);
        *ret = l;
        return 0;
}
