/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Debian packages: dpkg's status file (which packages are installed, their
 * version, architecture and size) and info/PACKAGE[:ARCH].list (their
 * files). Both are read in pieces, never whole: status is tens of MB on a
 * big node. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "util.h"

/* A status file of 100,000 packages is about 300 MB; the biggest .list
 * files (kernel headers, TeX Live) are a few MB. */
#define DPKG_STATUS_MAX (512ULL << 20)
#define DPKG_LIST_MAX (64ULL << 20)
#define DPKG_READ_CHUNK (64U << 10)

enum {
        FIELD_PACKAGE = 1 << 0,
        FIELD_VERSION = 1 << 1,
        FIELD_ARCH = 1 << 2,
        FIELD_STATUS = 1 << 3,
        FIELD_SIZE = 1 << 4,
};

int inventory_lines_feed(DpkgLines *l, const char *data, size_t n, inventory_line_func func, void *userdata) {
        while (n > 0) {
                const char *nl = memchr(data, '\n', n);
                size_t len = nl ? (size_t) (nl - data) : n, copy = len;
                int r;

                if (copy > DPKG_LINE_MAX - l->n) {
                        copy = DPKG_LINE_MAX - l->n;
                        l->cut = true;
                }
                memcpy(l->buf + l->n, data, copy);
                l->n += copy;
                if (!nl)
                        return 0;
                l->buf[l->n] = '\0';
                l->line++;
                r = func(userdata, l->buf, l->n, l->cut);
                l->n = 0;
                l->cut = false;
                if (r < 0)
                        return r;
                data = nl + 1;
                n -= len + 1;
        }
        return 0;
}

static bool chars_in(const char *s, const char *first, const char *rest) {
        return s[0] && strchr(first, s[0]) && strspn(s + 1, rest) == strlen(s + 1);
}

#define LOWER_DIGITS "abcdefghijklmnopqrstuvwxyz0123456789"
#define ALNUM "ABCDEFGHIJKLMNOPQRSTUVWXYZ" LOWER_DIGITS

/* Debian Policy 5.6.7 and 5.6.12: a name is [a-z0-9][a-z0-9+.-]+, a version
 * [epoch:]upstream[-revision] of alphanumerics and . + ~ - : (dpkg only
 * warns when it starts with a letter). The name becomes part of a path
 * below info/, so nothing else may pass. */
bool dpkg_name_is_valid(const char *s) {
        return strlen(s) >= 2 && chars_in(s, LOWER_DIGITS, LOWER_DIGITS "+.-");
}

bool dpkg_version_is_valid(const char *s) {
        return chars_in(s, ALNUM, ALNUM ".+~-:");
}

bool dpkg_arch_is_valid(const char *s) {
        return chars_in(s, LOWER_DIGITS, LOWER_DIGITS "-");
}

void dpkg_status_init(DpkgStatus *p, dpkg_entry_func func, void *userdata) {
        *p = (DpkgStatus) { .func = func, .userdata = userdata };
}

static void entry_reset(DpkgStatus *p) {
        p->package[0] = p->version[0] = p->arch[0] = p->status[0] = p->size[0] = '\0';
        p->seen = 0;
        p->last_ours = false;
        p->bad = NULL;
        p->entry_line = 0;
}

static void entry_bad(DpkgStatus *p, const char *why) {
        if (!p->bad)
                p->bad = why;
}

/* "want flag status": installed when dpkg says ok and installed, whatever
 * the admin wants next (install, hold, deinstall, purge). */
static int status_installed(const char *s, bool *ret) {
        char want[16], flag[16], status[24], end;

        if (sscanf(s, "%15s %15s %23s %c", want, flag, status, &end) != 3)
                return -EINVAL;
        *ret = streq(flag, "ok") && streq(status, "installed");
        return 0;
}

