/* SPDX-License-Identifier: GPL-2.0-or-later */
/* RPM packages (RHEL, Rocky, SUSE): the node's own rpm program lists the
 * installed packages and their files in a fixed format. rpm, not librpm:
 * the database's format changed three times (Berkeley DB, ndb, SQLite)
 * and only the rpm of the node reads its database for sure; lmkd links
 * nothing new for it. rpm runs without a shell, with a fixed argument
 * list, an empty environment, a time limit and a bound on its output, at
 * the scan thread's idle priority (inherited). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "util.h"

/* rpm -qa on a node with 3,000 packages takes a few seconds and writes
 * about 30 MB (one line per file). */
#define RPM_TIMEOUT_MS (300 * 1000)
#define RPM_OUTPUT_MAX (1ULL << 30)
#define RPM_READ_CHUNK (64U << 10)
#define RPM_ERROR_MAX 256

static const char *const rpm_programs[] = { "/usr/bin/rpm", "/bin/rpm" };
/* Files only an RPM database folder holds (SQLite, ndb, Berkeley DB):
 * rpm creates a new database where there is none. */
static const char *const rpm_db_files[] = { "rpmdb.sqlite", "Packages.db", "Packages" };
/* Where rpm keeps its database, below the root it installs into. */
static const char *const rpm_db_suffixes[] = { "/var/lib/rpm", "/usr/lib/sysimage/rpm" };

#define ALNUM "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

static bool chars_ok(const char *s, size_t n, size_t max, const char *allowed) {
        return n > 0 && n <= max && strspn(s, allowed) == n;
}

void rpm_query_init(RpmQuery *q, rpm_package_func package, rpm_file_func file, void *userdata) {
        *q = (RpmQuery) { .package = package, .file = file, .userdata = userdata };
}

static void query_bad(RpmQuery *q, const char *why) {
        q->malformed++;
        if (!q->first_bad) {
                q->first_bad = why;
                q->first_bad_line = q->lines.line;
        }
}

/* Splits line at tabs into exactly n fields (the last runs to the end). */
static bool split_tabs(char *line, char **fields, size_t n) {
        for (size_t i = 0; i < n; i++) {
                char *tab = i + 1 < n ? strchr(line, '\t') : NULL;

                if (i + 1 < n && !tab)
                        return false;
                fields[i] = line;
                if (tab) {
                        *tab = '\0';
                        line = tab + 1;
                }
        }
        return true;
}

static int package_line(RpmQuery *q, char *line) {
        char *f[5];
        uint64_t size;
        RpmEntry e;

        q->in_package = false;
        if (!split_tabs(line, f, 5) || strchr(f[4], '\t')) {
                query_bad(q, "a package line that is not five fields");
                return 0;
        }
        /* gpg-pubkey and the like: keys, no files */
        if (streq(f[3], "(none)")) {
                q->pseudo++;
                return 0;
        }
        if (!chars_ok(f[1], strlen(f[1]), RPM_NAME_MAX, ALNUM "._+-~^"))
                query_bad(q, "a package NAME rpm does not allow");
        else if (!chars_ok(f[2], strlen(f[2]), RPM_VERSION_MAX, ALNUM "._+~^:-") || !strchr(f[2], '-'))
                query_bad(q, "a VERSION-RELEASE rpm does not allow");
        else if (!chars_ok(f[3], strlen(f[3]), RPM_ARCH_MAX, ALNUM "_"))
                query_bad(q, "an ARCH rpm does not allow");
        else if (!chars_ok(f[4], strlen(f[4]), 20, "0123456789") || safe_atou64(f[4], 10, &size) < 0)
                query_bad(q, "a SIZE that is no number");
        else {
                e = (RpmEntry) { .name = f[1], .version = f[2], .arch = f[3], .size = size };
                q->packages++;
                q->in_package = true;
                return q->package ? q->package(&e, q->userdata) : 0;
        }
        return 0;
}

static int file_line(RpmQuery *q, char *line, size_t n) {
        char *f[3];
        uint64_t mode;

        if (!split_tabs(line, f, 3) || !chars_ok(f[1], strlen(f[1]), 7, "01234567") ||
            safe_atou64(f[1], 8, &mode) < 0 || f[2][0] != '/') {
                query_bad(q, "a file line that is not MODE and an absolute path");
                return 0;
        }
        if (!q->in_package)
                return 0;
        q->files++;
        return q->file ? q->file((unsigned) mode, f[2], n - (size_t) (f[2] - line), q->userdata) : 0;
}

static int query_line(void *userdata, const char *text, size_t n, bool cut) {
        RpmQuery *q = userdata;
        char *line = (char *) text;     /* inventory_lines_feed's own buffer */

        if (cut || memchr(line, '\0', n)) {
                query_bad(q, cut ? "a line longer than 4 KiB" : "a NUL byte");
                /* a package's line cut: its files are not its */
                if (n >= 2 && line[0] == 'P' && line[1] == '\t')
                        q->in_package = false;
                return 0;
        }
        if (n >= 2 && line[0] == 'P' && line[1] == '\t')
                return package_line(q, line);
        if (n >= 2 && line[0] == 'F' && line[1] == '\t')
                return file_line(q, line, n);
        query_bad(q, "a line that is neither a package nor a file");
        return 0;
}

