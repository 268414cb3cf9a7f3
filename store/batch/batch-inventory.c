/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>

#include "batch-fields.h"
#include "batch/batch-inventory.h"
#include "batch/field-reader.h"

static const char *const package_managers[] = { "debian", "spack", "easybuild", "opt", "rpm", "module" };

bool batch_package_manager_is_known(const char *manager) {
        for (size_t i = 0; i < ELEMENTSOF(package_managers); i++)
                if (streq(manager, package_managers[i]))
                        return true;
        return false;
}

enum { PKG_MANAGER, PKG_NAME, PKG_VERSION, PKG_ARCH, PKG_HASH, PKG_PREFIX, PKG_SIZE,
       PKG_FILES };
static const char *const package_fields[] = {
        [PKG_MANAGER] = BF_PACKAGE_MANAGER, [PKG_NAME] = BF_PACKAGE_NAME, [PKG_VERSION] = BF_PACKAGE_VERSION,
        [PKG_ARCH] = BF_PACKAGE_ARCH, [PKG_HASH] = BF_PACKAGE_HASH, [PKG_PREFIX] = BF_PACKAGE_PREFIX,
        [PKG_SIZE] = BF_PACKAGE_SIZE, [PKG_FILES] = BF_PACKAGE_FILES,
};

static int parse_package(const JsonValue *o, Arena *arena, Where w, BatchPackage *p, size_t *files_left,
                         BatchError *err) {
        const JsonValue *a;
        Fields f;
        size_t n;
        int r;

        if (!json_is_type(o, JSON_OBJECT))
                return field_fail(err, -EINVAL, w, NULL, "must be an object");
        BIND(o, package_fields, &f);
        if ((r = field_string(&f, PKG_MANAGER, w, REQUIRED | IDENT, 1, 16, &p->manager, err)) < 0 ||
            (r = field_string(&f, PKG_NAME, w, REQUIRED | IDENT, 1, 256, &p->name, err)) < 0 ||
            (r = field_string(&f, PKG_VERSION, w, REQUIRED | IDENT, 0, 256, &p->version, err)) < 0 ||
            (r = field_string(&f, PKG_ARCH, w, NULLABLE | IDENT, 1, 64, &p->arch, err)) < 0 ||
            (r = field_string(&f, PKG_HASH, w, NULLABLE | IDENT, 1, 128, &p->hash, err)) < 0 ||
            (r = field_string(&f, PKG_PREFIX, w, NULLABLE, 1, BATCH_MAX_PATH, &p->prefix, err)) < 0 ||
            (r = field_int(&f, PKG_SIZE, w, REQUIRED, 0, (int64_t) BATCH_MAX_COUNTER, &p->size, err)) < 0)
                return r;
        if (!batch_package_manager_is_known(p->manager))
                return field_fail(err, -EINVAL, w, BF_PACKAGE_MANAGER, "must be one of " BATCH_PACKAGE_MANAGERS);
        if (p->prefix && p->prefix[0] != '/')
                return field_fail(err, -EINVAL, w, BF_PACKAGE_PREFIX, "must be an absolute path");
        a = f.v[PKG_FILES];
        if (!a || !json_is_type(a, JSON_ARRAY))
                return field_fail(err, -EINVAL, w, BF_PACKAGE_FILES, "must be an array of paths");
        n = a->n;
        if (n > BATCH_MAX_PACKAGE_FILES || n > *files_left)
                return field_fail(err, -E2BIG, w, BF_PACKAGE_FILES, "too many files: at most %u a package, %u in all",
                                  BATCH_MAX_PACKAGE_FILES, BATCH_MAX_INVENTORY_FILES);
        *files_left -= n;
        p->files = arena_calloc(arena, n ?: 1, sizeof(char *));
        if (!p->files)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const JsonValue *file = &a->elements[i];
                const char *s;

                if (!json_is_type(file, JSON_STRING))
                        return field_fail(err, -EINVAL, w, BF_PACKAGE_FILES, "element %zu must be a string", i);
                s = file->string;
                if (file->n < 2 || file->n > BATCH_MAX_PATH || s[0] != '/')
                        return field_fail(err, -EINVAL, w, BF_PACKAGE_FILES,
                                          "element %zu must be an absolute path of at most %u bytes",
                                          i, BATCH_MAX_PATH);
                r = field_check_text(s, file->n, 0, w, BF_PACKAGE_FILES, err);
                if (r < 0)
                        return r;
                p->files[i] = s;
        }
        p->n_files = n;
        return 0;
}

