/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The inventory: packages as the sources find them, which package each
 * ELF file belongs to, and the report with its digest. The sources are
 * beside it (dpkg.c, rpm.c, spack.c, trees.c, modules.c) and call in
 * here; scan.c runs them. */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <linux/openat2.h>
#include <nettle/sha2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "batch-fields.h"
#include "batch-format.h"
#include "internal.h"
#include "json-text.h"
#include "utf8.h"
#include "util.h"

/* An ELF header is 52 bytes (32-bit) or 64 bytes: anything shorter is no
 * ELF file, and files of size 0 (most of /proc) are never read. */
#define ELF_HEADER_MIN 52

typedef struct Claim {
        char *path;             /* real path, the map's key */
        size_t package;
        bool direct;
} Claim;

static const char *const manager_names[_INVENTORY_MANAGER_MAX] = {
        [INVENTORY_DEBIAN] = "debian",
        [INVENTORY_SPACK] = "spack",
        [INVENTORY_EASYBUILD] = "easybuild",
        [INVENTORY_OPT] = "opt",
        [INVENTORY_RPM] = "rpm",
        [INVENTORY_MODULE] = "module",
};

const char *inventory_manager_to_string(InventoryManager m) {
        return (unsigned) m < _INVENTORY_MANAGER_MAX ? manager_names[m] : NULL;
}

int inventory_manager_from_string(const char *s) {
        for (unsigned m = 0; m < _INVENTORY_MANAGER_MAX; m++)
                if (s && streq(s, manager_names[m]))
                        return (int) m;
        return -EINVAL;
}

