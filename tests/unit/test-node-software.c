/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What lmkd reports as installed: library files in the folders it looks
 * through (and one level below), classified by the file a name really is,
 * as Debian's alternatives make it. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "node-software.h"
#include "tests.h"
#include "util.h"

static char dir[] = "/tmp/lmk-software-XXXXXX";

static void touch(const char *rel) {
        char path[512];
        int fd;

        snprintf(path, sizeof(path), "%s/%s", dir, rel);
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        ASSERT_TRUE(fd >= 0);
        close(fd);
}

static void folder(const char *rel) {
        char path[512];

        snprintf(path, sizeof(path), "%s/%s", dir, rel);
        ASSERT_TRUE(mkdir(path, 0755) == 0);
}

static const NodeFamily *find(const NodeSoftware *s, const char *family) {
        for (size_t i = 0; i < s->n; i++)
                if (streq(s->v[i].family, family))
                        return &s->v[i];
        return NULL;
}

TEST(scan) {
        char lib[512], deep[512], link_to[512], link_at[512];
        const char *dirs[] = { lib, "/nonexistent/lib", NULL };
        NodeSoftware s = {};
        LibFamilies t;
        const NodeFamily *f;

        snprintf(lib, sizeof(lib), "%s/lib", dir);
        folder("lib");
        folder("lib/openblas-pthread");
        folder("lib/blas");
        folder("lib/a");
        folder("lib/a/b");
        touch("lib/openblas-pthread/libopenblasp-r0.3.21.so");
        touch("lib/blas/libblas.so.3.11.0");
        touch("lib/a/b/libmkl_core.so.2");      /* two levels down: not looked at */
        touch("lib/libfoo.so.1");               /* no family */
        touch("lib/README");                    /* not a library */
        /* libfftw3.so.3 is a dangling link: it names nothing installed */
        snprintf(link_at, sizeof(link_at), "%s/lib/libfftw3.so.3", dir);
        ASSERT_TRUE(symlink("/nonexistent/libfftw3.so.3.6.10", link_at) == 0);
        /* the alternative's name counts as the file it points at */
        snprintf(link_to, sizeof(link_to), "%s/lib/openblas-pthread/libopenblasp-r0.3.21.so", dir);
        snprintf(link_at, sizeof(link_at), "%s/lib/libgomp.so.1", dir);
        ASSERT_TRUE(symlink(link_to, link_at) == 0);
        snprintf(deep, sizeof(deep), "%s/lib/a/b/libmkl_core.so.2", dir);

        ASSERT_OK(lib_families_init(&t));
        ASSERT_OK(node_software_scan(&t, dirs, &s));
        ASSERT_EQ(s.n, 2);
        f = find(&s, "openblas");
        ASSERT_NOT_NULL(f);
        ASSERT_STREQ(f->purpose, "blas");
        ASSERT_STREQ(f->path, link_to);
        f = find(&s, "netlib");
        ASSERT_NOT_NULL(f);
        ASSERT_STREQ(f->purpose, "blas-reference");
        ASSERT_NULL(find(&s, "mkl"));
        ASSERT_NULL(find(&s, "gnu-openmp"));
        ASSERT_NULL(find(&s, "fftw"));
        ASSERT_TRUE(s.files >= 4);
        node_software_done(&s);
        lib_families_done(&t);
}

int main(void) {
        char cmd[300];

        ASSERT_NOT_NULL(mkdtemp(dir));
        RUN(scan);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        ASSERT_EQ(system(cmd), 0);
        return 0;
}
