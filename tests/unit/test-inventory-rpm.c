/* SPDX-License-Identifier: GPL-2.0-or-later */
/* RPM packages for real: rpmbuild makes a package holding a small shared
 * library (and a symlink to it, and an executable), rpm installs it into
 * a private root with its own database, and the inventory reads that
 * database with the rpm program, as on a RHEL node or a node image.
 * Skipped (77) without rpm, rpmbuild or a C compiler. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inventory/internal.h"
#include "tests.h"
#include "util.h"

static char dir[] = "/tmp/lmk-inventory-rpm-XXXXXX";

static const char *at(const char *format, ...) _printf_(1, 2);
static const char *at(const char *format, ...) {
        static char buf[8][PATH_MAX];
        static unsigned next;
        char rel[PATH_MAX], real[PATH_MAX];
        char *p = buf[next++ % 8];
        va_list ap;

        va_start(ap, format);
        vsnprintf(rel, sizeof(rel), format, ap);
        va_end(ap);
        ASSERT_NOT_NULL(realpath(dir, real));
        if (snprintf(p, PATH_MAX, "%s/%s", real, rel) >= PATH_MAX)
                test_fail("path too long: %s", rel);
        return p;
}

static void sh(const char *format, ...) _printf_(1, 2);
static void sh(const char *format, ...) {
        char cmd[8192];
        va_list ap;
        int r;

        va_start(ap, format);
        vsnprintf(cmd, sizeof(cmd), format, ap);
        va_end(ap);
        r = system(cmd);
        if (r != 0) {
                fprintf(stderr, "   %s: exit %d; its log:\n", cmd, r);
                snprintf(cmd, sizeof(cmd), "tail -n 20 %s/log >&2", dir);
                (void) system(cmd);
                test_fail("a command to build the test RPM failed");
        }
}

static bool have(const char *program) {
        char cmd[256];

        snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", program);
        return system(cmd) == 0;
}

static void write_file(const char *path, const char *text) {
        FILE *f = fopen(path, "we");

        ASSERT_NOT_NULL(f);
        ASSERT_TRUE(fputs(text, f) >= 0);
        ASSERT_EQ(fclose(f), 0);
}

static const InventoryPackage *find(const Inventory *inv, const char *name) {
        for (size_t i = 0; i < inv->n_packages; i++)
                if (inv->packages[i].manager == INVENTORY_RPM && streq(inv->packages[i].name, name))
                        return &inv->packages[i];
        return NULL;
}

static bool problem(const Inventory *inv, const char *part) {
        for (size_t i = 0; i < inv->n_problems; i++)
                if (strstr(inv->problems[i], part))
                        return true;
        return false;
}

static Inventory *scan(const char *dbpath) {
        const char *rpm[] = { dbpath, NULL }, *none[] = { NULL };
        InventoryOptions o = { .roots = { none, none, none, none, rpm, none } };
        Inventory *inv;

        ASSERT_OK(inventory_scan(&o, &inv));
        for (size_t i = 0; i < inv->n_packages; i++)
                fprintf(stderr, "   %s %s %s %s: %zu files, %" PRIu64 " bytes\n",
                        inventory_manager_to_string(inv->packages[i].manager), inv->packages[i].name,
                        inv->packages[i].version, inv->packages[i].arch ?: "-", inv->packages[i].n_files,
                        inv->packages[i].size);
        for (size_t i = 0; i < inv->n_problems; i++)
                fprintf(stderr, "   problem: %s\n", inv->problems[i]);
        return inv;
}

static void build_rpms(void) {
        sh("mkdir -p %s/src %s/root %s/top", dir, dir, dir);
        write_file(at("src/tiny.c"), "int tiny(void) { return 42; }\nint main(void) { return 0; }\n");
        sh("cc -shared -fPIC -o %s %s >%s/log 2>&1", at("src/libtiny.so.1.0"), at("src/tiny.c"), dir);
        sh("cc -o %s %s >%s/log 2>&1", at("src/tinyexe"), at("src/tiny.c"), dir);
        write_file(at("tiny.spec"),
                   "Name: tiny\nEpoch: 2\nVersion: 1.2\nRelease: 3.lmk\nSummary: a test\nLicense: MIT\n"
                   "%description\na test\n"
                   "%install\n"
                   "mkdir -p %{buildroot}/usr/lib64 %{buildroot}/usr/bin %{buildroot}/usr/share/doc/tiny\n"
                   "cp %{_sourcedir}/libtiny.so.1.0 %{buildroot}/usr/lib64/\n"
                   "ln -s libtiny.so.1.0 %{buildroot}/usr/lib64/libtiny.so.1\n"
                   "cp %{_sourcedir}/tinyexe %{buildroot}/usr/bin/\n"
                   "echo hello > %{buildroot}/usr/share/doc/tiny/README\n"
                   "%files\n/usr/lib64/libtiny.so.1.0\n/usr/lib64/libtiny.so.1\n/usr/bin/tinyexe\n"
                   "/usr/share/doc/tiny/README\n");
        /* a second package with nothing the inventory keeps */
        write_file(at("docs.spec"),
                   "Name: tiny-docs\nVersion: 1\nRelease: 1\nSummary: docs\nLicense: MIT\nBuildArch: noarch\n"
                   "%description\ndocs\n%install\nmkdir -p %{buildroot}/usr/share/doc/tiny-docs\n"
                   "echo words > %{buildroot}/usr/share/doc/tiny-docs/README\n"
                   "%files\n/usr/share/doc/tiny-docs/README\n");
        sh("cd %s && for s in tiny docs; do rpmbuild -bb --define '_topdir %s' --define '_sourcedir %s' "
           "--define 'debug_package %%{nil}' --define '_build_id_links none' $s.spec; done >%s/log 2>&1",
           dir, at("top"), at("src"), dir);
        /* Debian's rpm keeps its database in ~/.rpmdb unless told */
        sh("rpm -i --nodeps --root %s --dbpath /var/lib/rpm %s/RPMS/*/tiny-*.rpm %s/RPMS/noarch/tiny-docs-*.rpm "
           ">%s/log 2>&1", at("root"), at("top"), at("top"), dir);
}

