/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Install prefixes: walking one (its size, its ELF files), and the two
 * layouts found by folder names alone, EasyBuild's installpath and plain
 * /opt trees. Spack's prefixes are found in spack.c.
 *
 * Below a root nothing is followed: folders are opened with O_NOFOLLOW
 * relative to their parent, so a symlink loop or a link to / in a user's
 * prefix is never walked, and the walk stays on the prefix's filesystem. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "util.h"

/* A big prefix (CUDA, a compiler, Intel oneAPI) holds 50,000-200,000
 * entries; more than this is something else, and the walk stops. */
#define WALK_ENTRIES_MAX 1000000
#define WALK_DEPTH_MAX 32
/* Folders looked through per EasyBuild or /opt root. */
#define LAYOUT_DIRS_MAX 100000

static const char *const elf_top[] = { "lib", "lib64", "bin", "sbin", "libexec" };

static bool is_elf_top(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(elf_top); i++)
                if (streq(name, elf_top[i]))
                        return true;
        return false;
}

static bool is_bin(const char *name) {
        return streq(name, "bin") || streq(name, "sbin") || streq(name, "libexec");
}

static bool is_dot(const char *name) {
        return streq(name, ".") || streq(name, "..");
}

int inventory_open_dir(int dir_fd, const char *name) {
        int fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

        return fd >= 0 ? fd : negative_errno();
}

bool inventory_has_dir(int dir_fd, const char *name) {
        struct stat st;

        return fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

bool inventory_dir_name_is_usable(const char *name) {
        if (name[0] == '.' || name[0] == '\0')
                return false;
        for (const unsigned char *p = (const unsigned char *) name; *p; p++)
                if (*p < 0x20 || *p == 0x7f)
                        return false;
        return true;
}

int inventory_open_root(Scan *s, InventoryManager m, const char *root, bool configured,
                        char *ret_real, int *ret_fd) {
        const char *source = inventory_manager_to_string(m);
        char real[PATH_MAX];
        int fd;

        *ret_fd = -EBADF;
        if (!realpath(root, real)) {
                if (errno == ENOENT && !configured)
                        return 0;
                return scan_problem(s, "%s: cannot find %s: %m", source, root);
        }
        if (inventory_path_is_special(real) || streq(real, "/"))
                return scan_problem(s, "%s: %s is /, or in /proc, /sys or /dev: not looked at", source, root);
        fd = open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0)
                return scan_problem(s, "%s: cannot open %s: %m", source, root);
        memcpy(ret_real, real, strlen(real) + 1);
        *ret_fd = fd;
        return 0;
}

typedef struct Walk {
        Scan *scan;
        size_t package;
        dev_t dev;
        uint64_t size;
        size_t entries, owned;
        bool full, deep;
        char path[PATH_MAX];    /* real path of the entry at hand */
        char real[PATH_MAX];    /* where a symlink leads */
} Walk;

static int walk_entry(Walk *w, DIR *d, const char *name, size_t len, unsigned depth, bool elf, bool bin);

/* Walks the folder dir_fd (taken), whose real path is w->path[0..len). At
 * depth 0 (the prefix) only_elf chooses the lib/bin folders or the rest. */
static int walk_dir(Walk *w, int dir_fd, size_t len, unsigned depth, bool elf, bool bin, int only_elf) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;

        d = fdopendir(dir_fd);
        if (!d) {
                safe_close(dir_fd);
                return 0;
        }
        while ((de = readdir(d))) {
                size_t n = strlen(de->d_name);
                int r;

                if (is_dot(de->d_name))
                        continue;
                if (only_elf >= 0 && is_elf_top(de->d_name) != (bool) only_elf)
                        continue;
                if (w->entries >= WALK_ENTRIES_MAX) {
                        w->full = true;
                        return 0;
                }
                w->entries++;
                w->scan->inv->stats.entries++;
                if (len + 1 + n >= sizeof(w->path))
                        continue;
                w->path[len] = '/';
                memcpy(w->path + len + 1, de->d_name, n + 1);
                r = walk_entry(w, d, de->d_name, len + 1 + n, depth, elf, bin);
                w->path[len] = '\0';
                if (r < 0)
                        return r;
        }
        return 0;
}