static int entry_end(DpkgStatus *p) {
        uint64_t size = 0;
        bool installed = false;
        int r = 0;

        if (p->entry_line == 0)
                return 0;
        p->entries++;
        if (!(p->seen & FIELD_PACKAGE))
                entry_bad(p, "no Package field");
        else if (!dpkg_name_is_valid(p->package))
                entry_bad(p, "a Package name dpkg does not allow");
        if (!(p->seen & FIELD_STATUS))
                entry_bad(p, "no Status field");
        else if (status_installed(p->status, &installed) < 0)
                entry_bad(p, "a Status that is not three words");
        if (!p->bad && installed) {
                if (!(p->seen & FIELD_VERSION) || !dpkg_version_is_valid(p->version))
                        entry_bad(p, "no Version, or one dpkg does not allow");
                else if (!(p->seen & FIELD_ARCH) || !dpkg_arch_is_valid(p->arch))
                        entry_bad(p, "no Architecture, or one dpkg does not allow");
                else if ((p->seen & FIELD_SIZE) &&
                         (safe_atou64(p->size, 10, &size) < 0 || size > UINT64_MAX / 1024))
                        entry_bad(p, "an Installed-Size that is no number of KiB");
        }
        if (p->bad) {
                p->malformed++;
                if (!p->first_bad) {
                        p->first_bad = p->bad;
                        p->first_bad_line = p->entry_line;
                }
        } else if (installed) {
                DpkgEntry e = {
                        .package = p->package,
                        .version = p->version,
                        .arch = p->arch,
                        .installed_size = size * 1024,
                };

                p->installed++;
                r = p->func ? p->func(&e, p->userdata) : 0;
        }
        entry_reset(p);
        return r;
}

static const struct {
        const char *name;
        unsigned bit;
        size_t offset, size;
} fields[] = {
        { "Package", FIELD_PACKAGE, offsetof(DpkgStatus, package), DPKG_NAME_MAX + 1 },
        { "Version", FIELD_VERSION, offsetof(DpkgStatus, version), DPKG_VERSION_MAX + 1 },
        { "Architecture", FIELD_ARCH, offsetof(DpkgStatus, arch), DPKG_ARCH_MAX + 1 },
        { "Status", FIELD_STATUS, offsetof(DpkgStatus, status), sizeof(((DpkgStatus *) 0)->status) },
        { "Installed-Size", FIELD_SIZE, offsetof(DpkgStatus, size), sizeof(((DpkgStatus *) 0)->size) },
};

