/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The software inventory on a node built here in a temporary folder: a
 * dpkg database with symlinked library names and an alternatives chain, a
 * Spack tree, an EasyBuild installpath and /opt trees, with the things a
 * real node has (a symlink loop, packages without ELF files, a cut status
 * file, a broken spec.json). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inventory/internal.h"
#include "tests.h"
#include "util.h"

static char dir[] = "/tmp/lmk-inventory-XXXXXX";
static char real_dir[PATH_MAX];

static const char *at(const char *format, ...) _printf_(1, 2);
static const char *at(const char *format, ...) {
        static char buf[8][PATH_MAX];
        static unsigned next;
        char rel[PATH_MAX];
        char *p = buf[next++ % 8];
        va_list ap;

        va_start(ap, format);
        vsnprintf(rel, sizeof(rel), format, ap);
        va_end(ap);
        if (snprintf(p, PATH_MAX, "%s/%s", dir, rel) >= PATH_MAX)
                test_fail("path too long: %s", rel);
        return p;
}

/* The path the inventory reports: below the real temporary folder. */
static const char *real(const char *rel) {
        static char buf[8][PATH_MAX];
        static unsigned next;
        char *p = buf[next++ % 8];

        if (snprintf(p, PATH_MAX, "%s/%s", real_dir, rel) >= PATH_MAX)
                test_fail("path too long: %s", rel);
        return p;
}

static void mkdirs(const char *rel) {
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/%s", dir, rel);
        for (char *p = path + strlen(dir) + 1; (p = strchr(p, '/')); p++) {
                *p = '\0';
                ASSERT_TRUE(mkdir(path, 0755) == 0 || errno == EEXIST);
                *p = '/';
        }
        ASSERT_TRUE(mkdir(path, 0755) == 0 || errno == EEXIST);
}

static void parent(const char *rel) {
        char d[PATH_MAX], *slash;

        snprintf(d, sizeof(d), "%s", rel);
        slash = strrchr(d, '/');
        if (slash) {
                *slash = '\0';
                mkdirs(d);
        }
}

