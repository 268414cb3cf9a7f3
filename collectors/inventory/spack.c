/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Spack: install prefixes below an install tree's root, each recognized by
 * its .spack/spec.json (Spack 0.17 and later) or .spack/spec.yaml (older
 * ones). Projections differ between sites and Spack versions
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

#include "internal.h"
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

/* ---- spec.yaml (Spack before 0.17) ----
 *
 *   spec:
 *   - zlib:
 *       version: 1.2.11
 *       arch:
 *         platform: linux
 *       ...
 *       hash: 5xkcspnzpzvgtxjvx4zdcqhfy3w5sgpm
 *   - dependency:
 *       ...
 *
 * Read line by line: the list below "spec:", each item "- NAME:", and of
 * its keys only "version" and "hash" at the item's first key's indent.
 * Anything YAML allows beyond what Spack wrote there (tabs, flow
 * collections, anchors, escapes) is refused, not guessed. */

#define YAML_LINE_MAX 4096

typedef struct YamlNode {
        char name[SPACK_NAME_MAX + 1];
        char version[SPACK_VERSION_MAX + 1];
        char hash[SPACK_HASH_MAX + 1];
        bool has_version, has_hash;
} YamlNode;

/* A scalar: plain, '…' or "…" without escapes. */
static bool yaml_scalar(const char *s, size_t n, size_t max, char *ret) {
        while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\r'))
                n--;
        if (n >= 2 && (s[0] == '\'' || s[0] == '"') && s[n - 1] == s[0]) {
                s++;
                n -= 2;
                if (memchr(s, s[-1], n) || memchr(s, '\\', n))
                        return false;
        }
        if (n == 0 || n > max || memchr(s, '\0', n))
                return false;
        memcpy(ret, s, n);
        ret[n] = '\0';
        return true;
}

static bool node_done(const YamlNode *node, const char *hash_hint, bool *found) {
        if (!node->name[0])
                return false;
        if (hash_hint && node->has_hash && streq(node->hash, hash_hint))
                *found = true;
        return *found;
}

