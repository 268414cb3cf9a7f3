/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The spool on disk: batches survive a restart in order with fresh sequence
 * numbers, damaged files are set aside, and the bound drops the oldest. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <zlib.h>

#include "spool.h"
#include "tests.h"
#include "util.h"

static char dir[] = "/tmp/lmk-spool-XXXXXX";

static void put(Spool *s, const char *text, uint64_t *ret_seq) {
        _cleanup_free_ void *gz = NULL;
        size_t n;

        ASSERT_OK(gzip_buffer(text, strlen(text), &gz, &n));
        ASSERT_OK(spool_next_seq(s, ret_seq));
        ASSERT_OK(spool_put(s, *ret_seq, gz, n));
}

static char *gunzip(const void *data, size_t n) {
        static char out[4096];
        z_stream z = { .next_in = (Bytef *) data, .avail_in = (uInt) n, .next_out = (Bytef *) out,
                       .avail_out = sizeof(out) - 1 };

        ASSERT_EQ(inflateInit2(&z, 15 + 16), Z_OK);
        ASSERT_EQ(inflate(&z, Z_FINISH), Z_STREAM_END);
        out[z.total_out] = '\0';
        inflateEnd(&z);
        return out;
}

static int count_files(const char *sub) {
        char cmd[256];
        FILE *p;
        int n = 0;

        snprintf(cmd, sizeof(cmd), "ls -1 %s/%s 2>/dev/null | wc -l", dir, sub);
        p = popen(cmd, "re");
        ASSERT_NOT_NULL(p);
        ASSERT_EQ(fscanf(p, "%d", &n), 1);
        pclose(p);
        return n;
}

TEST(restart_keeps_order_and_numbers) {
        Spool *s;
        uint64_t a, b, c, seq;
        void *data;
        size_t n;
        SpoolStats st;

        ASSERT_OK(spool_open(dir, 1 << 20, &s));
        put(s, "{\"n\":1}", &a);
        put(s, "{\"n\":2}", &b);
        ASSERT_TRUE(b == a + 1);
        spool_free(s);

        /* a write that never finished, and a file cut short */
        char path[128];
        int fd;
        snprintf(path, sizeof(path), "%s/00000000000000000099.json.gz.tmp", dir);
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        ASSERT_TRUE(fd >= 0);
        close(fd);
        {
                _cleanup_free_ void *gz = NULL;
                ASSERT_OK(gzip_buffer("{\"n\":3, \"padding\": \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}", 52, &gz, &n));
                snprintf(path, sizeof(path), "%s/00000000000000000007.json.gz", dir);
                fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
                ASSERT_OK(loop_write(fd, gz, n - 6)); /* truncated */
                close(fd);
        }

        ASSERT_OK(spool_open(dir, 1 << 20, &s));
        spool_stats(s, &st);
        ASSERT_EQ(st.queued, 2);
        ASSERT_EQ(st.corrupt, 1);
        ASSERT_EQ(count_files("corrupt"), 1);
        ASSERT_EQ(count_files("*.tmp"), 0);
        /* numbering continues after everything ever seen, the corrupt one included */
        put(s, "{\"n\":4}", &c);
        ASSERT_TRUE(c > 7);
        /* oldest first */
        ASSERT_OK(spool_oldest(s, &seq, &data, &n));
        ASSERT_TRUE(seq == a);
        ASSERT_STREQ(gunzip(data, n), "{\"n\":1}");
        free(data);
        ASSERT_OK(spool_remove(s, a));
        ASSERT_OK(spool_reject(s, b));
        ASSERT_EQ(count_files("rejected"), 1);
        ASSERT_OK(spool_oldest(s, &seq, &data, &n));
        ASSERT_TRUE(seq == c);
        free(data);
        ASSERT_OK(spool_remove(s, c));
        ASSERT_ERROR(spool_oldest(s, &seq, &data, &n), ENOENT);
        spool_stats(s, &st);
        ASSERT_EQ(st.sent, 2);
        ASSERT_EQ(st.rejected, 1);
        ASSERT_EQ(st.queued, 0);
        spool_free(s);
}