int rpm_query_feed(RpmQuery *q, const char *data, size_t n) {
        return inventory_lines_feed(&q->lines, data, n, query_line, q);
}

int rpm_query_finish(RpmQuery *q) {
        if (q->lines.n > 0 || q->lines.cut)
                q->truncated = true;
        q->lines.n = 0;
        q->lines.cut = false;
        return 0;
}

typedef struct RpmScan {
        Scan *scan;
        const char *root;       /* what file names are below, "" for / */
        size_t package;
        ListedDir cache;
        RpmQuery query;
        char path[PATH_MAX];
} RpmScan;

static int rpm_package(const RpmEntry *e, void *userdata) {
        RpmScan *r = userdata;

        r->cache.dir[0] = '\0';
        return scan_add_package(r->scan, INVENTORY_RPM, e->name, e->version, e->arch, NULL, NULL, e->size,
                                &r->package);
}

static int rpm_file(unsigned mode, const char *path, size_t n, void *userdata) {
        RpmScan *r = userdata;
        int len;

        (void) n;
        /* folders and the like: only files and the links to them count */
        if (!S_ISREG(mode) && !S_ISLNK(mode))
                return 0;
        len = snprintf(r->path, sizeof(r->path), "%s%s", r->root, path);
        if (len < 0 || len >= (int) sizeof(r->path))
                return 0;
        return inventory_claim_listed(r->scan, r->package, r->path, (size_t) len, &r->cache);
}

static const char *find_rpm(void) {
        for (size_t i = 0; i < ELEMENTSOF(rpm_programs); i++)
                if (access(rpm_programs[i], X_OK) == 0)
                        return rpm_programs[i];
        return NULL;
}

