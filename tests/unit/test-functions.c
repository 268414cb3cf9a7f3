/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lmkd's functions of an interval (daemon/functions.c): sampled offsets
 * of real files (the programs test-funcname names, tests/unit/funcname/),
 * recorded as attribution records them (the file's device, inode and
 * build-id when first sampled), named when the interval closes: the top N
 * per (job, step, object, phase) and the rest as "other"; an offset no
 * symbol covers as its page with the build-id; a file rebuilt in place,
 * replaced or without a known build never named; a deleted file named
 * through a live process's /proc/PID/map_files (as root).
 *
 *   test-functions PROG REBUILT NOID STRIPPED */
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <libelf.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buildid.h"
#include "functions.h"
#include "histogram.h"
#include "macro.h"
#include "process.h"
#include "tests.h"

/* above the kernel's PID_MAX_LIMIT (4194304): no process has it */
#define FAKE_PID 5000000u

static const char *prog, *prog_rebuilt, *prog_noid, *prog_stripped;
static char tmp[] = "/tmp/lmk-test-functions-XXXXXX";

/* A function of this program, for the deleted copy a child runs. */
void functions_test_spin(volatile unsigned long *n);
__attribute__((noinline, used)) void functions_test_spin(volatile unsigned long *n) {
        while (*n < ULONG_MAX)
                (*n)++;
}

/* ---- where a symbol is in its file: libelf ---- */

static uint64_t file_offset(const char *path, const char *name) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        uint64_t value = 0, off = UINT64_MAX;
        bool found = false;
        Elf_Scn *scn = NULL;
        size_t n;
        Elf *elf;

        ASSERT_TRUE(fd >= 0);
        ASSERT_TRUE(elf_version(EV_CURRENT) != EV_NONE);
        elf = elf_begin(fd, ELF_C_READ, NULL);
        ASSERT_NOT_NULL(elf);
        while (!found && (scn = elf_nextscn(elf, scn))) {
                GElf_Shdr sh;
                Elf_Data *d;

                ASSERT_NOT_NULL(gelf_getshdr(scn, &sh));
                if ((sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) || !(d = elf_getdata(scn, NULL)))
                        continue;
                for (size_t i = 0; i < sh.sh_size / sh.sh_entsize && !found; i++) {
                        GElf_Sym s;
                        const char *sn;

                        ASSERT_NOT_NULL(gelf_getsym(d, (int) i, &s));
                        sn = elf_strptr(elf, sh.sh_link, s.st_name);
                        if (s.st_shndx != SHN_UNDEF && sn && streq(sn, name)) {
                                value = s.st_value;
                                found = true;
                        }
                }
        }
        if (!found)
                test_fail("%s has no symbol %s", path, name);
        ASSERT_TRUE(elf_getphdrnum(elf, &n) == 0);
        for (size_t i = 0; i < n; i++) {
                GElf_Phdr ph;

                ASSERT_NOT_NULL(gelf_getphdr(elf, (int) i, &ph));
                if (ph.p_type == PT_LOAD && value >= ph.p_vaddr && value < ph.p_vaddr + ph.p_filesz)
                        off = value - ph.p_vaddr + ph.p_offset;
        }
        elf_end(elf);
        ASSERT_TRUE(off != UINT64_MAX);
        return off;
}

/* ---- an interval, as attribution fills it ---- */

typedef struct Node {
        ObjectTable *objects;
        ProcessTable pt;
        Histogram *h;
        Functions f;
        uint32_t next_pid;
} Node;

static void node_init(Node *n, size_t max_rows, size_t max_offsets) {
        *n = (Node) { .next_pid = FAKE_PID }; /* no /proc entry: its files by their paths */
        n->objects = object_table_new();
        ASSERT_NOT_NULL(n->objects);
        ASSERT_OK(process_table_init(&n->pt, n->objects, "/proc"));
        n->h = histogram_new(n->objects, max_rows, max_offsets);
        ASSERT_NOT_NULL(n->h);
}

static void node_done(Node *n) {
        functions_done(&n->f);
        histogram_free(n->h);
        process_table_done(&n->pt);
        object_table_free(n->objects);
}

/* A process that maps path as it is now, its build-id read as
 * attribution reads it at its first sample. */
static Process *map_file(Node *n, const char *path, uint32_t pid) {
        struct stat st;
        Process *p;

        ASSERT_TRUE(stat(path, &st) == 0);
        ASSERT_OK(process_table_mmap(&n->pt, pid, 0x400000, 0x1000000, 0, major(st.st_dev), minor(st.st_dev),
                                     st.st_ino, path));
        p = process_table_get(&n->pt, pid);
        ASSERT_NOT_NULL(p);
        process_table_load_build_id(&n->pt, p, &p->map.v[0]);
        return p;
}

