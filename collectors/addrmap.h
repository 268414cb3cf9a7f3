/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "object.h"

/* A process's executable mappings, sorted and non-overlapping, so that an
 * instruction pointer finds its object by binary search. Like the kernel's
 * own view, a new mapping replaces whatever overlapped it. */
typedef struct Mapping {
        uint64_t start;         /* first byte */
        uint64_t end;           /* one past the last byte */
        uint64_t pgoff;
        Object *obj;            /* a reference owned by the map */
} Mapping;

typedef struct AddrMap {
        Mapping *v;
        size_t n;
        size_t alloc;
} AddrMap;

/* Inserts [start, end) (takes a new reference on obj); overlapped parts of
 * older mappings are cut away. */
int addrmap_insert(ObjectTable *t, AddrMap *m, uint64_t start, uint64_t end, uint64_t pgoff, Object *obj);
/* Removes whatever lies in [start, end). */
int addrmap_remove(ObjectTable *t, AddrMap *m, uint64_t start, uint64_t end);
const Mapping *addrmap_find(const AddrMap *m, uint64_t addr);
int addrmap_copy(AddrMap *dst, const AddrMap *src);
void addrmap_clear(ObjectTable *t, AddrMap *m);