static int walk_entry(Walk *w, DIR *d, const char *name, size_t len, unsigned depth, bool elf, bool bin) {
        Scan *s = w->scan;
        struct stat st;
        int r, fd;

        if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return 0;
        if (S_ISDIR(st.st_mode)) {
                if (st.st_dev != w->dev)
                        return 0;
                if (depth + 1 >= WALK_DEPTH_MAX) {
                        w->deep = true;
                        return 0;
                }
                fd = inventory_open_dir(dirfd(d), name);
                if (fd < 0)
                        return 0;
                return walk_dir(w, fd, len, depth + 1, elf || (depth == 0 && is_elf_top(name)),
                                bin || is_bin(name), -1);
        }
        if (S_ISREG(st.st_mode)) {
                w->size += (uint64_t) st.st_blocks * 512;
                if (!elf || (!inventory_name_is_library(name) && !(bin && (st.st_mode & 0111))))
                        return 0;
                s->inv->stats.candidates++;
                r = scan_claim_at(s, w->package, w->path, dirfd(d), name);
                if (r > 0)
                        w->owned++;
                return r < 0 ? r : 0;
        }
        if (S_ISLNK(st.st_mode) && elf && (inventory_name_is_library(name) || bin)) {
                s->inv->stats.candidates++;
                if (!realpath(w->path, w->real))
                        return 0;
                r = scan_claim(s, w->package, w->real, false);
                if (r > 0)
                        w->owned++;
                return r < 0 ? r : 0;
        }
        return 0;
}

/* A new open file description of the folder: each pass and each
 * readdir() starts at the top. */
static int reopen_dir(int dir_fd) {
        int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);

        return fd >= 0 ? fd : negative_errno();
}

int inventory_walk_prefix(Scan *s, size_t p, int dir_fd, const char *real) {
        _cleanup_close_ int dir = dir_fd;
        _cleanup_free_ Walk *w = NULL;
        const char *source = inventory_manager_to_string(s->packages[p].manager);
        struct stat st;
        int fd, r;

        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        *w = (Walk) { .scan = s, .package = p };
        if (fstat(dir, &st) < 0 || strlen(real) >= sizeof(w->path))
                return 0;
        w->dev = st.st_dev;
        snprintf(w->path, sizeof(w->path), "%s", real);
        /* The lib and bin folders first: a tree without ELF files there is
         * left out anyway, and its size is not worth a walk (/opt/spack
         * holds Spack's whole install tree). */
        fd = reopen_dir(dir);
        if (fd < 0)
                return 0;
        r = walk_dir(w, fd, strlen(w->path), 0, false, false, true);
        if (r >= 0 && w->owned > 0 && (fd = reopen_dir(dir)) >= 0)
                r = walk_dir(w, fd, strlen(w->path), 0, false, false, false);
        if (r < 0)
                return r;
        s->packages[p].size += w->size;
        if (w->full)
                return scan_problem(s, "%s: %s has more than %d entries: size and files counted up to there",
                                    source, real, WALK_ENTRIES_MAX);
        if (w->deep)
                return scan_problem(s, "%s: %s has folders more than %d deep: not looked at",
                                    source, real, WALK_DEPTH_MAX);
        return 0;
}

/* A prefix found by its layout: name and version from folder names. */
static int add_tree(Scan *s, InventoryManager m, const char *name, const char *version, int dir_fd,
                    const char *real) {
        size_t p;
        int r;

        r = scan_add_package(s, m, name, version, NULL, NULL, real, 0, &p);
        if (r < 0) {
                safe_close(dir_fd);
                return r;
        }
        return inventory_walk_prefix(s, p, dir_fd, real);
}

/* Calls func for each usable folder in dir_fd, with its fd (taken). */
typedef int (*dir_func)(Scan *s, const char *name, int fd, void *userdata);

static int for_each_dir(Scan *s, int dir_fd, size_t *budget, dir_func func, void *userdata) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        int fd;

        fd = reopen_dir(dir_fd);
        if (fd < 0)
                return 0;
        d = fdopendir(fd);
        if (!d) {
                safe_close(fd);
                return 0;
        }
        while ((de = readdir(d))) {
                int r;

                if (!inventory_dir_name_is_usable(de->d_name))
                        continue;
                if (*budget == 0)
                        return -E2BIG;
                (*budget)--;
                fd = inventory_open_dir(dirfd(d), de->d_name);
                if (fd < 0)
                        continue;
                r = func(s, de->d_name, fd, userdata);
                if (r < 0)
                        return r;
        }
        return 0;
}

