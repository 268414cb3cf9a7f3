/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The site's application mix (list_app_mix) over whole UTC days: from the
 * per-dimension sums, or, filtered, from the keys that match. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "db/sql/sql-internal.h"

/* The package that installed an executable, looked up once per object
 * (NULL: none known). */
static int object_package(Conn *c, Hashmap *cache, int64_t object, char **ret) {
        DbStmt *st;
        char *name = NULL;
        void *v;
        int r = 0, rc;

        *ret = NULL;
        if (object <= 0)
                return 0;
        if (hashmap_get2(cache, INT_TO_KEY(object), &v, NULL)) {
                if (v && !(*ret = strdup(v)))
                        return -ENOMEM;
                return 0;
        }
        if ((r = conn_stmt(c, STMT_OBJECT_PACKAGE, &st)) < 0 || (r = db_bind_int(st, 1, object)) < 0)
                return r;
        rc = db_step(st);
        if (rc == 1)
                name = column_strdup(st, 0, &r);
        db_reset(st);
        if (rc != 1 && rc != 0)
                return step_errno(rc);
        if (r < 0 || (r = hashmap_put(cache, INT_TO_KEY(object), name)) < 0) {
                free(name);
                return r;
        }
        if (name && !(*ret = strdup(name)))
                return -ENOMEM;
        return 0;
}

static void package_cache_free(Hashmap *h) {
        void *v;
        size_t i = 0;

        while (hashmap_iterate(h, &i, &v, NULL))
                free(v);
        hashmap_free(h);
}

static int mix_key_fill(AppMixKey *k, const char *app, int64_t object, const char *user, const char *account,
                        const char *partition) {
        k->from_note = object == 0 && app && *app;
        k->from_command = object < 0;
        if (!(k->app = strdup(app ?: "")) || !(k->user = strdup(user ?: "")) ||
            !(k->account = strdup(account ?: "")) || !(k->partition = strdup(partition ?: "")))
                return -ENOMEM;
        return 0;
}

static int mix_add_day(AppMixList *l, size_t *alloc, DbStmt *st, int col_day, int col_sums, size_t key) {
        int r = grow((void **) &l->days, l->n_days, alloc, sizeof(AppMixDay));

        if (r < 0)
                return r;
        l->days[l->n_days++] = (AppMixDay) {
                .day = db_column_int(st, col_day), .key = key,
                .samples = db_column_int(st, col_sums), .cpu_seconds = db_column_double(st, col_sums + 1),
                .runs = db_column_int(st, col_sums + 2),
        };
        return 0;
}

/* Unfiltered: one dimension's rows (app_dim_days), a key per value. */
static int mix_read_dim(Conn *c, const AppMixFilter *f, Hashmap *packages, AppMixList *l) {
        _cleanup_(hashmap_freep) Hashmap *index = hashmap_new(&string_hash_ops);
        size_t days_alloc = 0, keys_alloc = 0;
        DbStmt *st;
        int r, rc;

        if (!index)
                return -ENOMEM;
        if ((r = conn_stmt(c, STMT_APP_DIM_DAYS, &st)) < 0 || (r = db_bind_int(st, 1, f->by)) < 0 ||
            (r = db_bind_int(st, 2, l->since)) < 0 || (r = db_bind_int(st, 3, l->until)) < 0)
                return r;
        while ((rc = db_step(st)) == 1) {
                const char *value = db_column_text(st, 1) ?: "";
                int64_t object = db_column_int(st, 2);
                char name[32 + 4096], *copy;
                uintptr_t k;

                /* the app with its executable: one key per pair */
                snprintf(name, sizeof(name), "%" PRId64 "/%s", object, value);
                k = (uintptr_t) hashmap_get(index, name);
                if (k == 0) {
                        AppMixKey *key;

                        if ((r = grow((void **) &l->keys, l->n_keys, &keys_alloc, sizeof(AppMixKey))) < 0)
                                break;
                        key = &l->keys[l->n_keys++];
                        *key = (AppMixKey) {};
                        r = f->by == APP_MIX_BY_APP ? mix_key_fill(key, value, object, NULL, NULL, NULL) :
                            f->by == APP_MIX_BY_USER ? mix_key_fill(key, NULL, 0, value, NULL, NULL) :
                            f->by == APP_MIX_BY_ACCOUNT ? mix_key_fill(key, NULL, 0, NULL, value, NULL) :
                                                          mix_key_fill(key, NULL, 0, NULL, NULL, value);
                        if (r >= 0 && f->by == APP_MIX_BY_APP)
                                r = object_package(c, packages, object, &key->package);
                        if (r < 0)
                                break;
                        k = l->n_keys;
                        /* the index keeps its own copy of the name */
                        copy = strdup(name);
                        if (!copy || (r = hashmap_put(index, copy, (void *) k)) < 0) {
                                free(copy);
                                r = copy ? r : -ENOMEM;
                                break;
                        }
                }
                if ((r = mix_add_day(l, &days_alloc, st, 0, 3, k - 1)) < 0)
                        break;
        }
        db_reset(st);
        {
                const void *key;
                size_t i = 0;

                while (hashmap_iterate(index, &i, NULL, &key))
                        free((void *) key);
        }
        if (r < 0)
                return r;
        return rc == 0 ? 0 : step_errno(rc);
}

