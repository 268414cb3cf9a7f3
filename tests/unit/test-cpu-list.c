/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The kernel's CPU list format, as the online CPUs (lmkd's CPU set, the node
 * type) and a job's cpuset (its allocation) give it: one parser, so that
 * both agree on every list, overlapping and repeated items included. */
#include <errno.h>
#include <string.h>

#include "cpu-list.h"
#include "tests.h"

static int count(const char *s, unsigned *n) {
        return cpu_list_count(s, strlen(s), n);
}

/* The list into a 256-bit set: how many, and the set's words. */
static int parse(const char *s, uint64_t bits[4]) {
        return cpu_list_parse(s, strlen(s), bits, 256);
}

TEST(lists) {
        unsigned n;

        ASSERT_OK(count("0-3,8,10-11\n", &n));
        ASSERT_EQ(n, 7);
        ASSERT_OK(count("5", &n));
        ASSERT_EQ(n, 1);
        ASSERT_OK(count("0-1\n", &n));
        ASSERT_EQ(n, 2);
        ASSERT_OK(count("0-1048575", &n));
        ASSERT_EQ(n, 1048576);
}

/* Both ways of reading a list count a CPU once, however often it is named. */
TEST(overlaps) {
        static const struct {
                const char *list;
                unsigned n;
        } cases[] = {
                { "0-3,2-5", 6 },
                { "2-5,0-3", 6 },
                { "0-3,0-3", 4 },
                { "1,1,1", 1 },
                { "0-7,3", 8 },
                { "3,0-7", 8 },
                { "0-3,4-7", 8 },
                { "0-1048575,1048575", 1048576 },
        };
        uint64_t bits[4];

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                unsigned n = 0;

                fprintf(stderr, "%s\n", cases[i].list);
                ASSERT_OK(count(cases[i].list, &n));
                ASSERT_EQ(n, cases[i].n);
                if (cases[i].n <= 256)
                        ASSERT_EQ(parse(cases[i].list, bits), (int) cases[i].n);
        }
        ASSERT_EQ(parse("0-3,2-5\n", bits), 6);
        ASSERT_U64_EQ(bits[0], 0x3f);
        ASSERT_U64_EQ(bits[1] | bits[2] | bits[3], 0);
}

TEST(sets) {
        uint64_t bits[4];

        memset(bits, 0xff, sizeof(bits));
        ASSERT_EQ(parse("1,64-65,255\n", bits), 4);
        ASSERT_U64_EQ(bits[0], 0x2);
        ASSERT_U64_EQ(bits[1], 0x3);
        ASSERT_U64_EQ(bits[2], 0);
        ASSERT_U64_EQ(bits[3], UINT64_C(1) << 63);
        /* an empty list is an empty set (a count wants CPUs) */
        ASSERT_EQ(parse("\n", bits), 0);
        ASSERT_U64_EQ(bits[0] | bits[1] | bits[2] | bits[3], 0);
        ASSERT_ERROR(parse("0-256", bits), ERANGE);
        ASSERT_ERROR(parse("99999999999999999999999", bits), ERANGE);
}

TEST(errors) {
        static const char *const junk[] = { "\n", "", "3-1", "1,,2", "1-", "a", ",1", "1,", "0-3,\n", "1 2",
                                            "-1", "1-2-3", "0x3", "1;2" };
        uint64_t bits[4];
        unsigned n;

        for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++) {
                fprintf(stderr, "\"%s\"\n", junk[i]);
                ASSERT_ERROR(count(junk[i], &n), EINVAL);
                if (*junk[i] && strcmp(junk[i], "\n") != 0)
                        ASSERT_ERROR(parse(junk[i], bits), EINVAL);
        }
        ASSERT_ERROR(count("0-1048575,1048576-2000000", &n), ERANGE);
        ASSERT_ERROR(count("1048576", &n), ERANGE);
        /* bounded by its length, not by a NUL */
        ASSERT_OK(cpu_list_count("0-3,9", 3, &n));
        ASSERT_EQ(n, 4);
}

int main(void) {
        RUN(lists);
        RUN(overlaps);
        RUN(sets);
        RUN(errors);
        return 0;
}
