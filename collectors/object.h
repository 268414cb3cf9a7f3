/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "buildid.h"
#include "elfsym.h"

/* What a sampled address belongs to. A file-backed object is identified by
 * (device, inode, path); the others are singletons. */
typedef enum ObjectKind {
        OBJECT_FILE,            /* an executable or shared library: the role is per process */
        OBJECT_KERNEL,
        OBJECT_IDLE,
        OBJECT_ANON,            /* anonymous executable memory: JIT, memfd code */
        OBJECT_VDSO,
        OBJECT_UNKNOWN,
        _OBJECT_KIND_MAX,
} ObjectKind;

typedef struct Object {
        unsigned refs;
        ObjectKind kind;
        uint64_t dev;           /* makedev(major, minor) */
        uint64_t ino;
        char *path;             /* for specials: "[kernel]", "[idle]", … */
        bool build_id_tried;
        /* Tried, and the file has no build-id. build_id_size 0 without it:
         * not read (no file of this device and inode could be opened, or
         * it was not ELF), which names nothing. */
        bool build_id_none;
        uint8_t build_id_size;
        uint8_t build_id[BUILD_ID_MAX];
        /* The file's size and modification time when its build-id was
         * read: what tells another build of a file that has none. */
        uint64_t file_size;
        int64_t file_mtime_ns;
        /* liblmk's descriptor, if this object exports it (see docs/liblmk-abi.md) */
        bool abi_tried;
        uint64_t abi_vaddr;     /* st_value of lmk_abi, 0 = none */
        bool has_probes;        /* carries liblmk's lmk:* USDT probes */
        /* a communication library (lib-families.h, purpose "comm"), looked
         * up once per object by attribution */
        bool comm_tried;
        bool comm;
        ElfLoad loads[8];
        uint8_t n_loads;
} Object;

typedef struct ObjectTable ObjectTable;

ObjectTable *object_table_new(void);
ObjectTable *object_table_free(ObjectTable *t);

/* Returns a new reference to the object for this file, creating it. */
Object *object_table_get_file(ObjectTable *t, uint64_t dev, uint64_t ino, const char *path);
/* Returns a new reference to a special object. */
Object *object_table_get_special(ObjectTable *t, ObjectKind kind);
size_t object_table_size(const ObjectTable *t);

/* Orders objects by their build-id's bytes (length first); 0: the same
 * build (or neither has one). */
int object_build_id_cmp(const Object *a, const Object *b);

Object *object_ref(Object *o);
/* Drops a reference; the last one removes a file object from its table. */
void object_unref(ObjectTable *t, Object *o);

/* Classifies a mapping's path as perf's mmap2 records and /proc/<pid>/maps
 * name it: "" or "//anon" or "/memfd:…" → anon, "[vdso]" → vdso, other
 * bracketed names ("[heap]", "[stack]") → anon, paths → file. */
ObjectKind object_kind_for_path(const char *path);

