/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* What liblmk's tests read: the published state, by region name. */

#include <lmk.h>
#include <stdint.h>
#include <string.h>

#include "tests.h"

static inline const struct lmk_region *test_regions(void) {
        return (const struct lmk_region *) (uintptr_t) lmk_abi.regions;
}

/* The region id lmkd would see for name, 0 if not registered. */
static inline unsigned int test_region_id(const char *name) {
        uint32_t n = __atomic_load_n(&lmk_abi.n_regions, __ATOMIC_ACQUIRE);

        for (uint32_t i = 0; i < n; i++)
                if (strcmp(test_regions()[i].name, name) == 0)
                        return i + 1;
        return 0;
}

static inline const struct lmk_region *test_region(const char *name) {
        unsigned int id = test_region_id(name);

        if (id == 0)
                test_fail("region \"%s\" is not registered", name);
        return &test_regions()[id - 1];
}

static inline void *test_thread_pointer(void) {
        return __builtin_thread_pointer();
}

/* The counters a test expects to move, to compare before and after. */
struct test_counters {
        uint64_t mismatched, unmatched, overflow, disabled;
};

static inline struct test_counters test_counters_now(void) {
        struct test_counters c = {
                __atomic_load_n(&lmk_abi.n_mismatched, __ATOMIC_RELAXED),
                __atomic_load_n(&lmk_abi.n_unmatched, __ATOMIC_RELAXED),
                __atomic_load_n(&lmk_abi.n_overflow, __ATOMIC_RELAXED),
                __atomic_load_n(&lmk_abi.n_disabled, __ATOMIC_RELAXED),
        };
        return c;
}

#define ASSERT_COUNTERS_MOVED(before, mis, unm, ovf, dis)                               \
        do {                                                                            \
                struct test_counters _now_ = test_counters_now();                       \
                ASSERT_U64_EQ(_now_.mismatched - (before).mismatched, (mis));           \
                ASSERT_U64_EQ(_now_.unmatched - (before).unmatched, (unm));             \
                ASSERT_U64_EQ(_now_.overflow - (before).overflow, (ovf));               \
                ASSERT_U64_EQ(_now_.disabled - (before).disabled, (dis));               \
        } while (0)

/* Asserts the thread's stack holds exactly the named regions, outermost first. */
#define ASSERT_STACK(...)                                                               \
        do {                                                                            \
                const char *_names_[] = { __VA_ARGS__ };                                \
                unsigned int _n_ = sizeof(_names_) / sizeof(_names_[0]);                \
                ASSERT_EQ(lmk_tls.depth, _n_);                                          \
                for (unsigned int _i_ = 0; _i_ < _n_ && _i_ < LMK_MAX_DEPTH; _i_++)     \
                        ASSERT_EQ(lmk_tls.stack[_i_], test_region_id(_names_[_i_]));    \
        } while (0)
#define ASSERT_STACK_EMPTY() ASSERT_EQ(lmk_tls.depth, 0)
