/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The process table fed with the kernel's records in order: exec, fork, PID
 * reuse, threads; and read from a fake /proc with hostile contents. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "process.h"
#include "tests.h"
#include "util.h"

static ObjectTable *objs;
static ProcessTable pt;

static const char *obj_at(uint32_t pid, uint64_t addr) {
        Process *p = process_table_get(&pt, pid);
        const Mapping *m;

        if (!p)
                return NULL;
        m = addrmap_find(&p->map, addr);
        return m ? m->obj->path : NULL;
}

static void map(uint32_t pid, uint64_t start, uint64_t len, uint64_t ino, const char *path) {
        ASSERT_OK(process_table_mmap(&pt, pid, start, len, 0, 8, 1, ino, path));
}

TEST(exec_and_exe) {
        Process *p;

        ASSERT_OK(process_table_comm(&pt, 100, 100, "bash", true));
        map(100, 0x400000, 0x1000, 11, "/usr/bin/bash");
        map(100, 0x7f0000000000, 0x1000, 12, "/usr/lib/ld.so");
        p = process_table_get(&pt, 100);
        ASSERT_STREQ(p->comm, "bash");
        ASSERT_STREQ(p->exe->path, "/usr/bin/bash");   /* first file mapping after exec */

        /* exec replaces the image: old mappings are gone, new exe is known */
        ASSERT_OK(process_table_comm(&pt, 100, 100, "solver", true));
        ASSERT_NULL(obj_at(100, 0x400000));
        ASSERT_NULL(p->exe);
        map(100, 0x500000, 0x2000, 13, "/opt/solver");
        map(100, 0x7f0000000000, 0x1000, 12, "/usr/lib/ld.so");
        ASSERT_STREQ(p->comm, "solver");
        ASSERT_STREQ(p->exe->path, "/opt/solver");
        ASSERT_STREQ(obj_at(100, 0x501fff), "/opt/solver");
        ASSERT_NULL(obj_at(100, 0x502000));

        /* a thread renaming itself does not rename the process */
        ASSERT_OK(process_table_comm(&pt, 100, 101, "worker-3", false));
        ASSERT_STREQ(p->comm, "solver");
        ASSERT_OK(process_table_comm(&pt, 100, 100, "renamed", false));
        ASSERT_STREQ(p->comm, "renamed");
}

TEST(fork_copies_and_diverges) {
        Process *c;

        ASSERT_OK(process_table_fork(&pt, 200, 100, 200));
        c = process_table_get(&pt, 200);
        ASSERT_NOT_NULL(c);
        ASSERT_STREQ(c->comm, "renamed");
        ASSERT_STREQ(obj_at(200, 0x500000), "/opt/solver");
        ASSERT_STREQ(c->exe->path, "/opt/solver");
        /* the child maps a library (dlopen): the parent does not see it */
        map(200, 0x7e0000000000, 0x1000, 14, "/usr/lib/libplugin.so");
        ASSERT_STREQ(obj_at(200, 0x7e0000000000), "/usr/lib/libplugin.so");
        ASSERT_NULL(obj_at(100, 0x7e0000000000));
        /* a new thread is not a new process */
        ASSERT_OK(process_table_fork(&pt, 100, 100, 102));
        ASSERT_EQ(hashmap_size(pt.procs), 2);
}

TEST(pid_reuse) {
        Process *p;

        /* 200 exits; until eviction its samples still find its mappings */
        process_table_exit(&pt, 200, 201, 1000);      /* a thread: nothing */
        ASSERT_EQ(process_table_get(&pt, 200)->exit_time, 0);
        process_table_exit(&pt, 200, 200, 1000);
        ASSERT_EQ(process_table_get(&pt, 200)->exit_time, 1000);
        ASSERT_STREQ(obj_at(200, 0x7e0000000000), "/usr/lib/libplugin.so");

        /* the pid comes back as a child of a different process: it must
         * not inherit anything of the old 200 */
        ASSERT_OK(process_table_comm(&pt, 300, 300, "python3", true));
        map(300, 0x600000, 0x1000, 15, "/usr/bin/python3");
        ASSERT_OK(process_table_fork(&pt, 200, 300, 200));
        p = process_table_get(&pt, 200);
        ASSERT_EQ(p->exit_time, 0);
        ASSERT_STREQ(p->comm, "python3");
        ASSERT_NULL(obj_at(200, 0x7e0000000000));
        ASSERT_NULL(obj_at(200, 0x500000));
        ASSERT_STREQ(obj_at(200, 0x600000), "/usr/bin/python3");

        /* a record for a pid whose entry has exited starts a fresh entry */
        process_table_exit(&pt, 300, 300, 2000);
        map(300, 0x900000, 0x1000, 16, "/usr/bin/other");
        p = process_table_get(&pt, 300);
        ASSERT_EQ(p->exit_time, 0);
        ASSERT_TRUE(p->partial);
        ASSERT_NULL(obj_at(300, 0x600000));

        process_table_exit(&pt, 300, 300, 3000);
        process_table_evict(&pt, 2500);
        ASSERT_NOT_NULL(process_table_get(&pt, 300));
        process_table_evict(&pt, 3001);
        ASSERT_NULL(process_table_get(&pt, 300));
        ASSERT_NOT_NULL(process_table_get(&pt, 200));
}

