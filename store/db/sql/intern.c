/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The ids of objects, phases, tasks, counter roles, node types and
 * functions, found or created by their strings and cached across batches
 * (writer only). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch/node-types.h"
#include "db/sql/sql-internal.h"

/* A site has a few thousand distinct objects, phases and tasks; the bound
 * only guards against a node that sends a new path with every row. */
#define ID_CACHE_MAX 200000

static void id_cache_clear(Hashmap *h) {
        const void *key;
        size_t i = 0;

        while (hashmap_iterate(h, &i, NULL, &key))
                free((void *) key);
        hashmap_clear(h);
}

void caches_clear(SqlStorage *s) {
        pthread_rwlock_wrlock(&s->caches_lock);
        id_cache_clear(s->object_ids);
        id_cache_clear(s->phase_ids);
        id_cache_clear(s->task_ids);
        id_cache_clear(s->role_ids);
        id_cache_clear(s->node_type_ids);
        id_cache_clear(s->node_ids);
        id_cache_clear(s->function_ids);
        s->caches_generation++;
        pthread_rwlock_unlock(&s->caches_lock);
}

uint64_t caches_generation(SqlStorage *s) {
        /* only the writer, which calls this, changes it */
        return s->caches_generation;
}

/* Appends "LENGTH:" and s at *p, if that fits before end. */
static bool key_append(char **p, const char *end, const char *s) {
        size_t n = strlen(s), digits = 1;

        for (size_t v = n; v >= 10; v /= 10)
                digits++;
        if ((size_t) (end - *p) <= digits + 1 + n)
                return false;
        for (size_t v = n, i = digits; i > 0; v /= 10)
                (*p)[--i] = (char) ('0' + v % 10);
        (*p)[digits] = ':';
        memcpy(*p + digits + 1, s, n);
        *p += digits + 1 + n;
        return true;
}

/* Cache keys of several strings: each string prefixed by its length, so that
 * no choice of separator can make two different tuples collide. Built for
 * every row of every batch, hence without snprintf(), which took a tenth
 * of the store's time at ingest. */
static char *make_key(char *buf, size_t size, const char *a, const char *b, const char *c) {
        char *p = buf, *end = buf + size;

        if (!key_append(&p, end, a) || !key_append(&p, end, b) || !key_append(&p, end, c))
                return NULL;
        *p = 0;
        return buf;
}

static int id_cache_put(SqlStorage *s, Hashmap *h, const char *key, int64_t id) {
        char *k;
        int r;

        k = strdup(key);
        if (!k)
                return -ENOMEM;
        pthread_rwlock_wrlock(&s->caches_lock);
        if (hashmap_size(h) >= ID_CACHE_MAX)
                id_cache_clear(h);
        r = hashmap_put(h, k, (void *) (uintptr_t) id);
        pthread_rwlock_unlock(&s->caches_lock);
        if (r < 0)
                free(k);
        return r;
}

/* Finds or creates a dimension row (object, phase, task) by its strings. */
int intern(SqlStorage *s, Hashmap *cache, Stmt select, Stmt insert,
           const char *a, const char *b, const char *c, int nargs, int64_t *ret) {
        char buf[6144];
        const char *key = make_key(buf, sizeof(buf), a, b ?: "", c ?: "");
        const char *args[3] = { a, b, c };
        DbStmt *st;
        void *v;
        int r;

        if (key && hashmap_get2(cache, key, &v, NULL)) {
                *ret = (int64_t) (uintptr_t) v;
                return 0;
        }
        /* Select, else insert, else select again: the insert does nothing
         * when another store sharing the database inserted the same row
         * since (PostgreSQL); it waits for that one's transaction, and
         * the second select sees its row. */
        for (int pass = 0; pass < 3; pass++) {
                r = conn_stmt(&s->writer, pass == 1 ? insert : select, &st);
                if (r < 0)
                        return r;
                for (int i = 0; i < nargs; i++)
                        if ((r = bind_nullable_text(st, i + 1, args[i])) < 0)
                                return r;
                r = step_id(st, ret);
                if (r != -ENOENT)
                        break;
        }
        if (r < 0)
                return r;
        return key ? id_cache_put(s, cache, key, *ret) : 0;
}

static bool lookup(Hashmap *cache, const char *a, const char *b, const char *c, int64_t *ret) {
        char buf[6144];
        const char *key = make_key(buf, sizeof(buf), a, b ?: "", c ?: "");
        void *v;

        if (!key || !hashmap_get2(cache, key, &v, NULL))
                return false;
        *ret = (int64_t) (uintptr_t) v;
        return true;
}

