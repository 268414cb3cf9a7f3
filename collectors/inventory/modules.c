/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Environment-module trees: each modulefile ROOT/NAME/VERSION (Tcl, with
 * the #%Module cookie) or ROOT/NAME/VERSION.lua (Lmod) is a package
 * "NAME" "VERSION"; its files are the ELF files of the prefixes it puts
 * in PATH or LD_LIBRARY_PATH or names in *_ROOT (modulefile.c
 * reads those). Modules are the last source: a module only points at
 * software, and a file that dpkg, RPM, Spack, EasyBuild or an /opt tree
 * has is theirs, so a module keeps only files no other package has and a
 * module of a Spack or EasyBuild package is not reported at all. The store
 * counts each sampled file once, for the package that installed it.
 *
 * Modulefile trees are often writable by the people who install software:
 * the tree is walked without following a symlink (version aliases such as
 * default are symlinks and are skipped), only regular files are opened,
 * and never a FIFO or a device. */
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

/* Lmod's hierarchies (Core/, Compiler/gcc/12/, MPI/gcc/12/openmpi/4/) are
 * a few levels deep. */
#define MODULE_DEPTH_MAX 8
#define MODULE_FILES_MAX 100000
#define MODULE_PREFIXES_MAX 8
/* As for Spack's names and versions; the store takes up to 256 bytes. */
#define MODULE_NAME_MAX 128
#define MODULE_VERSION_MAX 128

static const char *const elf_top[] = { "lib", "lib64", "bin", "sbin", "libexec" };

typedef struct ModuleFind {
        Scan *scan;
        size_t budget;
        size_t too_big, unreadable, long_names;
        char first_bad[PATH_MAX];
        char root[PATH_MAX];            /* real path */
        char rel[PATH_MAX];             /* below root */
} ModuleFind;

/* A prefix that holds many packages is never one module's: /, /usr,
 * /usr/local and every folder right below /. */
static bool prefix_is_too_wide(const char *real) {
        const char *second = strchr(real + 1, '/');

        return !second || streq(real, "/usr/local") || inventory_path_is_special(real);
}

/* The prefix of a bin or lib folder: what is above its last bin, lib, … */
static bool dir_to_prefix(const char *dir, char *ret) {
        size_t n = strlen(dir);

        if (n >= PATH_MAX)
                return false;
        for (const char *p = dir + n; p > dir; p--) {
                if (p[-1] != '/')
                        continue;
                for (size_t i = 0; i < ELEMENTSOF(elf_top); i++) {
                        size_t k = strlen(elf_top[i]);

                        if (strncmp(p, elf_top[i], k) == 0 && (p[k] == '/' || p[k] == '\0')) {
                                memcpy(ret, dir, (size_t) (p - 1 - dir));
                                ret[p - 1 - dir] = '\0';
                                return ret[0] != '\0';
                        }
                }
        }
        return false;
}

static bool is_below(const char *path, const char *top) {
        size_t n = strlen(top);

        return strncmp(path, top, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* The module's prefixes, real paths, none inside another; the *_ROOT ones
 * first, so that the package's prefix is the one the module names. */
static int module_prefixes(const ModuleInfo *m, char (*ret)[PATH_MAX], size_t *ret_n) {
        size_t n = 0;

        for (int kind = MODULE_PATH_ROOT; kind >= MODULE_PATH_DIR; kind--)
                for (size_t i = 0; i < m->n_paths; i++) {
                        char prefix[PATH_MAX], real[PATH_MAX];
                        bool skip = false;

                        if ((int) m->kinds[i] != kind)
                                continue;
                        if (kind == MODULE_PATH_DIR) {
                                if (!dir_to_prefix(m->paths[i], prefix))
                                        continue;
                        } else if (snprintf(prefix, sizeof(prefix), "%s", m->paths[i]) >= (int) sizeof(prefix))
                                continue;
                        if (!realpath(prefix, real) || prefix_is_too_wide(real))
                                continue;
                        for (size_t k = 0; k < n && !skip; k++) {
                                if (is_below(real, ret[k]))
                                        skip = true;
                                else if (is_below(ret[k], real)) {
                                        /* the wider one instead */
                                        memcpy(ret[k], real, strlen(real) + 1);
                                        skip = true;
                                }
                        }
                        if (skip || n >= MODULE_PREFIXES_MAX)
                                continue;
                        memcpy(ret[n++], real, strlen(real) + 1);
                }
        *ret_n = n;
        return 0;
}

static bool ends_with_lua(const char *name) {
        size_t n = strlen(name);

        return n > 4 && streq(name + n - 4, ".lua");
}

static void note_bad(ModuleFind *f, size_t *counter) {
        /* a path too long to name whole is named by its start */
        if (f->too_big + f->unreadable + f->long_names == 0 &&
            snprintf(f->first_bad, sizeof(f->first_bad), "%s/%s", f->root, f->rel) >= (int) sizeof(f->first_bad))
                f->first_bad[sizeof(f->first_bad) - 1] = '\0';
        (*counter)++;
}

/* A regular file in dir_fd: a modulefile when its name ends in .lua or it
 * starts with #%Module. */
static int module_file(ModuleFind *f, int dir_fd, const char *name) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *text = NULL;
        char prefixes[MODULE_PREFIXES_MAX][PATH_MAX];
        char module[PATH_MAX], *version;
        ModuleInfo info = {};
        struct stat st;
        size_t n, n_prefixes, p;
        bool lua = ends_with_lua(name);
        int r;

        fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return 0;
        if (st.st_size > MODULEFILE_MAX) {
                char cookie[8];

                if (lua || (pread(fd, cookie, sizeof(cookie), 0) == (ssize_t) sizeof(cookie) &&
                            memcmp(cookie, "#%Module", 8) == 0))
                        note_bad(f, &f->too_big);
                return 0;
        }
        r = read_full_fd(fd, MODULEFILE_MAX, &text, &n);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                note_bad(f, &f->unreadable);
                return 0;
        }
        if (!lua && (n < 8 || strncmp(text, "#%Module", 8) != 0))
                return 0;

        /* NAME/VERSION from the path below the root; a file right in the
         * root is a NAME without a version */
        snprintf(module, sizeof(module), "%s", f->rel);
        if (lua)
                module[strlen(module) - 4] = '\0';
        version = strrchr(module, '/');
        if (version)
                *version++ = '\0';
        if (strlen(module) > MODULE_NAME_MAX || (version && strlen(version) > MODULE_VERSION_MAX)) {
                note_bad(f, &f->long_names);
                return 0;
        }

        r = modulefile_parse(text, n, lua, module, version ?: "", &info);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return 0;
        r = module_prefixes(&info, prefixes, &n_prefixes);
        module_info_done(&info);
        if (r < 0 || n_prefixes == 0)
                return r;
        r = scan_add_package(f->scan, INVENTORY_MODULE, module, version ?: "", NULL, NULL, prefixes[0], 0, &p);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n_prefixes; i++) {
                int prefix_fd = open(prefixes[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

                if (prefix_fd < 0)
                        continue;
                r = inventory_walk_prefix(f->scan, p, prefix_fd, prefixes[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int cmp_name(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The usable names in a folder, sorted: modules of the same prefix (a
 * version and its aliases) then give it to the same one on every node,
 * whatever order the filesystem lists them in. */
static int sorted_names(ModuleFind *f, DIR *d, char ***ret, size_t *ret_n) {
        char **v = NULL;
        size_t n = 0, alloc = 0;
        struct dirent *de;
        int r = 0;

        while ((de = readdir(d))) {
                /* .version, .modulerc, .git; names with control characters */
                if (!inventory_dir_name_is_usable(de->d_name))
                        continue;
                if (f->budget == 0) {
                        r = -E2BIG;
                        break;
                }
                f->budget--;
                if (n == alloc) {
                        char **w = reallocarray(v, alloc ? alloc * 2 : 16, sizeof(char *));

                        if (!w) {
                                r = -ENOMEM;
                                break;
                        }
                        v = w;
                        alloc = alloc ? alloc * 2 : 16;
                }
                if (!(v[n] = strdup(de->d_name))) {
                        r = -ENOMEM;
                        break;
                }
                n++;
        }
        if (n > 0)
                qsort(v, n, sizeof(char *), cmp_name);
        *ret = v;
        *ret_n = n;
        return r;
}

/* Looks for modulefiles in dir_fd (taken), f->rel[0..len) below the root. */
static int module_find(ModuleFind *f, int dir_fd, size_t len, unsigned depth) {
        _cleanup_(closedirp) DIR *d = NULL;
        char **names = NULL;
        size_t n_names = 0;
        int r, k;

        d = fdopendir(dir_fd);
        if (!d) {
                safe_close(dir_fd);
                return 0;
        }
        k = sorted_names(f, d, &names, &n_names);
        r = k == -ENOMEM ? k : 0;
        for (size_t i = 0; i < n_names && r >= 0; i++) {
                const char *name = names[i];
                size_t n = strlen(name), at = len ? len + 1 : 0;
                struct stat st;

                if (at + n >= sizeof(f->rel) || fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if (len)
                        f->rel[len] = '/';
                memcpy(f->rel + at, name, n + 1);
                if (S_ISDIR(st.st_mode) && depth + 1 < MODULE_DEPTH_MAX) {
                        int fd = inventory_open_dir(dirfd(d), name);

                        if (fd >= 0)
                                r = module_find(f, fd, at + n, depth + 1);
                } else if (S_ISREG(st.st_mode))
                        r = module_file(f, dirfd(d), name);
                f->rel[len] = '\0';
        }
        for (size_t i = 0; i < n_names; i++)
                free(names[i]);
        free(names);
        /* what was read before the budget ran out counts */
        return r < 0 ? r : k;
}

int inventory_scan_modules(Scan *s, const char *root, bool configured) {
        _cleanup_free_ ModuleFind *f = NULL;
        char real[PATH_MAX];
        int fd, r;

        f = calloc(1, sizeof(*f));
        if (!f)
                return -ENOMEM;
        r = inventory_open_root(s, INVENTORY_MODULE, root, configured, real, &fd);
        if (r < 0 || fd < 0)
                return r;
        f->scan = s;
        f->budget = MODULE_FILES_MAX;
        snprintf(f->root, sizeof(f->root), "%s", real);
        r = module_find(f, fd, 0, 0);
        if (r == -E2BIG)
                r = scan_problem(s, "module: %s has more than %d files and folders: the rest are left out",
                                 real, MODULE_FILES_MAX);
        if (r < 0)
                return r;
        if (f->too_big + f->unreadable + f->long_names > 0)
                return scan_problem(s, "module: %zu modulefiles larger than 1 MiB, unreadable, or with a name or "
                                    "version longer than 128 bytes, left out (the first: %s)",
                                    f->too_big + f->unreadable + f->long_names, f->first_bad);
        return 0;
}
