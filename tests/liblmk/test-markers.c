/* SPDX-License-Identifier: GPL-2.0-or-later */

/* The marker stack and the counters lmkd reads, for correct use and for
 * every kind of misuse, in one thread. */

#include "lmk-test.h"

TEST(abi_descriptor) {
        ASSERT_TRUE(memcmp(lmk_abi.magic, "LMKABI1", 8) == 0);
        ASSERT_EQ(lmk_abi.version, LMK_ABI_VERSION);
        ASSERT_EQ(lmk_abi.thread_size, sizeof(struct lmk_thread));
        ASSERT_EQ(lmk_abi.thread_size, 72);
        ASSERT_EQ(sizeof(struct lmk_region), 128);
        ASSERT_TRUE(lmk_abi.capacity >= 2);
        ASSERT_TRUE(lmk_abi.regions != 0);
        /* The constructor ran before main(). */
        ASSERT_TRUE(lmk_abi.tls_offset != 0);
        ASSERT_EQ((char *) &lmk_tls - (char *) test_thread_pointer(), lmk_abi.tls_offset);
}

TEST(balanced) {
        struct test_counters before = test_counters_now();
        unsigned int calls = lmk_tls.calls;

        ASSERT_STACK_EMPTY();
        LMK_BEGIN("timestep");
        ASSERT_STACK("timestep");
        LMK_BEGIN("solve");
        ASSERT_STACK("timestep", "solve");
        LMK_END("solve");
        ASSERT_STACK("timestep");
        LMK_BEGIN("io");
        ASSERT_STACK("timestep", "io");
        LMK_END("io");
        LMK_END("timestep");
        ASSERT_STACK_EMPTY();

        ASSERT_EQ(lmk_tls.calls - calls, 3);
        ASSERT_TRUE(test_region_id("timestep") != test_region_id("solve"));
        ASSERT_EQ(test_region("solve")->id, test_region_id("solve"));
        ASSERT_EQ(test_region("solve")->flags, 0);
        ASSERT_EQ(lmk_region_state("solve"), 0);
        ASSERT_COUNTERS_MOVED(before, 0, 0, 0, 0);
}

TEST(where) {
        const struct lmk_region *r;

        LMK_BEGIN("where");
        LMK_END("where");
        r = test_region("where");
        /* "file:line function" of the BEGIN, which registered the region. */
        ASSERT_TRUE(strstr(r->where, "test-markers.c:") != NULL);
        ASSERT_TRUE(strstr(r->where, " test_where") != NULL);
        ASSERT_TRUE(memchr(r->where, '\0', sizeof(r->where)) != NULL);
}

static void shared_a(void) {
        LMK_BEGIN("shared");
}

static void shared_b(void) {
        LMK_END("shared");
}

TEST(one_id_per_name) {
        unsigned int n;

        /* Different sites, even in different functions, name one region. */
        shared_a();
        ASSERT_STACK("shared");
        n = lmk_abi.n_regions;
        shared_b();
        ASSERT_STACK_EMPTY();
        LMK_BEGIN("shared");
        LMK_END("shared");
        ASSERT_EQ(lmk_abi.n_regions, n);
}

TEST(unbalanced_end_closes_down) {
        struct test_counters before = test_counters_now();

        LMK_BEGIN("outer");
        LMK_BEGIN("middle");
        LMK_BEGIN("inner");
        ASSERT_STACK("outer", "middle", "inner");
        /* inner and middle lost their ENDs (an early return, say). */
        LMK_END("outer");
        ASSERT_STACK_EMPTY();
        ASSERT_COUNTERS_MOVED(before, 1, 0, 0, 0);

        LMK_BEGIN("outer");
        LMK_BEGIN("middle");
        LMK_BEGIN("inner");
        LMK_END("middle");
        ASSERT_STACK("outer");
        ASSERT_COUNTERS_MOVED(before, 2, 0, 0, 0);
        /* The late ENDs find nothing of theirs open and are ignored. */
        LMK_END("inner");
        ASSERT_STACK("outer");
        ASSERT_COUNTERS_MOVED(before, 2, 1, 0, 0);
        LMK_END("outer");
        ASSERT_STACK_EMPTY();
        ASSERT_COUNTERS_MOVED(before, 2, 1, 0, 0);
}

TEST(end_without_begin) {
        struct test_counters before = test_counters_now();

        LMK_END("never-begun");
        ASSERT_STACK_EMPTY();
        ASSERT_COUNTERS_MOVED(before, 0, 1, 0, 0);
        /* An END may be a name's first use; it registers the name. */
        ASSERT_EQ(lmk_region_state("never-begun"), 0);

        LMK_BEGIN("open");
        LMK_END("never-begun");
        ASSERT_STACK("open");
        ASSERT_COUNTERS_MOVED(before, 0, 2, 0, 0);
        LMK_END("open");
        LMK_END("open");
        ASSERT_STACK_EMPTY();
        ASSERT_COUNTERS_MOVED(before, 0, 3, 0, 0);
}

static void recurse(int n) {
        if (n == 0)
                return;
        LMK_BEGIN("deep");
        recurse(n - 1);
        LMK_END("deep");
}

static void check_deep(int n) {
        if (n == 0) {
                unsigned int id = test_region_id("deep");

                ASSERT_EQ(lmk_tls.depth, 100);
                for (int i = 0; i < LMK_MAX_DEPTH; i++)
                        ASSERT_EQ(lmk_tls.stack[i], id);
                return;
        }
        LMK_BEGIN("deep");
        check_deep(n - 1);
        LMK_END("deep");
}

