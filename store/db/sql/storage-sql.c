/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The SQL storage: open, migrate and close, the cheap check and the stats,
 * and the StorageOps of each driver. */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "db/sql/sql-internal.h"

static int sql_check(Storage *base) {
        SqlStorage *s = (SqlStorage *) base;
        DbStmt *st;
        int64_t n;
        Conn *c;
        int r;

        db_purpose_set("checking the database");
        reader_acquire(s, &c);
        r = conn_stmt(c, STMT_CHECK, &st);
        if (r >= 0)
                r = step_id(st, &n);
        reader_release(s, c);
        return r;
}

static int sql_stats(Storage *base, StorageStats *ret) {
        SqlStorage *s = (SqlStorage *) base;
        uint64_t bytes = 0;
        Conn *c;
        int r;

        db_purpose_set("reading the database size");
        reader_acquire(s, &c);
        r = c->db->driver->size(c->db, &bytes);
        reader_release(s, c);
        if (r < 0)
                return r;
        *ret = (StorageStats) { .db_bytes = bytes };
        return 0;
}

static int sql_migrate(Storage *base, unsigned *ret_from, unsigned *ret_to) {
        SqlStorage *s = (SqlStorage *) base;
        const SqlDialect *d = sql_dialect(s->driver->dialect);
        const SchemaMigration *migrations = d->migrations;
        unsigned current = 0, count = *d->n_migrations;
        Conn *c = &s->writer;
        DbStmt *st = NULL;
        int r, rc;

        db_purpose_set("migrating the schema");
        pthread_mutex_lock(&s->write_lock);
        r = db_begin_write(c->db);
        if (r < 0)
                goto unlock;
        /* Two stores starting together on one server: the second waits
         * here until the first has migrated, then finds nothing to do. The
         * lock comes before the table is created, which would race too. */
        if (d->migrate_lock && (r = conn_exec(c, d->migrate_lock)) < 0)
                goto rollback;
        r = conn_exec(c, d->schema_version_table);
        if (r < 0)
                goto rollback;

        r = db_prepare(c->db, "SELECT version, name FROM schema_version ORDER BY version", false, &st);
        if (r < 0)
                goto rollback;
        while ((rc = db_step(st)) == 1) {
                int64_t v = db_column_int(st, 0);
                const char *name = db_column_text(st, 1);

                /* A database written by a newer lmk-store, or one whose
                 * history differs from ours, is not ours to change. */
                if (v != (int64_t) current + 1 || v > (int64_t) count || !name ||
                    !streq(name, migrations[v - 1].name)) {
                        r = -EPROTO;
                        goto rollback;
                }
                current = (unsigned) v;
        }
        if (rc != 0) {
                r = step_errno(rc);
                goto rollback;
        }
        db_finalize(st);
        st = NULL;

        for (unsigned v = current + 1; v <= count; v++) {
                const SchemaMigration *m = &migrations[v - 1];

                r = conn_exec(c, m->sql);
                /* what SQL cannot do: packing the function sums */
                if (r >= 0 && v == 25)
                        r = migrate_function_packs(c);
                if (r < 0)
                        goto rollback;
                r = db_prepare(c->db, "INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)",
                               false, &st);
                if (r < 0)
                        goto rollback;
                if ((r = db_bind_int(st, 1, v)) < 0 || (r = bind_nullable_text(st, 2, m->name)) < 0 ||
                    (r = db_bind_int(st, 3, (int64_t) time(NULL))) < 0 || (r = db_execute(st, 0)) < 0)
                        goto rollback;
                db_finalize(st);
                st = NULL;
        }
        r = conn_exec(c, "COMMIT");
        if (r < 0)
                goto rollback;
        pthread_mutex_unlock(&s->write_lock);
        if (ret_from)
                *ret_from = current;
        if (ret_to)
                *ret_to = count;
        return 0;

rollback:
        db_finalize(st);
        (void) conn_exec(c, "ROLLBACK");
unlock:
        pthread_mutex_unlock(&s->write_lock);
        return r;
}

