/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The spool on disk: batches survive a restart in order with fresh sequence
 * numbers, damaged files are set aside, and the bound drops the oldest. The
 * directory is lmkd's alone: one process at a time, never through a symlink,
 * and nothing deleted or replaced that lmkd did not write. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
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

        ASSERT_OK(spool_open(dir, 1 << 20, &s, NULL));
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

        ASSERT_OK(spool_open(dir, 1 << 20, &s, NULL));
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
        ASSERT_OK(spool_open(dir, 4096, &s, NULL));
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

        ASSERT_OK(spool_open(d, 1 << 20, &s, NULL));
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
        ASSERT_OK(spool_open(d, 1 << 20, &s, NULL));
        ASSERT_EQ(spool_take_corrupt(s, &again), 0);
        free(again);
        spool_free(s);
}

static void read_text(const char *d, const char *name, char *buf, size_t size) {
        char path[256];
        FILE *f;
        size_t n;

        snprintf(path, sizeof(path), "%s/%s", d, name);
        f = fopen(path, "re");
        if (!f)
                test_fail("%s: %m", path);
        n = fread(buf, 1, size - 1, f);
        buf[n] = '\0';
        fclose(f);
}

static void write_text(const char *d, const char *name, const char *text) {
        char path[256];
        int fd;

        snprintf(path, sizeof(path), "%s/%s", d, name);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(loop_write(fd, text, strlen(text)));
        close(fd);
}

static bool exists(const char *d, const char *name) {
        char path[256];
        struct stat st;

        snprintf(path, sizeof(path), "%s/%s", d, name);
        return lstat(path, &st) == 0;
}

static void fresh_dir(const char *name, char *d, size_t size) {
        snprintf(d, size, "%s/%s", dir, name);
        ASSERT_TRUE(mkdir(d, 0700) == 0);
}

/* The id is made with the spool, kept across restarts, and a new one comes
 * wherever the numbering is not known: the store keys batches on it. */
TEST(spool_id) {
        char d[256], text[64], id[LMK_BATCH_SPOOL_ID_LEN + 1], cmd[600];
        uint64_t seq;
        Spool *s;

        fresh_dir("spool-id", d, sizeof(d));
        ASSERT_OK(spool_open(d, 1 << 20, &s, NULL));
        snprintf(id, sizeof(id), "%s", spool_id(s));
        ASSERT_EQ(strlen(id), LMK_BATCH_SPOOL_ID_LEN);
        ASSERT_EQ(strspn(id, "0123456789abcdef"), LMK_BATCH_SPOOL_ID_LEN);
        read_text(d, "id", text, sizeof(text));
        ASSERT_TRUE(strncmp(text, id, LMK_BATCH_SPOOL_ID_LEN) == 0 && streq(text + LMK_BATCH_SPOOL_ID_LEN, "\n"));
        put(s, "{\"n\":1}", &seq);
        spool_free(s);

        /* a restart keeps it */
        ASSERT_OK(spool_open(d, 1 << 20, &s, NULL));
        ASSERT_STREQ(spool_id(s), id);
        spool_free(s);

        /* an admin empties the spool: numbers start again, under a new id */
        snprintf(cmd, sizeof(cmd), "rm -f -- %s/seq %s/*.json.gz", d, d);
        ASSERT_EQ(system(cmd), 0);
        ASSERT_OK(spool_open(d, 1 << 20, &s, NULL));
        ASSERT_TRUE(!streq(spool_id(s), id));
        put(s, "{\"n\":1}", &seq);
        ASSERT_EQ(seq, 0);
        snprintf(id, sizeof(id), "%s", spool_id(s));
        spool_free(s);

        /* a damaged id: a new one, the numbering goes on */
        write_text(d, "id", "not an id\n");
        ASSERT_OK(spool_open(d, 1 << 20, &s, NULL));
        ASSERT_TRUE(!streq(spool_id(s), id) && strlen(spool_id(s)) == LMK_BATCH_SPOOL_ID_LEN);
        put(s, "{\"n\":2}", &seq);
        ASSERT_EQ(seq, 1);
        spool_free(s);
}