enum { INVENTORY_FORMAT, INVENTORY_VERSION, INVENTORY_DIGEST, INVENTORY_PACKAGES };
static const char *const inventory_fields[] = {
        [INVENTORY_FORMAT] = BF_INVENTORY_FORMAT, [INVENTORY_VERSION] = BF_INVENTORY_VERSION,
        [INVENTORY_DIGEST] = BF_INVENTORY_DIGEST, [INVENTORY_PACKAGES] = BF_INVENTORY_PACKAGES,
};

int batch_parse_inventory(const JsonValue *o, Arena *arena, Batch *b, BatchError *err) {
        const JsonValue *a;
        const char *format;
        int64_t version;
        size_t n, files_left = BATCH_MAX_INVENTORY_FILES;
        BatchInventory *inv;
        Fields f;
        int r;

        if (!o || json_is_type(o, JSON_NULL))
                return 0;
        if (!json_is_type(o, JSON_OBJECT))
                return field_fail(err, -EINVAL, TOP, BF_INVENTORY, "must be an object");
        BIND(o, inventory_fields, &f);
        if ((r = field_string(&f, INVENTORY_FORMAT, IN(BF_INVENTORY), REQUIRED, 0, 64, &format, err)) < 0 ||
            (r = field_int(&f, INVENTORY_VERSION, IN(BF_INVENTORY), REQUIRED, 0, INT32_MAX, &version, err)) < 0)
                return r;
        if (!streq(format, LMK_INVENTORY_FORMAT) || version != LMK_INVENTORY_VERSION)
                return field_fail(err, -EPROTONOSUPPORT, IN(BF_INVENTORY), BF_INVENTORY_FORMAT,
                                  "must be %s version %d", LMK_INVENTORY_FORMAT, LMK_INVENTORY_VERSION);
        inv = b->inventory = arena_calloc(arena, 1, sizeof(BatchInventory));
        if (!inv)
                return -ENOMEM;
        r = field_string(&f, INVENTORY_DIGEST, IN(BF_INVENTORY), REQUIRED | IDENT, 64, 64, &inv->digest, err);
        if (r < 0)
                return r;
        for (const char *p = inv->digest; *p; p++)
                if (!strchr("0123456789abcdef", *p))
                        return field_fail(err, -EINVAL, IN(BF_INVENTORY), BF_INVENTORY_DIGEST,
                                          "must be 64 lower-case hex digits");
        a = f.v[INVENTORY_PACKAGES];
        if (!a || !json_is_type(a, JSON_ARRAY))
                return field_fail(err, -EINVAL, IN(BF_INVENTORY), BF_INVENTORY_PACKAGES, "must be an array");
        n = a->n;
        if (n > BATCH_MAX_PACKAGES)
                return field_fail(err, -E2BIG, IN(BF_INVENTORY), BF_INVENTORY_PACKAGES,
                                  "has %zu packages, at most %u are allowed",
                                  n, BATCH_MAX_PACKAGES);
        inv->packages = arena_calloc(arena, n ?: 1, sizeof(BatchPackage));
        if (!inv->packages)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                r = parse_package(&a->elements[i], arena, AT(BF_INVENTORY "." BF_INVENTORY_PACKAGES, i),
                                  &inv->packages[i], &files_left,
                                  err);
                inv->n_packages = i + 1;
                if (r < 0)
                        return r;
        }
        inv->n_files = BATCH_MAX_INVENTORY_FILES - files_left;
        return 0;
}
