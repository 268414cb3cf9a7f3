/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Spack: install prefixes below an install tree's root, each recognized by
 * its .spack/spec.json (Spack 0.17 and later; older ones wrote spec.yaml,
 * which is not read). Projections differ between sites and Spack versions
 * (ARCH/COMPILER/NAME-VERSION-HASH, ARCH/NAME-VERSION-HASH, ...), so the
 * folders are searched a few levels deep rather than parsed. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inventory-internal.h"
#include "util.h"

#define SPACK_DEPTH_MAX 5
#define SPACK_DIRS_MAX 100000
/* json-c's own default; spec.json nests about 6 deep. */
#define SPACK_JSON_DEPTH 32

static bool chars_ok(const char *s, size_t n, size_t max, const char *allowed) {
        return n > 0 && n <= max && strlen(s) == n && strspn(s, allowed) == n;
}

#define ALNUM "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"

/* Copies a string member if it is made of allowed characters. */
static bool member_string(json_object *o, const char *key, size_t max, const char *allowed, char *ret) {
        json_object *v;
        const char *s;
        size_t n;

        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
                return false;
        s = json_object_get_string(v);
        n = (size_t) json_object_get_string_len(v);
        if (!chars_ok(s, n, max, allowed))
                return false;
        memcpy(ret, s, n + 1);
        return true;
}

static bool node_has_hash(json_object *node, const char *hash) {
        json_object *v;

        return json_object_is_type(node, json_type_object) && json_object_object_get_ex(node, "hash", &v) &&
               json_object_is_type(v, json_type_string) && streq(json_object_get_string(v), hash);
}

int spack_spec_parse(const char *text, size_t n, const char *hash_hint, SpackSpec *ret, const char **ret_why) {
        json_tokener *tok;
        json_object *root, *spec, *nodes, *node = NULL;
        enum json_tokener_error e;
        SpackSpec r = {};
        size_t end, count;

        *ret_why = NULL;
        if (n > SPACK_SPEC_MAX) {
                *ret_why = "larger than 8 MiB";
                return -EFBIG;
        }
        tok = json_tokener_new_ex(SPACK_JSON_DEPTH);
        if (!tok)
                return -ENOMEM;
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
        root = json_tokener_parse_ex(tok, text, (int) n);
        e = json_tokener_get_error(tok);
        end = json_tokener_get_parse_end(tok);
        json_tokener_free(tok);
        if (!root || e != json_tokener_success) {
                json_object_put(root);
                *ret_why = e == json_tokener_continue ? "not JSON: it ends early" : json_tokener_error_desc(e);
                return -EINVAL;
        }
        for (; end < n; end++)
                if (!strchr(" \t\r\n", text[end]) || text[end] == '\0') {
                        json_object_put(root);
                        *ret_why = "not JSON: more after the end";
                        return -EINVAL;
                }

        if (!json_object_object_get_ex(root, "spec", &spec) || !json_object_is_type(spec, json_type_object) ||
            !json_object_object_get_ex(spec, "nodes", &nodes) || !json_object_is_type(nodes, json_type_array)) {
                json_object_put(root);
                *ret_why = "no spec.nodes list (written by a Spack older than 0.17?)";
                return -EINVAL;
        }
        count = json_object_array_length(nodes);
        if (hash_hint)
                for (size_t i = 0; i < count && !node; i++)
                        if (node_has_hash(json_object_array_get_idx(nodes, i), hash_hint))
                                node = json_object_array_get_idx(nodes, i);
        if (!node && count > 0)
                node = json_object_array_get_idx(nodes, 0);
        if (!node || !json_object_is_type(node, json_type_object)) {
                json_object_put(root);
                *ret_why = "spec.nodes holds no package";
                return -EINVAL;
        }
        if (!member_string(node, "name", SPACK_NAME_MAX, ALNUM "-_.+", r.name))
                *ret_why = "the package has no name, or one Spack does not allow";
        else if (!member_string(node, "version", SPACK_VERSION_MAX, ALNUM "-_.+=~:", r.version))
                *ret_why = "the package has no version, or one Spack does not write";
        else if (!member_string(node, "hash", SPACK_HASH_MAX, "abcdefghijklmnopqrstuvwxyz0123456789", r.hash))
                *ret_why = "the package has no hash, or one Spack does not write";
        json_object_put(root);
        if (*ret_why)
                return -EINVAL;
        *ret = r;
        return 0;
}

