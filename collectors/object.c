/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "macro.h"
#include "object.h"

struct ObjectTable {
        Hashmap *files;                 /* Object* → Object* (the object is its own key) */
        Object specials[_OBJECT_KIND_MAX];
};

static const char *const special_paths[_OBJECT_KIND_MAX] = {
        [OBJECT_KERNEL] = "[kernel]",
        [OBJECT_IDLE] = "[idle]",
        [OBJECT_ANON] = "[anon]",
        [OBJECT_VDSO] = "[vdso]",
        [OBJECT_UNKNOWN] = "[unknown]",
};

static uint64_t file_hash(const void *k) {
        const Object *o = k;
        return hash_u64(o->dev * 31 + o->ino) ^ hash_bytes(o->path, strlen(o->path), 0);
}

static bool file_equal(const void *a, const void *b) {
        const Object *x = a, *y = b;
        return x->dev == y->dev && x->ino == y->ino && strcmp(x->path, y->path) == 0;
}

static const HashOps file_hash_ops = { file_hash, file_equal };

ObjectTable *object_table_new(void) {
        ObjectTable *t = calloc(1, sizeof(*t));

        if (!t)
                return NULL;
        t->files = hashmap_new(&file_hash_ops);
        if (!t->files) {
                free(t);
                return NULL;
        }
        for (int k = 0; k < _OBJECT_KIND_MAX; k++) {
                t->specials[k].kind = (ObjectKind) k;
                t->specials[k].path = (char *) (special_paths[k] ?: "[file]");
                t->specials[k].refs = 1; /* never freed */
                t->specials[k].build_id_tried = true;
                t->specials[k].abi_tried = true;
        }
        return t;
}

static void object_free(void *p) {
        Object *o = p;

        free(o->path);
        free(o);
}

ObjectTable *object_table_free(ObjectTable *t) {
        if (!t)
                return NULL;
        hashmap_free_free(t->files, object_free);
        free(t);
        return NULL;
}

Object *object_table_get_file(ObjectTable *t, uint64_t dev, uint64_t ino, const char *path) {
        Object key = { .dev = dev, .ino = ino, .path = (char *) path };
        Object *o;

        o = hashmap_get(t->files, &key);
        if (o)
                return object_ref(o);

        o = calloc(1, sizeof(*o));
        if (!o)
                return NULL;
        o->kind = OBJECT_FILE;
        o->dev = dev;
        o->ino = ino;
        o->path = strdup(path);
        o->refs = 1;
        if (!o->path || hashmap_put(t->files, o, o) < 0) {
                object_free(o);
                return NULL;
        }
        return o;
}

Object *object_table_get_special(ObjectTable *t, ObjectKind kind) {
        return &t->specials[kind];
}

size_t object_table_size(const ObjectTable *t) {
        return hashmap_size(t->files);
}

int object_build_id_cmp(const Object *a, const Object *b) {
        if (a->build_id_size != b->build_id_size)
                return CMP(a->build_id_size, b->build_id_size);
        return memcmp(a->build_id, b->build_id, a->build_id_size);
}

Object *object_ref(Object *o) {
        if (o && o->kind == OBJECT_FILE)
                o->refs++;
        return o;
}

void object_unref(ObjectTable *t, Object *o) {
        if (!o || o->kind != OBJECT_FILE)
                return;
        if (--o->refs > 0)
                return;
        hashmap_remove(t->files, o);
        object_free(o);
}

ObjectKind object_kind_for_path(const char *path) {
        if (!path || !*path || streq(path, "//anon") || strncmp(path, "/memfd:", 7) == 0 ||
            strncmp(path, "/dev/zero", 9) == 0 || strncmp(path, "/SYSV", 5) == 0)
                return OBJECT_ANON;
        if (streq(path, "[vdso]"))
                return OBJECT_VDSO;
        if (path[0] == '[')
                return OBJECT_ANON;
        if (path[0] != '/')
                return OBJECT_ANON;
        return OBJECT_FILE;
}