TEST(bound_drops_oldest) {
        char big[2048];
        Spool *s;
        SpoolStats st;
        uint64_t seq, first = 0;
        void *data;
        size_t n;

        unsigned seed = 42;

        /* random letters compress to ~60%: each batch is over 1 KiB on disk */
        for (size_t i = 0; i < sizeof(big) - 1; i++)
                big[i] = (char) ('a' + rand_r(&seed) % 26);
        big[sizeof(big) - 1] = '\0';
        ASSERT_OK(spool_open(dir, 4096, &s));
        for (int i = 0; i < 20; i++) {
                put(s, big, &seq);
                if (i == 0)
                        first = seq;
        }
        spool_stats(s, &st);
        ASSERT_TRUE(st.queued_bytes <= 4096);
        ASSERT_TRUE(st.dropped > 0);
        ASSERT_EQ(st.queued + st.dropped, 20);
        ASSERT_OK(spool_oldest(s, &seq, &data, &n));
        ASSERT_TRUE(seq > first);       /* the oldest went first */
        free(data);
        spool_free(s);
}

/* Each damaged file is handed over once, named, with why it was set aside. */
static void write_file_at(const char *d, uint64_t seq, const void *data, size_t n) {
        char path[256];
        int fd;

        snprintf(path, sizeof(path), "%s/%020" PRIu64 ".json.gz", d, seq);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(loop_write(fd, data, n));
        close(fd);
}

static const char *reason_of(SpoolCorrupt *c, size_t n, uint64_t seq) {
        char name[32];

        snprintf(name, sizeof(name), "%020" PRIu64 ".json.gz", seq);
        for (size_t i = 0; i < n; i++)
                if (streq(c[i].name, name))
                        return c[i].reason;
        test_fail("%s not reported as corrupt", name);
}

TEST(corrupt_files_say_why) {
        _cleanup_free_ unsigned char *gz = NULL;
        _cleanup_free_ SpoolCorrupt *c = NULL;
        SpoolCorrupt *again = NULL;
        unsigned char bad[4096];
        char d[256];
        const char *text = "{\"n\":5, \"padding\": \"yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\"}";
        SpoolStats st;
        Spool *s;
        size_t n, nc;

        snprintf(d, sizeof(d), "%s/damaged", dir);
        ASSERT_TRUE(mkdir(d, 0700) == 0);
        ASSERT_OK(gzip_buffer(text, strlen(text), (void **) &gz, &n));
        ASSERT_TRUE(n < sizeof(bad));

        write_file_at(d, 1, gz, n);                             /* whole */
        write_file_at(d, 2, gz, n - 6);                         /* truncated */
        memcpy(bad, gz, n);
        bad[n - 8] ^= 0x01;                                     /* the CRC-32 in the trailer */
        write_file_at(d, 3, bad, n);
        write_file_at(d, 4, text, strlen(text));                /* not gzip'd at all */
        memcpy(bad, gz, n);
        memcpy(bad + n, "junk", 4);
        write_file_at(d, 5, bad, n + 4);                        /* something after the stream */
        write_file_at(d, 6, "", 0);
        memcpy(bad, gz, n);
        bad[n - 1] ^= 0x01;                                     /* the length in the trailer */
        write_file_at(d, 7, bad, n);

        ASSERT_OK(spool_open(d, 1 << 20, &s));
        spool_stats(s, &st);
        ASSERT_EQ(st.queued, 1);
        ASSERT_EQ(st.corrupt, 6);
        nc = spool_take_corrupt(s, &c);
        ASSERT_EQ(nc, 6);
        ASSERT_TRUE(strstr(reason_of(c, nc, 2), "truncated"));
        ASSERT_TRUE(strstr(reason_of(c, nc, 2), "byte"));
        ASSERT_TRUE(strstr(reason_of(c, nc, 3), "CRC mismatch"));
        ASSERT_TRUE(strstr(reason_of(c, nc, 4), "bad header"));
        ASSERT_TRUE(strstr(reason_of(c, nc, 5), "4 bytes after the end of the gzip stream"));
        ASSERT_TRUE(strstr(reason_of(c, nc, 6), "empty"));
        ASSERT_TRUE(strstr(reason_of(c, nc, 7), "length mismatch"));
        /* once per file */
        ASSERT_EQ(spool_take_corrupt(s, &again), 0);
        free(again);
        spool_free(s);

        /* set aside: a restart finds nothing new to say */
        ASSERT_OK(spool_open(d, 1 << 20, &s));
        ASSERT_EQ(spool_take_corrupt(s, &again), 0);
        free(again);
        spool_free(s);
}

int main(void) {
        char cmd[128];

        ASSERT_NOT_NULL(mkdtemp(dir));
        RUN(restart_keeps_order_and_numbers);
        RUN(bound_drops_oldest);
        RUN(corrupt_files_say_why);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        ASSERT_EQ(system(cmd), 0);
        return 0;
}
