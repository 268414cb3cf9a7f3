/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "hashmap.h"
#include "tests.h"

/* Random inserts and removals checked against a plain array: the backward
 * shift on removal must never lose an entry of another probe chain. */
TEST(against_reference) {
        enum { N = 4096 };
        static int present[N];
        Hashmap *h = hashmap_new(&uint64_hash_ops);
        unsigned seed = 1;

        ASSERT_NOT_NULL(h);
        for (int round = 0; round < 200000; round++) {
                unsigned k = (unsigned) rand_r(&seed) % N;

                if (present[k]) {
                        ASSERT_TRUE(hashmap_remove(h, INT_TO_KEY(k)) == (void *) (uintptr_t) (k + 1));
                        present[k] = 0;
                } else {
                        ASSERT_EQ(hashmap_put(h, INT_TO_KEY(k), (void *) (uintptr_t) (k + 1)), 1);
                        present[k] = 1;
                }
                if (round % 10000 == 0) {
                        size_t n = 0;
                        for (unsigned i = 0; i < N; i++) {
                                void *v = hashmap_get(h, INT_TO_KEY(i));
                                ASSERT_TRUE(present[i] ? v == (void *) (uintptr_t) (i + 1) : v == NULL);
                                n += (size_t) present[i];
                        }
                        ASSERT_EQ(hashmap_size(h), n);
                }
        }
        ASSERT_EQ(hashmap_put(h, INT_TO_KEY(N + 1), NULL), 1);
        ASSERT_ERROR(hashmap_put(h, INT_TO_KEY(N + 1), NULL), EEXIST);
        hashmap_free(h);
}

TEST(strings) {
        Hashmap *h = hashmap_new(&string_hash_ops);
        char key[32];
        void *old;

        for (int i = 0; i < 1000; i++) {
                snprintf(key, sizeof(key), "key-%d", i);
                ASSERT_EQ(hashmap_put(h, strdup(key), (void *) (uintptr_t) i), 1);
        }
        ASSERT_TRUE(hashmap_get(h, "key-999") == (void *) (uintptr_t) 999);
        ASSERT_NULL(hashmap_get(h, "key-1000"));
        ASSERT_EQ(hashmap_replace(h, "key-5", (void *) 77, &old), 0);
        ASSERT_TRUE(old == (void *) 5);
        ASSERT_TRUE(hashmap_get(h, "key-5") == (void *) 77);

        size_t i, n = 0;
        void *v;
        const void *k;
        for (i = 0; hashmap_iterate(h, &i, &v, &k);) {
                free((void *) k);
                n++;
        }
        ASSERT_EQ(n, 1000);
        hashmap_free(h);
}

static unsigned destroyed;

static void destroy_counted(void *p) {
        destroyed++;
        free(p);
}

/* A map that owns its values hands each to its destructor once, however
 * full; the map stays usable after a clear. Leaks show under ASan. */
TEST(free_values) {
        Hashmap *h = hashmap_new(&uint64_hash_ops);

        ASSERT_NOT_NULL(h);
        for (uint64_t k = 0; k < 1000; k++)
                ASSERT_OK(hashmap_put(h, INT_TO_KEY(k), malloc(16)));
        hashmap_clear_free(h, destroy_counted);
        ASSERT_EQ(destroyed, 1000);
        ASSERT_EQ(hashmap_size(h), 0);
        ASSERT_NULL(hashmap_get(h, INT_TO_KEY(5)));
        for (uint64_t k = 0; k < 10; k++)
                ASSERT_OK(hashmap_put(h, INT_TO_KEY(k), malloc(16)));
        ASSERT_NULL(hashmap_free_free(h, NULL));
        hashmap_clear_free(NULL, NULL);
        ASSERT_NULL(hashmap_free_free(NULL, destroy_counted));
        ASSERT_EQ(destroyed, 1000);
}

int main(void) {
        RUN(against_reference);
        RUN(strings);
        RUN(free_values);
        return 0;
}