static void write_file(const char *dir, const char *name, const char *content, size_t len) {
        char path[512];
        int fd;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(loop_write(fd, content, len));
        close(fd);
}

TEST(fake_proc) {
        char root[] = "/tmp/lmk-fake-proc-XXXXXX", dir[512];
        static const char maps[] =
                "00400000-00401000 r-xp 00000000 08:01 4242   /opt/app with space/bin\n"
                "garbage line\n"
                "7f0000000000-7f0000001000 r-xp 00001000 08:01 77 /usr/lib/libm.so.6 (deleted)\n"
                "7f0000002000-7f0000003000 rw-p 00000000 00:00 0 \n"
                "7f0000004000-7f0000003000 r-xp 00000000 08:01 78 /backwards\n"
                "7f0000005000-7f0000006000 r-xp 00000000 00:00 0 [vdso]\n"
                "7f0000007000-7f0000008000 rwxp 00000000 00:00 0\n"
                "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n"
                "7f0000009000-7f000000a000 r-xp 00000000 08:01 79 /truncated-at-end";
        Process *p;

        ASSERT_NOT_NULL(mkdtemp(root));
        snprintf(dir, sizeof(dir), "%s/4321", root);
        ASSERT_OK(mkdir(dir, 0755) < 0 ? -errno : 0);
        write_file(dir, "maps", maps, sizeof(maps) - 1);
        write_file(dir, "comm", "fakeproc\n", 9);

        ProcessTable fake;
        ASSERT_OK(process_table_init(&fake, objs, root));
        ASSERT_OK(process_table_scan(&fake, 4321, 0, 5, &p));
        ASSERT_STREQ(p->comm, "fakeproc");
        ASSERT_EQ(fake.stats.bad_map_lines, 2);
        ASSERT_STREQ(addrmap_find(&p->map, 0x400000)->obj->path, "/opt/app with space/bin");
        ASSERT_STREQ(addrmap_find(&p->map, 0x7f0000000fff)->obj->path, "/usr/lib/libm.so.6");
        ASSERT_NULL(addrmap_find(&p->map, 0x7f0000002000)); /* not executable */
        ASSERT_EQ(addrmap_find(&p->map, 0x7f0000005000)->obj->kind, OBJECT_VDSO);
        ASSERT_EQ(addrmap_find(&p->map, 0x7f0000007000)->obj->kind, OBJECT_ANON);
        ASSERT_EQ(addrmap_find(&p->map, 0xffffffffff600000)->obj->kind, OBJECT_ANON);
        ASSERT_STREQ(addrmap_find(&p->map, 0x7f0000009000)->obj->path, "/truncated-at-end");
        ASSERT_NULL(p->exe); /* no exe link in the fake tree */

        /* a gone process */
        ASSERT_ERROR(process_table_scan(&fake, 999, 0, 5, NULL), ESRCH);
        /* a maps file that is all garbage, including NUL bytes */
        snprintf(dir, sizeof(dir), "%s/4322", root);
        ASSERT_OK(mkdir(dir, 0755) < 0 ? -errno : 0);
        static const char garbage[] = "\0\0\0\n\xff\xfe-\n-\n0-0 r-xp 0 0:0 0\n";
        write_file(dir, "maps", garbage, sizeof(garbage) - 1);
        ASSERT_OK(process_table_scan(&fake, 4322, 0, 5, &p));
        ASSERT_EQ(p->map.n, 0);
        process_table_done(&fake);

        char cmd[600];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        ASSERT_EQ(system(cmd), 0);
}

TEST(real_self) {
        ProcessTable self;
        Process *p;
        const Mapping *m;

        /* our own process through the real /proc: this very function's
         * address must map to our executable */
        ASSERT_OK(process_table_init(&self, objs, "/proc"));
        ASSERT_OK(process_table_scan(&self, (uint32_t) getpid(), 0, 1, &p));
        m = addrmap_find(&p->map, (uint64_t) (uintptr_t) &test_real_self);
        ASSERT_NOT_NULL(m);
        ASSERT_NOT_NULL(p->exe);
        ASSERT_TRUE(m->obj == p->exe);
        process_table_load_build_id(&self, p, m);
        ASSERT_TRUE(m->obj->build_id_size == 20);
        process_table_done(&self);
}

int main(void) {
        objs = object_table_new();
        ASSERT_OK(process_table_init(&pt, objs, "/nonexistent"));
        RUN(exec_and_exe);
        RUN(fork_copies_and_diverges);
        RUN(pid_reuse);
        RUN(fake_proc);
        RUN(real_self);
        process_table_done(&pt);
        ASSERT_EQ(object_table_size(objs), 0);
        object_table_free(objs);
        return 0;
}