static void file(const char *rel, const char *text, size_t n, mode_t mode) {
        int fd;

        parent(rel);
        fd = open(at("%s", rel), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(loop_write(fd, text, n));
        ASSERT_OK(fchmod(fd, mode));
        close(fd);
}

static void text(const char *rel, const char *s) {
        file(rel, s, strlen(s), 0644);
}

/* An ELF header's worth: what the inventory reads is the magic. */
static void elf(const char *rel, mode_t mode) {
        char header[64] = "\177ELF\2\1\1";

        file(rel, header, sizeof(header), mode);
}

static void link_to(const char *rel, const char *target) {
        parent(rel);
        ASSERT_TRUE(symlink(target, at("%s", rel)) == 0);
}

static const InventoryPackage *find(const Inventory *inv, InventoryManager m, const char *name) {
        for (size_t i = 0; i < inv->n_packages; i++)
                if (inv->packages[i].manager == m && streq(inv->packages[i].name, name))
                        return &inv->packages[i];
        return NULL;
}

/* What a scan found, in the test's log. */
static void dump(const Inventory *inv) {
        for (size_t i = 0; i < inv->n_packages; i++)
                fprintf(stderr, "   %s %s %s: %zu files\n", inventory_manager_to_string(inv->packages[i].manager),
                        inv->packages[i].name, inv->packages[i].version, inv->packages[i].n_files);
        for (size_t i = 0; i < inv->n_problems; i++)
                fprintf(stderr, "   problem: %s\n", inv->problems[i]);
}

static bool problem(const Inventory *inv, const char *part1, const char *part2) {
        for (size_t i = 0; i < inv->n_problems; i++)
                if (strstr(inv->problems[i], part1) && (!part2 || strstr(inv->problems[i], part2)))
                        return true;
        return false;
}

static void assert_files(const InventoryPackage *p, const char *const *want) {
        size_t n = 0;

        ASSERT_NOT_NULL(p);
        for (; want[n]; n++) {
                if (n >= p->n_files)
                        test_fail("%s: %zu files, missing %s", p->name, p->n_files, want[n]);
                ASSERT_STREQ(p->files[n], real(want[n]));
        }
        ASSERT_EQ(p->n_files, n);
}

static uint64_t blocks(const char *rel) {
        struct stat st;

        ASSERT_OK(lstat(at("%s", rel), &st));
        return S_ISREG(st.st_mode) ? (uint64_t) st.st_blocks * 512 : 0;
}

static void build_dpkg(void) {
        char status[8192];

        /* files */
        elf("usr/lib/libfoo.so.1.2.3", 0644);
        link_to("usr/lib/libfoo.so.1", "libfoo.so.1.2.3");
        link_to("usr/lib/libfoo.so", "libfoo.so.1");
        elf("usr/lib/libbar.so.1", 0644);
        link_to("lib", "usr/lib");                      /* merged /usr */
        elf("usr/lib/blas/libblas.so.3", 0644);
        elf("usr/lib/openblas/libblas.so.3", 0644);
        /* update-alternatives: in no package's list */
        link_to("etc/alternatives/libblas.so.3", real("usr/lib/openblas/libblas.so.3"));
        link_to("usr/lib/libblas.so.3", real("etc/alternatives/libblas.so.3"));
        link_to("usr/lib/libblas.so", "libblas.so.3");
        elf("usr/bin/hello", 0755);
        elf("usr/bin/hello-data", 0644);                /* no x bit: no executable */
        text("usr/bin/script", "#!/bin/sh\necho hello, this is no ELF file at all and long enough\n");
        ASSERT_OK(chmod(at("usr/bin/script"), 0755));
        elf("usr/libexec/tool-real", 0755);             /* in no list */
        link_to("usr/bin/tool", "../libexec/tool-real");
        link_to("usr/bin/looping", "looping");
        file("usr/lib/libshort.so", "\177ELF", 4, 0644); /* too short for an ELF header */
        text("usr/share/doc/readme", "words\n");
        elf("usr/bin/early", 0755);
        elf("usr/bin/late", 0755);

        snprintf(status, sizeof(status),
                 "Package: libfoo1\nStatus: install ok installed\nPriority: optional\nInstalled-Size: 123\n"
                 "Architecture: amd64\nMulti-Arch: same\nVersion: 1.2.3-1\nDescription: foo\n a library\n .\n more\n\n"
                 "Package: libfoo-dev\nStatus: install ok installed\nArchitecture: amd64\nVersion: 1.2.3-1\n\n"
                 "Package: libbar1\nStatus: hold ok installed\nArchitecture: amd64\nVersion: 2:0.9~rc1+dfsg-3\n"
                 "Installed-Size: 7\n\n"
                 "Package: libblas3\nStatus: install ok installed\nArchitecture: amd64\nVersion: 3.11.0-2\n\n"
                 "package: libopenblas0\nstatus: install ok installed\narchitecture: amd64\nversion: 0.3.21+ds-4\n\n"
                 "Package: libblas-dev\nStatus: install ok installed\nArchitecture: amd64\nVersion: 3.11.0-2\n\n"
                 "Package: hello\nStatus: install ok installed\nArchitecture: amd64\nVersion: 2.10-3\n\n"
                 "Package: scripts\nStatus: install ok installed\nArchitecture: all\nVersion: 1\n\n"
                 "Package: tool-wrapper\nStatus: install ok installed\nArchitecture: amd64\nVersion: 1.0\n\n"
                 "Package: docs-only\nStatus: install ok installed\nArchitecture: all\nVersion: 1.0\n\n"
                 "Package: removed\nStatus: deinstall ok config-files\nArchitecture: amd64\nVersion: 1.0\n\n"
                 "Package: ../../evil\nStatus: install ok installed\nArchitecture: amd64\nVersion: 1.0\n\n"
                 "Package: twice\nPackage: twice\nStatus: install ok installed\nArchitecture: amd64\nVersion: 1.0\n\n"
                 "Package: no-list\nStatus: install ok installed\nArchitecture: amd64\nVersion: 1.0\n\n");
        text("dpkg/status", status);
        {
                char list[4096];

                snprintf(list, sizeof(list), "/.\n%s\n%s\n%s\n", at("usr"), at("usr/lib"), at("usr/lib/libfoo.so.1.2.3"));
                text("dpkg/info/libfoo1:amd64.list", list);
                snprintf(list, sizeof(list), "%s\n%s\n", at("usr/lib/libfoo.so.1"), at("usr/lib/libfoo.so"));
                text("dpkg/info/libfoo-dev.list", list);
                snprintf(list, sizeof(list), "%s\n", at("lib/libbar.so.1"));
                text("dpkg/info/libbar1.list", list);
                snprintf(list, sizeof(list), "%s\n", at("usr/lib/blas/libblas.so.3"));
                text("dpkg/info/libblas3.list", list);
                snprintf(list, sizeof(list), "%s\n", at("usr/lib/openblas/libblas.so.3"));
                text("dpkg/info/libopenblas0.list", list);
                snprintf(list, sizeof(list), "%s\n", at("usr/lib/libblas.so"));
                text("dpkg/info/libblas-dev.list", list);
                snprintf(list, sizeof(list), "%s\n%s\n%s\n", at("usr/bin/hello"), at("usr/bin/hello-data"),
                         at("usr/lib/libshort.so"));
                text("dpkg/info/hello.list", list);
                snprintf(list, sizeof(list), "%s\n", at("usr/bin/script"));
                text("dpkg/info/scripts.list", list);
                snprintf(list, sizeof(list), "%s\n%s\n", at("usr/bin/tool"), at("usr/bin/looping"));
                text("dpkg/info/tool-wrapper.list", list);
                /* a last line without its newline is not read */
                snprintf(list, sizeof(list), "%s\n%s", at("usr/share/doc/readme"), at("usr/bin/hello"));
                text("dpkg/info/docs-only.list", list);
                snprintf(list, sizeof(list), "%s\n", at("usr/bin/hello"));
                text("dpkg/info/removed.list", list);

                /* a second database, cut short inside its last entry */
                text("dpkg-cut/status", "Package: early\nStatus: install ok installed\nArchitecture: amd64\n"
                                        "Version: 1.0\n\nPackage: late\nStatus: install ok installed\n"
                                        "Architecture: amd64\nVersion: 1.");
                snprintf(list, sizeof(list), "%s\n", at("usr/bin/early"));
                text("dpkg-cut/info/early.list", list);
                snprintf(list, sizeof(list), "%s\n", at("usr/bin/late"));
                text("dpkg-cut/info/late.list", list);
        }
}

#define ZLIB "spack/linux-debian12-x86_64/gcc-12.2.0/zlib-1.3-abcdefgh"
#define OLD "spack/linux-ubuntu18.04-x86_64/gcc-7.5.0/old-0.9-oooooooo"
#define BROKEN "spack/linux-debian12-x86_64/gcc-12.2.0/broken-1.0-qqqqqqqq"

static void build_spack(void) {
        /* the prefix's own node second: it is found by its hash */
        text(ZLIB "/.spack/spec.json",
             "{\"spec\": {\"_meta\": {\"version\": 4}, \"nodes\": ["
             "{\"name\": \"gcc-runtime\", \"version\": \"12.2.0\", \"hash\": \"rrrrrrrr\"},"
             "{\"name\": \"zlib\", \"version\": \"1.3\", \"arch\": {\"platform\": \"linux\"},"
             " \"hash\": \"abcdefgh\", \"dependencies\": [{\"name\": \"gcc-runtime\", \"hash\": \"rrrrrrrr\"}]}"
             "]}}\n");
        elf(ZLIB "/lib/libz.so.1.3", 0755);
        link_to(ZLIB "/lib/libz.so.1", "libz.so.1.3");
        link_to(ZLIB "/lib/libz.so", "libz.so.1");
        text(ZLIB "/include/zlib.h", "/* zlib */\n");
        elf(ZLIB "/share/plugin.so", 0644);             /* not below lib/ or bin/ */
        /* loops: a folder linking to its parent, and to the prefix */
        link_to(ZLIB "/lib/loop", ".");
        mkdirs(ZLIB "/lib/a/b");
        link_to(ZLIB "/lib/a/b/up", "../../..");
        /* and two names leading to each other */
        link_to(ZLIB "/lib/libloop.so", "libloop.so.1");
        link_to(ZLIB "/lib/libloop.so.1", "libloop.so");
        /* a link to a file dpkg has: still Debian's */
        link_to(ZLIB "/lib/libfoo-copy.so", real("usr/lib/libfoo.so.1.2.3"));
        /* a link into /proc is never read */
        link_to(ZLIB "/lib/libkmsg.so", "/proc/kmsg");

        /* Spack before 0.17 */
        text(OLD "/.spack/spec.yaml", "spec:\n- old:\n    version: 0.9\n    arch:\n      target: x86_64\n"
                                      "    hash: oooooooo\n");
        elf(OLD "/lib/libold.so.0", 0644);

        text(BROKEN "/.spack/spec.json", "{\"spec\": {\"nodes\": [{\"name\": \"broken\"");
        elf(BROKEN "/lib/libbroken.so", 0644);
}

static void build_easybuild(void) {
        mkdirs("eb/software/GCC/12.3.0/easybuild");
        text("eb/software/GCC/12.3.0/easybuild/GCC-12.3.0.eb", "name = 'GCC'\n");
        elf("eb/software/GCC/12.3.0/lib64/libgcc_s.so.1", 0644);
        elf("eb/software/GCC/12.3.0/bin/gcc", 0755);
        link_to("eb/software/GCC/12.3.0/lib", "lib64");
        elf("eb/software/NoEB/1.0/lib/libnoeb.so", 0644);       /* no easybuild/ folder */
}

static void build_opt(void) {
        elf("opt/cuda-12.2/lib64/libcudart.so.12", 0644);
        elf("opt/openmpi/4.1.5/lib/libmpi.so.40", 0644);
        elf("opt/openmpi/4.1.5/bin/mpirun", 0755);
        elf("opt/openmpi/notes/lib/libnotes.so", 0644);         /* "notes" is no version */
        text("opt/docs-only/share/doc", "text\n");
        text("opt/scripts/bin/run", "#!/bin/sh\nexec true # no ELF file, long enough to be read\n");
        ASSERT_OK(chmod(at("opt/scripts/bin/run"), 0755));
        elf("opt/loopy/lib/libloopy.so", 0644);
        link_to("opt/loopy/lib/self", "..");
        link_to("opt/loopy/bin", "/");
}

static Inventory *scan(void) {
        const char *debian[] = { at("dpkg"), at("dpkg-cut"), NULL };
        const char *spack[] = { at("spack"), NULL };
        const char *easybuild[] = { at("eb"), NULL };
        const char *opt[] = { at("opt"), NULL };
        const char *none[] = { NULL };
        InventoryOptions o = { .roots = { debian, spack, easybuild, opt, none, none } };
        Inventory *inv;

        ASSERT_OK(inventory_scan(&o, &inv));
        return inv;
}

TEST(tree) {
        _cleanup_(inventory_freep) Inventory *inv = scan();
        const InventoryPackage *p;

        dump(inv);

        /* Debian: each real file goes to the package that has it itself */
        p = find(inv, INVENTORY_DEBIAN, "libfoo1");
        assert_files(p, (const char *[]) { "usr/lib/libfoo.so.1.2.3", NULL });
        ASSERT_STREQ(p->version, "1.2.3-1");
        ASSERT_STREQ(p->arch, "amd64");
        ASSERT_NULL(p->prefix);
        ASSERT_EQ(p->size, 123 * 1024);
        ASSERT_NULL(find(inv, INVENTORY_DEBIAN, "libfoo-dev"));         /* only links to libfoo1's */
        p = find(inv, INVENTORY_DEBIAN, "libbar1");                     /* held, below a linked folder */
        assert_files(p, (const char *[]) { "usr/lib/libbar.so.1", NULL });
        ASSERT_STREQ(p->version, "2:0.9~rc1+dfsg-3");
        assert_files(find(inv, INVENTORY_DEBIAN, "libblas3"), (const char *[]) { "usr/lib/blas/libblas.so.3", NULL });
        assert_files(find(inv, INVENTORY_DEBIAN, "libopenblas0"),
                     (const char *[]) { "usr/lib/openblas/libblas.so.3", NULL });
        ASSERT_NULL(find(inv, INVENTORY_DEBIAN, "libblas-dev"));
        assert_files(find(inv, INVENTORY_DEBIAN, "hello"), (const char *[]) { "usr/bin/hello", NULL });
        ASSERT_NULL(find(inv, INVENTORY_DEBIAN, "scripts"));
        /* a link to a file no package has counts for the link's package */
        assert_files(find(inv, INVENTORY_DEBIAN, "tool-wrapper"), (const char *[]) { "usr/libexec/tool-real", NULL });
        ASSERT_NULL(find(inv, INVENTORY_DEBIAN, "docs-only"));
        ASSERT_NULL(find(inv, INVENTORY_DEBIAN, "removed"));
        ASSERT_NULL(find(inv, INVENTORY_DEBIAN, "twice"));
        ASSERT_NULL(find(inv, INVENTORY_DEBIAN, "no-list"));
        ASSERT_TRUE(problem(inv, "dpkg/status: 2 entries left out", "a Package name dpkg does not allow"));
        ASSERT_TRUE(problem(inv, "1 installed packages have no file list", "no-list"));
        /* the cut database: what came before the cut is there */
        assert_files(find(inv, INVENTORY_DEBIAN, "early"), (const char *[]) { "usr/bin/early", NULL });
        ASSERT_NULL(find(inv, INVENTORY_DEBIAN, "late"));
        ASSERT_TRUE(problem(inv, "dpkg-cut/status ends inside a package's entry", NULL));

        /* the alternatives chain and the symlinked names lead to the real file */
        ASSERT_STREQ(inventory_find_file(inv, real("usr/lib/openblas/libblas.so.3"))->name, "libopenblas0");
        {
                char r[PATH_MAX];

                ASSERT_NOT_NULL(realpath(at("usr/lib/libblas.so"), r));
                ASSERT_STREQ(r, real("usr/lib/openblas/libblas.so.3"));
                ASSERT_STREQ(inventory_find_file(inv, r)->name, "libopenblas0");
        }
        ASSERT_NULL(inventory_find_file(inv, real("usr/lib/libfoo.so.1")));

        /* Spack */
        p = find(inv, INVENTORY_SPACK, "zlib");
        assert_files(p, (const char *[]) { ZLIB "/lib/libz.so.1.3", NULL });
        ASSERT_STREQ(p->version, "1.3");
        ASSERT_STREQ(p->hash, "abcdefgh");
        ASSERT_STREQ(p->prefix, real(ZLIB));
        ASSERT_EQ(p->size, blocks(ZLIB "/.spack/spec.json") + blocks(ZLIB "/lib/libz.so.1.3") +
                           blocks(ZLIB "/include/zlib.h") + blocks(ZLIB "/share/plugin.so"));
        ASSERT_NULL(find(inv, INVENTORY_SPACK, "gcc-runtime"));
        ASSERT_STREQ(inventory_find_file(inv, real("usr/lib/libfoo.so.1.2.3"))->name, "libfoo1");
        ASSERT_NULL(find(inv, INVENTORY_SPACK, "broken"));
        p = find(inv, INVENTORY_SPACK, "old");
        assert_files(p, (const char *[]) { OLD "/lib/libold.so.0", NULL });
        ASSERT_STREQ(p->version, "0.9");
        ASSERT_STREQ(p->hash, "oooooooo");
        ASSERT_TRUE(problem(inv, BROKEN "/.spack/spec.json", "ends early"));

        /* EasyBuild: lib → lib64 is not followed, lib64 is walked */
        p = find(inv, INVENTORY_EASYBUILD, "GCC");
        assert_files(p, (const char *[]) { "eb/software/GCC/12.3.0/bin/gcc",
                                           "eb/software/GCC/12.3.0/lib64/libgcc_s.so.1", NULL });
        ASSERT_STREQ(p->version, "12.3.0");
        ASSERT_STREQ(p->prefix, real("eb/software/GCC/12.3.0"));
        ASSERT_NULL(find(inv, INVENTORY_EASYBUILD, "NoEB"));

        /* /opt */
        p = find(inv, INVENTORY_OPT, "cuda");
        assert_files(p, (const char *[]) { "opt/cuda-12.2/lib64/libcudart.so.12", NULL });
        ASSERT_STREQ(p->version, "12.2");
        p = find(inv, INVENTORY_OPT, "openmpi");
        assert_files(p, (const char *[]) { "opt/openmpi/4.1.5/bin/mpirun", "opt/openmpi/4.1.5/lib/libmpi.so.40", NULL });
        ASSERT_STREQ(p->version, "4.1.5");
        ASSERT_STREQ(p->prefix, real("opt/openmpi/4.1.5"));
        assert_files(find(inv, INVENTORY_OPT, "loopy"), (const char *[]) { "opt/loopy/lib/libloopy.so", NULL });
        ASSERT_STREQ(find(inv, INVENTORY_OPT, "loopy")->version, "");
        ASSERT_NULL(find(inv, INVENTORY_OPT, "docs-only"));
        ASSERT_NULL(find(inv, INVENTORY_OPT, "scripts"));
        /* the EasyBuild and Spack trees are not /opt trees (no lib/ or bin/ on top) */
        ASSERT_EQ(inv->stats.packages_seen[INVENTORY_OPT], 4);

        ASSERT_EQ(inv->n_packages, 13);
        ASSERT_EQ(inv->n_files, 15);
        /* sorted by manager, then name */
        for (size_t i = 1; i < inv->n_packages; i++)
                ASSERT_TRUE(inv->packages[i - 1].manager < inv->packages[i].manager ||
                            (inv->packages[i - 1].manager == inv->packages[i].manager &&
                             strcmp(inv->packages[i - 1].name, inv->packages[i].name) < 0));
        ASSERT_EQ(strlen(inv->digest), 64);
}

TEST(digest_and_json) {
        _cleanup_(inventory_freep) Inventory *a = scan(), *b = NULL, *c = NULL;
        _cleanup_free_ char *json = NULL;
        json_object *o, *v, *pk;
        size_t n;

        b = scan();
        ASSERT_STREQ(a->digest, b->digest);
        /* a file in no package changes nothing */
        text("usr/share/doc/other", "x\n");
        c = scan();
        ASSERT_STREQ(a->digest, c->digest);
        /* a file in a prefix changes its size, a new library its files */
        text("opt/cuda-12.2/README", "x\n");
        c = inventory_free(c);
        c = scan();
        ASSERT_FALSE(streq(a->digest, c->digest));
        ASSERT_EQ(find(c, INVENTORY_OPT, "cuda")->size, find(a, INVENTORY_OPT, "cuda")->size + blocks("opt/cuda-12.2/README"));
        ASSERT_OK(unlink(at("opt/cuda-12.2/README")));
        elf("opt/cuda-12.2/lib64/libcublas.so.12", 0644);
        c = inventory_free(c);
        c = scan();
        ASSERT_FALSE(streq(a->digest, c->digest));
        ASSERT_EQ(find(c, INVENTORY_OPT, "cuda")->n_files, 2);
        ASSERT_OK(unlink(at("opt/cuda-12.2/lib64/libcublas.so.12")));
        c = inventory_free(c);
        c = scan();
        ASSERT_STREQ(a->digest, c->digest);

        ASSERT_OK(inventory_to_json(a, &json, &n));
        ASSERT_EQ(strlen(json), n);
        o = json_tokener_parse(json);
        ASSERT_NOT_NULL(o);
        ASSERT_TRUE(json_object_object_get_ex(o, "format", &v));
        ASSERT_STREQ(json_object_get_string(v), "lmk-inventory");
        ASSERT_TRUE(json_object_object_get_ex(o, "version", &v));
        ASSERT_EQ(json_object_get_int(v), 1);
        ASSERT_TRUE(json_object_object_get_ex(o, "digest", &v));
        ASSERT_STREQ(json_object_get_string(v), a->digest);
        ASSERT_TRUE(json_object_object_get_ex(o, "packages", &v));
        ASSERT_EQ(json_object_array_length(v), a->n_packages);
        for (size_t i = 0; i < a->n_packages; i++) {
                json_object *name, *files, *prefix, *hash, *arch;

                pk = json_object_array_get_idx(v, i);
                ASSERT_TRUE(json_object_object_get_ex(pk, "name", &name));
                ASSERT_STREQ(json_object_get_string(name), a->packages[i].name);
                ASSERT_TRUE(json_object_object_get_ex(pk, "files", &files));
                ASSERT_EQ(json_object_array_length(files), a->packages[i].n_files);
                ASSERT_EQ(json_object_object_get_ex(pk, "prefix", &prefix), a->packages[i].prefix != NULL);
                ASSERT_EQ(json_object_object_get_ex(pk, "hash", &hash), a->packages[i].manager == INVENTORY_SPACK);
                ASSERT_EQ(json_object_object_get_ex(pk, "arch", &arch), a->packages[i].manager == INVENTORY_DEBIAN);
        }
        json_object_put(o);
}

TEST(roots) {
        const char *missing[] = { at("nothing-here"), NULL }, *none[] = { NULL };
        InventoryOptions o = { .roots = { missing, none, none, none, none, none } };
        _cleanup_(inventory_freep) Inventory *inv = NULL;

        /* a configured root that is not there is named */
        ASSERT_OK(inventory_scan(&o, &inv));
        ASSERT_EQ(inv->n_packages, 0);
        ASSERT_TRUE(problem(inv, "nothing-here/status", NULL));
        inv = inventory_free(inv);

        o.roots[INVENTORY_DEBIAN] = none;
        o.roots[INVENTORY_OPT] = missing;
        ASSERT_OK(inventory_scan(&o, &inv));
        ASSERT_TRUE(problem(inv, "opt: cannot find", "nothing-here"));
        inv = inventory_free(inv);

        /* a spec.json that is no file, one too big */
        mkdirs("spack2/p-1-aaaa/.spack/spec.json");
        elf("spack2/p-1-aaaa/lib/libp.so", 0644);
        {
                const char *spack[] = { at("spack2"), NULL };

                o.roots[INVENTORY_OPT] = none;
                o.roots[INVENTORY_SPACK] = spack;
                ASSERT_OK(inventory_scan(&o, &inv));
                ASSERT_EQ(inv->n_packages, 0);
                ASSERT_TRUE(problem(inv, "spack2/p-1-aaaa/.spack/spec.json", "no regular file"));
                inv = inventory_free(inv);
        }

        /* problems are kept up to a bound, the rest counted */
        for (unsigned i = 0; i < INVENTORY_PROBLEMS_MAX + 6; i++) {
                char rel[64];

                snprintf(rel, sizeof(rel), "spack3/p%u-1-aaaa/.spack/spec.json", i);
                text(rel, "[]");
        }
        {
                const char *spack[] = { at("spack3"), NULL };

                o.roots[INVENTORY_SPACK] = spack;
                ASSERT_OK(inventory_scan(&o, &inv));
                ASSERT_EQ(inv->n_problems, INVENTORY_PROBLEMS_MAX);
                ASSERT_EQ(inv->problems_left_out, 6);
        }
}

TEST(names) {
        ASSERT_TRUE(inventory_name_is_library("libc.so.6"));
        ASSERT_TRUE(inventory_name_is_library("libz.so"));
        ASSERT_TRUE(inventory_name_is_library("libfoo.so.1.2.3"));
        ASSERT_TRUE(inventory_name_is_library("_ssl.cpython-311-x86_64-linux-gnu.so"));
        ASSERT_TRUE(inventory_name_is_library("libsome.solver.so.2"));
        ASSERT_FALSE(inventory_name_is_library(".so"));
        ASSERT_FALSE(inventory_name_is_library("libfoo.so.bak"));
        ASSERT_FALSE(inventory_name_is_library("libfoo.so."));
        ASSERT_FALSE(inventory_name_is_library("libfoo.sock"));
        ASSERT_FALSE(inventory_name_is_library("libfoo.a"));
        ASSERT_TRUE(inventory_dir_is_bin("/usr/bin"));
        ASSERT_TRUE(inventory_dir_is_bin("/usr/lib/jvm/java-17/bin"));
        ASSERT_TRUE(inventory_dir_is_bin("/usr/libexec/gcc"));
        ASSERT_FALSE(inventory_dir_is_bin("/usr/lib/binfmt"));
        ASSERT_FALSE(inventory_dir_is_bin("/usr/share"));
        ASSERT_TRUE(inventory_path_is_special("/proc/kmsg"));
        ASSERT_TRUE(inventory_path_is_special("/dev"));
        ASSERT_FALSE(inventory_path_is_special("/device/x"));
        ASSERT_TRUE(inventory_path_is_special("relative"));
        ASSERT_TRUE(dpkg_name_is_valid("libstdc++6"));
        ASSERT_FALSE(dpkg_name_is_valid("x"));
        ASSERT_FALSE(dpkg_name_is_valid("../x"));
        ASSERT_FALSE(dpkg_name_is_valid("Foo"));
        ASSERT_TRUE(dpkg_version_is_valid("1:2.38.1-5+deb12u3"));
        ASSERT_FALSE(dpkg_version_is_valid("1.0 beta"));
        ASSERT_EQ(inventory_manager_from_string("easybuild"), INVENTORY_EASYBUILD);
        ASSERT_EQ(inventory_manager_from_string("rpm"), INVENTORY_RPM);
        ASSERT_EQ(inventory_manager_from_string("module"), INVENTORY_MODULE);
        ASSERT_ERROR(inventory_manager_from_string("modules"), EINVAL);
}

/* dpkg's status fed in pieces of every size gives the same entries. */
static int count_entry(const DpkgEntry *e, void *userdata) {
        char *seen = userdata;

        strcat(seen, e->package);
        strcat(seen, " ");
        return 0;
}

TEST(status_pieces) {
        static const char status[] =
                "Package: a1\nStatus: install ok installed\nArchitecture: all\nVersion: 1\n\n"
                "Package: b2\r\nStatus: install ok installed\nArchitecture: amd64\nVersion: 2\n"
                "Description: long\n" "                                                              x\n\n\n"
                "Package: c3\nStatus: purge ok not-installed\n\n"
                "Package: d4\nStatus: install ok installed\nArchitecture: amd64\nVersion: 4\n";
        char whole[256] = "";

        for (size_t cut = 0; cut <= sizeof(status) - 1; cut++) {
                char seen[256] = "";
                DpkgStatus p;

                dpkg_status_init(&p, count_entry, seen);
                ASSERT_OK(dpkg_status_feed(&p, status, cut));
                ASSERT_OK(dpkg_status_feed(&p, status + cut, sizeof(status) - 1 - cut));
                ASSERT_OK(dpkg_status_finish(&p));
                ASSERT_FALSE(p.truncated);
                if (cut == 0)
                        snprintf(whole, sizeof(whole), "%s", seen);
                ASSERT_STREQ(seen, whole);
                ASSERT_EQ(p.entries, 4);
        }
        ASSERT_STREQ(whole, "a1 b2 d4 ");
}

static int spec(const char *json, SpackSpec *s, const char **why) {
        return spack_spec_parse(json, strlen(json), NULL, s, why);
}

TEST(spec_json) {
        SpackSpec s;
        const char *why;

        ASSERT_OK(spec("{\"spec\":{\"nodes\":[{\"name\":\"a\",\"version\":\"develop\",\"hash\":\"x1\"}]}} \n", &s, &why));
        ASSERT_STREQ(s.name, "a");
        ASSERT_STREQ(s.version, "develop");
        ASSERT_STREQ(s.hash, "x1");
        ASSERT_ERROR(spec("{\"spec\":[{\"zlib\":{}}]}", &s, &why), EINVAL);
        ASSERT_NOT_NULL(strstr(why, "older than 0.17"));
        ASSERT_ERROR(spec("{\"spec\":{\"nodes\":[{\"name\":\"a/b\",\"version\":\"1\",\"hash\":\"x\"}]}}", &s, &why), EINVAL);
        ASSERT_NOT_NULL(strstr(why, "name"));
        ASSERT_ERROR(spec("{\"spec\":{\"nodes\":[{\"name\":\"a\",\"version\":\"1\",\"hash\":\"X\"}]}}", &s, &why), EINVAL);
        ASSERT_NOT_NULL(strstr(why, "hash"));
        ASSERT_ERROR(spec("{\"spec\":{\"nodes\":[]}}", &s, &why), EINVAL);
        ASSERT_ERROR(spec("{} x", &s, &why), EINVAL);
        ASSERT_ERROR(spec("", &s, &why), EINVAL);
        ASSERT_NOT_NULL(strstr(why, "ends early"));
}

/* ---- Spack before 0.17 ---- */

#define OLD_SPEC                                                                  \
        "spec:\n"                                                                 \
        "- zlib:\n"                                                               \
        "    version: 1.2.11\n"                                                   \
        "    arch:\n"                                                             \
        "      platform: linux\n"                                                 \
        "      target: x86_64\n"                                                  \
        "    compiler:\n"                                                         \
        "      name: gcc\n"                                                       \
        "      version: 7.5.0\n"                                                  \
        "    parameters:\n"                                                       \
        "      cflags: []\n"                                                      \
        "    dependencies:\n"                                                     \
        "      gcc-runtime:\n"                                                    \
        "        hash: zzzzzzzz\n"                                                \
        "    hash: 5xkcspnz\n"                                                    \
        "    full_hash: qqqqqqqq\n"                                               \
        "- gcc-runtime:\n"                                                        \
        "    version: '7.5.0'\n"                                                  \
        "    hash: zzzzzzzz\n"

static int yaml(const char *text, const char *hint, SpackSpec *s, const char **why) {
        return spack_spec_yaml_parse(text, strlen(text), hint, s, why);
}

TEST(spec_yaml) {
        SpackSpec s;
        const char *why;

        ASSERT_OK(yaml(OLD_SPEC, NULL, &s, &why));
        ASSERT_STREQ(s.name, "zlib");
        ASSERT_STREQ(s.version, "1.2.11");
        ASSERT_STREQ(s.hash, "5xkcspnz");
        ASSERT_OK(yaml(OLD_SPEC, "zzzzzzzz", &s, &why));
        ASSERT_STREQ(s.name, "gcc-runtime");
        ASSERT_STREQ(s.version, "7.5.0");
        ASSERT_OK(yaml(OLD_SPEC, "nothere", &s, &why));
        ASSERT_STREQ(s.name, "zlib");
        /* the list indented, a document start, no newline at the end */
        ASSERT_OK(yaml("---\nspec:\n  - a:\n      version: \"1\"\n      hash: x1", NULL, &s, &why));
        ASSERT_STREQ(s.name, "a");
        ASSERT_STREQ(s.version, "1");
        ASSERT_STREQ(s.hash, "x1");

        ASSERT_ERROR(yaml("{\"spec\": {}}", NULL, &s, &why), EINVAL);
        ASSERT_NOT_NULL(strstr(why, "spec:"));
        ASSERT_ERROR(yaml("spec:\n- a:\n\tversion: 1\n", NULL, &s, &why), EINVAL);
        ASSERT_NOT_NULL(strstr(why, "tab"));
        ASSERT_ERROR(yaml("spec:\n- a:\n    version: 1\n", NULL, &s, &why), EINVAL);
        ASSERT_NOT_NULL(strstr(why, "hash"));
        ASSERT_ERROR(yaml("spec:\n- a:\n    version: 1\n    version: 2\n    hash: x\n", NULL, &s, &why), EINVAL);
        ASSERT_ERROR(yaml("spec:\n- a:\n    version: \"1\\x\"\n    hash: x\n", NULL, &s, &why), EINVAL);
        ASSERT_ERROR(yaml("spec:\n- a/b:\n    version: 1\n    hash: x\n", NULL, &s, &why), EINVAL);
        ASSERT_ERROR(yaml("spec:\n- a:\n    version: 1\n  hash: x\n", NULL, &s, &why), EINVAL);
        ASSERT_ERROR(yaml("spec:\n", NULL, &s, &why), EINVAL);
        ASSERT_ERROR(yaml("", NULL, &s, &why), EINVAL);
}

/* ---- rpm -qa ---- */

typedef struct RpmSeen {
        char text[1024];
} RpmSeen;

static int rpm_seen_package(const RpmEntry *e, void *userdata) {
        RpmSeen *seen = userdata;
        size_t n = strlen(seen->text);

        snprintf(seen->text + n, sizeof(seen->text) - n, "P %s %s %s %" PRIu64 ";", e->name, e->version, e->arch,
                 e->size);
        return 0;
}

static int rpm_seen_file(unsigned mode, const char *path, size_t len, void *userdata) {
        RpmSeen *seen = userdata;
        size_t n = strlen(seen->text);

        ASSERT_EQ(strlen(path), len);
        snprintf(seen->text + n, sizeof(seen->text) - n, "F %o %s;", mode, path);
        return 0;
}

TEST(rpm_query) {
        static const char out[] =
                "P\tglibc\t2.34-100.el9\tx86_64\t6543210\n"
                "F\t40755\t/usr/lib64\n"
                "F\t100755\t/usr/lib64/libc.so.6\n"
                "P\tgpg-pubkey\t8483c65d-5ccc5b19\t(none)\t0\n"
                "P\tshadow-utils\t2:4.9-8.el9\tx86_64\t3800000\n"
                "F\t100755\t/usr/bin/with space\n"
                "P\tbad name\t1-1\tx86_64\t1\n"
                "F\t100755\t/usr/bin/bad\n"
                "garbage\n"
                "F\t999\t/x\n"
                "P\tnoarch-docs\t1.0-1\tnoarch\t42\n"
                "F\t100644\t/usr/share/doc/x\n";
        char whole[1024] = "";

        for (size_t cut = 0; cut < sizeof(out) - 1; cut++) {
                RpmSeen seen = {};
                RpmQuery q;

                rpm_query_init(&q, rpm_seen_package, rpm_seen_file, &seen);
                ASSERT_OK(rpm_query_feed(&q, out, cut));
                ASSERT_OK(rpm_query_feed(&q, out + cut, sizeof(out) - 1 - cut));
                ASSERT_OK(rpm_query_finish(&q));
                ASSERT_FALSE(q.truncated);
                ASSERT_EQ(q.packages, 3);
                ASSERT_EQ(q.pseudo, 1);
                ASSERT_EQ(q.malformed, 3);
                ASSERT_EQ(q.first_bad_line, 7);
                if (cut == 0)
                        snprintf(whole, sizeof(whole), "%s", seen.text);
                ASSERT_STREQ(seen.text, whole);
        }
        ASSERT_STREQ(whole, "P glibc 2.34-100.el9 x86_64 6543210;F 40755 /usr/lib64;F 100755 /usr/lib64/libc.so.6;"
                            "P shadow-utils 2:4.9-8.el9 x86_64 3800000;F 100755 /usr/bin/with space;"
                            "P noarch-docs 1.0-1 noarch 42;F 100644 /usr/share/doc/x;");
        {
                RpmQuery q;

                rpm_query_init(&q, NULL, NULL, NULL);
                ASSERT_OK(rpm_query_feed(&q, out, 30));
                ASSERT_OK(rpm_query_finish(&q));
                ASSERT_TRUE(q.truncated);
        }
}

/* ---- modulefiles ---- */

static ModuleInfo modulefile(const char *text, bool lua) {
        ModuleInfo m;

        ASSERT_OK(modulefile_parse(text, strlen(text), lua, "fftw", "3.3.10", &m));
        return m;
}

static void assert_paths(const ModuleInfo *m, const char *const *want) {
        size_t n = 0;

        for (size_t i = 0; i < m->n_paths; i++)
                fprintf(stderr, "   %s %s\n", m->kinds[i] == MODULE_PATH_ROOT ? "prefix" : "folder", m->paths[i]);

        for (; want[n]; n++) {
                if (n >= m->n_paths)
                        test_fail("%zu paths, missing %s", m->n_paths, want[n]);
                /* "R:" marks a prefix named in *_ROOT */
                if (strncmp(want[n], "R:", 2) == 0) {
                        ASSERT_EQ(m->kinds[n], MODULE_PATH_ROOT);
                        ASSERT_STREQ(m->paths[n], want[n] + 2);
                } else {
                        ASSERT_EQ(m->kinds[n], MODULE_PATH_DIR);
                        ASSERT_STREQ(m->paths[n], want[n]);
                }
        }
        ASSERT_EQ(m->n_paths, n);
}

TEST(modulefile_tcl) {
        ModuleInfo m;

        m = modulefile("#%Module1.0\n"
                       "## comment: prepend-path PATH /not/this\n"
                       "set version 4.1.5\n"
                       "set root /apps/openmpi/$version\n"
                       "prepend-path PATH $root/bin\n"
                       "prepend-path --delim : LD_LIBRARY_PATH \"${root}/lib:${root}//lib/extra/\"\n"
                       "append-path -d , LIBRARY_PATH {/apps/braced/$root/lib},/apps/b2/lib\n"
                       "setenv MPI_HOME $root\n"
                       "setenv OTHER /apps/other\n"
                       "prepend-path MANPATH $root/share/man\n"
                       "    if {[module-info mode load]} { puts stderr hi }\n"
                       "prepend-path PATH $env(HOME)/bin\n"
                       "prepend-path PATH [exec /bin/id]/bin\n"
                       "prepend-path PATH $unset/bin\n"
                       "prepend-path PATH \"/apps/unterminated/bin\n"
                       "set root [pwd]\n"
                       "prepend-path PATH $root/bin2\n"
                       "setenv X_ROOT relative/path\n"
                       /* as Spack writes them */
                       "proc ModulesHelp { } {\n"
                       "puts stderr {zlib}\n"
                       "}\n"
                       "prepend-path --delim \":\" LD_LIBRARY_PATH \"/opt/spack/zlib-1.3-abc/lib\"", false);
        assert_paths(&m, (const char *[]) { "/apps/openmpi/4.1.5/bin", "/apps/openmpi/4.1.5/lib",
                                            "/apps/openmpi/4.1.5/lib/extra", "/apps/braced/$root/lib", "/apps/b2/lib",
                                            "R:/apps/openmpi/4.1.5", "/opt/spack/zlib-1.3-abc/lib", NULL });
        ASSERT_EQ(m.unresolved, 5);
        module_info_done(&m);

        /* a line longer than what is read is skipped, the next still read */
        {
                size_t n = 3 * DPKG_LINE_MAX;
                _cleanup_free_ char *t = malloc(15 + n + 64);

                ASSERT_NOT_NULL(t);
                memcpy(t, "#%Module\nset x ", 15);
                memset(t + 15, 'a', n);
                snprintf(t + 15 + n, 64, "\nprepend-path PATH /apps/after/bin\n");
                ASSERT_OK(modulefile_parse(t, strlen(t), false, "x", "1", &m));
                assert_paths(&m, (const char *[]) { "/apps/after/bin", NULL });
                ASSERT_EQ(m.lines_cut, 1);
                module_info_done(&m);
        }
        /* more paths than kept, more variables than kept */
        {
                char t[8192] = "#%Module\n";

                for (int i = 0; i < MODULE_VARS_MAX + 4; i++)
                        snprintf(t + strlen(t), sizeof(t) - strlen(t), "set v%d /p%d\n", i, i);
                for (int i = 0; i < MODULE_VARS_MAX + 4; i++)
                        snprintf(t + strlen(t), sizeof(t) - strlen(t), "prepend-path PATH $v%d/bin\n", i);
                m = modulefile(t, false);
                ASSERT_EQ(m.n_paths, MODULE_PATHS_MAX);
                module_info_done(&m);
        }
}

TEST(modulefile_lua) {
        ModuleInfo m;

        m = modulefile("-- prepend_path(\"PATH\", \"/not/this/bin\")\n"
                       "--[[\n"
                       "prepend_path(\"PATH\", \"/commented/bin\")\n"
                       "]]\n"
                       "local base = '/apps'\n"
                       "local root = pathJoin(base, \"fftw\", \"3.3.10\")\n"
                       "prepend_path(\"PATH\", pathJoin(root, \"bin\"))\n"
                       "prepend_path( \"LD_LIBRARY_PATH\" , root .. \"/lib\" )\n"
                       "append_path(\"LIBRARY_PATH\", [[/apps/long/lib]])\n"
                       "setenv(\"FFTW_ROOT\", root)\n"
                       "if (mode() == \"load\") then prepend_path(\"PATH\", \"/apps/inif/bin\") end\n"
                       "prepend_path(\"PATH\", os.getenv(\"HOME\") .. \"/bin\")\n"
                       "prepend_path(\"PATH\", pathJoin(myModuleVersion, \"bin\"))\n"
                       "prepend_path(\"PATH\", pathJoin(\"/sw\", myModuleFullName(), \"bin\"))\n"
                       "prepend_path(\"PATH\", \"/sw/\" .. myModuleName() .. \"-\" .. myModuleVersion() .. \"/bin\")\n"
                       "prepend_path(\"PATH\", \"/apps/esc\\\\aped/bin\")\n"
                       "prepend_path(\"PATH\", \"/apps/unterminated/bin)\n"
                       "prepend_path{\"PATH\", \"/apps/table/bin\", priority=10}\n"
                       "local root = os.getenv(\"X\")\n"
                       "prepend_path(\"PATH\", root .. \"/sbin\")\n"
                       "prepend_path(\"MANPATH\", \"/apps/man\")\n"
                       "prepend_path(\"PATH\", ((((((((((\"/deep\"))))))))))\n"
                       "prepend_path(\"PATH\", \"/apps/a/bin:/apps/b/bin\")", true);
        assert_paths(&m, (const char *[]) { "/apps/fftw/3.3.10/bin", "/apps/fftw/3.3.10/lib", "/apps/long/lib",
                                            "R:/apps/fftw/3.3.10", "/apps/inif/bin", "/sw/fftw/3.3.10/bin",
                                            "/sw/fftw-3.3.10/bin", "/apps/a/bin", "/apps/b/bin", NULL });
        /* getenv, a variable never set, escape, open string, root, depth */
        ASSERT_EQ(m.unresolved, 6);
        module_info_done(&m);
}

#define SPACK_MODULE_TARGET ZLIB

static void build_modules(void) {
        char t[4096];

        elf("apps/openmpi/4.1.5/bin/mpirun", 0755);
        elf("apps/openmpi/4.1.5/lib/libmpi.so.40", 0644);
        elf("apps/openmpi/4.1.5/lib/extra/libextra.so.1", 0644);
        text("apps/openmpi/4.1.5/share/doc", "doc\n");
        elf("apps/fftw/3.3.10/lib/libfftw3.so.3", 0644);
        elf("apps/huge/bin/huge", 0755);

        snprintf(t, sizeof(t), "#%%Module1.0\nset root %s\nprepend-path PATH $root/bin\n"
                               "prepend-path LD_LIBRARY_PATH $root/lib/extra:$root/lib\n",
                 real("apps/openmpi/4.1.5"));
        text("mods/tcl/openmpi/4.1.5", t);
        /* a copy (not a symlink) under another version: the prefix goes to
         * the first in name order, whatever order readdir() gives */
        text("mods/tcl/openmpi/4.1.5-copy", t);
        text("mods/tcl/openmpi/4.1", t);
        text("mods/tcl/openmpi/.version", "#%Module\nset ModulesVersion 4.1.5\n");
        link_to("mods/tcl/openmpi/default", "4.1.5");
        snprintf(t, sizeof(t), "local root = \"%s\"\nprepend_path(\"LD_LIBRARY_PATH\", pathJoin(root, \"fftw\", \"3.3.10\", \"lib\"))\n",
                 real("apps"));
        text("mods/lua/Core/fftw/3.3.10.lua", t);
        /* a module of a Spack package: the files stay Spack's */
        snprintf(t, sizeof(t), "setenv(\"ZLIB_ROOT\", \"%s\")\n", real(ZLIB));
        text("mods/lua/zlib/1.3.lua", t);
        /* nothing is ever run */
        snprintf(t, sizeof(t), "#%%Module\nprepend-path PATH [exec /usr/bin/touch %s]/bin\n"
                               "prepend-path PATH $env(HOME)/bin\n", real("pwned"));
        text("mods/tcl/hostile/1.0", t);
        /* a huge line first, then what counts */
        {
                size_t n = 1 << 16;
                _cleanup_free_ char *big = malloc(16 + n + 256);

                ASSERT_NOT_NULL(big);
                memcpy(big, "#%Module\nset x \"", 16);
                memset(big + 16, 'x', n);
                snprintf(big + 16 + n, 256, "\nprepend-path PATH %s\n", real("apps/huge/bin"));
                text("mods/tcl/huge/1.0", big);
        }
        /* too big to read, and unterminated strings */
        {
                size_t n = MODULEFILE_MAX + 1;
                _cleanup_free_ char *big = malloc(n + 1);

                ASSERT_NOT_NULL(big);
                memset(big, '\n', n);
                memcpy(big, "#%Module", 8);
                big[n] = '\0';
                text("mods/tcl/toobig/1.0", big);
        }
        {
                char name[256];

                /* a name longer than the store takes */
                memcpy(name, "mods/tcl/", 9);
                memset(name + 9, 'n', 129);
                snprintf(name + 9 + 129, sizeof(name) - 9 - 129, "/1.0");
                snprintf(t, sizeof(t), "#%%Module\nprepend-path PATH %s\n", real("apps/huge/bin"));
                text(name, t);
        }
        text("mods/tcl/open/1.0", "#%Module\nset root \"/apps/x\nprepend-path PATH {$root/bin\n");
        text("mods/lua/open/1.0.lua", "prepend_path(\"PATH\", \"/apps/x");
        /* no #%Module cookie: no modulefile */
        snprintf(t, sizeof(t), "prepend-path PATH %s\n", real("apps/fftw/3.3.10/lib"));
        text("mods/tcl/readme/1.0", t);
        /* prefixes that hold everything */
        text("mods/tcl/wide/1.0", "#%Module\nsetenv WIDE_ROOT /usr\nprepend-path PATH /bin\nsetenv X_DIR /\n"
                                  "prepend-path LD_LIBRARY_PATH /proc/self/lib\n");
        /* a FIFO, /dev/null, symlink loops */
        mkdirs("mods/tcl/fifo");
        ASSERT_OK(mkfifo(at("mods/tcl/fifo/1.0"), 0644));
        link_to("mods/tcl/null/1.0", "/dev/null");
        link_to("mods/tcl/loop", ".");
        mkdirs("mods/tcl/deep/a");
        link_to("mods/tcl/deep/a/up", "../..");
}

TEST(modules) {
        const char *spack[] = { at("spack"), NULL }, *modules[] = { at("mods/tcl"), at("mods/lua"), NULL };
        const char *none[] = { NULL };
        InventoryOptions o = { .roots = { none, spack, none, none, none, modules } };
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        const InventoryPackage *p;

        ASSERT_OK(inventory_scan(&o, &inv));
        dump(inv);

        p = find(inv, INVENTORY_MODULE, "openmpi");
        assert_files(p, (const char *[]) { "apps/openmpi/4.1.5/bin/mpirun", "apps/openmpi/4.1.5/lib/extra/libextra.so.1",
                                           "apps/openmpi/4.1.5/lib/libmpi.so.40", NULL });
        ASSERT_STREQ(p->version, "4.1");
        ASSERT_TRUE(p + 1 == inv->packages + inv->n_packages || !streq(p[1].name, "openmpi"));
        ASSERT_STREQ(p->prefix, real("apps/openmpi/4.1.5"));
        ASSERT_EQ(p->size, blocks("apps/openmpi/4.1.5/bin/mpirun") + blocks("apps/openmpi/4.1.5/lib/libmpi.so.40") +
                           blocks("apps/openmpi/4.1.5/lib/extra/libextra.so.1") +
                           blocks("apps/openmpi/4.1.5/share/doc"));
        /* a hierarchy's level is part of the name */
        p = find(inv, INVENTORY_MODULE, "Core/fftw");
        assert_files(p, (const char *[]) { "apps/fftw/3.3.10/lib/libfftw3.so.3", NULL });
        ASSERT_STREQ(p->version, "3.3.10");
        ASSERT_STREQ(p->prefix, real("apps/fftw/3.3.10"));
        assert_files(find(inv, INVENTORY_MODULE, "huge"), (const char *[]) { "apps/huge/bin/huge", NULL });
        /* Spack's package keeps its files (without Debian here, also the
         * one it links to); its module adds nothing */
        assert_files(find(inv, INVENTORY_SPACK, "zlib"),
                     (const char *[]) { ZLIB "/lib/libz.so.1.3", "usr/lib/libfoo.so.1.2.3", NULL });
        ASSERT_NULL(find(inv, INVENTORY_MODULE, "zlib"));
        ASSERT_NULL(find(inv, INVENTORY_MODULE, "hostile"));
        ASSERT_TRUE(access(real("pwned"), F_OK) < 0 && errno == ENOENT);
        ASSERT_NULL(find(inv, INVENTORY_MODULE, "open"));
        ASSERT_NULL(find(inv, INVENTORY_MODULE, "readme"));
        ASSERT_NULL(find(inv, INVENTORY_MODULE, "wide"));
        ASSERT_TRUE(problem(inv, "module: 2 modulefiles larger than 1 MiB", NULL));
        ASSERT_EQ(find(inv, INVENTORY_MODULE, "huge")->n_files, 1);
        /* openmpi (3), fftw, huge and zlib: no other had a prefix to look at */
        ASSERT_EQ(inv->stats.packages_seen[INVENTORY_MODULE], 6);
}

int main(void) {
        char cmd[PATH_MAX + 16];

        ASSERT_NOT_NULL(mkdtemp(dir));
        ASSERT_NOT_NULL(realpath(dir, real_dir));
        build_dpkg();
        build_spack();
        build_easybuild();
        build_opt();
        build_modules();
        RUN(names);
        RUN(status_pieces);
        RUN(spec_json);
        RUN(spec_yaml);
        RUN(rpm_query);
        RUN(modulefile_tcl);
        RUN(modulefile_lua);
        RUN(tree);
        RUN(digest_and_json);
        RUN(roots);
        RUN(modules);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        ASSERT_EQ(system(cmd), 0);
        return 0;
}