static int status_line(void *userdata, const char *line, size_t n, bool cut) {
        DpkgStatus *p = userdata;
        const char *colon, *v, *end;

        if (strspn(line, " \t\r") == n)
                return entry_end(p);
        if (p->entry_line == 0)
                p->entry_line = p->lines.line;
        if (line[0] == ' ' || line[0] == '\t') {
                /* a field's next line: none of the fields read has one */
                if (p->last_ours)
                        entry_bad(p, "a field read here continued on the next line");
                return 0;
        }
        p->last_ours = false;
        colon = memchr(line, ':', n);
        if (!colon || colon == line) {
                entry_bad(p, "a line that is no field (Name: value)");
                return 0;
        }
        for (size_t i = 0; i < ELEMENTSOF(fields); i++) {
                char *dst = (char *) p + fields[i].offset;
                size_t len;

                if (strlen(fields[i].name) != (size_t) (colon - line) ||
                    strncasecmp(line, fields[i].name, (size_t) (colon - line)) != 0)
                        continue;
                p->last_ours = true;
                if (p->seen & fields[i].bit) {
                        entry_bad(p, "a field given twice");
                        return 0;
                }
                p->seen |= fields[i].bit;
                if (cut || memchr(line, '\0', n)) {
                        entry_bad(p, "a field too long or with a NUL byte");
                        return 0;
                }
                for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
                        ;
                for (end = line + n; end > v && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'); end--)
                        ;
                len = (size_t) (end - v);
                if (len >= fields[i].size) {
                        entry_bad(p, "a field longer than dpkg allows here");
                        return 0;
                }
                memcpy(dst, v, len);
                dst[len] = '\0';
                return 0;
        }
        return 0;
}

int dpkg_status_feed(DpkgStatus *p, const char *data, size_t n) {
        return inventory_lines_feed(&p->lines, data, n, status_line, p);
}

int dpkg_status_finish(DpkgStatus *p) {
        if (p->lines.n > 0 || p->lines.cut) {
                p->truncated = p->entry_line != 0 || strspn(p->lines.buf, " \t\r") != p->lines.n;
                p->lines.n = 0;
                p->lines.cut = false;
                entry_reset(p);
                return 0;
        }
        return entry_end(p);
}

/* Reads a file in pieces, at most max bytes; -EFBIG after that. */
static int feed_file(int fd, uint64_t max, int (*feed)(void *userdata, const char *data, size_t n),
                     void *userdata) {
        _cleanup_free_ char *buf = malloc(DPKG_READ_CHUNK);
        uint64_t total = 0;

        if (!buf)
                return -ENOMEM;
        for (;;) {
                ssize_t n = read(fd, buf, DPKG_READ_CHUNK);
                int r;

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return negative_errno();
                if (n == 0)
                        return 0;
                if (total + (uint64_t) n > max)
                        return -EFBIG;
                total += (uint64_t) n;
                r = feed(userdata, buf, (size_t) n);
                if (r < 0)
                        return r;
        }
}

typedef struct DpkgScan {
        Scan *scan;
        const char *admindir;
        int info_fd;
        DpkgStatus status;
        size_t without_list;
        char first_without_list[DPKG_NAME_MAX + 1];
        /* the current list */
        DpkgLines lines;
        size_t package;
        ListedDir cache;
} DpkgScan;

int inventory_claim_listed(Scan *s, size_t p, const char *line, size_t n, ListedDir *cache) {
        char real[PATH_MAX];
        const char *base;
        size_t dir_len;
        struct stat st;
        bool lib;
        int r;

        if (n == 0 || line[0] != '/' || memchr(line, '\0', n) || n >= PATH_MAX)
                return 0;
        base = strrchr(line, '/') + 1;
        dir_len = (size_t) (base - line - 1);
        lib = inventory_name_is_library(base);
        if (!lib) {
                char dir[PATH_MAX];

                memcpy(dir, line, dir_len);
                dir[dir_len] = '\0';
                if (!inventory_dir_is_bin(dir))
                        return 0;
        }
        s->inv->stats.candidates++;
        if (fstatat(AT_FDCWD, line, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return 0;

        if (S_ISLNK(st.st_mode)) {
                /* an alternative or another name: the file it names */
                if (!realpath(line, real))
                        return 0;
                r = scan_claim(s, p, real, false);
                return r < 0 ? r : 0;
        }
        if (!S_ISREG(st.st_mode) || (!lib && !(st.st_mode & 0111)))
                return 0;
        /* the file itself, maybe below a symlinked folder (/lib → usr/lib):
         * lists name files folder by folder, so one realpath() per folder */
        if (dir_len == 0)
                cache->real_dir[0] = '\0';
        else if (strlen(cache->dir) != dir_len || strncmp(cache->dir, line, dir_len) != 0) {
                memcpy(cache->dir, line, dir_len);
                cache->dir[dir_len] = '\0';
                if (!realpath(cache->dir, cache->real_dir)) {
                        cache->dir[0] = '\0';
                        return 0;
                }
                if (streq(cache->real_dir, "/"))
                        cache->real_dir[0] = '\0';
        }
        if (snprintf(real, sizeof(real), "%s/%s", cache->real_dir, base) >= (int) sizeof(real))
                return 0;
        r = scan_claim(s, p, real, true);
        return r < 0 ? r : 0;
}

/* One line of a .list: a path the package installed. */
static int list_line(void *userdata, const char *line, size_t n, bool cut) {
        DpkgScan *d = userdata;

        if (cut)
                return 0;
        return inventory_claim_listed(d->scan, d->package, line, n, &d->cache);
}

static int list_feed(void *userdata, const char *data, size_t n) {
        DpkgScan *d = userdata;

        return inventory_lines_feed(&d->lines, data, n, list_line, d);
}

static int open_list(DpkgScan *d, const DpkgEntry *e) {
        char name[DPKG_NAME_MAX + DPKG_ARCH_MAX + 8];
        int fd;

        /* Multi-Arch: same packages have PACKAGE:ARCH.list, others PACKAGE.list */
        snprintf(name, sizeof(name), "%s:%s.list", e->package, e->arch);
        fd = openat(d->info_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0 && errno == ENOENT) {
                snprintf(name, sizeof(name), "%s.list", e->package);
                fd = openat(d->info_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        }
        return fd >= 0 ? fd : negative_errno();
}

static int status_entry(const DpkgEntry *e, void *userdata) {
        DpkgScan *d = userdata;
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        int r;

        r = scan_add_package(d->scan, INVENTORY_DEBIAN, e->package, e->version, e->arch, NULL, NULL,
                             e->installed_size, &d->package);
        if (r < 0)
                return r;
        fd = d->info_fd >= 0 ? open_list(d, e) : -ENOENT;
        if (fd == -ENOENT) {
                if (d->without_list++ == 0)
                        snprintf(d->first_without_list, sizeof(d->first_without_list), "%s", e->package);
                return 0;
        }
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return scan_problem(d->scan, "debian: %s/info: cannot read the file list of %s: %s",
                                    d->admindir, e->package, strerror(fd < 0 ? -fd : EINVAL));

        d->lines = (DpkgLines) {};
        d->cache.dir[0] = '\0';
        r = feed_file(fd, DPKG_LIST_MAX, list_feed, d);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return scan_problem(d->scan, "debian: %s/info: the file list of %s: %s",
                                    d->admindir, e->package,
                                    r == -EFBIG ? "larger than 64 MiB, read in part" : strerror(-r));
        return 0;
}

static int status_feed(void *userdata, const char *data, size_t n) {
        DpkgScan *d = userdata;

        return dpkg_status_feed(&d->status, data, n);
}

int inventory_scan_dpkg(Scan *s, const char *admindir, bool configured) {
        _cleanup_free_ DpkgScan *d = NULL;
        _cleanup_close_ int fd = -EBADF, info_fd = -EBADF;
        char path[PATH_MAX];
        struct stat st;
        int r;

        if (snprintf(path, sizeof(path), "%s/status", admindir) >= (int) sizeof(path))
                return scan_problem(s, "debian: %s: path too long", admindir);
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0 && errno == ENOENT && !configured)
                return 0;
        if (fd < 0)
                return scan_problem(s, "debian: cannot open %s: %m", path);
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return scan_problem(s, "debian: %s is no regular file", path);
        info_fd = open(admindir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (info_fd >= 0) {
                int dir = info_fd;

                info_fd = openat(dir, "info", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                safe_close(dir);
        }
        if (info_fd < 0 && (r = scan_problem(s, "debian: cannot open %s/info: %m; packages without files", admindir)) < 0)
                return r;

        d = calloc(1, sizeof(*d));
        if (!d)
                return -ENOMEM;
        d->scan = s;
        d->admindir = admindir;
        d->info_fd = info_fd;
        dpkg_status_init(&d->status, status_entry, d);

        r = feed_file(fd, DPKG_STATUS_MAX, status_feed, d);
        if (r == -ENOMEM)
                return r;
        if (r >= 0)
                r = dpkg_status_finish(&d->status);
        if (r == -ENOMEM)
                return r;
        if (r == -EFBIG)
                r = scan_problem(s, "debian: %s is larger than %llu MiB: the packages after that are left out",
                                 path, DPKG_STATUS_MAX >> 20);
        else if (r == -ENOSPC)
                r = 0;
        else if (r < 0)
                r = scan_problem(s, "debian: reading %s: %s", path, strerror(-r));
        else if (d->status.truncated)
                r = scan_problem(s, "debian: %s ends inside a package's entry (cut short?): that package is left out",
                                 path);
        if (r < 0)
                return r;
        if (d->status.malformed > 0 &&
            (r = scan_problem(s, "debian: %s: %zu entries left out, the first at line %" PRIu64 ": %s",
                              path, d->status.malformed, d->status.first_bad_line, d->status.first_bad)) < 0)
                return r;
        if (d->without_list > 0 &&
            (r = scan_problem(s, "debian: %zu installed packages have no file list in %s/info (the first: %s)",
                              d->without_list, admindir, d->first_without_list)) < 0)
                return r;
        return 0;
}