static Object *sampled(Node *n, const char *path) {
        return map_file(n, path, n->next_pid++)->map.v[0].obj;
}

/* count samples at offset of o in (job, "0", o, phase), each window 1 ms
 * with cycles = 1000 and instructions = 2000 */
static void add(Node *n, Object *o, const char *job, const char *phase, uint64_t offset, unsigned count) {
        HistKey key = { .job = job, .step = job ? "0" : NULL, .comm = "prog", .phase = phase, .obj = o,
                        .uid = 1000, .kind = CODE_EXE };
        struct lmk_sample s = { .type = LMK_EVENT_SAMPLE, .flags = LMK_SAMPLE_WINDOW, .window_ns = 1000000,
                                .counts = { 1000, 2000 }, .counts_valid = 3 };

        for (unsigned i = 0; i < count; i++) {
                HistRow *row = histogram_add(n->h, &key, 1);

                ASSERT_NOT_NULL(row);
                histogram_add_window(row, &s);
                ASSERT_OK(histogram_add_offset(n->h, row, offset, &s));
        }
}

static void name(Node *n, unsigned top) {
        functions_done(&n->f);
        ASSERT_OK(functions_name(n->h, &n->pt, top, &n->f));
}

static const FunctionRow *named(const Node *n, const char *fn) {
        for (size_t i = 0; i < n->f.n; i++)
                if (n->f.v[i].kind == FUNCTION_NAMED && streq(n->f.v[i].name, fn))
                        return &n->f.v[i];
        return NULL;
}

static const FunctionRow *kind_of(const Node *n, FunctionKind k) {
        for (size_t i = 0; i < n->f.n; i++)
                if (n->f.v[i].kind == k)
                        return &n->f.v[i];
        return NULL;
}

static uint64_t sum(const Node *n) {
        uint64_t s = 0;

        for (size_t i = 0; i < n->f.n; i++)
                s += n->f.v[i].samples;
        return s;
}

static void copy_file(const char *from, const char *to) {
        char cmd[4096];

        snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, to);
        ASSERT_EQ(system(cmd), 0);
}

/* The top N by samples, the rest in one "other"; two offsets in one
 * function are one function; the counters travel with the samples. */
TEST(top_and_other) {
        uint64_t sized = file_offset(prog, "fn_sized"), sizeless = file_offset(prog, "fn_sizeless");
        uint64_t gap = sized + 40; /* the 32 bytes after fn_sized: no symbol covers them */
        const FunctionRow *f;
        Node n;
        Object *o;

        node_init(&n, 1000, 1000);
        o = sampled(&n, prog);
        ASSERT_TRUE(o->build_id_size > 0);
        add(&n, o, "7", "", sized + 2, 6);
        add(&n, o, "7", "", sized + 20, 4);
        add(&n, o, "7", "", sizeless + 4, 5);
        add(&n, o, "7", "", file_offset(prog, "inner") + 1, 3);
        add(&n, o, "7", "", file_offset(prog, "alias_local"), 2);
        add(&n, o, "7", "", gap, 1);
        /* another phase of the same object: a group of its own */
        add(&n, o, "7", "solve", sized, 7);

        name(&n, 64);
        ASSERT_EQ(n.f.stats.files, 1);
        ASSERT_EQ(sum(&n), 28);
        f = named(&n, "fn_sized");
        ASSERT_NOT_NULL(f);
        ASSERT_STREQ(f->phase, "");
        ASSERT_EQ(f->samples, 10);
        ASSERT_EQ(f->counts[0], 10 * 1000);
        ASSERT_EQ(f->counts[1], 10 * 2000);
        ASSERT_EQ(f->window_ns, 10 * 1000000);
        ASSERT_EQ(f->counted, 3);
        ASSERT_TRUE(f->build_id);
        ASSERT_EQ(named(&n, "fn_sizeless")->samples, 5);
        ASSERT_EQ(named(&n, "inner")->samples, 3);
        /* aliases: the global one names them */
        ASSERT_EQ(named(&n, "alias_global")->samples, 2);
        /* never a neighbour's name: the page, for the store, with the build-id */
        f = kind_of(&n, FUNCTION_UNNAMED);
        ASSERT_NOT_NULL(f);
        ASSERT_U64_EQ(f->offset, gap & ~UINT64_C(4095));
        ASSERT_EQ(f->samples, 1);
        ASSERT_TRUE(f->build_id);
        ASSERT_NULL(kind_of(&n, FUNCTION_OTHER));
        /* sorted: group by group, the most samples first */
        ASSERT_STREQ(n.f.v[0].name, "fn_sized");
        ASSERT_STREQ(n.f.v[0].phase, "");
        ASSERT_STREQ(n.f.v[n.f.n - 1].phase, "solve");
        ASSERT_EQ(n.f.stats.samples_named, 27);
        ASSERT_EQ(n.f.stats.samples_unnamed, 1);

        /* the top 2 of each group, and the rest of the first */
        name(&n, 2);
        ASSERT_EQ(n.f.n, 4);
        ASSERT_STREQ(n.f.v[0].name, "fn_sized");
        ASSERT_STREQ(n.f.v[1].name, "fn_sizeless");
        ASSERT_EQ(n.f.v[2].kind, FUNCTION_OTHER);
        ASSERT_EQ(n.f.v[2].samples, 3 + 2 + 1);
        ASSERT_EQ(n.f.v[2].counts[0], 6 * 1000);
        ASSERT_TRUE(n.f.v[2].build_id);
        ASSERT_STREQ(n.f.v[3].name, "fn_sized");
        ASSERT_STREQ(n.f.v[3].phase, "solve");
        ASSERT_EQ(sum(&n), 28);

        /* off */
        name(&n, 0);
        ASSERT_EQ(n.f.n, 0);
        node_done(&n);
}