typedef struct Layout {
        const char *root;       /* real path */
        const char *name;       /* the first level's name, at the second */
        size_t budget;
} Layout;

static int easybuild_version(Scan *s, const char *version, int fd, void *userdata) {
        Layout *l = userdata;
        char prefix[PATH_MAX];

        if (!inventory_has_dir(fd, "easybuild") ||
            snprintf(prefix, sizeof(prefix), "%s/software/%s/%s", l->root, l->name, version) >= (int) sizeof(prefix)) {
                safe_close(fd);
                return 0;
        }
        return add_tree(s, INVENTORY_EASYBUILD, l->name, version, fd, prefix);
}

static int easybuild_name(Scan *s, const char *name, int fd, void *userdata) {
        Layout *l = userdata;
        int r;

        l->name = name;
        r = for_each_dir(s, fd, &l->budget, easybuild_version, l);
        safe_close(fd);
        return r;
}

int inventory_scan_easybuild(Scan *s, const char *root, bool configured) {
        _cleanup_close_ int fd = -EBADF, software = -EBADF;
        char real[PATH_MAX];
        Layout l = { .root = real, .budget = LAYOUT_DIRS_MAX };
        int r;

        r = inventory_open_root(s, INVENTORY_EASYBUILD, root, configured, real, &fd);
        if (r < 0 || fd < 0)
                return r;
        software = inventory_open_dir(fd, "software");
        if (software < 0)
                return configured ? scan_problem(s, "easybuild: %s has no folder software/", real) : 0;
        r = for_each_dir(s, software, &l.budget, easybuild_name, &l);
        if (r == -E2BIG)
                return scan_problem(s, "easybuild: %s/software has more than %d folders: the rest are left out",
                                    real, LAYOUT_DIRS_MAX);
        return r;
}

static bool has_elf_top(int fd) {
        for (size_t i = 0; i < ELEMENTSOF(elf_top); i++)
                if (inventory_has_dir(fd, elf_top[i]))
                        return true;
        return false;
}

static bool looks_like_version(const char *s) {
        if (s[0] == 'v' || s[0] == 'V')
                s++;
        return s[0] >= '0' && s[0] <= '9';
}

static int opt_version(Scan *s, const char *version, int fd, void *userdata) {
        Layout *l = userdata;
        char prefix[PATH_MAX];

        if (!looks_like_version(version) || !has_elf_top(fd) ||
            snprintf(prefix, sizeof(prefix), "%s/%s/%s", l->root, l->name, version) >= (int) sizeof(prefix)) {
                safe_close(fd);
                return 0;
        }
        return add_tree(s, INVENTORY_OPT, l->name, version, fd, prefix);
}

static int opt_name(Scan *s, const char *entry, int fd, void *userdata) {
        Layout *l = userdata;
        char prefix[PATH_MAX], name[NAME_MAX + 1];
        const char *version = NULL;
        int r;

        if (!has_elf_top(fd)) {
                /* NAME/VERSION/ */
                l->name = entry;
                r = for_each_dir(s, fd, &l->budget, opt_version, l);
                safe_close(fd);
                return r;
        }
        /* NAME-VERSION/: the version starts at the first '-' before a digit */
        snprintf(name, sizeof(name), "%s", entry);
        for (char *p = name; (p = strchr(p, '-')); p++)
                if (p > name && p[1] >= '0' && p[1] <= '9') {
                        *p = '\0';
                        version = p + 1;
                        break;
                }
        if (snprintf(prefix, sizeof(prefix), "%s/%s", l->root, entry) >= (int) sizeof(prefix)) {
                safe_close(fd);
                return 0;
        }
        return add_tree(s, INVENTORY_OPT, name, version, fd, prefix);
}

int inventory_scan_opt(Scan *s, const char *root, bool configured) {
        _cleanup_close_ int fd = -EBADF;
        char real[PATH_MAX];
        Layout l = { .root = real, .budget = LAYOUT_DIRS_MAX };
        int r;

        r = inventory_open_root(s, INVENTORY_OPT, root, configured, real, &fd);
        if (r < 0 || fd < 0)
                return r;
        r = for_each_dir(s, fd, &l.budget, opt_name, &l);
        if (r == -E2BIG)
                return scan_problem(s, "opt: %s has more than %d folders: the rest are left out",
                                    real, LAYOUT_DIRS_MAX);
        return r;
}
