/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <netinet/in.h>
#include <unistd.h>

#include "store-config.h"
#include "macro.h"
#include "tests.h"

/* Settings are strict UTF-8 without control characters, from the file or
 * the command line alike. */
TEST(text) {
        static const char *const bad[] = {
                "/var/lib/lmk/\xc0\xaf.db", "/var/lib/lmk/\xed\xa0\x80", "/var/lib/lmk/\xf4\x90\x80\x80",
                "/var/lib/lmk/\xff", "/var/lib/lmk/a\tb", "/var/lib/lmk/a\x1b", "/var/lib/lmk/a\x7f",
        };
        StoreConfig c;

        store_config_init(&c);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                ASSERT_ERROR(store_config_set(&c, "db", bad[i]), EILSEQ);
                ASSERT_ERROR(store_config_set(&c, "token-file", bad[i]), EILSEQ);
        }
        ASSERT_ERROR(store_config_set(&c, "d\xc0\xaf" "b", "x"), EILSEQ);
        ASSERT_NULL(c.db);
        ASSERT_OK(store_config_set(&c, "db", "/var/lib/lmk/caf\xc3\xa9.db"));
        ASSERT_STREQ(c.db, "/var/lib/lmk/caf\xc3\xa9.db");
        store_config_done(&c);
}

TEST(listen) {
        struct sockaddr_storage sa;
        socklen_t len;

        ASSERT_OK(parse_listen("127.0.0.1:8470", &sa, &len));
        ASSERT_EQ(sa.ss_family, AF_INET);
        ASSERT_EQ(ntohs(((struct sockaddr_in *) &sa)->sin_port), 8470);
        ASSERT_OK(parse_listen("[::1]:0", &sa, &len));
        ASSERT_EQ(sa.ss_family, AF_INET6);
        ASSERT_OK(parse_listen("*:8470", &sa, &len));
        ASSERT_EQ(sa.ss_family, AF_INET6);
        ASSERT_OK(parse_listen(":8470", &sa, &len));
        ASSERT_OK(parse_listen("localhost:8470", &sa, &len));

        ASSERT_ERROR(parse_listen("127.0.0.1", &sa, &len), EINVAL);
        ASSERT_ERROR(parse_listen("127.0.0.1:65536", &sa, &len), EINVAL);
        ASSERT_ERROR(parse_listen("127.0.0.1:-1", &sa, &len), EINVAL);
        ASSERT_ERROR(parse_listen("127.0.0.1:http", &sa, &len), EINVAL);
        ASSERT_ERROR(parse_listen("[::1:8470", &sa, &len), EINVAL);
}

TEST(size) {
        uint64_t v;

        ASSERT_OK(parse_size("1024", &v));
        ASSERT_EQ(v, 1024);
        ASSERT_OK(parse_size("32M", &v));
        ASSERT_EQ(v, 32 << 20);
        ASSERT_OK(parse_size("2G", &v));
        ASSERT_EQ(v, UINT64_C(2) << 30);
        ASSERT_ERROR(parse_size("M", &v), EINVAL);
        ASSERT_ERROR(parse_size("12X", &v), EINVAL);
        ASSERT_ERROR(parse_size("-1", &v), EINVAL);
        ASSERT_ERROR(parse_size("99999999999999999999G", &v), ERANGE);
}

static unsigned load(const char *text, StoreConfig *c, int *ret) {
        char path[] = "/tmp/lmk-test-config-XXXXXX";
        int fd = mkstemp(path);
        unsigned line = 0;

        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(write(fd, text, strlen(text)), (long long) strlen(text));
        close(fd);
        *ret = store_config_load(c, path, &line);
        unlink(path);
        return line;
}