/* A file rebuilt where it was sampled is never named from the new build:
 * a new file at the path (another inode) is not the one sampled, and one
 * rewritten in place has another build-id. What the store could name
 * stays an offset with the build-id sampled. */
TEST(rebuilt_in_place) {
        char path[sizeof(tmp) + 16], tmpfile[sizeof(tmp) + 16];
        uint64_t off = file_offset(prog, "fn_sized");
        uint8_t id[BUILD_ID_MAX];
        Node n;
        Object *o;
        int fd, idn;

        fd = open(prog, O_RDONLY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        idn = buildid_read_fd(fd, id);
        ASSERT_TRUE(idn > 0);
        close(fd);

        snprintf(path, sizeof(path), "%s/app", tmp);
        snprintf(tmpfile, sizeof(tmpfile), "%s/app.new", tmp);
        /* the linker's way: a new file renamed over the old */
        copy_file(prog, path);
        node_init(&n, 1000, 1000);
        o = sampled(&n, path);
        add(&n, o, "7", "", off, 5);
        copy_file(prog_rebuilt, tmpfile);
        ASSERT_TRUE(rename(tmpfile, path) == 0);
        name(&n, 64);
        ASSERT_EQ(n.f.n, 1);
        ASSERT_EQ(n.f.v[0].kind, FUNCTION_UNNAMED);
        ASSERT_TRUE(n.f.v[0].build_id);
        ASSERT_TRUE(memcmp(n.f.v[0].obj->build_id, id, (size_t) idn) == 0);
        ASSERT_EQ(n.f.stats.files_unopened, 1);
        node_done(&n);

        /* cp's way: the same file rewritten */
        copy_file(prog, path);
        node_init(&n, 1000, 1000);
        o = sampled(&n, path);
        add(&n, o, "7", "", off, 5);
        copy_file(prog_rebuilt, path);
        name(&n, 64);
        ASSERT_EQ(n.f.n, 1);
        ASSERT_EQ(n.f.v[0].kind, FUNCTION_UNNAMED);
        ASSERT_EQ(n.f.stats.files_other_build, 1);
        ASSERT_EQ(n.f.stats.samples_named, 0);
        node_done(&n);
        unlink(path);
}

/* A file without a build-id is named while it is the file sampled (its
 * size and time); once rewritten it is not, and with no build-id for the
 * store its samples are "other". One whose build-id was never read (gone
 * when first sampled) names nothing. */
TEST(without_build_id) {
        char path[sizeof(tmp) + 16];
        struct timespec ts[2] = { { .tv_sec = 1000000000 }, { .tv_sec = 1000000000 } };
        uint64_t off = file_offset(prog_noid, "fn_sized");
        Node n;
        Object *o;

        snprintf(path, sizeof(path), "%s/noid", tmp);
        copy_file(prog_noid, path);
        node_init(&n, 1000, 1000);
        o = sampled(&n, path);
        ASSERT_EQ(o->build_id_size, 0);
        ASSERT_TRUE(o->build_id_none);
        add(&n, o, "7", "", off, 4);
        name(&n, 64);
        ASSERT_EQ(n.f.n, 1);
        ASSERT_STREQ(n.f.v[0].name, "fn_sized");
        ASSERT_FALSE(n.f.v[0].build_id);

        /* touched: perhaps rebuilt */
        ASSERT_TRUE(utimensat(AT_FDCWD, path, ts, 0) == 0);
        name(&n, 64);
        ASSERT_EQ(n.f.n, 1);
        ASSERT_EQ(n.f.v[0].kind, FUNCTION_OTHER);
        ASSERT_FALSE(n.f.v[0].build_id);
        ASSERT_EQ(n.f.stats.files_other_build, 1);
        node_done(&n);

        /* gone before its first sample was attributed: no build known */
        node_init(&n, 1000, 1000);
        copy_file(prog, path);
        {
                struct stat st;
                Process *p;

                ASSERT_TRUE(stat(path, &st) == 0);
                ASSERT_TRUE(unlink(path) == 0);
                ASSERT_OK(process_table_mmap(&n.pt, FAKE_PID, 0x400000, 0x1000000, 0, major(st.st_dev),
                                             minor(st.st_dev), st.st_ino, path));
                p = process_table_get(&n.pt, FAKE_PID);
                process_table_load_build_id(&n.pt, p, &p->map.v[0]);
                o = p->map.v[0].obj;
        }
        ASSERT_TRUE(o->build_id_tried);
        ASSERT_EQ(o->build_id_size, 0);
        ASSERT_FALSE(o->build_id_none);
        add(&n, o, "7", "", off, 3);
        name(&n, 64);
        ASSERT_EQ(n.f.n, 1);
        ASSERT_EQ(n.f.v[0].kind, FUNCTION_OTHER);
        ASSERT_EQ(n.f.stats.files, 0);
        node_done(&n);
}

/* Stripped to its .dynsym: the exported function named, the local one
 * left to the store by its start, which the unwind table gives (one entry
 * for all its offsets); code without an FDE by page. */
TEST(stripped) {
        uint64_t local = file_offset(prog, "local_work"), gap = file_offset(prog, "fn_sized") + 40;
        const FunctionRow *f = NULL;
        Node n;
        Object *o;

        node_init(&n, 1000, 1000);
        o = sampled(&n, prog_stripped);
        add(&n, o, NULL, "", file_offset(prog, "fn_sized"), 2);
        add(&n, o, NULL, "", local, 3);
        add(&n, o, NULL, "", local + 5, 4);
        add(&n, o, NULL, "", gap, 1);
        name(&n, 64);
        ASSERT_EQ(named(&n, "fn_sized")->samples, 2);
        ASSERT_NULL(named(&n, "local_work"));
        for (size_t i = 0; i < n.f.n; i++)
                if (n.f.v[i].kind == FUNCTION_UNNAMED && n.f.v[i].entry) {
                        ASSERT_NULL(f);
                        f = &n.f.v[i];
                }
        ASSERT_NOT_NULL(f);
        ASSERT_U64_EQ(f->offset, local);        /* exact: the unstripped build's start */
        ASSERT_EQ(f->samples, 7);
        ASSERT_TRUE(f->build_id);
        f = kind_of(&n, FUNCTION_UNNAMED);
        for (size_t i = 0; i < n.f.n; i++)
                if (n.f.v[i].kind == FUNCTION_UNNAMED && !n.f.v[i].entry)
                        f = &n.f.v[i];
        ASSERT_FALSE(f->entry);
        ASSERT_U64_EQ(f->offset, gap & ~UINT64_C(4095));
        ASSERT_EQ(f->samples, 1);
        ASSERT_EQ(n.f.stats.samples_unnamed, 8);
        ASSERT_EQ(n.f.stats.samples_entry, 7);
        ASSERT_NULL(n.f.v[0].job);
        node_done(&n);
}

/* Beyond the offsets an interval keeps, samples count in their group's
 * "other"; the sums stay whole. */
TEST(offsets_bounded) {
        Node n;
        Object *o;

        node_init(&n, 1000, 2);
        o = sampled(&n, prog);
        add(&n, o, "7", "", file_offset(prog, "fn_sized"), 4);
        add(&n, o, "7", "", file_offset(prog, "fn_sizeless"), 3);
        add(&n, o, "7", "", file_offset(prog, "inner"), 2);
        add(&n, o, "7", "", file_offset(prog, "fn_sized") + 1, 1);
        ASSERT_EQ(histogram_offsets_overflowed(n.h), 3);
        name(&n, 64);
        ASSERT_EQ(n.f.n, 3);
        ASSERT_EQ(named(&n, "fn_sized")->samples, 4);
        ASSERT_EQ(named(&n, "fn_sizeless")->samples, 3);
        ASSERT_EQ(kind_of(&n, FUNCTION_OTHER)->samples, 3);
        ASSERT_EQ(sum(&n), 10);
        node_done(&n);
}

/* Offsets merged into a histogram whose rows overflowed into "[other]":
 * their group has no row there, so they are dropped, not sent against a
 * row that is not there (a store would refuse the batch). */
TEST(merged_without_rows) {
        Functions f = {};
        Histogram *all;
        Node n;
        Object *o;

        node_init(&n, 1000, 1000);
        all = histogram_new(n.objects, 1, 1000);
        ASSERT_NOT_NULL(all);
        o = sampled(&n, prog);
        add(&n, o, "7", "", file_offset(prog, "fn_sized"), 4);
        add(&n, o, "8", "", file_offset(prog, "fn_sized"), 2);
        ASSERT_OK(histogram_merge(all, n.h));
        ASSERT_EQ(histogram_rows(all), 2); /* one job's row and the overflow row */
        ASSERT_OK(functions_name(all, &n.pt, 64, &f));
        ASSERT_EQ(f.n, 1);
        /* which job's row came first is the hash's order */
        ASSERT_EQ(f.v[0].samples, streq(f.v[0].job, "7") ? 4 : 2);
        ASSERT_EQ(f.stats.samples_dropped, streq(f.v[0].job, "7") ? 2 : 4);
        functions_done(&f);
        histogram_free(all);
        node_done(&n);
}

/* A deleted file is named through /proc/PID/map_files of a live process
 * that maps it (opening map_files takes root). */
TEST(deleted_but_mapped) {
        char path[sizeof(tmp) + 16];
        uint64_t off;
        Process *p;
        Node n;
        pid_t pid;

        if (geteuid() != 0) {
                fprintf(stderr, "not root: /proc/PID/map_files cannot be opened, deleted files not checked\n");
                return;
        }
        snprintf(path, sizeof(path), "%s/self", tmp);
        {
                /* this program, not the shell's that copies it */
                _cleanup_free_ char *self = realpath("/proc/self/exe", NULL);

                ASSERT_NOT_NULL(self);
                copy_file(self, path);
        }
        off = file_offset(path, "functions_test_spin");
        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                execl(path, path, "--spin", (char *) NULL);
                _exit(127);
        }
        /* its text is mapped once it runs main */
        for (int i = 0; i < 200; i++) {
                char maps[64], buf[8192];
                _cleanup_close_ int fd = -EBADF;
                ssize_t k;

                snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
                fd = open(maps, O_RDONLY | O_CLOEXEC);
                k = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
                if (k > 0) {
                        buf[k] = '\0';
                        if (strstr(buf, path))
                                break;
                }
                usleep(10000);
        }
        node_init(&n, 1000, 1000);
        ASSERT_OK(process_table_scan(&n.pt, (uint32_t) pid, 0, 1, &p));
        for (size_t i = 0; i < p->map.n; i++)
                if (streq(p->map.v[i].obj->path, path) && p->map.v[i].obj->kind == OBJECT_FILE) {
                        Object *o = p->map.v[i].obj;

                        process_table_load_build_id(&n.pt, p, &p->map.v[i]);
                        ASSERT_TRUE(o->build_id_size > 0);
                        add(&n, o, "7", "", off + 1, 5);
                        break;
                }
        ASSERT_TRUE(unlink(path) == 0);
        name(&n, 64);
        kill(pid, SIGKILL);
        (void) waitpid(pid, NULL, 0);
        ASSERT_EQ(n.f.n, 1);
        ASSERT_STREQ(n.f.v[0].name, "functions_test_spin");
        ASSERT_EQ(n.f.stats.files, 1);
        node_done(&n);
}

int main(int argc, char **argv) {
        if (argc == 2 && streq(argv[1], "--spin")) {
                static volatile unsigned long n;

                functions_test_spin(&n);
                return 0;
        }
        if (argc != 5)
                test_fail("usage: test-functions PROG REBUILT NOID STRIPPED");
        /* mappings name files by absolute paths */
        prog = realpath(argv[1], NULL);
        prog_rebuilt = realpath(argv[2], NULL);
        prog_noid = realpath(argv[3], NULL);
        prog_stripped = realpath(argv[4], NULL);
        ASSERT_TRUE(prog && prog_rebuilt && prog_noid && prog_stripped);
        ASSERT_NOT_NULL(mkdtemp(tmp));
        RUN(top_and_other);
        RUN(rebuilt_in_place);
        RUN(without_build_id);
        RUN(stripped);
        RUN(offsets_bounded);
        RUN(merged_without_rows);
        RUN(deleted_but_mapped);
        (void) rmdir(tmp);
        return 0;
}
