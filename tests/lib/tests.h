/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* The small harness every C test links: assertions that print what was
 * expected and what came, and the skip convention (exit 77 with a reason). */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_TEST_SKIP 77

#define test_skip(...)                                                  \
        do {                                                            \
                fprintf(stderr, "SKIP: " __VA_ARGS__);                  \
                fputc('\n', stderr);                                    \
                exit(EXIT_TEST_SKIP);                                   \
        } while (0)

#define test_fail(...)                                                  \
        do {                                                            \
                fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__);   \
                fprintf(stderr, __VA_ARGS__);                           \
                fputc('\n', stderr);                                    \
                abort();                                                \
        } while (0)

#define ASSERT_TRUE(expr)                                               \
        do {                                                            \
                if (!(expr))                                            \
                        test_fail("expected true: %s", #expr);          \
        } while (0)

#define ASSERT_FALSE(expr) ASSERT_TRUE(!(expr))

#define ASSERT_EQ(a, b)                                                 \
        do {                                                            \
                long long _a_ = (long long) (a), _b_ = (long long) (b); \
                if (_a_ != _b_)                                         \
                        test_fail("%s == %s: %lld != %lld", #a, #b, _a_, _b_); \
        } while (0)

#define ASSERT_U64_EQ(a, b)                                             \
        do {                                                            \
                uint64_t _a_ = (uint64_t) (a), _b_ = (uint64_t) (b);    \
                if (_a_ != _b_)                                         \
                        test_fail("%s == %s: 0x%" PRIx64 " != 0x%" PRIx64, #a, #b, _a_, _b_); \
        } while (0)

#define ASSERT_OK(expr)                                                 \
        do {                                                            \
                long long _r_ = (long long) (expr);                     \
                if (_r_ < 0)                                            \
                        test_fail("%s failed: %lld (%s)", #expr, _r_, strerror((int) -_r_)); \
        } while (0)

#define ASSERT_ERROR(expr, err)                                         \
        do {                                                            \
                long long _r_ = (long long) (expr);                     \
                if (_r_ != -(long long) (err))                          \
                        test_fail("%s: expected -%s, got %lld", #expr, #err, _r_); \
        } while (0)

#define ASSERT_STREQ(a, b)                                              \
        do {                                                            \
                const char *_a_ = (a), *_b_ = (b);                      \
                if (!_a_ || !_b_ || strcmp(_a_, _b_) != 0)              \
                        test_fail("%s == %s: \"%s\" != \"%s\"", #a, #b, _a_ ?: "(null)", _b_ ?: "(null)"); \
        } while (0)

#define ASSERT_NULL(p) ASSERT_TRUE((p) == NULL)
#define ASSERT_NOT_NULL(p) ASSERT_TRUE((p) != NULL)

/* Runs each test function, printing its name, so a failure says where. */
#define TEST(name) static void test_##name(void)
#define RUN(name)                                                       \
        do {                                                            \
                fprintf(stderr, "== %s\n", #name);                      \
                test_##name();                                          \
        } while (0)

/* The text of a shipped configuration example (systemd/NAME.conf.example)
 * with its commented settings ("# key = value", a value given) switched
 * on: what a site gets by uncommenting the defaults, which must load.
 * malloc'd; NULL when the file cannot be read. */
static inline char *test_example_uncommented(const char *path) {
        FILE *f = fopen(path, "re"), *out;
        char line[1024], *text = NULL;
        size_t size = 0;

        if (!f)
                return NULL;
        out = open_memstream(&text, &size);
        while (out && fgets(line, sizeof(line), f)) {
                const char *p = line + 2, *eq;

                if (strncmp(line, "# ", 2) == 0 && (eq = strstr(p, " = ")) && eq > p &&
                    strspn(p, "abcdefghijklmnopqrstuvwxyz_-") == (size_t) (eq - p) &&
                    !strchr(" ;\n", eq[3]))
                        fputs(p, out);
                else
                        fputs(line, out);
        }
        fclose(f);
        if (out)
                fclose(out);
        return text;
}
