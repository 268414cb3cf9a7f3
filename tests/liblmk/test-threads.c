/* SPDX-License-Identifier: GPL-2.0-or-later */

/* Markers across threads: the published TLS offset holds in every thread,
 * each thread has its own stack (also after others exit with regions
 * open), and threads registering the same names at once get one id per
 * name. */

#include <pthread.h>

#include "lmk-test.h"

#define N_THREADS 8
#define N_NAMES 64

struct tls_probe {
        pthread_t thread;
        int64_t offset;
        unsigned int depth;
        unsigned int calls;
};

static void *probe_tls(void *arg) {
        struct tls_probe *p = arg;

        p->depth = lmk_tls.depth;
        p->calls = lmk_tls.calls;
        p->offset = (char *) &lmk_tls - (char *) test_thread_pointer();
        return NULL;
}

TEST(tls_offset_every_thread) {
        struct tls_probe probes[N_THREADS];

        ASSERT_TRUE(lmk_abi.tls_offset != 0);
        ASSERT_EQ((char *) &lmk_tls - (char *) test_thread_pointer(), lmk_abi.tls_offset);
        for (int i = 0; i < N_THREADS; i++)
                ASSERT_EQ(pthread_create(&probes[i].thread, NULL, probe_tls, &probes[i]), 0);
        for (int i = 0; i < N_THREADS; i++) {
                ASSERT_EQ(pthread_join(probes[i].thread, NULL), 0);
                ASSERT_EQ(probes[i].offset, lmk_abi.tls_offset);
        }
}

static void *exit_inside_regions(void *arg) {
        LMK_BEGIN("thread-outer");
        LMK_BEGIN("thread-inner");
        LMK_BEGIN("thread-inner");
        ASSERT_STACK("thread-outer", "thread-inner", "thread-inner");
        return NULL;
}

TEST(thread_exit) {
        struct test_counters before = test_counters_now();
        struct tls_probe after;
        pthread_t t;

        LMK_BEGIN("main");
        for (int i = 0; i < 4; i++) {
                ASSERT_EQ(pthread_create(&t, NULL, exit_inside_regions, NULL), 0);
                ASSERT_EQ(pthread_join(t, NULL), 0);
        }
        ASSERT_STACK("main");

        /* glibc reuses the exited threads' stacks and TLS blocks: a new
         * thread must still start with an empty stack. */
        ASSERT_EQ(pthread_create(&after.thread, NULL, probe_tls, &after), 0);
        ASSERT_EQ(pthread_join(after.thread, NULL), 0);
        ASSERT_EQ(after.depth, 0);
        ASSERT_EQ(after.calls, 0);
        ASSERT_EQ(after.offset, lmk_abi.tls_offset);

        LMK_END("main");
        ASSERT_STACK_EMPTY();
        ASSERT_COUNTERS_MOVED(before, 0, 0, 0, 0);
}

static pthread_barrier_t start;
static unsigned int ids[N_THREADS][N_NAMES];

/* Each thread registers the same names through its own handles, all at
 * once, and also opens them so the stacks can be checked. */
static void *register_names(void *arg) {
        unsigned int *my_ids = arg;
        static __thread struct lmk_site sites[N_NAMES];
        char name[32];

        pthread_barrier_wait(&start);
        for (int i = 0; i < N_NAMES; i++) {
                int r;

                snprintf(name, sizeof(name), "race-%d", i);
                r = lmk_site_register(&sites[i], name, strlen(name), NULL);
                ASSERT_TRUE(r > 0);
                my_ids[i] = (unsigned int) r;
                /* And the macro sites, shared by all threads. */
                LMK_BEGIN("race-macro");
                lmk_site_begin(&sites[i]);
                ASSERT_EQ(lmk_tls.depth, 2);
                ASSERT_EQ(lmk_tls.stack[1], my_ids[i]);
                lmk_site_end(&sites[i]);
                LMK_END("race-macro");
                ASSERT_EQ(lmk_tls.depth, 0);
        }
        return NULL;
}

TEST(concurrent_registration) {
        pthread_t threads[N_THREADS];
        uint32_t n_before = lmk_abi.n_regions;

        ASSERT_EQ(pthread_barrier_init(&start, NULL, N_THREADS), 0);
        for (int t = 0; t < N_THREADS; t++)
                ASSERT_EQ(pthread_create(&threads[t], NULL, register_names, ids[t]), 0);
        for (int t = 0; t < N_THREADS; t++)
                ASSERT_EQ(pthread_join(threads[t], NULL), 0);
        pthread_barrier_destroy(&start);

        /* One id per name, whoever registered it first. */
        for (int i = 0; i < N_NAMES; i++) {
                char name[32];

                snprintf(name, sizeof(name), "race-%d", i);
                for (int t = 0; t < N_THREADS; t++)
                        ASSERT_EQ(ids[t][i], ids[0][i]);
                ASSERT_EQ(test_region_id(name), ids[0][i]);
                for (int j = 0; j < i; j++)
                        ASSERT_TRUE(ids[0][j] != ids[0][i]);
        }
        ASSERT_EQ(lmk_abi.n_regions - n_before, N_NAMES + 1);
        ASSERT_TRUE(test_region_id("race-macro") > 0);
}

int main(void) {
        RUN(tls_offset_every_thread);
        RUN(thread_exit);
        RUN(concurrent_registration);
        return 0;
}