/* Two lmkd on one spool would hand out the same numbers. */
TEST(one_process_per_spool) {
        _cleanup_free_ char *why = NULL;
        char d[256], want[64], text[32];
        Spool *s, *t = NULL;

        fresh_dir("locked", d, sizeof(d));
        ASSERT_OK(spool_open(d, 1 << 20, &s, NULL));
        ASSERT_ERROR(spool_open(d, 1 << 20, &t, &why), EBUSY);
        ASSERT_NULL(t);
        snprintf(want, sizeof(want), "in use by pid %d", (int) getpid());
        if (!why || !strstr(why, want))
                test_fail("\"%s\" does not say \"%s\"", why ?: "(null)", want);
        read_text(d, "lock", text, sizeof(text));
        ASSERT_EQ(atoi(text), getpid());
        spool_free(s);
        /* the lock goes with the process that held it */
        ASSERT_OK(spool_open(d, 1 << 20, &s, NULL));
        spool_free(s);
}

/* A symlink to a directory is refused, and nothing where it points is
 * touched: its temp-like files stay, and its "seq" is not replaced. */
TEST(symlink_refused) {
        _cleanup_free_ char *why = NULL;
        char target[256], link[256], text[64];
        Spool *s = NULL;

        fresh_dir("elsewhere", target, sizeof(target));
        write_text(target, "00000000000000000003.json.gz.tmp", "someone's");
        write_text(target, "seq", "41\n");
        snprintf(link, sizeof(link), "%s/spool-link", dir);
        ASSERT_TRUE(symlink(target, link) == 0);
        ASSERT_ERROR(spool_open(link, 1 << 20, &s, &why), ELOOP);
        ASSERT_NULL(s);
        ASSERT_NOT_NULL(why);
        ASSERT_TRUE(strstr(why, "is a symlink") != NULL);
        ASSERT_TRUE(exists(target, "00000000000000000003.json.gz.tmp"));
        read_text(target, "seq", text, sizeof(text));
        ASSERT_STREQ(text, "41\n");
        ASSERT_FALSE(exists(target, "lock"));
        ASSERT_FALSE(exists(target, "id"));
}

/* lmkd deletes only the names it writes, and only regular files of its own. */
TEST(foreign_files_survive) {
        _cleanup_free_ char *why = NULL;
        char d[256], path[320], moved[340];
        uint64_t seq;
        Spool *s;

        fresh_dir("foreign", d, sizeof(d));
        write_text(d, "notes.tmp.txt", "an admin's note");
        write_text(d, ".tmp", "?");
        write_text(d, "batch.tmp", "?");
        write_text(d, "0000000000000000001.json.gz.tmp", "19 digits");
        write_text(d, "00000000000000000001.json.gz", "not gzip");  /* lmkd's name: set aside, not deleted */
        snprintf(path, sizeof(path), "%s/00000000000000000007.json.gz.tmp", d);
        ASSERT_TRUE(mkfifo(path, 0600) == 0);
        snprintf(path, sizeof(path), "%s/probe.tmp", d);
        ASSERT_TRUE(symlink("/etc/passwd", path) == 0);
        write_text(d, "seq.tmp", "a leftover of lmkd's own");
        /* in the way of the start-up probe: said, and left */
        ASSERT_ERROR(spool_open(d, 1 << 20, &s, &why), EEXIST);
        ASSERT_TRUE(why && strstr(why, "probe.tmp is in the way"));
        ASSERT_TRUE(exists(d, "probe.tmp"));
        snprintf(moved, sizeof(moved), "%s.moved", path);
        ASSERT_TRUE(rename(path, moved) == 0);
        ASSERT_OK(spool_open(d, 1 << 20, &s, NULL));
        for (size_t i = 0; i < 8; i++) {
                _cleanup_free_ void *gz = NULL;
                size_t n;

                ASSERT_OK(gzip_buffer("{}", 2, &gz, &n));
                ASSERT_OK(spool_next_seq(s, &seq));
                /* the FIFO by batch 7's temporary name fails that one batch */
                if (seq == 7)
                        ASSERT_ERROR(spool_put(s, seq, gz, n), EEXIST);
                else
                        ASSERT_OK(spool_put(s, seq, gz, n));
        }
        spool_free(s);
        ASSERT_TRUE(exists(d, "notes.tmp.txt"));
        ASSERT_TRUE(exists(d, ".tmp"));
        ASSERT_TRUE(exists(d, "batch.tmp"));
        ASSERT_TRUE(exists(d, "0000000000000000001.json.gz.tmp"));
        ASSERT_TRUE(exists(d, "00000000000000000007.json.gz.tmp"));
        ASSERT_TRUE(exists(d, "probe.tmp.moved"));
        ASSERT_TRUE(exists(d, "corrupt/00000000000000000001.json.gz"));
        ASSERT_FALSE(exists(d, "seq.tmp"));
        ASSERT_TRUE(access("/etc/passwd", F_OK) == 0);
}

