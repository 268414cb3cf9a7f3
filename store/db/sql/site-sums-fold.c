/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The fold: the site's function sums that batches left in
 * function_sums_pending (schema/0027, site-sums.h) added to their tables
 * (schema/0024). Most batches a second share their rows there (the nodes
 * of a job push the same functions under the same key, node type and
 * day): summed in memory first, each distinct row is upserted once per
 * fold, not once per batch.
 *
 * A fold runs as a batch's transaction does beside other writers (the
 * writers' lock shared, then the site lock, statements.h), so that two
 * stores on one PostgreSQL database fold one after the other, each taking
 * what was committed before it took the site lock; batches go on adding
 * rows meanwhile, which take no site lock. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "db/sql/site-sums.h"
#include "db/sql/sql-internal.h"
#include "log.h"
#include "util.h"

/* Rows a fold takes at most, and their sums (about 200 bytes each in
 * memory, decoded and summed): bound its memory and how long it holds the
 * site lock. A batch of 500 rows has about 300. */
#define FOLD_MAX_ROWS 1024
#define FOLD_MAX_SUMS (128u << 10)

/* The writer folds after a group once its batches since the last fold
 * are this many, or the oldest of them is this old. */
#define FOLD_EVERY_BATCHES 256
#define FOLD_EVERY_NS (UINT64_C(2) * 1000000000)

typedef struct SiteRows {
        const SiteSums *sums;
        SitePart part;
        const size_t *order;    /* of the part, in the table's key order */
        int64_t bucket;
} SiteRows;

