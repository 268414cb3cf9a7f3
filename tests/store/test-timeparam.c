/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "tests.h"
#include "api/timeparam.h"

#define NOW INT64_C(1795550400)

static int64_t parse(const char *s) {
        int64_t t = -1;

        ASSERT_OK(time_param_parse(s, NOW, &t));
        return t;
}

TEST(absolute) {
        ASSERT_EQ(parse("1700000000"), 1700000000);
        ASSERT_EQ(parse("0"), 0);
        ASSERT_EQ(parse("now"), NOW);
}

TEST(relative) {
        ASSERT_EQ(parse("90s"), NOW - 90);
        ASSERT_EQ(parse("30m"), NOW - 1800);
        ASSERT_EQ(parse("24h"), NOW - 86400);
        ASSERT_EQ(parse("7d"), NOW - 7 * 86400);
        ASSERT_EQ(parse("2w"), NOW - 14 * 86400);
        ASSERT_EQ(parse("0d"), NOW);
}

TEST(invalid) {
        int64_t t;

        ASSERT_ERROR(time_param_parse("", NOW, &t), EINVAL);
        ASSERT_ERROR(time_param_parse("d", NOW, &t), EINVAL);
        ASSERT_ERROR(time_param_parse("7x", NOW, &t), EINVAL);
        ASSERT_ERROR(time_param_parse("-7d", NOW, &t), EINVAL);
        ASSERT_ERROR(time_param_parse("-1", NOW, &t), EINVAL);
        ASSERT_ERROR(time_param_parse(" 7d", NOW, &t), EINVAL);
        ASSERT_ERROR(time_param_parse("7 d", NOW, &t), EINVAL);
        ASSERT_ERROR(time_param_parse("1.5h", NOW, &t), EINVAL);
        ASSERT_ERROR(time_param_parse("yesterday", NOW, &t), EINVAL);
        ASSERT_ERROR(time_param_parse("99999999999999w", NOW, &t), ERANGE);
        ASSERT_ERROR(time_param_parse("999999999999999999999", NOW, &t), ERANGE);
}

int main(void) {
        RUN(absolute);
        RUN(relative);
        RUN(invalid);
        return 0;
}