static void sql_close(Storage *base) {
        SqlStorage *s = (SqlStorage *) base;

        if (!s)
                return;
        /* lanes[0] is s itself */
        for (unsigned i = 1; s->lanes && i < s->n_lanes; i++)
                sql_close(&s->lanes[i]->base);
        free(s->lanes);
        for (unsigned i = 0; s->readers && i < s->n_readers; i++)
                conn_close(&s->readers[i]);
        free(s->readers);
        conn_close(&s->writer);
        if (s->object_ids) {
                caches_clear(s);
                hashmap_free(s->object_ids);
                hashmap_free(s->phase_ids);
                hashmap_free(s->task_ids);
                hashmap_free(s->role_ids);
                hashmap_free(s->node_type_ids);
                hashmap_free(s->node_ids);
                hashmap_free(s->function_ids);
        }
        pthread_mutex_destroy(&s->write_lock);
        pthread_mutex_destroy(&s->sums_lock);
        pthread_mutex_destroy(&s->queue_lock);
        pthread_cond_destroy(&s->queue_cond);
        pthread_mutex_destroy(&s->readers_lock);
        pthread_cond_destroy(&s->readers_cond);
        pthread_rwlock_destroy(&s->caches_lock);
        free(s);
}

static int sql_open_lanes(SqlStorage *s, const StorageOps *ops, const char *location);

/* n_readers 0: a lane of another's (SqlStorage.lanes), which only writes. */
static int sql_open_one(const StorageOps *ops, const DbDriver *driver, const char *location,
                        const StorageOptions *opts, unsigned n_readers, Storage **ret) {
        SqlStorage *s;
        int r;

        db_purpose_set("opening the database");
        if (!location || !*location)
                return -EINVAL;
        s = calloc(1, sizeof(SqlStorage));
        if (!s)
                return -ENOMEM;
        s->base.ops = ops;
        s->driver = driver;
        s->opts = *opts;
        s->n_readers = n_readers;
        pthread_mutex_init(&s->write_lock, NULL);
        pthread_mutex_init(&s->sums_lock, NULL);
        s->home = s;
        pthread_mutex_init(&s->queue_lock, NULL);
        pthread_cond_init(&s->queue_cond, NULL);
        pthread_mutex_init(&s->readers_lock, NULL);
        pthread_cond_init(&s->readers_cond, NULL);
        {
                pthread_rwlockattr_t a;

                /* the writer's rare changes do not wait behind a stream of lookups */
                pthread_rwlockattr_init(&a);
                pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
                pthread_rwlock_init(&s->caches_lock, &a);
                pthread_rwlockattr_destroy(&a);
        }
        s->object_ids = hashmap_new(&string_hash_ops);
        s->phase_ids = hashmap_new(&string_hash_ops);
        s->task_ids = hashmap_new(&string_hash_ops);
        s->role_ids = hashmap_new(&string_hash_ops);
        s->node_type_ids = hashmap_new(&string_hash_ops);
        s->node_ids = hashmap_new(&string_hash_ops);
        s->function_ids = hashmap_new(&string_hash_ops);
        s->readers = calloc(MAX(s->n_readers, 1u), sizeof(Conn));
        if (!s->object_ids || !s->phase_ids || !s->task_ids || !s->role_ids || !s->node_type_ids || !s->node_ids ||
            !s->function_ids || !s->readers) {
                r = -ENOMEM;
                goto fail;
        }
        r = conn_open(&s->writer, driver, location, opts, true);
        if (r < 0)
                goto fail;
        for (unsigned i = 0; i < s->n_readers; i++) {
                r = conn_open(&s->readers[i], driver, location, opts, false);
                if (r < 0)
                        goto fail;
        }
        if (n_readers > 0 && opts->writers > 1 && driver->begin_ingest) {
                r = sql_open_lanes(s, ops, location);
                if (r < 0)
                        goto fail;
        }
        *ret = &s->base;
        return 0;

fail:
        sql_close(&s->base);
        return r;
}