/* lmkd's "seq" or "id" that is not a regular file is not lmkd's: refused,
 * not replaced. */
TEST(state_files_not_replaced) {
        _cleanup_free_ char *why = NULL;
        char d[256], path[300], target[300], text[32];
        Spool *s = NULL;

        fresh_dir("state", d, sizeof(d));
        snprintf(target, sizeof(target), "%s/precious", dir);
        write_text(dir, "precious", "keep\n");
        snprintf(path, sizeof(path), "%s/seq", d);
        ASSERT_TRUE(symlink(target, path) == 0);
        ASSERT_ERROR(spool_open(d, 1 << 20, &s, &why), EBADMSG);
        ASSERT_NOT_NULL(why);
        ASSERT_TRUE(strstr(why, "seq is not a file lmkd wrote") != NULL);
        read_text(dir, "precious", text, sizeof(text));
        ASSERT_STREQ(text, "keep\n");
}

/* Writable by others, or not lmkd's user's: refused with why. */
TEST(permissions_refused) {
        _cleanup_free_ char *why = NULL, *why2 = NULL, *why3 = NULL;
        char d[256];
        Spool *s = NULL;

        fresh_dir("group-writable", d, sizeof(d));
        ASSERT_TRUE(chmod(d, 0770) == 0);
        ASSERT_ERROR(spool_open(d, 1 << 20, &s, &why), EPERM);
        ASSERT_NOT_NULL(why);
        ASSERT_TRUE(strstr(why, "writable by its group") != NULL);
        ASSERT_TRUE(chmod(d, 0703) == 0);
        ASSERT_ERROR(spool_open(d, 1 << 20, &s, &why2), EPERM);
        ASSERT_TRUE(strstr(why2, "writable by others") != NULL);
        ASSERT_FALSE(exists(d, "lock"));
        ASSERT_TRUE(chmod(d, 0755) == 0);    /* readable by others is fine */
        ASSERT_OK(spool_open(d, 1 << 20, &s, NULL));
        spool_free(s);
        if (geteuid() != 0)
                return; /* chown to another user needs root */
        fresh_dir("not-mine", d, sizeof(d));
        ASSERT_TRUE(chown(d, 65534, 65534) == 0);
        s = NULL;
        ASSERT_ERROR(spool_open(d, 1 << 20, &s, &why3), EPERM);
        ASSERT_TRUE(strstr(why3, "owned by uid 65534") != NULL);
}

/* A batch that vanished or cannot be read does not hold up those behind it. */
TEST(unreadable_batch_skipped) {
        _cleanup_free_ SpoolCorrupt *c = NULL;
        char d[256], path[320];
        uint64_t a, b, c3, seq;
        SpoolStats st;
        void *data;
        size_t n;
        Spool *s;

        fresh_dir("unreadable", d, sizeof(d));
        ASSERT_OK(spool_open(d, 1 << 20, &s, NULL));
        put(s, "{\"n\":1}", &a);
        put(s, "{\"n\":2}", &b);
        put(s, "{\"n\":3}", &c3);
        snprintf(path, sizeof(path), "%s/%020" PRIu64 ".json.gz", d, a);
        ASSERT_TRUE(unlink(path) == 0);
        snprintf(path, sizeof(path), "%s/%020" PRIu64 ".json.gz", d, b);
        ASSERT_TRUE(unlink(path) == 0 && mkdir(path, 0700) == 0); /* read() answers EISDIR */
        ASSERT_OK(spool_oldest(s, &seq, &data, &n));
        ASSERT_EQ(seq, c3);
        ASSERT_STREQ(gunzip(data, n), "{\"n\":3}");
        free(data);
        spool_stats(s, &st);
        ASSERT_EQ(st.dropped, 1);
        ASSERT_EQ(st.corrupt, 1);
        ASSERT_EQ(spool_take_corrupt(s, &c), 1);
        ASSERT_TRUE(strstr(c[0].reason, "unreadable: Is a directory") != NULL);
        spool_free(s);
}

int main(void) {
        char cmd[128];

        ASSERT_NOT_NULL(mkdtemp(dir));
        RUN(restart_keeps_order_and_numbers);
        RUN(bound_drops_oldest);
        RUN(corrupt_files_say_why);
        RUN(spool_id);
        RUN(one_process_per_spool);
        RUN(symlink_refused);
        RUN(foreign_files_survive);
        RUN(state_files_not_replaced);
        RUN(permissions_refused);
        RUN(unreadable_batch_skipped);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        ASSERT_EQ(system(cmd), 0);
        return 0;
}