int spack_spec_yaml_parse(const char *text, size_t n, const char *hash_hint, SpackSpec *ret, const char **ret_why) {
        YamlNode first = {}, cur = {};
        const char *p = text, *end = text + n;
        size_t item_indent = SIZE_MAX, key_indent = SIZE_MAX;
        bool in_spec = false, found = false, have_first = false;
        SpackSpec r = {};
        const YamlNode *pick;

        *ret_why = NULL;
        if (n > SPACK_SPEC_MAX) {
                *ret_why = "larger than 8 MiB";
                return -EFBIG;
        }
        while (p < end && !found) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                const char *line = p, *eol = nl ?: end, *s;
                size_t indent, len;

                p = nl ? nl + 1 : end;
                len = (size_t) (eol - line);
                if (len > YAML_LINE_MAX || memchr(line, '\t', len) || memchr(line, '\0', len)) {
                        *ret_why = "not the YAML Spack writes: a tab, a NUL byte or a line longer than 4 KiB";
                        return -EINVAL;
                }
                /* the text is not NUL-terminated */
                for (indent = 0; indent < len && line[indent] == ' '; indent++)
                        ;
                s = line + indent;
                len -= indent;
                while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\r'))
                        len--;
                if (len == 0 || s[0] == '#' || (indent == 0 && len == 3 && strncmp(s, "---", 3) == 0))
                        continue;
                if (!in_spec) {
                        if (indent == 0 && len == 5 && strncmp(s, "spec:", 5) == 0) {
                                in_spec = true;
                                continue;
                        }
                        *ret_why = "no spec: list (not a spec.yaml Spack wrote)";
                        return -EINVAL;
                }
                if (len >= 2 && s[0] == '-' && s[1] == ' ') {
                        /* "- NAME:" starts a node */
                        if (item_indent == SIZE_MAX)
                                item_indent = indent;
                        if (indent != item_indent) {
                                *ret_why = "a list item at an indent Spack does not write";
                                return -EINVAL;
                        }
                        if (node_done(&cur, hash_hint, &found))
                                break;
                        if (cur.name[0] && !have_first) {
                                first = cur;
                                have_first = true;
                        }
                        cur = (YamlNode) {};
                        key_indent = SIZE_MAX;
                        s += 2;
                        len -= 2;
                        while (len > 0 && s[0] == ' ') {
                                s++;
                                len--;
                        }
                        if (len < 2 || len - 1 > SPACK_NAME_MAX || s[len - 1] != ':') {
                                *ret_why = "a node that is no \"- NAME:\"";
                                return -EINVAL;
                        }
                        memcpy(cur.name, s, len - 1);
                        cur.name[len - 1] = '\0';
                        if (!chars_ok(cur.name, len - 1, SPACK_NAME_MAX, ALNUM "-_.+")) {
                                *ret_why = "the package has no name, or one Spack does not allow";
                                return -EINVAL;
                        }
                        continue;
                }
                if (indent == 0) {
                        /* the next top-level key: the list is over */
                        break;
                }
                if (!cur.name[0] || indent <= item_indent) {
                        *ret_why = "a line outside a node of the spec: list";
                        return -EINVAL;
                }
                if (key_indent == SIZE_MAX)
                        key_indent = indent;
                if (indent < key_indent) {
                        *ret_why = "a key at an indent Spack does not write";
                        return -EINVAL;
                }
                if (indent > key_indent)
                        continue;       /* inside arch:, compiler:, parameters: … */
                if (len > 8 && strncmp(s, "version:", 8) == 0 && s[8] == ' ') {
                        if (cur.has_version || !yaml_scalar(s + 9, len - 9, SPACK_VERSION_MAX, cur.version)) {
                                *ret_why = "a version given twice or one that is no plain text";
                                return -EINVAL;
                        }
                        cur.has_version = true;
                } else if (len > 5 && strncmp(s, "hash:", 5) == 0 && s[5] == ' ') {
                        if (cur.has_hash || !yaml_scalar(s + 6, len - 6, SPACK_HASH_MAX, cur.hash)) {
                                *ret_why = "a hash given twice or one that is no plain text";
                                return -EINVAL;
                        }
                        cur.has_hash = true;
                }
        }
        if (!in_spec) {
                *ret_why = "no spec: list (not a spec.yaml Spack wrote)";
                return -EINVAL;
        }
        node_done(&cur, hash_hint, &found);
        if (cur.name[0] && !have_first) {
                first = cur;
                have_first = true;
        }
        pick = found ? &cur : have_first ? &first : NULL;
        if (!pick) {
                *ret_why = "the spec: list holds no package";
                return -EINVAL;
        }
        if (!chars_ok(pick->name, strlen(pick->name), SPACK_NAME_MAX, ALNUM "-_.+"))
                *ret_why = "the package has no name, or one Spack does not allow";
        else if (!pick->has_version || !chars_ok(pick->version, strlen(pick->version), SPACK_VERSION_MAX, ALNUM "-_.+=~:"))
                *ret_why = "the package has no version, or one Spack does not write";
        else if (!pick->has_hash || !chars_ok(pick->hash, strlen(pick->hash), SPACK_HASH_MAX,
                                              "abcdefghijklmnopqrstuvwxyz0123456789"))
                *ret_why = "the package has no hash, or one Spack does not write";
        if (*ret_why)
                return -EINVAL;
        memcpy(r.name, pick->name, sizeof(r.name));
        memcpy(r.version, pick->version, sizeof(r.version));
        memcpy(r.hash, pick->hash, sizeof(r.hash));
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
        const char *why = NULL, *hint, *file = "spec.json";
        struct stat st;
        SpackSpec spec;
        size_t n, p;
        int r;

        fd = openat(sp, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
        if (fd < 0 && errno == ENOENT) {
                /* Spack before 0.17 */
                file = "spec.yaml";
                fd = openat(sp, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
        }
        if (fd < 0)
                return scan_problem(f->scan, "spack: cannot open %s/.spack/%s: %m; the prefix is left out",
                                    f->path, errno == ENOENT ? "spec.json or spec.yaml" : file);
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return scan_problem(f->scan, "spack: %s/.spack/%s is no regular file; the prefix is left out",
                                    f->path, file);
        r = read_full_fd(fd, SPACK_SPEC_MAX, &text, &n);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return scan_problem(f->scan, "spack: reading %s/.spack/%s: %s; the prefix is left out",
                                    f->path, file, r == -EFBIG ? "larger than 8 MiB" : strerror(-r));

        /* NAME-VERSION-HASH: the prefix's own node has that hash */
        hint = strrchr(f->path, '-');
        if (streq(file, "spec.json"))
                r = spack_spec_parse(text, n, hint ? hint + 1 : NULL, &spec, &why);
        else
                r = spack_spec_yaml_parse(text, n, hint ? hint + 1 : NULL, &spec, &why);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return scan_problem(f->scan, "spack: %s/.spack/%s: %s; the prefix is left out",
                                    f->path, file, why ?: strerror(-r));

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
