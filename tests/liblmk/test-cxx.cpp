// SPDX-License-Identifier: GPL-2.0-or-later

// The C++ scoped guard: a region ends with its scope, by return or by
// exception, and shares ids with C sites of the same name.

#include <stdexcept>

#include "lmk-test.h"

static unsigned int depth_inside;

static void scoped(bool fail)
{
        LMK_SCOPE("cxx-scope");
        depth_inside = lmk_tls.depth;
        if (fail)
                throw std::runtime_error("unwind");
}

TEST(scope_closes)
{
        LMK_BEGIN("cxx-outer");
        scoped(false);
        ASSERT_EQ(depth_inside, 2);
        ASSERT_STACK("cxx-outer");
        LMK_END("cxx-outer");
        ASSERT_STACK_EMPTY();
}

TEST(scope_unwinds)
{
        struct test_counters before = test_counters_now();
        bool caught = false;

        LMK_BEGIN("cxx-outer");
        try {
                scoped(true);
        } catch (const std::runtime_error &) {
                caught = true;
        }
        ASSERT_TRUE(caught);
        ASSERT_EQ(depth_inside, 2);
        ASSERT_STACK("cxx-outer");
        LMK_END("cxx-outer");
        ASSERT_STACK_EMPTY();
        ASSERT_COUNTERS_MOVED(before, 0, 0, 0, 0);
}

TEST(nested_scopes)
{
        {
                LMK_SCOPE("cxx-a");
                LMK_SCOPE("cxx-b");
                ASSERT_STACK("cxx-a", "cxx-b");
                {
                        LMK_SCOPE("cxx-a");
                        ASSERT_STACK("cxx-a", "cxx-b", "cxx-a");
                }
                ASSERT_STACK("cxx-a", "cxx-b");
        }
        ASSERT_STACK_EMPTY();
}

// lmk::scope on a handle nobody registered does nothing, also where the
// stack is empty or overflowed.
TEST(zero_handle)
{
        static lmk_site zero = LMK_SITE_INIT;

        {
                lmk::scope s(zero);
                ASSERT_STACK_EMPTY();
        }
        ASSERT_STACK_EMPTY();

        for (int i = 0; i < LMK_MAX_DEPTH + 2; i++)
                LMK_BEGIN("cxx-deep");
        {
                lmk::scope s(zero);
                ASSERT_EQ(lmk_tls.depth, LMK_MAX_DEPTH + 2);
        }
        ASSERT_EQ(lmk_tls.depth, LMK_MAX_DEPTH + 2);
        for (int i = 0; i < LMK_MAX_DEPTH + 2; i++)
                LMK_END("cxx-deep");
        ASSERT_STACK_EMPTY();
        ASSERT_EQ(zero.id, 0);
}

int main()
{
        RUN(scope_closes);
        RUN(scope_unwinds);
        RUN(nested_scopes);
        RUN(zero_handle);
        return 0;
}
