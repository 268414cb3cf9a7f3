/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The inventory of this machine's Debian packages against dpkg's own
 * answers: every package found is installed in that version, its files
 * are (real paths of) files dpkg lists for it, and the C library this test
 * runs with belongs to libc6. */
#include <dlfcn.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "hashmap.h"
#include "inventory/internal.h"
#include "tests.h"
#include "util.h"

#define DPKG_QUERY "/usr/bin/dpkg-query"

static void free_keys(Hashmap *h) {
        const void *key;
        size_t i = 0;

        while (hashmap_iterate(h, &i, NULL, &key))
                free((void *) key);
        hashmap_free(h);
}

/* "package arch version" of every installed package */
static Hashmap *installed(void) {
        FILE *f = popen(DPKG_QUERY " -W -f '${db:Status-Abbrev}|${Package} ${Architecture} ${Version}\\n'", "re");
        Hashmap *h = hashmap_new(&string_hash_ops);
        char *line = NULL;
        size_t size = 0;
        ssize_t n;

        ASSERT_NOT_NULL(f);
        ASSERT_NOT_NULL(h);
        while ((n = getline(&line, &size, f)) > 0) {
                char *key;

                if (line[n - 1] == '\n')
                        line[--n] = '\0';
                /* want, status, error: installed and no error (ii, hi, ri, pi) */
                if (n < 5 || line[1] != 'i' || line[2] != ' ' || line[3] != '|')
                        continue;
                key = strdup(line + 4);
                ASSERT_NOT_NULL(key);
                if (hashmap_put(h, key, key) < 0)
                        free(key);
        }
        free(line);
        ASSERT_EQ(pclose(f), 0);
        return h;
}

static bool is_elf(const char *path) {
        char magic[4] = {};
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        bool r;

        if (fd < 0)
                return false;
        r = read(fd, magic, sizeof(magic)) == (ssize_t) sizeof(magic) && memcmp(magic, "\177ELF", 4) == 0;
        close(fd);
        return r;
}

/* What the inventory must have found among a listed file: a regular ELF
 * file named like a library, or executable in a bin folder. */
static bool wanted(const char *path) {
        const char *slash = strrchr(path, '/'), *base;
        char copy[PATH_MAX];
        struct stat st;

        if (!slash || strlen(path) >= sizeof(copy))
                return false;
        base = slash + 1;
        memcpy(copy, path, strlen(path) + 1);
        if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < 52)
                return false;
        if (!inventory_name_is_library(base) && !(inventory_dir_is_bin(dirname(copy)) && (st.st_mode & 0111)))
                return false;
        return is_elf(path);
}

/* The real paths of what dpkg lists for a package; each listed ELF file
 * the inventory must have is looked up there. */
static Hashmap *listed(const Inventory *inv, const char *name, const char *arch, size_t *ret_wanted) {
        char cmd[512], real[PATH_MAX];
        Hashmap *h = hashmap_new(&string_hash_ops);
        char *line = NULL;
        size_t size = 0;
        ssize_t n;
        FILE *f;

        ASSERT_NOT_NULL(h);
        snprintf(cmd, sizeof(cmd), DPKG_QUERY " -L '%s:%s'", name, arch);
        f = popen(cmd, "re");
        ASSERT_NOT_NULL(f);
        while ((n = getline(&line, &size, f)) > 0) {
                char *key;

                if (line[n - 1] == '\n')
                        line[--n] = '\0';
                if (!realpath(line, real))
                        continue;
                if (wanted(line)) {
                        const InventoryPackage *owner = inventory_find_file(inv, real);

                        if (!owner)
                                test_fail("%s: %s (%s) is missing", name, line, real);
                        /* a file dpkg lists in two packages is the first's */
                        if (!streq(owner->name, name))
                                fprintf(stderr, "%s: %s is %s's\n", name, real, owner->name);
                        (*ret_wanted)++;
                }
                key = strdup(real);
                ASSERT_NOT_NULL(key);
                if (hashmap_put(h, key, key) < 0)
                        free(key);
        }
        free(line);
        ASSERT_EQ(pclose(f), 0);
        return h;
}

int main(void) {
        const char *none[] = { NULL };
        InventoryOptions o = { .roots = { NULL, none, none, none, none, none } };
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        const InventoryPackage *libc;
        char real[PATH_MAX];
        Hashmap *dpkg;
        size_t checked = 0, wanted_files = 0;
        Dl_info info;

        if (access("/var/lib/dpkg/status", R_OK) < 0 || access(DPKG_QUERY, X_OK) < 0)
                test_skip("no dpkg database here (not Debian)");

        ASSERT_OK(inventory_scan(&o, &inv));
        for (size_t i = 0; i < inv->n_problems; i++)
                fprintf(stderr, "problem: %s\n", inv->problems[i]);
        fprintf(stderr, "%zu packages with %zu ELF files, of %zu installed\n", inv->n_packages, inv->n_files,
                inv->stats.packages_seen[INVENTORY_DEBIAN]);
        ASSERT_TRUE(inv->n_packages > 0);

        dpkg = installed();
        ASSERT_EQ(inv->stats.packages_seen[INVENTORY_DEBIAN], hashmap_size(dpkg));
        for (size_t i = 0; i < inv->n_packages; i++) {
                const InventoryPackage *p = &inv->packages[i];
                char key[512];

                ASSERT_EQ(p->manager, INVENTORY_DEBIAN);
                snprintf(key, sizeof(key), "%s %s %s", p->name, p->arch, p->version);
                if (!hashmap_get(dpkg, key))
                        test_fail("%s is no package dpkg-query -W calls installed", key);
                ASSERT_TRUE(p->n_files > 0);
        }

        /* every 20th installed package, found or not: its ELF files are */
        {
                const void *key;
                size_t i = 0, k = 0;

                while (hashmap_iterate(dpkg, &i, NULL, &key)) {
                        char name[256], arch[64];

                        if (k++ % 20 != 0)
                                continue;
                        ASSERT_EQ(sscanf(key, "%255s %63s", name, arch), 2);
                        free_keys(listed(inv, name, arch, &wanted_files));
                }
        }
        free_keys(dpkg);

        /* every 20th package's files against dpkg-query -L */
        for (size_t i = 0; i < inv->n_packages; i += 20) {
                const InventoryPackage *p = &inv->packages[i];
                Hashmap *files = listed(inv, p->name, p->arch, &wanted_files);

                for (size_t j = 0; j < p->n_files; j++)
                        if (!hashmap_get(files, p->files[j]))
                                test_fail("%s: %s is not in dpkg-query -L %s", p->name, p->files[j], p->name);
                checked += p->n_files;
                free_keys(files);
        }
        fprintf(stderr, "%zu files checked against dpkg-query -L; %zu ELF files listed there found\n",
                checked, wanted_files);

        /* the C library this program runs with, by its real path (a
         * function sanitizers do not wrap) */
        ASSERT_TRUE(dladdr((void *) gnu_get_libc_version, &info) != 0);
        ASSERT_NOT_NULL(realpath(info.dli_fname, real));
        libc = inventory_find_file(inv, real);
        if (!libc)
                test_fail("%s (%s) is in no package", real, info.dli_fname);
        ASSERT_STREQ(libc->name, "libc6");
        fprintf(stderr, "%s (%s): %s %s\n", info.dli_fname, real, libc->name, libc->version);
        return 0;
}