TEST(installed) {
        _cleanup_(inventory_freep) Inventory *inv = scan(at("root/var/lib/rpm"));
        const InventoryPackage *p;
        char real[PATH_MAX];

        p = find(inv, "tiny");
        ASSERT_NOT_NULL(p);
        ASSERT_STREQ(p->version, "2:1.2-3.lmk");
        ASSERT_NOT_NULL(p->arch);
        ASSERT_TRUE(p->arch[0] != '\0');
        ASSERT_NULL(p->prefix);
        ASSERT_NULL(p->hash);
        ASSERT_TRUE(p->size > 0);
        /* the real files below the root: the library itself, not its link */
        ASSERT_EQ(p->n_files, 2);
        ASSERT_STREQ(p->files[0], at("root/usr/bin/tinyexe"));
        ASSERT_STREQ(p->files[1], at("root/usr/lib64/libtiny.so.1.0"));
        ASSERT_NOT_NULL(realpath(at("root/usr/lib64/libtiny.so.1"), real));
        ASSERT_STREQ(inventory_find_file(inv, real)->name, "tiny");
        /* documentation only: not reported */
        ASSERT_NULL(find(inv, "tiny-docs"));
        ASSERT_EQ(inv->stats.packages_seen[INVENTORY_RPM], 2);
        ASSERT_EQ(inv->n_problems, 0);
}

TEST(no_database) {
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        struct stat st;

        /* a configured folder without a database: named, and rpm is not
         * run there (it would create a database) */
        sh("mkdir -p %s/empty", dir);
        inv = scan(at("empty"));
        ASSERT_EQ(inv->n_packages, 0);
        ASSERT_TRUE(problem(inv, "holds no RPM database"));
        ASSERT_TRUE(stat(at("empty/rpmdb.sqlite"), &st) < 0 && errno == ENOENT);
        inv = inventory_free(inv);
        inv = scan(at("missing/var/lib/rpm"));
        ASSERT_TRUE(problem(inv, "rpm: cannot find"));
}

int main(void) {
        char cmd[PATH_MAX + 16];

        if (!have("rpm") || !have("rpmbuild") || !have("cc")) {
                fprintf(stderr, "SKIP: needs rpm, rpmbuild and cc (Debian: apt-get install rpm gcc)\n");
                return 77;
        }
        ASSERT_NOT_NULL(mkdtemp(dir));
        build_rpms();
        RUN(installed);
        RUN(no_database);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        ASSERT_EQ(system(cmd), 0);
        return 0;
}
