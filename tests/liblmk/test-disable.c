/* SPDX-License-Identifier: GPL-2.0-or-later */

/* LMK_DISABLE=1: every marker is off from its registration; regions are
 * still registered (lmkd can tell which markers a program has), and
 * nothing is pushed or counted. */

#include "lmk-test.h"

TEST(all_off) {
        static struct lmk_site h;
        struct test_counters before = test_counters_now();
        unsigned int calls = lmk_tls.calls;

        LMK_BEGIN("outer");
        ASSERT_STACK_EMPTY();
        LMK_BEGIN("inner");
        LMK_END("inner");
        LMK_END("outer");
        ASSERT_STACK_EMPTY();

        ASSERT_TRUE(lmk_site_register(&h, "handle", 6, NULL) > 0);
        lmk_site_begin(&h);
        ASSERT_STACK_EMPTY();
        lmk_site_end(&h);

        /* An END with nothing open is not misuse when its region is off. */
        LMK_END("outer");
        ASSERT_COUNTERS_MOVED(before, 0, 0, 0, 0);
        ASSERT_EQ(lmk_tls.calls, calls);

        ASSERT_EQ(lmk_region_state("outer"), LMK_REGION_OFF_ENV);
        ASSERT_EQ(lmk_region_state("inner"), LMK_REGION_OFF_ENV);
        ASSERT_EQ(lmk_region_state("handle"), LMK_REGION_OFF_ENV);
        ASSERT_EQ(test_region("outer")->flags, LMK_REGION_OFF_ENV);
        ASSERT_TRUE(strstr(test_region("outer")->where, "test-disable.c:") != NULL);
}

int main(void) {
        const char *s = getenv("LMK_DISABLE");

        ASSERT_STREQ(s, "1");
        RUN(all_off);
        return 0;
}
