/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "spool.h"
#include "util.h"

#define SPOOL_FILE_MAX (64u * 1024 * 1024) /* a batch is far smaller; larger files are not ours */

typedef struct Entry {
        uint64_t seq;
        uint64_t size;
} Entry;

struct Spool {
        pthread_mutex_t lock;
        char *dir;
        int dir_fd;
        size_t max_bytes;
        uint64_t next_seq;
        Entry *entries;         /* sorted by seq */
        size_t n, alloc;
        uint64_t bytes;
        SpoolStats stats;
        SpoolCorrupt *corrupt;  /* set aside, not yet taken by spool_take_corrupt() */
        size_t n_corrupt, alloc_corrupt;
};

static int parse_name(const char *name, uint64_t *ret) {
        char digits[32];
        size_t len = strlen(name);

        if (len != 20 + 8 || strcmp(name + 20, ".json.gz") != 0)
                return -EINVAL;
        memcpy(digits, name, 20);
        digits[20] = '\0';
        return safe_atou64(digits, 10, ret);
}

static void name_of(uint64_t seq, char buf[32]) {
        snprintf(buf, 32, "%020" PRIu64 ".json.gz", seq);
}

static int entry_cmp(const void *a, const void *b) {
        const Entry *x = a, *y = b;
        return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int add_entry(Spool *s, uint64_t seq, uint64_t size) {
        if (s->n == s->alloc) {
                size_t na = MAX(s->alloc * 2, (size_t) 64);
                Entry *v = realloc(s->entries, na * sizeof(*v));

                if (!v)
                        return -ENOMEM;
                s->entries = v;
                s->alloc = na;
        }
        s->entries[s->n++] = (Entry) { seq, size };
        s->bytes += size;
        return 0;
}

static void remove_index(Spool *s, size_t i) {
        s->bytes -= s->entries[i].size;
        memmove(&s->entries[i], &s->entries[i + 1], (s->n - i - 1) * sizeof(Entry));
        s->n--;
}

static int move_to(Spool *s, uint64_t seq, const char *subdir) {
        char from[32], to[64];

        name_of(seq, from);
        (void) mkdirat(s->dir_fd, subdir, 0700);
        snprintf(to, sizeof(to), "%s/%s", subdir, from);
        if (renameat(s->dir_fd, from, s->dir_fd, to) < 0)
                return -errno;
        return 0;
}

/* Says why a spool file is not a whole gzip stream of one batch, into why
 * (a sentence fragment), or returns true. Anything but a whole stream was cut
 * short (power loss before the rename is impossible, but disks lie) or is not
 * ours. Inflates in gzip-only mode: zlib's gz* readers would pass a file that
 * is not gzip at all through as is. */
static bool gzip_intact(int fd, uint64_t size, char *why, size_t why_size) {
        unsigned char in[16384], out[16384];
        z_stream z = {};
        uint64_t at = 0;
        int zr = Z_OK;

        if (size == 0) {
                snprintf(why, why_size, "empty (0 bytes)");
                return false;
        }
        if (inflateInit2(&z, 15 + 16) != Z_OK) {
                snprintf(why, why_size, "out of memory to check it");
                return false;
        }
        while (zr != Z_STREAM_END) {
                ssize_t n = pread(fd, in, sizeof(in), (off_t) at);

                if (n < 0) {
                        snprintf(why, why_size, "unreadable at byte %" PRIu64 " of %" PRIu64 ": %s", at, size,
                                 strerror(errno));
                        goto fail;
                }
                if (n == 0) {
                        snprintf(why, why_size, "truncated: the file ends at byte %" PRIu64 " before its gzip "
                                 "stream does", at);
                        goto fail;
                }
                z.next_in = in;
                z.avail_in = (uInt) n;
                do {
                        z.next_out = out;
                        z.avail_out = sizeof(out);
                        zr = inflate(&z, Z_NO_FLUSH);
                } while (zr == Z_OK && (z.avail_in > 0 || z.avail_out == 0));
                if (zr == Z_BUF_ERROR)
                        zr = Z_OK; /* wants more input */
                if (zr != Z_OK && zr != Z_STREAM_END) {
                        uint64_t bad = at + (uint64_t) n - z.avail_in;
                        const char *msg = z.msg ?: "inflate failed";

                        if (strstr(msg, "incorrect header check") || strstr(msg, "unknown compression method") ||
                            strstr(msg, "unknown header flags"))
                                snprintf(why, why_size, "bad header: not a gzip file (%s)", msg);
                        else if (strstr(msg, "incorrect data check"))
                                snprintf(why, why_size, "CRC mismatch: the data does not match the gzip CRC-32");
                        else if (strstr(msg, "incorrect length check"))
                                snprintf(why, why_size, "length mismatch: the data does not match the gzip trailer");
                        else
                                snprintf(why, why_size, "damaged at byte %" PRIu64 " of %" PRIu64 ": %s", bad, size,
                                         msg);
                        goto fail;
                }
                at += (uint64_t) n;
                if (zr == Z_STREAM_END && (z.avail_in > 0 || at < size)) {
                        snprintf(why, why_size, "%" PRIu64 " bytes after the end of the gzip stream at byte %" PRIu64,
                                 size - (at - z.avail_in), at - z.avail_in);
                        goto fail;
                }
        }
        inflateEnd(&z);
        return true;
fail:
        inflateEnd(&z);
        return false;
}

static int note_corrupt(Spool *s, uint64_t seq, const char *why) {
        SpoolCorrupt *v;

        s->stats.corrupt++;
        if (s->n_corrupt == s->alloc_corrupt) {
                size_t na = MAX(s->alloc_corrupt * 2, (size_t) 8);

                v = realloc(s->corrupt, na * sizeof(*v));
                if (!v)
                        return -ENOMEM;
                s->corrupt = v;
                s->alloc_corrupt = na;
        }
        v = &s->corrupt[s->n_corrupt++];
        name_of(seq, v->name);
        snprintf(v->reason, sizeof(v->reason), "%s", why);
        return 0;
}

const char *spool_dir(const Spool *s) {
        return s->dir;
}

size_t spool_take_corrupt(Spool *s, SpoolCorrupt **ret) {
        size_t n;

        pthread_mutex_lock(&s->lock);
        n = s->n_corrupt;
        *ret = TAKE_PTR(s->corrupt);
        s->n_corrupt = s->alloc_corrupt = 0;
        pthread_mutex_unlock(&s->lock);
        return n;
}

static int read_state(Spool *s) {
        _cleanup_free_ char *text = NULL;
        char path[4200];
        uint64_t v;
        int r;

        snprintf(path, sizeof(path), "%s/seq", s->dir);
        r = read_full_file(path, 64, &text, NULL);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        text[strcspn(text, "\n")] = '\0';
        if (safe_atou64(text, 10, &v) < 0)
                return 0; /* a damaged state file: the entries below still bound it */
        s->next_seq = MAX(s->next_seq, v);
        return 0;
}

static int scan(Spool *s) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        int fd, r;

        fd = openat(s->dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d) {
                close(fd);
                return -errno;
        }
        while ((de = readdir(d))) {
                char why[sizeof(((SpoolCorrupt *) NULL)->reason)] = "";
                uint64_t seq;
                struct stat st;
                int f;

                if (strncmp(de->d_name, ".tmp", 4) == 0 || strstr(de->d_name, ".tmp")) {
                        /* a write that never finished */
                        (void) unlinkat(s->dir_fd, de->d_name, 0);
                        continue;
                }
                if (parse_name(de->d_name, &seq) < 0)
                        continue;
                /* never reuse a number the store may have seen, even of a damaged file */
                s->next_seq = MAX(s->next_seq, seq + 1);
                f = openat(s->dir_fd, de->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
                if (f < 0 && errno != ELOOP)
                        continue;
                if (f < 0)
                        snprintf(why, sizeof(why), "a symlink, not a file lmkd wrote");
                else if (fstat(f, &st) < 0)
                        snprintf(why, sizeof(why), "cannot be inspected: %s", strerror(errno));
                else if (!S_ISREG(st.st_mode))
                        snprintf(why, sizeof(why), "not a regular file");
                else if (st.st_size > SPOOL_FILE_MAX)
                        snprintf(why, sizeof(why), "%jd bytes, more than a batch can be (%u)", (intmax_t) st.st_size,
                                 SPOOL_FILE_MAX);
                else if (gzip_intact(f, (uint64_t) st.st_size, why, sizeof(why)))
                        why[0] = '\0';
                safe_close(f);
                if (why[0]) {
                        (void) move_to(s, seq, "corrupt");
                        r = note_corrupt(s, seq, why);
                        if (r < 0)
                                return r;
                        continue;
                }
                r = add_entry(s, seq, (uint64_t) st.st_size);
                if (r < 0)
                        return r;
        }
        if (s->n > 0)
                qsort(s->entries, s->n, sizeof(Entry), entry_cmp);
        return 0;
}

int spool_open(const char *dir, size_t max_bytes, Spool **ret) {
        Spool *s;
        int r;

        if (mkdir(dir, 0700) < 0 && errno != EEXIST)
                return -errno;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        pthread_mutex_init(&s->lock, NULL);
        s->max_bytes = max_bytes;
        s->dir = strdup(dir);
        s->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (!s->dir || s->dir_fd < 0) {
                r = s->dir ? -errno : -ENOMEM;
                spool_free(s);
                return r;
        }
        r = read_state(s);
        if (r >= 0)
                r = scan(s);
        if (r < 0) {
                spool_free(s);
                return r;
        }
        *ret = s;
        return 0;
}

Spool *spool_free(Spool *s) {
        if (!s)
                return NULL;
        safe_close(s->dir_fd);
        pthread_mutex_destroy(&s->lock);
        free(s->entries);
        free(s->corrupt);
        free(s->dir);
        free(s);
        return NULL;
}

static int write_at(Spool *s, const char *name, const void *data, size_t size) {
        char tmp[64];
        int fd, r;

        snprintf(tmp, sizeof(tmp), "%s.tmp", name);
        fd = openat(s->dir_fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return -errno;
        r = loop_write(fd, data, size);
        if (r >= 0 && fsync(fd) < 0)
                r = -errno;
        close(fd);
        if (r >= 0 && renameat(s->dir_fd, tmp, s->dir_fd, name) < 0)
                r = -errno;
        if (r >= 0 && fsync(s->dir_fd) < 0)
                r = -errno;
        if (r < 0)
                (void) unlinkat(s->dir_fd, tmp, 0);
        return r;
}

int spool_next_seq(Spool *s, uint64_t *ret) {
        char buf[32];
        uint64_t seq;
        int r;

        pthread_mutex_lock(&s->lock);
        seq = s->next_seq;
        snprintf(buf, sizeof(buf), "%" PRIu64 "\n", seq + 1);
        r = write_at(s, "seq", buf, strlen(buf));
        if (r >= 0)
                s->next_seq = seq + 1;
        pthread_mutex_unlock(&s->lock);
        if (r >= 0)
                *ret = seq;
        return r;
}

int spool_put(Spool *s, uint64_t seq, const void *data, size_t size) {
        char name[32];
        int r;

        name_of(seq, name);
        pthread_mutex_lock(&s->lock);
        r = write_at(s, name, data, size);
        if (r >= 0) {
                r = add_entry(s, seq, size);
                if (r >= 0)
                        qsort(s->entries, s->n, sizeof(Entry), entry_cmp);
                s->stats.spooled++;
                /* stay within the bound, oldest first, but keep the newest */
                while (r >= 0 && s->bytes > s->max_bytes && s->n > 1) {
                        char old[32];

                        name_of(s->entries[0].seq, old);
                        (void) unlinkat(s->dir_fd, old, 0);
                        remove_index(s, 0);
                        s->stats.dropped++;
                }
        }
        pthread_mutex_unlock(&s->lock);
        return r;
}

int spool_oldest(Spool *s, uint64_t *ret_seq, void **ret_data, size_t *ret_size) {
        char name[32];
        uint64_t seq;
        char *data;
        size_t size;
        int fd, r;

        pthread_mutex_lock(&s->lock);
        if (s->n == 0) {
                pthread_mutex_unlock(&s->lock);
                return -ENOENT;
        }
        seq = s->entries[0].seq;
        name_of(seq, name);
        fd = openat(s->dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        pthread_mutex_unlock(&s->lock);
        if (fd < 0)
                return -errno;
        r = read_full_fd(fd, SPOOL_FILE_MAX, &data, &size);
        close(fd);
        if (r < 0)
                return r;
        *ret_seq = seq;
        *ret_data = data;
        *ret_size = size;
        return 0;
}

static ssize_t find(Spool *s, uint64_t seq) {
        for (size_t i = 0; i < s->n; i++)
                if (s->entries[i].seq == seq)
                        return (ssize_t) i;
        return -1;
}

int spool_remove(Spool *s, uint64_t seq) {
        char name[32];
        ssize_t i;

        name_of(seq, name);
        pthread_mutex_lock(&s->lock);
        i = find(s, seq);
        if (i >= 0) {
                (void) unlinkat(s->dir_fd, name, 0);
                remove_index(s, (size_t) i);
                s->stats.sent++;
        }
        pthread_mutex_unlock(&s->lock);
        return i >= 0 ? 0 : -ENOENT;
}

int spool_reject(Spool *s, uint64_t seq) {
        ssize_t i;
        int r = -ENOENT;

        pthread_mutex_lock(&s->lock);
        i = find(s, seq);
        if (i >= 0) {
                r = move_to(s, seq, "rejected");
                remove_index(s, (size_t) i);
                s->stats.rejected++;
        }
        pthread_mutex_unlock(&s->lock);
        return r;
}

void spool_stats(Spool *s, SpoolStats *ret) {
        pthread_mutex_lock(&s->lock);
        *ret = s->stats;
        ret->queued = s->n;
        ret->queued_bytes = s->bytes;
        pthread_mutex_unlock(&s->lock);
}

int gzip_buffer(const void *in, size_t n, void **ret, size_t *ret_size) {
        z_stream z = {};
        size_t cap = compressBound((uLong) n) + 64;
        unsigned char *out;
        int r;

        out = malloc(cap);
        if (!out)
                return -ENOMEM;
        /* windowBits 15 + 16: a gzip wrapper, as Content-Encoding: gzip wants */
        if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
                free(out);
                return -ENOMEM;
        }
        z.next_in = (unsigned char *) in;
        z.avail_in = (uInt) n;
        z.next_out = out;
        z.avail_out = (uInt) cap;
        r = deflate(&z, Z_FINISH);
        deflateEnd(&z);
        if (r != Z_STREAM_END) {
                free(out);
                return -EIO;
        }
        *ret = out;
        *ret_size = z.total_out;
        return 0;
}