/* More writers, for a database that lets them write side by side
 * (DbDriver.begin_ingest): each of its own, as another store would be. */
static int sql_open_lanes(SqlStorage *s, const StorageOps *ops, const char *location) {
        s->lanes = calloc(s->opts.writers, sizeof(SqlStorage *));
        if (!s->lanes)
                return -ENOMEM;
        s->lanes[0] = s;
        s->n_lanes = 1;
        for (; s->n_lanes < s->opts.writers; s->n_lanes++) {
                Storage *lane;
                int r = sql_open_one(ops, s->driver, location, &s->opts, 0, &lane);

                if (r < 0)
                        return r;
                s->lanes[s->n_lanes] = (SqlStorage *) lane;
                s->lanes[s->n_lanes]->home = s;
        }
        return 0;
}

static int sql_open(const StorageOps *ops, const DbDriver *driver, const char *location, const StorageOptions *opts,
                    Storage **ret) {
        return sql_open_one(ops, driver, location, opts, MAX(opts->readers, 1u), ret);
}

static int sql_open_sqlite(const char *location, const StorageOptions *opts, Storage **ret) {
        return sql_open(&storage_sqlite_ops, &db_sqlite_driver, location, opts, ret);
}

/* The backends share everything but the driver they open. */
#define SQL_STORAGE_OPS(n, o, part)                             \
        {                                                       \
                .name = n,                                      \
                .open = o,                                      \
                .migrate = sql_migrate,                      \
                .close = sql_close,                          \
                .ingest = sql_ingest,                        \
                .list_jobs = sql_list_jobs,                  \
                .get_job = sql_get_job,                      \
                .get_job_functions = sql_get_job_functions,  \
                .get_profile = sql_get_profile,              \
                .list_job_summaries = sql_list_job_summaries,\
                .list_objects = sql_list_objects,            \
                .list_nodes = sql_list_nodes,                \
                .list_packages = sql_list_packages,          \
                .list_site_functions = sql_list_site_functions, \
                .get_run_figures = sql_get_run_figures,      \
                .list_app_mix = sql_list_app_mix,            \
                .fold_function_sums = sql_fold_function_sums, \
                .prune = sql_prune,                          \
                .prune_rollups = sql_prune_rollups,          \
                .prune_jobs = sql_prune_jobs,                \
                .partitions = part,                             \
                .stats = sql_stats,                          \
                .check = sql_check,                          \
                .use_ticket = sql_use_ticket,                \
                .list_unnamed_builds = sql_list_unnamed_builds, \
                .list_unnamed_functions = sql_list_unnamed_functions, \
                .put_function_names = sql_put_function_names, \
        }

const StorageOps storage_sqlite_ops = SQL_STORAGE_OPS("sqlite", sql_open_sqlite, NULL);

#if HAVE_LIBPQ
static int sql_open_postgresql(const char *location, const StorageOptions *opts, Storage **ret) {
        return sql_open(&storage_postgresql_ops, &db_postgresql_driver, location, opts, ret);
}

const StorageOps storage_postgresql_ops = SQL_STORAGE_OPS("postgresql", sql_open_postgresql, sql_partitions);
#endif

int storage_ops_for(const char *db, const StorageOps **ret_ops, const char **ret_location) {
        const DbDriver *driver;
        int r;

        r = db_driver_for(db, &driver, ret_location);
        if (r < 0)
                return r;
#if HAVE_LIBPQ
        if (driver == &db_postgresql_driver) {
                *ret_ops = &storage_postgresql_ops;
                return 0;
        }
#endif
        *ret_ops = &storage_sqlite_ops;
        return 0;
}