static int bind_site_row(DbStmt *st, int k, size_t i, void *userdata) {
        const SiteRows *o = userdata;
        const Acc *a = &o->sums->parts[o->part].pool[o->order[i]];
        int r;

        switch (o->part) {
        case SITE_USER:
        case SITE_APP:
                if ((r = db_bind_int(st, k, a->a)) < 0 ||
                    (r = db_bind_text(st, k + 1, o->sums->names[a->b])) < 0 ||
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
        default:
                return -EINVAL;
        }
        if ((r = db_bind_int(st, k, a->samples)) < 0 ||
            (r = bind_sum(st, k + 1, a->cpu_seconds)) < 0 ||
            (r = bind_nullable_double(st, k + 2, a->cycles == STORAGE_NULL ? NAN : (double) a->cycles)) < 0 ||
            (r = bind_nullable_double(st, k + 3, a->instructions == STORAGE_NULL ? NAN : (double) a->instructions)) < 0 ||
            (r = db_bind_int(st, k + 4, a->jobs)) < 0)
                return r;
        return 0;
}

/* Upserts the sums of a day into its day's and week's rows, each once. */
static int write_sums(Conn *c, const SiteSums *s) {
        static const struct {
                int64_t seconds;
                Stmt stmts[SITE_TOTAL + 1];
        } grains[] = {
                { DAY_SECONDS, { [SITE_FUNCTION] = STMT_FUNCTION_DAY_UPSERT, [SITE_KEY] = STMT_FUNCTION_KEY_DAY_UPSERT,
                                 [SITE_SCOPE] = STMT_FUNCTION_SCOPE_DAY_UPSERT,
                                 [SITE_TOTAL] = STMT_FUNCTION_TOTAL_DAY_UPSERT } },
                { WEEK_SECONDS, { [SITE_FUNCTION] = STMT_FUNCTION_WEEK_UPSERT,
                                  [SITE_KEY] = STMT_FUNCTION_KEY_WEEK_UPSERT,
                                  [SITE_SCOPE] = STMT_FUNCTION_SCOPE_WEEK_UPSERT,
                                  [SITE_TOTAL] = STMT_FUNCTION_TOTAL_WEEK_UPSERT } },
        };
        size_t *order[_SITE_PARTS] = {};
        int r = 0;

        for (SitePart k = 0; k < _SITE_PARTS; k++)
                if (!(order[k] = site_sums_order(&s->parts[k], k == SITE_KEY))) {
                        r = -ENOMEM;
                        goto finish;
                }
        for (size_t g = 0; g < ELEMENTSOF(grains); g++)
                for (SitePart k = 0; k <= SITE_TOTAL; k++) {
                        SiteRows rows = { s, k, order[k], s->day - s->day % grains[g].seconds };

                        r = conn_write_rows(c, grains[g].stmts[k], s->parts[k].n, bind_site_row, &rows, false);
                        if (r < 0)
                                goto finish;
                }
        {
                SiteRows u = { s, SITE_USER, order[SITE_USER], s->day },
                         a = { s, SITE_APP, order[SITE_APP], s->day };

                r = conn_write_rows(c, STMT_FUNCTION_USER_UPSERT, s->parts[SITE_USER].n, bind_site_row, &u, false);
                if (r >= 0)
                        r = conn_write_rows(c, STMT_FUNCTION_APP_UPSERT, s->parts[SITE_APP].n, bind_site_row, &a,
                                            false);
        }
finish:
        for (SitePart k = 0; k < _SITE_PARTS; k++)
                free(order[k]);
        return r;
}

/* The rows a fold took. */
typedef struct Taken {
        int64_t *ids;
        SiteSumsRow *rows;
        bool *ok;               /* decoded */
        size_t n, alloc, sums;
} Taken;

static void taken_done(Taken *t) {
        for (size_t i = 0; i < t->n; i++)
                site_sums_row_done(&t->rows[i]);
        free(t->ids);
        free(t->rows);
        free(t->ok);
        *t = (Taken) {};
}

static int read_taken(DbStmt *st, Taken *t) {
        const void *data;
        size_t len;
        int r;

        if (t->n >= t->alloc) {
                size_t want = MAX(t->alloc * 2, (size_t) 64);
                int64_t *ids = reallocarray(t->ids, want, sizeof(int64_t));
                SiteSumsRow *rows;
                bool *ok;

                if (!ids)
                        return -ENOMEM;
                t->ids = ids;
                rows = reallocarray(t->rows, want, sizeof(SiteSumsRow));
                if (!rows)
                        return -ENOMEM;
                t->rows = rows;
                ok = reallocarray(t->ok, want, sizeof(bool));
                if (!ok)
                        return -ENOMEM;
                t->ok = ok;
                t->alloc = want;
        }
        data = db_column_blob(st, 1, &len);
        t->ids[t->n] = db_column_int(st, 0);
        r = site_sums_decode(data, len, &t->rows[t->n]);
        if (r == -ENOMEM)
                return r;
        t->ok[t->n] = r >= 0;
        for (SitePart k = 0; r >= 0 && k < _SITE_PARTS; k++)
                t->sums += t->rows[t->n].n[k];
        t->n++;
        return 0;
}

/* The oldest rows, up to FOLD_MAX_ROWS and about FOLD_MAX_SUMS. */
static int take(Conn *c, Taken *t) {
        DbStmt *st;
        int r, rc;

        if ((r = conn_stmt(c, STMT_FUNCTION_SUMS_PENDING_TAKE, &st)) < 0 ||
            (r = db_bind_int(st, 1, FOLD_MAX_ROWS)) < 0)
                return r;
        while ((rc = db_step(st)) == 1) {
                r = read_taken(st, t);
                if (r < 0 || t->sums >= FOLD_MAX_SUMS)
                        break;
        }
        db_reset(st);
        if (r < 0)
                return r;
        return rc < 0 ? rc : 0;
}

/* A body that does not decode: kept, out of the folds' way, and said. */
static int set_aside(Conn *c, int64_t id) {
        DbStmt *st;
        int r;

        log_error("The site's function sums of a batch (function_sums_pending row %" PRId64 ") do not decode: "
                  "kept as row %" PRId64 ", not added to the site's function rankings.", id, -id);
        if ((r = conn_stmt(c, STMT_FUNCTION_SUMS_PENDING_SET_ASIDE, &st)) < 0 || (r = db_bind_int(st, 1, id)) < 0)
                return r;
        return db_execute(st, 1);
}

static int bind_id(DbStmt *st, int k, size_t i, void *userdata) {
        return db_bind_int(st, k, ((const int64_t *) userdata)[i]);
}

/* The days' sums, one per day the rows are of (a few at most). */
typedef struct Days {
        SiteSums *items;
        size_t n;
} Days;

static void days_done(Days *d) {
        for (size_t i = 0; i < d->n; i++)
                site_sums_done(&d->items[i]);
        free(d->items);
        *d = (Days) {};
}

/* The sums of row i's day, with room for all the rows of that day. */
static int day_of(Days *d, const Taken *t, size_t i, SiteSums **ret) {
        int64_t day = t->rows[i].day;
        size_t max[_SITE_PARTS] = {}, names = 0;
        int r;

        for (size_t k = 0; k < d->n; k++)
                if (d->items[k].day == day) {
                        *ret = &d->items[k];
                        return 0;
                }
        for (size_t j = i; j < t->n; j++) {
                if (!t->ok[j] || t->rows[j].day != day)
                        continue;
                for (SitePart k = 0; k < _SITE_PARTS; k++)
                        max[k] += t->rows[j].n[k];
                names += t->rows[j].n_names;
        }
        r = site_sums_init(&d->items[d->n++], day, max, names);
        if (r < 0)
                return r;
        *ret = &d->items[d->n - 1];
        return 0;
}

/* One fold in a transaction of its own: *ret_folded rows, *ret_more when
 * there may be more. */
static int fold_once(SqlStorage *s, uint64_t *ret_folded, bool *ret_more) {
        Conn *c = &s->writer;
        _cleanup_(taken_done) Taken t = {};
        _cleanup_(days_done) Days days = {};
        _cleanup_free_ int64_t *folded = NULL;
        size_t n_folded = 0, i = 0;
        int r;

        db_error_clear();
        r = db_begin_ingest(c->db);
        if (r < 0)
                return r;
        c->shares_writes = sql_dialect(c->db->driver->dialect)->ingest_lock_site != NULL;
        c->site_locked = false;
        if ((r = conn_lock_site(c)) < 0 || (r = take(c, &t)) < 0)
                goto rollback;
        days.items = calloc(MAX(t.n, (size_t) 1), sizeof(SiteSums));
        folded = calloc(MAX(t.n, (size_t) 1), sizeof(int64_t));
        if (!days.items || !folded) {
                r = -ENOMEM;
                goto rollback;
        }
        for (i = 0; i < t.n; i++) {
                SiteSums *d;

                if (!t.ok[i]) {
                        if ((r = set_aside(c, t.ids[i])) < 0)
                                goto rollback;
                        continue;
                }
                if ((r = day_of(&days, &t, i, &d)) < 0)
                        goto rollback;
                r = site_sums_add(d, &t.rows[i]);
                /* A sum in memory would pass int64 (cycles, over many
                 * batches): this row and the rest wait for the next fold,
                 * which starts from nothing (one row always fits). */
                if (r == -EOVERFLOW)
                        break;
                if (r < 0)
                        goto rollback;
                folded[n_folded++] = t.ids[i];
        }
        for (size_t k = 0; k < days.n; k++)
                if ((r = write_sums(c, &days.items[k])) < 0)
                        goto rollback;
        if ((r = conn_write_rows(c, STMT_FUNCTION_SUMS_PENDING_DELETE, n_folded, bind_id, folded, true)) < 0 ||
            (r = conn_exec(c, "COMMIT")) < 0)
                goto rollback;
        c->shares_writes = c->site_locked = false;
        *ret_folded = n_folded;
        *ret_more = i < t.n || t.n == FOLD_MAX_ROWS || t.sums >= FOLD_MAX_SUMS;
        return 0;

rollback:
        if (db_in_transaction(c->db))
                (void) conn_exec(c, "ROLLBACK");
        c->shares_writes = c->site_locked = false;
        return r;
}

int site_sums_fold_locked(SqlStorage *s, bool all, uint64_t *ret_folded) {
        uint64_t sum = 0;
        bool more = false;
        int r;

        do {
                uint64_t n = 0;

                r = fold_once(s, &n, &more);
                if (r < 0)
                        return r;
                sum += n;
        } while (all && more);
        if (ret_folded)
                *ret_folded = sum;
        return more ? 1 : 0;
}

/* The batches counted for a fold (home's), taken: all of them, or only
 * when they are due (enough of them, or old enough); how many. */
static size_t claim(SqlStorage *home, bool all) {
        size_t n = 0;

        pthread_mutex_lock(&home->sums_lock);
        if (all || home->sums_pending >= FOLD_EVERY_BATCHES ||
            (home->sums_pending > 0 && now_ns(CLOCK_MONOTONIC) - home->sums_pending_ns >= FOLD_EVERY_NS)) {
                n = home->sums_pending;
                home->sums_pending = 0;
        }
        pthread_mutex_unlock(&home->sums_lock);
        return n;
}

/* Counts n batches for a fold: committed, or left by one that failed. */
static void count(SqlStorage *home, size_t n) {
        if (n == 0)
                return;
        pthread_mutex_lock(&home->sums_lock);
        if (home->sums_pending == 0)
                home->sums_pending_ns = now_ns(CLOCK_MONOTONIC);
        home->sums_pending += n;
        pthread_mutex_unlock(&home->sums_lock);
}

/* A fold of what was due (claimed: n batches), under s->write_lock: one
 * fold's rows at most; what it left is counted as due again, and so is
 * all of it when it failed. */
static int fold_due(SqlStorage *s, size_t n, uint64_t *ret_folded) {
        int r = site_sums_fold_locked(s, false, ret_folded);

        if (r != 0)
                count(s->home, r < 0 ? MAX(n, (size_t) 1) : FOLD_EVERY_BATCHES);
        return r;
}

void site_sums_committed(SqlStorage *s, size_t batches) {
        size_t n;
        int r;

        count(s->home, batches);
        n = claim(s->home, false);
        if (n == 0)
                return;
        r = fold_due(s, n, NULL);
        if (r < 0)
                log_warning_errno(r, "Could not add batches' sums to the site's function rankings: %m (%s); "
                                  "trying again later.", db_error_last() ?: "no message");
}

int sql_fold_function_sums(Storage *base, bool all, uint64_t *ret_folded) {
        SqlStorage *s = (SqlStorage *) base;
        uint64_t folded = 0;
        size_t n;
        int r;

        db_purpose_set("adding batches' sums to the site's function rankings");
        /* the rows of every writer of this store, and of other stores */
        n = claim(s->home, all);
        if (!all && n == 0)
                return 0;
        pthread_mutex_lock(&s->write_lock);
        if (all) {
                r = site_sums_fold_locked(s, true, &folded);
                if (r < 0)
                        count(s->home, MAX(n, (size_t) 1));
        } else
                r = fold_due(s, n, &folded);
        pthread_mutex_unlock(&s->write_lock);
        if (r < 0)
                return r;
        if (ret_folded)
                *ret_folded = folded;
        return 0;
}

int site_sums_fold_for_read(SqlStorage *s) {
        DbStmt *st;
        int64_t n = 0;
        Conn *c;
        int r;

        /* a look first, which waits for no writer */
        reader_acquire(s, &c);
        r = conn_stmt(c, STMT_FUNCTION_SUMS_PENDING_ANY, &st);
        if (r >= 0)
                r = step_id(st, &n);
        reader_release(s, c);
        if (r < 0 || n == 0)
                return r;
        return sql_fold_function_sums(&s->base, true, NULL);
}