/* Filtered: the days of the keys that match, through mix_keys' indexes
 * (or, for an application alone, every key of the range), then each key
 * once. */
static int mix_read_keys(Conn *c, const AppMixFilter *f, Hashmap *packages, AppMixList *l) {
        _cleanup_(hashmap_freep) Hashmap *index = hashmap_new(&uint64_hash_ops);
        size_t days_alloc = 0, keys_alloc = 0;
        int64_t *key_ids = NULL;
        char sql[512];
        DbStmt *st = NULL;
        int r, rc = 0, i = 3;

        if (!index)
                return -ENOMEM;
        char user[32] = "", account[32] = "", partition[32] = "";

        /* numbered: the dialects number a '?' after "?2" differently */
        if (f->user)
                snprintf(user, sizeof(user), " AND k.user_name = ?%d", i++);
        if (f->account)
                snprintf(account, sizeof(account), " AND k.account = ?%d", i++);
        if (f->partition)
                snprintf(partition, sizeof(partition), " AND k.partition_name = ?%d", i++);
        i = 3;
        snprintf(sql, sizeof(sql),
                 "SELECT d.day, d.mix_key, d.samples, d.cpu_seconds, d.runs FROM mix_keys k JOIN app_days d "
                 "ON d.mix_key = k.id AND d.day >= ?1 AND d.day < ?2 WHERE TRUE%s%s%s",
                 user, account, partition);
        r = db_prepare(c->db, sql, false, &st);
        if (r >= 0 && (r = db_bind_int(st, 1, l->since)) >= 0 && (r = db_bind_int(st, 2, l->until)) >= 0 &&
            (!f->user || (r = bind_nullable_text(st, i++, f->user)) >= 0) &&
            (!f->account || (r = bind_nullable_text(st, i++, f->account)) >= 0) && f->partition)
                r = bind_nullable_text(st, i++, f->partition);
        while (r >= 0 && (rc = db_step(st)) == 1) {
                int64_t id = db_column_int(st, 1);
                uintptr_t k = (uintptr_t) hashmap_get(index, INT_TO_KEY(id));

                if (k == 0) {
                        if ((r = grow((void **) &key_ids, l->n_keys, &keys_alloc, sizeof(int64_t))) < 0)
                                break;
                        key_ids[l->n_keys++] = id;
                        k = l->n_keys;
                        if ((r = hashmap_put(index, INT_TO_KEY(id), (void *) k)) < 0)
                                break;
                }
                r = mix_add_day(l, &days_alloc, st, 0, 2, k - 1);
        }
        if (r >= 0 && rc != 0)
                r = step_errno(rc);
        db_finalize(st);
        if (r >= 0 && l->n_keys > 0 && !(l->keys = calloc(l->n_keys, sizeof(AppMixKey))))
                r = -ENOMEM;
        for (size_t n = 0; r >= 0 && n < l->n_keys; n++) {
                AppMixKey *k = &l->keys[n];
                int64_t object;

                if ((r = conn_stmt(c, STMT_MIX_KEY, &st)) < 0 || (r = db_bind_int(st, 1, key_ids[n])) < 0)
                        break;
                rc = db_step(st);
                if (rc != 1) {
                        db_reset(st);
                        r = rc == 0 ? -EIO : step_errno(rc);
                        break;
                }
                object = db_column_int(st, 1);
                r = mix_key_fill(k, db_column_text(st, 0), object,
                                 db_column_text(st, 2), db_column_text(st, 3),
                                 db_column_text(st, 4));
                db_reset(st);
                if (r >= 0)
                        r = object_package(c, packages, object, &k->package);
        }
        free(key_ids);
        return r;
}

/* The application mix over whole UTC days. */
int sql_list_app_mix(Storage *base, const AppMixFilter *f, AppMixList *ret) {
        SqlStorage *s = (SqlStorage *) base;
        Hashmap *packages = hashmap_new(&uint64_hash_ops);
        AppMixList l = {};
        Conn *c;
        int r;

        db_purpose_set("reading the application mix");
        if (!packages)
                return -ENOMEM;
        l.since = f->since - ((f->since % DAY_SECONDS) + DAY_SECONDS) % DAY_SECONDS;
        l.until = f->until - ((f->until % DAY_SECONDS) + DAY_SECONDS) % DAY_SECONDS;
        if (l.until < f->until)
                l.until += DAY_SECONDS;

        reader_acquire(s, &c);
        r = conn_begin_read(c);
        if (r >= 0)
                r = f->user || f->account || f->partition || f->app ? mix_read_keys(c, f, packages, &l)
                                                                     : mix_read_dim(c, f, packages, &l);
        reader_end_read(s, c);
        package_cache_free(packages);
        if (r < 0) {
                app_mix_list_free(&l);
                return r;
        }
        *ret = l;
        return 0;
}