int intern_lookup_rows(SqlStorage *s, const Batch *b, int64_t *ret, uint64_t *ret_generation) {
        bool all = true;

        pthread_rwlock_rdlock(&s->caches_lock);
        for (size_t i = 0; i < b->n_rows && all; i++) {
                const BatchRow *row = &b->rows[i];

                all = lookup(s->object_ids, row->object, code_kind_to_string(row->kind), row->build_id, &ret[3 * i]) &&
                      lookup(s->phase_ids, row->phase, NULL, NULL, &ret[3 * i + 1]) &&
                      lookup(s->task_ids, row->step, row->user, row->comm, &ret[3 * i + 2]);
        }
        *ret_generation = s->caches_generation;
        pthread_rwlock_unlock(&s->caches_lock);
        return all;
}

/* An integer as decimal text, for a cache key: as make_key(), without
 * snprintf(). */
static const char *int_text(char buf[static 21], int64_t v) {
        uint64_t u = v < 0 ? 0 - (uint64_t) v : (uint64_t) v;
        char *p = buf + 20;

        *p = 0;
        do
                *--p = (char) ('0' + u % 10);
        while ((u /= 10) > 0);
        if (v < 0)
                *--p = '-';
        return p;
}

int intern_function(SqlStorage *s, int64_t object_id, const char *name, int64_t offset, bool entry, int64_t *ret) {
        char buf[1200], object_buf[21], offset_buf[21];
        /* an entry's offset as its negative - 2 (offsets are >= 0, -1 is none) */
        const char *key = make_key(buf, sizeof(buf), int_text(object_buf, object_id), name,
                                   int_text(offset_buf, entry ? -2 - offset : offset));
        DbStmt *st;
        void *v;
        int r;

        if (key && hashmap_get2(s->function_ids, key, &v, NULL)) {
                *ret = (int64_t) (uintptr_t) v;
                return 0;
        }
        /* select, insert, select again, as intern() */
        for (int pass = 0; pass < 3; pass++) {
                if ((r = conn_stmt(&s->writer, pass == 1 ? STMT_FUNCTION_INSERT : STMT_FUNCTION_SELECT, &st)) < 0 ||
                    (r = db_bind_int(st, 1, object_id)) < 0 ||
                    (r = bind_nullable_text(st, 2, name)) < 0 ||
                    (r = db_bind_int(st, 3, offset)) < 0 ||
                    (r = db_bind_int(st, 4, entry)) < 0)
                        return r;
                r = step_id(st, ret);
                if (r != -ENOENT)
                        break;
        }
        if (r < 0)
                return r;
        return key ? id_cache_put(s, s->function_ids, key, *ret) : 0;
}

/* A node type is keyed by its name (store/batch/node-types.h); the row keeps its
 * parts for the API. */
int intern_node_type(SqlStorage *s, const BatchNodeType *t, int64_t *ret) {
        _cleanup_free_ char *name = node_type_name(t), *gpus = node_gpus_text(t);
        int64_t memory_gib = node_memory_gib(t->memory_bytes);
        DbStmt *st;
        void *v;
        int r;

        if (!name || !gpus)
                return -ENOMEM;
        if (hashmap_get2(s->node_type_ids, name, &v, NULL)) {
                *ret = (int64_t) (uintptr_t) v;
                return 0;
        }
        if ((r = conn_stmt(&s->writer, STMT_NODE_TYPE_SELECT, &st)) < 0 ||
            (r = bind_nullable_text(st, 1, name)) < 0)
                return r;
        r = step_id(st, ret);
        if (r == -ENOENT) {
                if ((r = conn_stmt(&s->writer, STMT_NODE_TYPE_INSERT, &st)) < 0 ||
                    (r = bind_nullable_text(st, 1, name)) < 0 ||
                    (r = bind_nullable_text(st, 2, t->cpu_model)) < 0 ||
                    (r = bind_nullable_int(st, 3, t->sockets)) < 0 ||
                    (r = bind_nullable_int(st, 4, t->cores)) < 0 ||
                    (r = bind_nullable_int(st, 5, t->threads)) < 0 ||
                    (r = bind_nullable_int(st, 6, memory_gib > 0 ? memory_gib : STORAGE_NULL)) < 0 ||
                    (r = bind_nullable_text(st, 7, gpus)) < 0)
                        return r;
                r = step_id(st, ret);
        }
        if (r == -ENOENT) { /* inserted meanwhile by another store (intern()) */
                if ((r = conn_stmt(&s->writer, STMT_NODE_TYPE_SELECT, &st)) < 0 ||
                    (r = bind_nullable_text(st, 1, name)) < 0)
                        return r;
                r = step_id(st, ret);
        }
        if (r < 0)
                return r;
        return id_cache_put(s, s->node_type_ids, name, *ret);
}

/* The id of a node's row, as its upsert last returned it: rows are never
 * deleted from nodes, so it stays right (writer only). */
bool node_id_cached(SqlStorage *s, const char *node, int64_t *ret) {
        void *v;

        if (!node || !hashmap_get2(s->node_ids, node, &v, NULL))
                return false;
        *ret = (int64_t) (uintptr_t) v;
        return true;
}

int node_id_remember(SqlStorage *s, const char *node, int64_t id) {
        return node ? id_cache_put(s, s->node_ids, node, id) : 0;
}