TEST(file) {
        StoreConfig c;
        int r;

        store_config_init(&c);
        ASSERT_EQ(load("; lmk-store settings\n"
                       "db = /var/lib/lmk-store/lmk.db\n"
                       "[lmk-store]\n"
                       "listen = 127.0.0.1:8470\n"
                       "threads = 8\n"
                       "max-body = 16M\n", &c, &r), 0);
        ASSERT_OK(r);
        ASSERT_STREQ(c.db, "/var/lib/lmk-store/lmk.db");
        ASSERT_STREQ(c.listen, "127.0.0.1:8470");
        ASSERT_EQ(c.threads, 8);
        ASSERT_EQ(c.max_body, 16 << 20);
        ASSERT_NULL(c.token_file);

        ASSERT_EQ(load("threads = 4\nthread = 8\n", &c, &r), 2);
        ASSERT_EQ(r, -ENOENT);
        ASSERT_EQ(load("threads = 0\n", &c, &r), 1);
        ASSERT_EQ(r, -ERANGE);
        ASSERT_EQ(load("[other]\nthreads = 2\n", &c, &r), 2);
        ASSERT_EQ(r, -ENOENT);
        ASSERT_EQ(load("listen = nowhere\n", &c, &r), 1);
        ASSERT_EQ(r, -EINVAL);
        ASSERT_EQ(load("this is not ini\n", &c, &r), 1);
        ASSERT_TRUE(r < 0);
        store_config_done(&c);
}

/* The lmk-store.conf the packages install loads as shipped, and with its
 * commented settings switched on. */
static void check_example(const char *path) {
        _cleanup_free_ char *on = NULL;
        StoreConfig c;
        unsigned line = 0;
        int r;

        store_config_init(&c);
        r = store_config_load(&c, path, &line);
        if (r < 0)
                test_fail("%s, line %u: %s", path, line, strerror(-r));
        on = test_example_uncommented(path);
        ASSERT_NOT_NULL(on);
        ASSERT_TRUE(strstr(on, "\ndb = ") != NULL);
        ASSERT_EQ(load(on, &c, &r), 0);
        ASSERT_OK(r);
        store_config_done(&c);
}

/* How long to wait for the database server at start: forever by default,
 * or a number of seconds up to a year. */
TEST(db_wait) {
        StoreConfig c;

        store_config_init(&c);
        ASSERT_EQ(c.db_wait, STORE_DB_WAIT_FOREVER);
        ASSERT_OK(store_config_set(&c, "db-wait", "0"));
        ASSERT_EQ(c.db_wait, 0u);
        ASSERT_OK(store_config_set(&c, "db-wait", "120"));
        ASSERT_EQ(c.db_wait, 120u);
        ASSERT_OK(store_config_set(&c, "db-wait", "forever"));
        ASSERT_EQ(c.db_wait, STORE_DB_WAIT_FOREVER);
        ASSERT_ERROR(store_config_set(&c, "db-wait", "-1"), EINVAL);
        ASSERT_ERROR(store_config_set(&c, "db-wait", "5s"), EINVAL);
        ASSERT_ERROR(store_config_set(&c, "db-wait", "31622401"), ERANGE);
        ASSERT_EQ(c.db_wait, STORE_DB_WAIT_FOREVER);
        store_config_done(&c);
}

/* Retention of jobs and their summaries: for good by default, else days
 * up to a hundred years. */
TEST(keep_job_days) {
        StoreConfig c;

        store_config_init(&c);
        ASSERT_EQ(c.keep_job_days, 0u);
        ASSERT_OK(store_config_set(&c, "keep-job-days", "400"));
        ASSERT_EQ(c.keep_job_days, 400u);
        ASSERT_ERROR(store_config_set(&c, "keep-job-days", "36601"), ERANGE);
        ASSERT_ERROR(store_config_set(&c, "keep-job-days", "-1"), EINVAL);
        ASSERT_ERROR(store_config_set(&c, "keep-job-days", "1y"), EINVAL);
        ASSERT_EQ(c.keep_job_days, 400u);
        store_config_done(&c);
}

int main(int argc, char **argv) {
        RUN(text);
        RUN(db_wait);
        RUN(keep_job_days);
        RUN(listen);
        RUN(size);
        RUN(file);
        if (argc > 1)
                check_example(argv[1]);
        return 0;
}