static bool has_db(int dir_fd) {
        struct stat st;

        for (size_t i = 0; i < ELEMENTSOF(rpm_db_files); i++)
                if (fstatat(dir_fd, rpm_db_files[i], &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
                        return true;
        return false;
}

/* The root the database's file names are below: ROOT for ROOT/var/lib/rpm
 * or ROOT/usr/lib/sysimage/rpm (a node image), else "" (/). */
static void db_root(const char *dbpath, char *ret, size_t size) {
        size_t n = strlen(dbpath);

        while (n > 1 && dbpath[n - 1] == '/')
                n--;
        ret[0] = '\0';
        for (size_t i = 0; i < ELEMENTSOF(rpm_db_suffixes); i++) {
                size_t k = strlen(rpm_db_suffixes[i]);

                if (n > k && n - k < size && strncmp(dbpath + n - k, rpm_db_suffixes[i], k) == 0) {
                        memcpy(ret, dbpath, n - k);
                        ret[n - k] = '\0';
                        return;
                }
        }
}

static int64_t now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

typedef struct RpmRun {
        pid_t pid;
        int out, err;
        char error[RPM_ERROR_MAX + 1];  /* rpm's first words on stderr */
        size_t n_error;
        bool timed_out, too_big;
        int status;
} RpmRun;

static int spawn_rpm(const char *program, const char *dbpath, RpmRun *run) {
        char *argv[] = { (char *) "rpm", (char *) "-qa", (char *) "--dbpath", (char *) dbpath,
                         (char *) "--qf", (char *) RPM_QUERY_FORMAT, NULL };
        /* nothing of lmkd's environment: no ~/.rpmmacros, no locale */
        char *envp[] = { (char *) "LC_ALL=C", (char *) "PATH=/usr/bin:/bin", NULL };
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t attr;
        int out[2] = { -EBADF, -EBADF }, err[2] = { -EBADF, -EBADF };
        sigset_t none, all;
        int r;

        if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
                r = negative_errno();
                safe_close(out[0]);
                safe_close(out[1]);
                return r;
        }
        sigemptyset(&none);
        sigfillset(&all);
        posix_spawn_file_actions_init(&fa);
        posix_spawnattr_init(&attr);
        /* lmkd blocks SIGTERM and SIGINT for its signalfd: rpm must not */
        posix_spawnattr_setsigmask(&attr, &none);
        posix_spawnattr_setsigdefault(&attr, &all);
        posix_spawnattr_setpgroup(&attr, 0);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
        posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
        posix_spawn_file_actions_adddup2(&fa, err[1], STDERR_FILENO);
        r = -posix_spawn(&run->pid, program, &fa, &attr, argv, envp);
        posix_spawn_file_actions_destroy(&fa);
        posix_spawnattr_destroy(&attr);
        safe_close(out[1]);
        safe_close(err[1]);
        if (r < 0) {
                safe_close(out[0]);
                safe_close(err[0]);
                return r;
        }
        run->out = out[0];
        run->err = err[0];
        return 0;
}

/* Reads rpm's output into the parser until it ends, the time is up or
 * the output is too big; then reaps rpm. -ENOMEM only. */
static int read_rpm(RpmRun *run, RpmQuery *q) {
        _cleanup_free_ char *buf = malloc(RPM_READ_CHUNK);
        int64_t deadline = now_ms() + RPM_TIMEOUT_MS;
        uint64_t total = 0;
        int r = 0;

        if (!buf)
                r = -ENOMEM;
        while (r >= 0 && (run->out >= 0 || run->err >= 0)) {
                struct pollfd p[2] = { { .fd = run->out, .events = POLLIN }, { .fd = run->err, .events = POLLIN } };
                int64_t left = deadline - now_ms();
                ssize_t n;

                if (left <= 0) {
                        run->timed_out = true;
                        break;
                }
                if (poll(p, 2, (int) MIN(left, (int64_t) INT_MAX)) < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                if (p[0].revents) {
                        n = read(run->out, buf, RPM_READ_CHUNK);
                        if (n < 0 && (errno == EINTR || errno == EAGAIN))
                                continue;
                        if (n <= 0) {
                                run->out = safe_close(run->out);
                        } else if ((total += (uint64_t) n) > RPM_OUTPUT_MAX) {
                                run->too_big = true;
                                break;
                        } else
                                r = rpm_query_feed(q, buf, (size_t) n);
                }
                if (p[1].revents) {
                        char e[512];

                        n = read(run->err, e, sizeof(e));
                        if (n < 0 && (errno == EINTR || errno == EAGAIN))
                                continue;
                        if (n <= 0)
                                run->err = safe_close(run->err);
                        else {
                                size_t k = MIN((size_t) n, RPM_ERROR_MAX - run->n_error);

                                memcpy(run->error + run->n_error, e, k);
                                run->n_error += k;
                        }
                }
        }
        if (run->out >= 0 || run->err >= 0)
                (void) kill(-run->pid, SIGKILL);
        run->out = safe_close(run->out);
        run->err = safe_close(run->err);
        while (waitpid(run->pid, &run->status, 0) < 0 && errno == EINTR)
                ;
        run->error[run->n_error] = '\0';
        return r;
}

/* rpm's first line on stderr, printable, for a message */
static const char *first_line(char *s) {
        s[strcspn(s, "\n")] = '\0';
        for (char *p = s; *p; p++)
                if ((unsigned char) *p < 0x20 || *p == 0x7f)
                        *p = '?';
        return s[0] ? s : "(nothing on stderr)";
}

int inventory_scan_rpm(Scan *s, const char *dbpath, bool configured) {
        _cleanup_free_ RpmScan *d = NULL;
        _cleanup_close_ int fd = -EBADF;
        char real[PATH_MAX], root[PATH_MAX];
        RpmRun run = { .out = -EBADF, .err = -EBADF };
        const char *program;
        RpmQuery *q;
        int r;

        r = inventory_open_root(s, INVENTORY_RPM, dbpath, configured, real, &fd);
        if (r < 0 || fd < 0)
                return r;
        if (!has_db(fd))
                return configured ? scan_problem(s, "rpm: %s holds no RPM database (rpmdb.sqlite, Packages.db, Packages)",
                                                 dbpath)
                                  : 0;
        program = find_rpm();
        if (!program)
                return scan_problem(s, "rpm: %s is an RPM database, but there is no rpm program (/usr/bin/rpm) to read it",
                                    dbpath);
        db_root(dbpath, root, sizeof(root));

        d = calloc(1, sizeof(*d));
        if (!d)
                return -ENOMEM;
        d->scan = s;
        d->root = root;
        q = &d->query;
        rpm_query_init(q, rpm_package, rpm_file, d);

        r = spawn_rpm(program, real, &run);
        if (r < 0)
                return scan_problem(s, "rpm: cannot run %s for %s: %s", program, dbpath, strerror(-r));
        r = read_rpm(&run, q);
        if (r == -ENOMEM || r == -ENOSPC)
                return r == -ENOMEM ? r : 0;
        if (r >= 0)
                r = rpm_query_finish(q);
        if (run.timed_out || run.too_big)
                r = scan_problem(s, "rpm: %s -qa --dbpath %s %s: stopped, the packages after that are left out",
                                 program, real, run.timed_out ? "took more than 300 s" : "wrote more than 1 GiB");
        else if (!WIFEXITED(run.status) || WEXITSTATUS(run.status) != 0)
                r = scan_problem(s, "rpm: %s -qa --dbpath %s failed (%s %d): %s", program, real,
                                 WIFEXITED(run.status) ? "exit status" : "signal",
                                 WIFEXITED(run.status) ? WEXITSTATUS(run.status) : WTERMSIG(run.status),
                                 first_line(run.error));
        else if (q->truncated)
                r = scan_problem(s, "rpm: the list of %s ends inside a line: that file is left out", dbpath);
        if (r < 0)
                return r;
        if (q->malformed > 0)
                return scan_problem(s, "rpm: %s: %zu lines of rpm's list left out, the first at line %" PRIu64 ": %s",
                                    dbpath, q->malformed, q->first_bad_line, q->first_bad);
        return 0;
}