TEST(nesting_100_deep) {
        struct test_counters before = test_counters_now();
        unsigned int calls = lmk_tls.calls;

        LMK_BEGIN("base");
        recurse(100);
        ASSERT_STACK("base");
        ASSERT_COUNTERS_MOVED(before, 0, 0, 100 - (LMK_MAX_DEPTH - 1), 0);
        LMK_END("base");
        ASSERT_STACK_EMPTY();

        check_deep(100);
        ASSERT_STACK_EMPTY();
        ASSERT_COUNTERS_MOVED(before, 0, 0, 2 * 100 - (LMK_MAX_DEPTH - 1) - LMK_MAX_DEPTH, 0);
        /* The field after the stack was not overwritten by the overflow. */
        ASSERT_EQ(lmk_tls.calls - calls, 201);
}

TEST(nesting_100_names) {
        static struct lmk_site sites[100];
        char name[16];
        struct test_counters before = test_counters_now();

        for (int i = 0; i < 100; i++) {
                snprintf(name, sizeof(name), "level-%d", i);
                ASSERT_OK(lmk_site_register(&sites[i], name, sizeof(name), NULL));
                lmk_site_begin(&sites[i]);
        }
        ASSERT_EQ(lmk_tls.depth, 100);
        for (int i = 0; i < LMK_MAX_DEPTH; i++)
                ASSERT_EQ(lmk_tls.stack[i], sites[i].id);
        ASSERT_COUNTERS_MOVED(before, 0, 0, 100 - LMK_MAX_DEPTH, 0);

        /* Unstored levels end by depth alone; stored ones by id. */
        for (int i = 99; i >= 0; i--) {
                lmk_site_end(&sites[i]);
                ASSERT_EQ(lmk_tls.depth, (unsigned int) i);
        }
        for (int i = 0; i < LMK_MAX_DEPTH; i++)
                ASSERT_EQ(lmk_tls.stack[i], sites[i].id);
        ASSERT_COUNTERS_MOVED(before, 0, 0, 100 - LMK_MAX_DEPTH, 0);
}

TEST(function_api) {
        static struct lmk_site h, h2, unnamed;
        struct test_counters before = test_counters_now();
        int id;

        ASSERT_ERROR(lmk_site_register(&h, "", 0, NULL), EINVAL);
        ASSERT_ERROR(lmk_site_register(&h, NULL, 5, NULL), EINVAL);
        ASSERT_ERROR(lmk_site_register(NULL, "x", 1, NULL), EINVAL);
        /* Fortran strings come with a length, no NUL. */
        id = lmk_site_register(&h, "solverXYZ", 6, "solver.f90:12");
        ASSERT_TRUE(id > 0);
        ASSERT_EQ(lmk_site_register(&h, "other", 5, NULL), id);
        ASSERT_EQ(test_region_id("solver"), (unsigned int) id);
        ASSERT_STREQ(test_region("solver")->where, "solver.f90:12");

        /* A handle and a macro naming the same region share its id. */
        ASSERT_EQ(lmk_site_register(&h2, "solve", SIZE_MAX, NULL), (int) test_region_id("solve"));

        lmk_site_begin(&h);
        LMK_BEGIN("solve");
        ASSERT_STACK("solver", "solve");
        lmk_site_end(&h2);
        lmk_site_end(&h);
        ASSERT_STACK_EMPTY();

        /* Never registered, nameless: nothing to do, nothing counted. */
        lmk_site_begin(&unnamed);
        lmk_site_end(&unnamed);
        ASSERT_STACK_EMPTY();
        ASSERT_EQ(unnamed.id, 0);
        ASSERT_COUNTERS_MOVED(before, 0, 0, 0, 0);
}

TEST(long_names) {
        static struct lmk_site a, b;
        const char *n1 = "a-name-of-more-than-fifty-five-characters-which-gets-truncated-1";
        const char *n2 = "a-name-of-more-than-fifty-five-characters-which-gets-truncated-2";
        const struct lmk_region *r;
        int id = lmk_site_register(&a, n1, strlen(n1), NULL);

        ASSERT_TRUE(id > 0);
        r = &test_regions()[id - 1];
        ASSERT_EQ(strlen(r->name), sizeof(r->name) - 1);
        ASSERT_TRUE(strncmp(r->name, n1, sizeof(r->name) - 1) == 0);
        /* Equal in what lmkd can see: one region. */
        ASSERT_EQ(lmk_site_register(&b, n2, strlen(n2), NULL), id);
        ASSERT_EQ(lmk_region_state(n2), 0);
}

TEST(region_state) {
        ASSERT_ERROR(lmk_region_state("no-such-region"), ENOENT);
        ASSERT_ERROR(lmk_region_state(NULL), EINVAL);
        LMK_BEGIN("stated");
        ASSERT_EQ(lmk_region_state("stated"), 0);
        LMK_END("stated");
}

TEST(region_table_published) {
        uint32_t n = lmk_abi.n_regions;

        ASSERT_TRUE(n > 0 && n <= lmk_abi.capacity);
        for (uint32_t i = 0; i < n; i++) {
                const struct lmk_region *r = &test_regions()[i];

                ASSERT_EQ(r->id, i + 1);
                ASSERT_TRUE(r->name[0] != '\0');
                ASSERT_TRUE(memchr(r->name, '\0', sizeof(r->name)) != NULL);
                for (uint32_t j = 0; j < i; j++)
                        ASSERT_TRUE(strcmp(r->name, test_regions()[j].name) != 0);
        }
}

int main(void) {
        RUN(abi_descriptor);
        RUN(balanced);
        RUN(where);
        RUN(one_id_per_name);
        RUN(unbalanced_end_closes_down);
        RUN(end_without_begin);
        RUN(nesting_100_deep);
        RUN(nesting_100_names);
        RUN(function_api);
        RUN(long_names);
        RUN(region_state);
        RUN(region_table_published);
        return 0;
}
