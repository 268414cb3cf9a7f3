/* SPDX-License-Identifier: GPL-2.0-or-later */

/* Markers in forked children: the child starts with a copy of the forking
 * thread's stack, goes on from there on its own, and can register names
 * even when another thread of the parent was registering at the fork. */

#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lmk-test.h"

static void wait_ok(pid_t pid) {
        int status;

        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        if (WIFSIGNALED(status))
                test_fail("child %d killed by signal %d", (int) pid, WTERMSIG(status));
        ASSERT_TRUE(WIFEXITED(status));
        ASSERT_EQ(WEXITSTATUS(status), 0);
}

TEST(child_has_own_state) {
        struct test_counters before;
        pid_t pid;

        LMK_BEGIN("parent");
        before = test_counters_now();

        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                ASSERT_STACK("parent");
                LMK_BEGIN("child");
                ASSERT_STACK("parent", "child");
                LMK_END("child");
                LMK_END("parent");
                ASSERT_STACK_EMPTY();
                LMK_END("parent");
                ASSERT_COUNTERS_MOVED(before, 0, 1, 0, 0);
                _exit(0);
        }
        wait_ok(pid);

        /* Nothing the child did shows in the parent. */
        ASSERT_STACK("parent");
        ASSERT_ERROR(lmk_region_state("child"), ENOENT);
        ASSERT_EQ(test_region_id("child"), 0);
        ASSERT_COUNTERS_MOVED(before, 0, 0, 0, 0);
        LMK_END("parent");
        ASSERT_STACK_EMPTY();
}

static volatile int stop;

static void *register_forever(void *arg) {
        unsigned int i = 0;

        while (!stop) {
                struct lmk_site h = LMK_SITE_INIT;
                char name[32];

                /* Keeps the table's lock busy; names wrap to stay within it. */
                snprintf(name, sizeof(name), "busy-%u", i++ % 64);
                ASSERT_TRUE(lmk_site_register(&h, name, sizeof(name), NULL) > 0);
                ASSERT_TRUE(lmk_region_state(name) >= 0);
        }
        return NULL;
}

TEST(fork_while_registering) {
        pthread_t t;

        ASSERT_EQ(pthread_create(&t, NULL, register_forever, NULL), 0);
        for (int i = 0; i < 50; i++) {
                pid_t pid = fork();

                ASSERT_TRUE(pid >= 0);
                if (pid == 0) {
                        char name[32];
                        struct lmk_site h = LMK_SITE_INIT;

                        /* A child that inherited a held lock would hang here. */
                        alarm(10);
                        snprintf(name, sizeof(name), "child-%d", i);
                        ASSERT_TRUE(lmk_site_register(&h, name, sizeof(name), NULL) > 0);
                        lmk_site_begin(&h);
                        ASSERT_EQ(lmk_tls.depth, 1);
                        ASSERT_EQ(lmk_tls.stack[0], h.id);
                        lmk_site_end(&h);
                        ASSERT_STACK_EMPTY();
                        _exit(0);
                }
                wait_ok(pid);
        }
        stop = 1;
        ASSERT_EQ(pthread_join(t, NULL), 0);
}

int main(void) {
        RUN(child_has_own_state);
        RUN(fork_while_registering);
        return 0;
}