typedef struct SpackFind {
        Scan *scan;
        size_t budget;
        char path[PATH_MAX];
} SpackFind;

/* A prefix: dir_fd (taken) holds .spack (spack_fd, taken). */
static int spack_prefix(SpackFind *f, int dir_fd, int spack_fd) {
        _cleanup_close_ int dir = dir_fd, sp = spack_fd, fd = -EBADF;
        _cleanup_free_ char *text = NULL;
        const char *why = NULL, *hint;
        struct stat st;
        SpackSpec spec;
        size_t n, p;
        int r;

        fd = openat(sp, "spec.json", O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
        if (fd < 0 && errno == ENOENT && fstatat(sp, "spec.yaml", &st, AT_SYMLINK_NOFOLLOW) == 0)
                return scan_problem(f->scan, "spack: %s/.spack has spec.yaml, not spec.json (Spack before 0.17): left out",
                                    f->path);
        if (fd < 0)
                return scan_problem(f->scan, "spack: cannot open %s/.spack/spec.json: %m; the prefix is left out",
                                    f->path);
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return scan_problem(f->scan, "spack: %s/.spack/spec.json is no regular file; the prefix is left out",
                                    f->path);
        r = read_full_fd(fd, SPACK_SPEC_MAX, &text, &n);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return scan_problem(f->scan, "spack: reading %s/.spack/spec.json: %s; the prefix is left out",
                                    f->path, r == -EFBIG ? "larger than 8 MiB" : strerror(-r));

        /* NAME-VERSION-HASH: the prefix's own node has that hash */
        hint = strrchr(f->path, '-');
        r = spack_spec_parse(text, n, hint ? hint + 1 : NULL, &spec, &why);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return scan_problem(f->scan, "spack: %s/.spack/spec.json: %s; the prefix is left out",
                                    f->path, why ?: strerror(-r));

        r = scan_add_package(f->scan, INVENTORY_SPACK, spec.name, spec.version, NULL, spec.hash, f->path, 0, &p);
        if (r < 0)
                return r;
        return inventory_walk_prefix(f->scan, p, TAKE_FD(dir), f->path);
}

/* Looks for prefixes in dir_fd (taken), whose real path is f->path[0..len). */
static int spack_find(SpackFind *f, int dir_fd, size_t len, unsigned depth) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        int spack_fd;

        spack_fd = inventory_open_dir(dir_fd, ".spack");
        if (spack_fd >= 0)
                return spack_prefix(f, dir_fd, spack_fd);
        if (depth >= SPACK_DEPTH_MAX) {
                safe_close(dir_fd);
                return 0;
        }
        d = fdopendir(dir_fd);
        if (!d) {
                safe_close(dir_fd);
                return 0;
        }
        while ((de = readdir(d))) {
                size_t n = strlen(de->d_name);
                int fd, r;

                /* .spack-db, .spack-cache and the like are Spack's own */
                if (!inventory_dir_name_is_usable(de->d_name))
                        continue;
                if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
                        continue;
                if (f->budget == 0)
                        return -E2BIG;
                f->budget--;
                if (len + 1 + n >= sizeof(f->path))
                        continue;
                fd = inventory_open_dir(dirfd(d), de->d_name);
                if (fd < 0)
                        continue;
                f->path[len] = '/';
                memcpy(f->path + len + 1, de->d_name, n + 1);
                r = spack_find(f, fd, len + 1 + n, depth + 1);
                f->path[len] = '\0';
                if (r < 0)
                        return r;
        }
        return 0;
}

int inventory_scan_spack(Scan *s, const char *root, bool configured) {
        _cleanup_free_ SpackFind *f = NULL;
        char real[PATH_MAX];
        int fd, r;

        r = inventory_open_root(s, INVENTORY_SPACK, root, configured, real, &fd);
        if (r < 0 || fd < 0)
                return r;
        f = calloc(1, sizeof(*f));
        if (!f) {
                safe_close(fd);
                return -ENOMEM;
        }
        f->scan = s;
        f->budget = SPACK_DIRS_MAX;
        snprintf(f->path, sizeof(f->path), "%s", real);
        r = spack_find(f, fd, strlen(f->path), 0);
        if (r == -E2BIG)
                return scan_problem(s, "spack: %s has more than %d folders: the rest are left out",
                                    real, SPACK_DIRS_MAX);
        return r;
}
