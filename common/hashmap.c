/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "macro.h"

struct Bucket {
        const void *key;
        void *value;
        uint64_t hash; /* 0 marks an empty bucket; real hashes are forced non-zero */
};

struct Hashmap {
        const HashOps *ops;
        struct Bucket *buckets;
        size_t n_buckets; /* power of two, or 0 */
        size_t n_entries;
};

uint64_t hash_u64(uint64_t x) {
        /* splitmix64 finaliser: cheap, and good enough to spread pids and addresses */
        x ^= x >> 30;
        x *= UINT64_C(0xbf58476d1ce4e5b9);
        x ^= x >> 27;
        x *= UINT64_C(0x94d049bb133111eb);
        x ^= x >> 31;
        return x;
}

uint64_t hash_bytes(const void *p, size_t n, uint64_t seed) {
        /* FNV-1a over bytes, then mixed: keys here are short (paths, comms, job ids). */
        const unsigned char *s = p;
        uint64_t h = UINT64_C(0xcbf29ce484222325) ^ seed;

        for (size_t i = 0; i < n; i++) {
                h ^= s[i];
                h *= UINT64_C(0x100000001b3);
        }
        return hash_u64(h);
}

static uint64_t uint64_hash(const void *k) {
        return hash_u64(KEY_TO_INT(k));
}

static bool uint64_equal(const void *a, const void *b) {
        return a == b;
}

static uint64_t string_hash(const void *k) {
        return hash_bytes(k, strlen(k), 0);
}

static bool string_equal(const void *a, const void *b) {
        return strcmp(a, b) == 0;
}

const HashOps uint64_hash_ops = { uint64_hash, uint64_equal };
const HashOps string_hash_ops = { string_hash, string_equal };

Hashmap *hashmap_new(const HashOps *ops) {
        Hashmap *h = calloc(1, sizeof(*h));

        if (!h)
                return NULL;
        h->ops = ops;
        return h;
}

Hashmap *hashmap_free(Hashmap *h) {
        if (!h)
                return NULL;
        free(h->buckets);
        free(h);
        return NULL;
}

static uint64_t key_hash(const Hashmap *h, const void *key) {
        uint64_t x = h->ops->hash(key);
        return x ?: 1;
}

static struct Bucket *find(const Hashmap *h, const void *key, uint64_t hash) {
        size_t mask, i;

        if (h->n_buckets == 0)
                return NULL;
        mask = h->n_buckets - 1;
        for (i = hash & mask;; i = (i + 1) & mask) {
                struct Bucket *b = &h->buckets[i];

                if (b->hash == 0)
                        return NULL;
                if (b->hash == hash && h->ops->equal(b->key, key))
                        return b;
        }
}

static void insert_nocheck(struct Bucket *buckets, size_t n_buckets, const struct Bucket *e) {
        size_t mask = n_buckets - 1, i;

        for (i = e->hash & mask; buckets[i].hash != 0; i = (i + 1) & mask)
                ;
        buckets[i] = *e;
}

static int grow(Hashmap *h) {
        struct Bucket *nb;
        size_t nn;

        /* keep the load factor at or below 1/2 so probe chains stay short */
        if ((h->n_entries + 1) * 2 <= h->n_buckets)
                return 0;
        nn = h->n_buckets ? h->n_buckets * 2 : 16;
        nb = calloc(nn, sizeof(*nb));
        if (!nb)
                return -ENOMEM;
        for (size_t i = 0; i < h->n_buckets; i++)
                if (h->buckets[i].hash != 0)
                        insert_nocheck(nb, nn, &h->buckets[i]);
        free(h->buckets);
        h->buckets = nb;
        h->n_buckets = nn;
        return 0;
}

int hashmap_replace(Hashmap *h, const void *key, void *value, void **ret_old) {
        uint64_t hash = key_hash(h, key);
        struct Bucket *b = find(h, key, hash);
        int r;

        if (b) {
                if (ret_old)
                        *ret_old = b->value;
                b->value = value; /* the stored key stays: it may be owned by the caller */
                return 0;
        }
        r = grow(h);
        if (r < 0)
                return r;
        insert_nocheck(h->buckets, h->n_buckets, &(struct Bucket) { key, value, hash });
        h->n_entries++;
        if (ret_old)
                *ret_old = NULL;
        return 1;
}

int hashmap_put(Hashmap *h, const void *key, void *value) {
        if (find(h, key, key_hash(h, key)))
                return -EEXIST;
        return hashmap_replace(h, key, value, NULL);
}

void *hashmap_get(const Hashmap *h, const void *key) {
        struct Bucket *b = find(h, key, key_hash(h, key));
        return b ? b->value : NULL;
}

bool hashmap_get2(const Hashmap *h, const void *key, void **ret_value, const void **ret_key) {
        struct Bucket *b = find(h, key, key_hash(h, key));

        if (!b)
                return false;
        if (ret_value)
                *ret_value = b->value;
        if (ret_key)
                *ret_key = b->key;
        return true;
}

void *hashmap_remove(Hashmap *h, const void *key) {
        struct Bucket *b = find(h, key, key_hash(h, key));
        size_t mask, i, j;
        void *value;

        if (!b)
                return NULL;
        value = b->value;
        mask = h->n_buckets - 1;
        i = (size_t) (b - h->buckets);
        /* backward-shift: pull later members of the probe chain into the hole */
        for (j = (i + 1) & mask; h->buckets[j].hash != 0; j = (j + 1) & mask) {
                size_t home = h->buckets[j].hash & mask;

                if (((j - home) & mask) >= ((j - i) & mask)) {
                        h->buckets[i] = h->buckets[j];
                        i = j;
                }
        }
        h->buckets[i] = (struct Bucket) {};
        h->n_entries--;
        return value;
}

size_t hashmap_size(const Hashmap *h) {
        return h ? h->n_entries : 0;
}

void hashmap_clear(Hashmap *h) {
        if (h->buckets)
                memset(h->buckets, 0, h->n_buckets * sizeof(*h->buckets));
        h->n_entries = 0;
}

void hashmap_clear_free(Hashmap *h, void (*destroy)(void *value)) {
        void *v;
        size_t i;

        if (!h)
                return;
        HASHMAP_FOREACH(v, h, i)
                (destroy ?: free)(v);
        hashmap_clear(h);
}

Hashmap *hashmap_free_free(Hashmap *h, void (*destroy)(void *value)) {
        hashmap_clear_free(h, destroy);
        return hashmap_free(h);
}

bool hashmap_iterate(const Hashmap *h, size_t *i, void **ret_value, const void **ret_key) {
        if (!h)
                return false;
        for (; *i < h->n_buckets; (*i)++) {
                struct Bucket *b = &h->buckets[*i];

                if (b->hash != 0) {
                        if (ret_value)
                                *ret_value = b->value;
                        if (ret_key)
                                *ret_key = b->key;
                        (*i)++;
                        return true;
                }
        }
        return false;
}
