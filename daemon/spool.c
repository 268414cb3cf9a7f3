/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
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
        int lock_fd;            /* flock()ed for the spool's life */
        char id[LMK_BATCH_SPOOL_ID_LEN + 1];
        bool id_saved;          /* in "id"; else written before the next number */
        size_t max_bytes;
        uint64_t next_seq;
        Entry *entries;         /* sorted by seq */
        size_t n, alloc;
        uint64_t bytes;
        SpoolStats stats;
        SpoolCorrupt *corrupt;  /* set aside, not yet taken by spool_take_corrupt() */
        size_t n_corrupt, alloc_corrupt;
};

/* A batch's name: exactly 20 digits and ".json.gz". */
static int parse_name(const char *name, uint64_t *ret) {
        char digits[32];
        size_t len = strlen(name);

        if (len != 20 + 8 || strcmp(name + 20, ".json.gz") != 0)
                return -EINVAL;
        for (size_t i = 0; i < 20; i++)
                if (name[i] < '0' || name[i] > '9')
                        return -EINVAL;
        memcpy(digits, name, 20);
        digits[20] = '\0';
        return safe_atou64(digits, 10, ret);
}

/* The temporary names lmkd writes (write_tmp()): "<name>.tmp" of its state
 * files, its start-up probe and its batches. Nothing else is ever deleted as
 * a leftover: the spool is a directory an admin may look into and leave a
 * note in. */
static bool is_own_temp_name(const char *name) {
        size_t len = strlen(name);
        char base[32];
        uint64_t seq;

        if (len <= 4 || len - 4 >= sizeof(base) || !streq(name + len - 4, ".tmp"))
                return false;
        memcpy(base, name, len - 4);
        base[len - 4] = '\0';
        return streq(base, "seq") || streq(base, "id") || streq(base, "probe") || parse_name(base, &seq) >= 0;
}

_printf_(3, 4)
static int say(char **ret_error, int r, const char *fmt, ...) {
        va_list ap;

        if (!ret_error)
                return r;
        va_start(ap, fmt);
        if (vasprintf(ret_error, fmt, ap) < 0)
                *ret_error = NULL;
        va_end(ap);
        return r;
}

static void name_of(uint64_t seq, char buf[32]) {
        snprintf(buf, 32, "%020" PRIu64 ".json.gz", seq);
}

