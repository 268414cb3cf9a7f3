/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "procmaps.h"
#include "tests.h"

static int parse(const char *line, ProcMapsEntry *e) {
        static char buf[8192];

        snprintf(buf, sizeof(buf), "%s", line);
        return procmaps_parse_line(buf, e);
}

TEST(good) {
        ProcMapsEntry e;

        ASSERT_OK(parse("55d0c1a00000-55d0c1a2c000 r-xp 00004000 fd:01 1835071                    /usr/bin/bash\n", &e));
        ASSERT_U64_EQ(e.start, 0x55d0c1a00000);
        ASSERT_U64_EQ(e.end, 0x55d0c1a2c000);
        ASSERT_U64_EQ(e.pgoff, 0x4000);
        ASSERT_EQ(e.maj, 0xfd);
        ASSERT_EQ(e.min, 1);
        ASSERT_U64_EQ(e.ino, 1835071);
        ASSERT_TRUE(e.readable && e.executable && !e.writable && !e.shared);
        ASSERT_STREQ(e.path, "/usr/bin/bash");

        ASSERT_OK(parse("7ffd5b3f1000-7ffd5b3f3000 r-xp 00000000 00:00 0                          [vdso]", &e));
        ASSERT_STREQ(e.path, "[vdso]");
        ASSERT_OK(parse("7f0000000000-7f0000001000 rw-s 00000000 00:05 123 /memfd:jit (deleted)", &e));
        ASSERT_TRUE(e.deleted && e.shared);
        ASSERT_STREQ(e.path, "/memfd:jit");
        ASSERT_OK(parse("7f0000000000-7f0000001000 ---p 00000000 00:00 0", &e));
        ASSERT_STREQ(e.path, "");
        ASSERT_OK(parse("7f0000000000-7f0000001000 r-xp 00000000 08:01 5 /a  b /c", &e));
        ASSERT_STREQ(e.path, "/a  b /c");
        ASSERT_OK(parse("ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]", &e));
        ASSERT_U64_EQ(e.end, 0xffffffffff601000);
}

TEST(bad) {
        static const char *const lines[] = {
                "",
                "-",
                "1000",
                "1000-",
                "1000-2000",
                "1000-2000 r-x",
                "1000-2000 r-xq 0 0:0 0",
                "1000-2000 rwxpp 0 0:0 0",
                "2000-1000 r-xp 0 0:0 0",
                "1000-1000 r-xp 0 0:0 0",
                "g000-2000 r-xp 0 0:0 0",
                "10000000000000000-20000000000000000 r-xp 0 0:0 0",
                "1000-2000 r-xp 0 0:0",
                "1000-2000 r-xp 0 0 0",
                "1000-2000 r-xp 0 1000:0 0",
                "1000-2000 r-xp 0 0:0 x",
                "1000-2000 r-xp 0 0:0 99999999999999999999999",
                "1000-2000 r-xp 0 0:0 12abc",
                " 1000-2000 r-xp 0 0:0 0",
        };
        ProcMapsEntry e;

        for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
                if (parse(lines[i], &e) != -EINVAL)
                        test_fail("accepted malformed line \"%s\"", lines[i]);
}

static int count(const ProcMapsEntry *e, void *userdata) {
        (*(int *) userdata)++;
        return 0;
}

TEST(whole_file) {
        char buf[] = "1000-2000 r-xp 0 0:0 0 /a\n\nbad\n3000-4000 r-xp 0 0:0 0 /b";
        int n = 0;

        ASSERT_EQ(procmaps_parse(buf, sizeof(buf) - 1, count, &n), 2);
        ASSERT_EQ(n, 2);
}

int main(void) {
        RUN(good);
        RUN(bad);
        RUN(whole_file);
        return 0;
}
