/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"

/* An open-addressing hash table (linear probing, backward-shift deletion)
 * mapping keys to values. It stores only pointers: ownership of keys and
 * values stays with the caller. Integer keys are stored in the pointer itself
 * (INT_TO_KEY), so the common case of pid → process needs no allocation. */

typedef struct HashOps {
        uint64_t (*hash)(const void *key);
        bool (*equal)(const void *a, const void *b);
} HashOps;

extern const HashOps uint64_hash_ops; /* keys are INT_TO_KEY(u64) */
extern const HashOps string_hash_ops; /* keys are NUL-terminated strings */

#define INT_TO_KEY(i) ((const void *) (uintptr_t) (i))
#define KEY_TO_INT(k) ((uint64_t) (uintptr_t) (k))

typedef struct Hashmap Hashmap;

Hashmap *hashmap_new(const HashOps *ops);
Hashmap *hashmap_free(Hashmap *h);
DEFINE_TRIVIAL_CLEANUP_FUNC(Hashmap *, hashmap_free);

/* -EEXIST if the key is present, -ENOMEM on allocation failure. */
int hashmap_put(Hashmap *h, const void *key, void *value);
/* Inserts or overwrites; returns the old value through ret_old (may be NULL). */
int hashmap_replace(Hashmap *h, const void *key, void *value, void **ret_old);
void *hashmap_get(const Hashmap *h, const void *key);
bool hashmap_get2(const Hashmap *h, const void *key, void **ret_value, const void **ret_key);
void *hashmap_remove(Hashmap *h, const void *key);
size_t hashmap_size(const Hashmap *h);
void hashmap_clear(Hashmap *h);
/* For maps that own their values: empties h (NULL is fine), handing each
 * value to destroy on the way (free() when NULL). A key that lives in its
 * value is not looked at again. */
void hashmap_clear_free(Hashmap *h, void (*destroy)(void *value));
/* The same, then frees the map. */
Hashmap *hashmap_free_free(Hashmap *h, void (*destroy)(void *value));

/* Iteration: start with *i = 0. Removing the entry just returned is not
 * allowed during iteration; collect keys first. */
bool hashmap_iterate(const Hashmap *h, size_t *i, void **ret_value, const void **ret_key);

#define HASHMAP_FOREACH(v, h, i) \
        for ((i) = 0; hashmap_iterate((h), &(i), (void **) &(v), NULL);)

uint64_t hash_bytes(const void *p, size_t n, uint64_t seed);
uint64_t hash_u64(uint64_t x);