static int entry_cmp(const void *a, const void *b) {
        const Entry *x = a, *y = b;
        return CMP(x->seq, y->seq);
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
        _cleanup_close_ int fd = -EBADF;
        char name[32];

        name_of(seq, name);
        (void) mkdirat(s->dir_fd, subdir, 0700);
        fd = openat(s->dir_fd, subdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (renameat(s->dir_fd, name, fd, name) < 0)
                return -errno;
        return 0;
}

/* A leftover of lmkd's own: a regular file of lmkd's user by a name it
 * writes. A FIFO, a symlink or another user's file by such a name stays. */
static void remove_own_temp(Spool *s, const char *name) {
        struct stat st;

        if (!is_own_temp_name(name) || fstatat(s->dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            !S_ISREG(st.st_mode) || st.st_uid != geteuid())
                return;
        (void) unlinkat(s->dir_fd, name, 0);
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

/* Writes data to "<name>.tmp", created afresh (never a file already there),
 * and fsyncs it. */
static int write_tmp(Spool *s, const char *name, const void *data, size_t size, char tmp[static 64]) {
        int fd, r;

        snprintf(tmp, 64, "%s.tmp", name);
        fd = openat(s->dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0 && errno == EEXIST) {
                /* left by a write that failed and could not clean up */
                remove_own_temp(s, tmp);
                fd = openat(s->dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        }
        if (fd < 0)
                return -errno;
        r = loop_write(fd, data, size);
        if (r >= 0 && fsync(fd) < 0)
                r = -errno;
        close(fd);
        if (r < 0)
                (void) unlinkat(s->dir_fd, tmp, 0);
        return r;
}

static int write_at(Spool *s, const char *name, const void *data, size_t size) {
        char tmp[64];
        int r;

        r = write_tmp(s, name, data, size, tmp);
        if (r < 0)
                return r;
        if (renameat(s->dir_fd, tmp, s->dir_fd, name) < 0)
                r = -errno;
        if (r >= 0 && fsync(s->dir_fd) < 0)
                r = -errno;
        if (r < 0)
                (void) unlinkat(s->dir_fd, tmp, 0);
        return r;
}

static void drop_oldest(Spool *s) {
        char name[32];

        name_of(s->entries[0].seq, name);
        (void) unlinkat(s->dir_fd, name, 0);
        remove_index(s, 0);
        s->stats.dropped++;
}

/* A full file system takes the oldest batches for room: sampling goes on,
 * and what is dropped is counted. */
static int write_room(Spool *s, const char *name, const void *data, size_t size) {
        for (;;) {
                int r = write_at(s, name, data, size);

                if ((r != -ENOSPC && r != -EDQUOT) || s->n == 0)
                        return r;
                drop_oldest(s);
                s->stats.dropped_for_space++;
        }
}

/* One of lmkd's small state files ("seq", "id"), or NULL when absent. A
 * symlink or anything but a regular file by that name is not lmkd's. */
static int read_state_file(Spool *s, const char *name, char **ret, char **ret_error) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        int r;

        *ret = NULL;
        fd = openat(s->dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT)
                return 0;
        if (fd < 0 && errno != ELOOP)
                return say(ret_error, -errno, "Failed to read %s/%s: %s", s->dir, name, strerror(errno));
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return say(ret_error, -EBADMSG, "%s/%s is not a file lmkd wrote (%s); lmkd replaces only its own "
                           "files: move it away.", s->dir, name, fd < 0 ? "a symlink" : "not a regular file");
        r = read_full_fd(fd, 64, ret, NULL);
        if (r == -EFBIG)
                return 0; /* damaged: as if absent */
        if (r < 0)
                return say(ret_error, r, "Failed to read %s/%s: %s", s->dir, name, strerror(-r));
        (*ret)[strcspn(*ret, "\n")] = '\0';
        return 0;
}

static bool id_valid(const char *id) {
        if (strlen(id) != LMK_BATCH_SPOOL_ID_LEN)
                return false;
        for (size_t i = 0; i < LMK_BATCH_SPOOL_ID_LEN; i++)
                if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
                        return false;
        return true;
}

/* The next number from "seq", and the id the numbers belong to. Where the
 * numbering is not known ("seq" absent or damaged: a new spool, one an
 * older lmkd made, or one an admin emptied), the spool gets a new id, so that
 * numbers it uses again never meet the old ones at the store. */
static int read_state(Spool *s, char **ret_error) {
        _cleanup_free_ char *seq = NULL, *id = NULL;
        unsigned char raw[LMK_BATCH_SPOOL_ID_LEN / 2];
        char line[LMK_BATCH_SPOOL_ID_LEN + 2];
        uint64_t v;
        int r;

        r = read_state_file(s, "seq", &seq, ret_error);
        if (r < 0)
                return r;
        r = read_state_file(s, "id", &id, ret_error);
        if (r < 0)
                return r;
        if (seq && safe_atou64(seq, 10, &v) >= 0 && id && id_valid(id)) {
                s->next_seq = MAX(s->next_seq, v);
                memcpy(s->id, id, sizeof(s->id));
                s->id_saved = true;
                return 0;
        }
        if (getrandom(raw, sizeof(raw), 0) != (ssize_t) sizeof(raw))
                return say(ret_error, -EIO, "Failed to draw a spool id: %s", strerror(errno));
        for (size_t i = 0; i < sizeof(raw); i++)
                snprintf(s->id + 2 * i, 3, "%02x", raw[i]);
        if (seq && safe_atou64(seq, 10, &v) >= 0)
                s->next_seq = MAX(s->next_seq, v);
        snprintf(line, sizeof(line), "%s\n", s->id);
        r = write_room(s, "id", line, strlen(line));
        if (r == -ENOSPC || r == -EDQUOT)
                return 0; /* written before the first batch number */
        if (r < 0)
                return say(ret_error, r, "Failed to write %s/id: %s", s->dir, strerror(-r));
        s->id_saved = true;
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

                if (is_own_temp_name(de->d_name)) {
                        /* a write that never finished */
                        remove_own_temp(s, de->d_name);
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

/* One process at a time: two would hand out the same numbers. The lock file
 * names the holder's pid for the one refused. It is held open read-only: a
 * file open for writing would keep the file system from being remounted
 * read-only. */
static int lock_spool(Spool *s, char **ret_error) {
        _cleanup_close_ int fd = -EBADF, w = -EBADF;
        char buf[32];
        struct stat st;
        uint32_t pid;
        ssize_t n;

        fd = openat(s->dir_fd, "lock", O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
        if (fd < 0 && errno == ELOOP)
                return say(ret_error, -EBADMSG, "%s/lock is a symlink, not lmkd's lock file: move it away.", s->dir);
        if (fd < 0)
                return say(ret_error, -errno, "Failed to open the lock file of spool %s: %s (lmkd needs the spool "
                           "writable)", s->dir, strerror(errno));
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return say(ret_error, -EBADMSG, "%s/lock is not a regular file, not lmkd's lock file: move it away.",
                           s->dir);
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                if (errno != EWOULDBLOCK)
                        return say(ret_error, -errno, "Failed to lock spool %s: %s", s->dir, strerror(errno));
                n = pread(fd, buf, sizeof(buf) - 1, 0);
                buf[MAX(n, (ssize_t) 0)] = '\0';
                buf[strcspn(buf, "\n")] = '\0';
                if (safe_atou32(buf, &pid) >= 0 && pid > 0)
                        return say(ret_error, -EBUSY, "Spool %s is in use by pid %" PRIu32 ": one lmkd per spool, "
                                   "or they hand out the same batch numbers. Stop it, or give this one another "
                                   "--spool.", s->dir, pid);
                return say(ret_error, -EBUSY, "Spool %s is in use by another process: one lmkd per spool, or they "
                           "hand out the same batch numbers.", s->dir);
        }
        /* the lock holds without it (a read-only spool is refused later);
         * the pid only helps the next one say who holds it */
        w = openat(s->dir_fd, "lock", O_WRONLY | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        n = snprintf(buf, sizeof(buf), "%d\n", (int) getpid());
        if (w >= 0 && write(w, buf, (size_t) n) != n)
                (void) ftruncate(w, 0);
        s->lock_fd = TAKE_FD(fd);
        return 0;
}

/* A spool lmkd cannot write loses every interval: better said at start.
 * A full file system is not refused, it frees up as batches leave. */
static int probe(Spool *s, char **ret_error) {
        char tmp[64];
        int r;

        r = write_tmp(s, "probe", "lmkd\n", 5, tmp);
        if (r == -ENOSPC || r == -EDQUOT)
                return 0;
        if (r == -EEXIST)
                return say(ret_error, r, "%s/%s is in the way of lmkd's start-up probe and is not a file lmkd "
                           "wrote (not a regular file of lmkd's user): move it away.", s->dir, tmp);
        if (r < 0)
                return say(ret_error, r, "Spool %s cannot be written (%s): lmkd keeps its batches there. Make it "
                           "writable for lmkd's user, or give another --spool.", s->dir, strerror(-r));
        (void) unlinkat(s->dir_fd, tmp, 0);
        return 0;
}

int spool_open(const char *dir, size_t max_bytes, Spool **ret, char **ret_error) {
        _cleanup_(spool_freep) Spool *s = NULL;
        struct stat st;
        int r;

        if (ret_error)
                *ret_error = NULL;
        if (mkdir(dir, 0700) < 0 && errno != EEXIST)
                return say(ret_error, -errno, "Failed to create spool directory %s: %s", dir, strerror(errno));
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        pthread_mutex_init(&s->lock, NULL);
        s->lock_fd = -EBADF;
        s->max_bytes = max_bytes;
        s->dir = strdup(dir);
        if (!s->dir)
                return -ENOMEM;
        /* the directory itself, never where a symlink points: lmkd deletes
         * and replaces files there */
        s->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (s->dir_fd < 0) {
                r = -errno;
                /* O_DIRECTORY answers ENOTDIR for a symlink, even to a directory */
                if ((r == -ELOOP || r == -ENOTDIR) && lstat(dir, &st) == 0 && S_ISLNK(st.st_mode))
                        return say(ret_error, -ELOOP, "Spool %s is a symlink: give lmkd the directory itself "
                                   "(--spool, [store] spool).", dir);
                if (r == -ENOTDIR)
                        return say(ret_error, r, "Spool %s is not a directory.", dir);
                return say(ret_error, r, "Failed to open spool directory %s: %s", dir, strerror(-r));
        }
        if (fstat(s->dir_fd, &st) < 0)
                return say(ret_error, -errno, "Failed to inspect spool directory %s: %s", dir, strerror(errno));
        if (st.st_uid != geteuid())
                return say(ret_error, -EPERM, "Spool %s is owned by uid %u, not by lmkd's user (uid %u): the spool "
                           "is lmkd's alone. Give lmkd a directory of its own.", dir, (unsigned) st.st_uid,
                           (unsigned) geteuid());
        if (st.st_mode & (S_IWGRP | S_IWOTH))
                return say(ret_error, -EPERM, "Spool %s is writable by %s (mode %04o): the spool is lmkd's alone "
                           "(chmod 700 %s).", dir, st.st_mode & S_IWOTH ? "others" : "its group",
                           (unsigned) (st.st_mode & 07777), dir);
        r = lock_spool(s, ret_error);
        if (r < 0)
                return r;
        r = probe(s, ret_error);
        if (r < 0)
                return r;
        r = scan(s);
        if (r < 0)
                return say(ret_error, r, "Failed to read spool directory %s: %s", dir, strerror(-r));
        /* after the scan: it cleared what writes that never finished left */
        r = read_state(s, ret_error);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(s);
        return 0;
}

Spool *spool_free(Spool *s) {
        if (!s)
                return NULL;
        safe_close(s->dir_fd);
        safe_close(s->lock_fd);
        pthread_mutex_destroy(&s->lock);
        free(s->entries);
        free(s->corrupt);
        free(s->dir);
        free(s);
        return NULL;
}

const char *spool_id(const Spool *s) {
        return s->id;
}

int spool_next_seq(Spool *s, uint64_t *ret) {
        char buf[LMK_BATCH_SPOOL_ID_LEN + 2];
        uint64_t seq;
        int r = 0;

        pthread_mutex_lock(&s->lock);
        /* the id the numbers belong to is on disk before a number is */
        if (!s->id_saved) {
                snprintf(buf, sizeof(buf), "%s\n", s->id);
                r = write_room(s, "id", buf, strlen(buf));
                s->id_saved = r >= 0;
        }
        seq = s->next_seq;
        if (r >= 0) {
                snprintf(buf, sizeof(buf), "%" PRIu64 "\n", seq + 1);
                r = write_room(s, "seq", buf, strlen(buf));
        }
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
        r = write_room(s, name, data, size);
        if (r >= 0) {
                r = add_entry(s, seq, size);
                if (r >= 0)
                        qsort(s->entries, s->n, sizeof(Entry), entry_cmp);
                s->stats.spooled++;
                /* stay within the bound, oldest first, but keep the newest */
                while (r >= 0 && s->bytes > s->max_bytes && s->n > 1)
                        drop_oldest(s);
        }
        pthread_mutex_unlock(&s->lock);
        return r;
}

/* A batch that cannot be read is set aside (and said, as a damaged one is),
 * so that the batches behind it still leave; one that vanished counts as
 * dropped. */
static void unreadable(Spool *s, uint64_t seq, int error) {
        char why[sizeof(((SpoolCorrupt *) NULL)->reason)];

        pthread_mutex_lock(&s->lock);
        if (s->n > 0 && s->entries[0].seq == seq) {
                remove_index(s, 0);
                if (error == -ENOENT)
                        s->stats.dropped++;
                else {
                        snprintf(why, sizeof(why), "unreadable: %s", strerror(-error));
                        (void) move_to(s, seq, "corrupt");
                        (void) note_corrupt(s, seq, why);
                }
        }
        pthread_mutex_unlock(&s->lock);
}

int spool_oldest(Spool *s, uint64_t *ret_seq, void **ret_data, size_t *ret_size) {
        for (;;) {
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
                fd = openat(s->dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
                pthread_mutex_unlock(&s->lock);
                if (fd < 0)
                        r = -errno;
                else {
                        r = read_full_fd(fd, SPOOL_FILE_MAX, &data, &size);
                        close(fd);
                }
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        unreadable(s, seq, r);
                        continue;
                }
                *ret_seq = seq;
                *ret_data = data;
                *ret_size = size;
                return 0;
        }
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