int scan_problem(Scan *s, const char *format, ...) {
        Inventory *inv = s->inv;
        char *text, **v;
        va_list ap;
        int r;

        if (inv->n_problems >= INVENTORY_PROBLEMS_MAX) {
                inv->problems_left_out++;
                return 0;
        }
        va_start(ap, format);
        r = vasprintf(&text, format, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        v = realloc(inv->problems, (inv->n_problems + 1) * sizeof(*v));
        if (!v) {
                free(text);
                return -ENOMEM;
        }
        inv->problems = v;
        v[inv->n_problems++] = text;
        return 0;
}

static void package_done(InventoryPackage *p) {
        free(p->name);
        free(p->version);
        free(p->arch);
        free(p->hash);
        free(p->prefix);
        for (size_t i = 0; i < p->n_files; i++)
                free(p->files[i]);
        free(p->files);
}

static int strdup_or_null(const char *s, char **ret) {
        if (!s) {
                *ret = NULL;
                return 0;
        }
        *ret = strdup(s);
        return *ret ? 0 : -ENOMEM;
}

int scan_add_package(Scan *s, InventoryManager m, const char *name, const char *version,
                     const char *arch, const char *hash, const char *prefix, uint64_t size,
                     size_t *ret_index) {
        InventoryPackage p = { .manager = m, .size = size };

        if (s->n_packages >= INVENTORY_PACKAGES_MAX) {
                if (!s->packages_full) {
                        s->packages_full = true;
                        if (scan_problem(s, "more than %d packages: the rest are left out",
                                         INVENTORY_PACKAGES_MAX) < 0)
                                return -ENOMEM;
                }
                return -ENOSPC;
        }
        if (s->n_packages == s->alloc_packages) {
                size_t n = s->alloc_packages ? s->alloc_packages * 2 : 256;
                InventoryPackage *v = reallocarray(s->packages, n, sizeof(*v));

                if (!v)
                        return -ENOMEM;
                s->packages = v;
                s->alloc_packages = n;
        }
        if (strdup_or_null(name, &p.name) < 0 || strdup_or_null(version ?: "", &p.version) < 0 ||
            strdup_or_null(arch, &p.arch) < 0 || strdup_or_null(hash, &p.hash) < 0 ||
            strdup_or_null(prefix, &p.prefix) < 0) {
                package_done(&p);
                return -ENOMEM;
        }
        s->packages[s->n_packages] = p;
        s->inv->stats.packages_seen[m]++;
        *ret_index = s->n_packages++;
        return 0;
}

bool inventory_name_is_library(const char *name) {
        /* NAME.so, or NAME.so. followed by a version of digits and dots */
        for (const char *p = strstr(name, ".so"); p; p = strstr(p + 1, ".so")) {
                const char *v = p + 3;

                if (p == name)
                        continue;
                if (*v == '\0')
                        return true;
                if (*v != '.' || v[1] < '0' || v[1] > '9')
                        continue;
                if (strspn(v, "0123456789.") == strlen(v))
                        return true;
        }
        return false;
}

bool inventory_dir_is_bin(const char *dir) {
        for (const char *p = dir; *p;) {
                size_t n;

                p += strspn(p, "/");
                n = strcspn(p, "/");
                if ((n == 3 && strncmp(p, "bin", 3) == 0) || (n == 4 && strncmp(p, "sbin", 4) == 0) ||
                    (n == 7 && strncmp(p, "libexec", 7) == 0))
                        return true;
                p += n;
        }
        return false;
}

bool inventory_path_is_special(const char *real) {
        static const char *const special[] = { "/proc", "/sys", "/dev" };

        for (size_t i = 0; i < ELEMENTSOF(special); i++) {
                size_t n = strlen(special[i]);

                if (strncmp(real, special[i], n) == 0 && (real[n] == '/' || real[n] == '\0'))
                        return true;
        }
        return real[0] != '/';
}

/* Opens a real path so that no symlink is followed on the way, not even in
 * a folder a user may swap for one between realpath() and here. */
static int open_no_symlinks(const char *real) {
        struct open_how how = {
                .flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY,
                .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
        };
        _cleanup_free_ char *copy = NULL;
        _cleanup_close_ int dir = -EBADF;
        char *p, *slash;
        int fd;

        fd = (int) syscall(SYS_openat2, AT_FDCWD, real, &how, sizeof(how));
        if (fd >= 0 || errno != ENOSYS)
                return fd >= 0 ? fd : negative_errno();

        /* kernels before 5.6: one folder at a time */
        copy = strdup(real);
        if (!copy)
                return -ENOMEM;
        dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0)
                return negative_errno();
        for (p = copy + 1; (slash = strchr(p, '/')); p = slash + 1) {
                int next;

                *slash = '\0';
                next = openat(dir, p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (next < 0)
                        return negative_errno();
                safe_close(dir);
                dir = next;
        }
        fd = openat(dir, p, (int) how.flags);
        return fd >= 0 ? fd : negative_errno();
}

/* 1: an ELF file, 0: not, negative errno: cannot tell. Takes fd. */
static int fd_is_elf(int fd) {
        _cleanup_close_ int f = fd;
        unsigned char magic[4];
        struct stat st;

        if (fstat(f, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode) || st.st_size < ELF_HEADER_MIN)
                return 0;
        if (pread(f, magic, sizeof(magic), 0) != (ssize_t) sizeof(magic))
                return 0;
        return memcmp(magic, "\177ELF", 4) == 0;
}

static int claim_add(Scan *s, size_t p, const char *real, bool direct, int dir_fd, const char *name) {
        _cleanup_free_ Claim *c = NULL;
        int fd, r;

        if (hashmap_size(s->claims) >= INVENTORY_FILES_MAX) {
                if (!s->files_full) {
                        s->files_full = true;
                        if (scan_problem(s, "more than %d ELF files: the rest are left out",
                                         INVENTORY_FILES_MAX) < 0)
                                return -ENOMEM;
                }
                return 0;
        }
        if (inventory_path_is_special(real))
                return 0;
        s->inv->stats.elf_checks++;
        if (dir_fd >= 0)
                fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
        else
                fd = open_no_symlinks(real);
        if (fd < 0)
                return 0;
        r = fd_is_elf(fd);
        if (r <= 0)
                return 0;

        c = malloc(sizeof(*c));
        if (!c)
                return -ENOMEM;
        *c = (Claim) { .package = p, .direct = direct };
        c->path = strdup(real);
        if (!c->path)
                return -ENOMEM;
        r = hashmap_put(s->claims, c->path, c);
        if (r < 0) {
                free(c->path);
                return r;
        }
        TAKE_PTR(c);
        return 1;
}

int scan_claim(Scan *s, size_t p, const char *real, bool direct) {
        Claim *c = hashmap_get(s->claims, real);

        if (c) {
                if (direct && !c->direct) {
                        c->package = p;
                        c->direct = true;
                }
                return c->package == p;
        }
        return claim_add(s, p, real, direct, -EBADF, NULL);
}

int scan_claim_at(Scan *s, size_t p, const char *real, int dir_fd, const char *name) {
        Claim *c = hashmap_get(s->claims, real);

        if (c) {
                if (!c->direct) {
                        c->package = p;
                        c->direct = true;
                }
                return c->package == p;
        }
        return claim_add(s, p, real, true, dir_fd, name);
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

static int cmp_null_str(const char *a, const char *b) {
        if (!a || !b)
                return (a != NULL) - (b != NULL);
        return strcmp(a, b);
}

static int cmp_package(const void *a, const void *b) {
        const InventoryPackage *x = a, *y = b;
        int r;

        if (x->manager != y->manager)
                return CMP(x->manager, y->manager);
        if ((r = strcmp(x->name, y->name)) != 0 || (r = strcmp(x->version, y->version)) != 0 ||
            (r = cmp_null_str(x->arch, y->arch)) != 0 || (r = cmp_null_str(x->prefix, y->prefix)) != 0)
                return r;
        return cmp_null_str(x->hash, y->hash);
}

int scan_start(Scan *s, Inventory *inv) {
        *s = (Scan) { .inv = inv };
        s->claims = hashmap_new(&string_hash_ops);
        return s->claims ? 0 : -ENOMEM;
}

static int inventory_digest(Inventory *inv);

/* Every claimed path goes to its package; packages without ELF files are
 * left out; all sorted, and the digest taken. */
int scan_finish(Scan *s) {
        Inventory *inv = s->inv;
        size_t *count, i, n;
        Claim *c;

        count = calloc(s->n_packages + 1, sizeof(*count));
        if (!count)
                return -ENOMEM;
        HASHMAP_FOREACH(c, s->claims, i)
                count[c->package]++;
        for (size_t p = 0; p < s->n_packages; p++) {
                n = MIN(count[p], (size_t) INVENTORY_PACKAGE_FILES_MAX);
                if (n > 0 && !(s->packages[p].files = calloc(n, sizeof(char *)))) {
                        free(count);
                        return -ENOMEM;
                }
        }
        free(count);

        HASHMAP_FOREACH(c, s->claims, i) {
                InventoryPackage *p = &s->packages[c->package];

                if (p->n_files >= INVENTORY_PACKAGE_FILES_MAX) {
                        p->files_left_out++;
                        continue;
                }
                p->files[p->n_files++] = TAKE_PTR(c->path);
        }

        n = 0;
        for (size_t p = 0; p < s->n_packages; p++) {
                InventoryPackage *pk = &s->packages[p];

                if (pk->n_files == 0) {
                        package_done(pk);
                        continue;
                }
                qsort(pk->files, pk->n_files, sizeof(char *), cmp_str);
                inv->n_files += pk->n_files;
                s->packages[n++] = *pk;
        }
        if (n > 0)
                qsort(s->packages, n, sizeof(InventoryPackage), cmp_package);
        inv->packages = TAKE_PTR(s->packages);
        inv->n_packages = n;
        s->n_packages = s->alloc_packages = 0;
        return inventory_digest(inv);
}

static void claim_free(void *p) {
        Claim *c = p;

        free(c->path);
        free(c);
}

void scan_done(Scan *s) {
        hashmap_free_free(s->claims, claim_free);
        for (size_t p = 0; p < s->n_packages; p++)
                package_done(&s->packages[p]);
        free(s->packages);
}

static int json_add_text(json_object *o, const char *key, const char *s) {
        json_object *v;

        if (!s)
                return 0;
        v = json_text_new(s);
        if (!v || json_object_object_add(o, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

static int json_add(json_object *o, const char *key, json_object *v) {
        if (!v || json_object_object_add(o, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

static json_object *package_to_json(const InventoryPackage *p) {
        json_object *o = json_object_new_object(), *files;

        if (!o)
                return NULL;
        if (json_add_text(o, BF_PACKAGE_MANAGER, inventory_manager_to_string(p->manager)) < 0 ||
            json_add_text(o, BF_PACKAGE_NAME, p->name) < 0 || json_add_text(o, BF_PACKAGE_VERSION, p->version) < 0 ||
            json_add_text(o, BF_PACKAGE_ARCH, p->arch) < 0 || json_add_text(o, BF_PACKAGE_HASH, p->hash) < 0 ||
            json_add_text(o, BF_PACKAGE_PREFIX, p->prefix) < 0 ||
            json_add(o, BF_PACKAGE_SIZE, json_object_new_uint64(p->size)) < 0)
                goto fail;
        if (p->files_left_out > 0 &&
            json_add(o, "files_left_out", json_object_new_uint64(p->files_left_out)) < 0)
                goto fail;
        files = json_object_new_array_ext((int) p->n_files);
        if (json_add(o, BF_PACKAGE_FILES, files) < 0)
                goto fail;
        for (size_t i = 0; i < p->n_files; i++) {
                json_object *f = json_text_new(p->files[i]);

                if (!f || json_object_array_add(files, f) < 0) {
                        json_object_put(f);
                        goto fail;
                }
        }
        return o;
fail:
        json_object_put(o);
        return NULL;
}

#define JSON_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/* The packages array as text: what the digest covers and the report holds. */
static int packages_to_text(const Inventory *inv, char **ret, size_t *ret_size) {
        json_object *a = json_object_new_array_ext((int) inv->n_packages);
        const char *text;
        size_t n;

        if (!a)
                return -ENOMEM;
        for (size_t i = 0; i < inv->n_packages; i++) {
                json_object *p = package_to_json(&inv->packages[i]);

                if (!p || json_object_array_add(a, p) < 0) {
                        json_object_put(p);
                        json_object_put(a);
                        return -ENOMEM;
                }
        }
        text = json_object_to_json_string_length(a, JSON_FLAGS, &n);
        *ret = text ? strndup(text, n) : NULL;
        json_object_put(a);
        if (!*ret)
                return -ENOMEM;
        *ret_size = n;
        return 0;
}

int inventory_to_json(const Inventory *inv, char **ret, size_t *ret_size) {
        _cleanup_free_ char *packages = NULL;
        char *text;
        size_t n;
        int r;

        r = packages_to_text(inv, &packages, &n);
        if (r < 0)
                return r;
        r = asprintf(&text, "{\"" BF_INVENTORY_FORMAT "\":\"%s\",\"" BF_INVENTORY_VERSION "\":%d,\"" BF_INVENTORY_DIGEST
                     "\":\"%s\",\"" BF_INVENTORY_PACKAGES "\":%s}",
                     LMK_INVENTORY_FORMAT, LMK_INVENTORY_VERSION, inv->digest, packages);
        if (r < 0)
                return -ENOMEM;
        *ret = text;
        if (ret_size)
                *ret_size = (size_t) r;
        return 0;
}

static int inventory_digest(Inventory *inv) {
        _cleanup_free_ char *text = NULL;
        uint8_t d[SHA256_DIGEST_SIZE];
        struct sha256_ctx h;
        size_t n;
        int r;

        r = packages_to_text(inv, &text, &n);
        if (r < 0)
                return r;
        sha256_init(&h);
        sha256_update(&h, n, (const uint8_t *) text);
        sha256_digest(&h, sizeof(d), d);
        for (size_t i = 0; i < sizeof(d); i++)
                snprintf(inv->digest + 2 * i, 3, "%02x", d[i]);
        return 0;
}

Inventory *inventory_free(Inventory *inv) {
        if (!inv)
                return NULL;
        for (size_t i = 0; i < inv->n_packages; i++)
                package_done(&inv->packages[i]);
        free(inv->packages);
        for (size_t i = 0; i < inv->n_problems; i++)
                free(inv->problems[i]);
        free(inv->problems);
        free(inv);
        return NULL;
}

const InventoryPackage *inventory_find_file(const Inventory *inv, const char *path) {
        for (size_t i = 0; i < inv->n_packages; i++) {
                const InventoryPackage *p = &inv->packages[i];

                if (bsearch(&path, p->files, p->n_files, sizeof(char *), cmp_str))
                        return p;
        }
        return NULL;
}
