/* SPDX-License-Identifier: GPL-2.0-or-later */

/* More names than the region table holds: the table fills up to its
 * capacity, the last entry is the switched-off catch-all, and markers with
 * names beyond it do nothing and break nothing. */

#include "lmk-test.h"

TEST(table_full) {
        static struct lmk_site handles[2000];
        struct test_counters before = test_counters_now();
        unsigned int full_id = lmk_abi.capacity;
        const struct lmk_region *full;
        char name[32];
        int id = 0, i;

        LMK_BEGIN("first");
        for (i = 0; i < 2000; i++) {
                snprintf(name, sizeof(name), "name-%d", i);
                id = lmk_site_register(&handles[i], name, sizeof(name), NULL);
                ASSERT_TRUE(id > 0);
                if ((unsigned int) id == full_id)
                        break;
                ASSERT_EQ(lmk_region_state(name), 0);
        }
        /* "first" took one entry, the catch-all the last one. */
        ASSERT_EQ(i, (int) lmk_abi.capacity - 2);
        ASSERT_EQ(lmk_abi.n_regions, lmk_abi.capacity);
        full = &test_regions()[full_id - 1];
        ASSERT_EQ(full->flags, LMK_REGION_OFF_FULL);
        ASSERT_EQ(full->id, full_id);

        /* More names, by handle and by macro, all land there, switched off. */
        ASSERT_EQ(lmk_site_register(&handles[1999], "one-more", 8, NULL), (int) full_id);
        ASSERT_EQ(lmk_region_state("one-more"), LMK_REGION_OFF_FULL);
        lmk_site_begin(&handles[1999]);
        LMK_BEGIN("a-macro-too");
        ASSERT_STACK("first");
        LMK_END("a-macro-too");
        lmk_site_end(&handles[1999]);
        ASSERT_STACK("first");

        /* Names registered before still work. */
        lmk_site_begin(&handles[0]);
        ASSERT_EQ(lmk_tls.depth, 2);
        lmk_site_end(&handles[0]);
        LMK_END("first");
        ASSERT_STACK_EMPTY();
        ASSERT_COUNTERS_MOVED(before, 0, 0, 0, 0);
        ASSERT_EQ(lmk_abi.n_regions, lmk_abi.capacity);
}

int main(void) {
        RUN(table_full);
        return 0;
}
