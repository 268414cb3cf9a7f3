/* SPDX-License-Identifier: GPL-2.0-or-later */
/* funcname_resolve() (common/elf/funcname.c) against referees: programs
 * the build compiled (tests/unit/funcname/: C laid out in assembly, C++,
 * Fortran; rebuilt, without build-id, stripped), whose symbols libelf
 * reads for the test; and ELF files written here, for what compilers do
 * not make: segment ends, both classes and byte orders, absurd and
 * overlapping symbols, truncated and malformed tables, a 100 MB .symtab,
 * a file that changes while it is read.
 *
 *   test-funcname PROG REBUILT NOID STRIPPED CXX|"" FORTRAN|""
 *   test-funcname --write-seeds DIR    (the fuzz corpus' synthetic seeds)
 *   test-funcname --bench ELF-FILE OFFSETS OUT   (bench/funcname/run) */
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "buildid.h"
#include "funcname.h"
#include "macro.h"
#include "symname.h"
#include "tests.h"

static const char *prog, *prog_rebuilt, *prog_noid, *prog_stripped, *prog_debug, *prog_cxx, *prog_fortran;

/* ---- the referee for compiled programs: libelf ---- */

typedef struct RefSym {
        uint64_t value, size, index;
} RefSym;

/* The symbol called name in path's .symtab, else its .dynsym. */
static bool ref_symbol(const char *path, const char *name, RefSym *ret) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        Elf *elf;
        bool found = false;

        ASSERT_TRUE(fd >= 0);
        ASSERT_TRUE(elf_version(EV_CURRENT) != EV_NONE);
        elf = elf_begin(fd, ELF_C_READ, NULL);
        ASSERT_NOT_NULL(elf);
        for (int pass = 0; pass < 2 && !found; pass++) {
                Elf_Scn *scn = NULL;

                while (!found && (scn = elf_nextscn(elf, scn))) {
                        GElf_Shdr sh;
                        Elf_Data *d;

                        ASSERT_NOT_NULL(gelf_getshdr(scn, &sh));
                        if (sh.sh_type != (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM) || !(d = elf_getdata(scn, NULL)))
                                continue;
                        for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
                                GElf_Sym s;
                                const char *n;

                                ASSERT_NOT_NULL(gelf_getsym(d, (int) i, &s));
                                n = elf_strptr(elf, sh.sh_link, s.st_name);
                                if (s.st_shndx != SHN_UNDEF && n && streq(n, name)) {
                                        *ret = (RefSym) { s.st_value, s.st_size, i };
                                        found = true;
                                        break;
                                }
                        }
                }
        }
        elf_end(elf);
        return found;
}

static RefSym ref_must(const char *path, const char *name) {
        RefSym s;

        if (!ref_symbol(path, name, &s))
                test_fail("%s has no symbol %s", path, name);
        return s;
}

/* The file offset of vaddr, from path's PT_LOAD segments. */
static uint64_t ref_offset(const char *path, uint64_t vaddr) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
        size_t n;

        ASSERT_NOT_NULL(elf);
        ASSERT_TRUE(elf_getphdrnum(elf, &n) == 0);
        for (size_t i = 0; i < n; i++) {
                GElf_Phdr ph;

                ASSERT_NOT_NULL(gelf_getphdr(elf, (int) i, &ph));
                if (ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
                        elf_end(elf);
                        return vaddr - ph.p_vaddr + ph.p_offset;
                }
        }
        test_fail("%s: no segment holds 0x%" PRIx64, path, vaddr);
}

/* The answer for each result holds from its same_from to its same_to - 1:
 * naming those gives the same name and start. */
static void check_same_ranges(int fd, const uint8_t *id, size_t id_size, const FuncSym *s, size_t n) {
        _cleanup_free_ FuncSym *e = calloc(2 * n + 1, sizeof(*e));
        _cleanup_free_ char *names = NULL;
        size_t m = 0;

        ASSERT_NOT_NULL(e);
        for (size_t i = 0; i < n; i++) {
                if (s[i].same_from == s[i].same_to) {
                        ASSERT_NULL(s[i].name);
                        continue;
                }
                ASSERT_TRUE(s[i].same_from <= s[i].offset && s[i].offset < s[i].same_to);
                e[m++].offset = s[i].same_from;
                e[m++].offset = s[i].same_to - 1;
        }
        ASSERT_OK(funcname_resolve(fd, id, id_size, e, m, &names, NULL));
        for (size_t i = 0, j = 0; i < n; i++) {
                if (s[i].same_from == s[i].same_to)
                        continue;
                for (size_t k = j; k < j + 2; k++)
                        if ((!s[i].name ? e[k].name != NULL
                                        : !e[k].name || !streq(e[k].name, s[i].name) || e[k].start != s[i].start) ||
                            e[k].entry != s[i].entry || e[k].entry_offset != s[i].entry_offset)
                                test_fail("offset 0x%" PRIx64 " (%s) holds for [0x%" PRIx64 ", 0x%" PRIx64
                                          "), but 0x%" PRIx64 " is %s",
                                          s[i].offset, s[i].name ?: "unnamed", s[i].same_from, s[i].same_to,
                                          e[k].offset, e[k].name ?: "unnamed");
                j += 2;
        }
}

/* Names as lmkd will: with the build-id it recorded when it first saw the
 * object (here: the file's own, or record's). */
static int name_in(const char *path, const char *record, FuncSym *s, size_t n, char **names, FuncNameInfo *info) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC), rfd = -EBADF;
        uint8_t id[BUILD_ID_MAX];
        int idn, r;

        ASSERT_TRUE(fd >= 0);
        rfd = open(record ?: path, O_RDONLY | O_CLOEXEC);
        ASSERT_TRUE(rfd >= 0);
        idn = buildid_read_fd(rfd, id);
        ASSERT_TRUE(idn > 0 || idn == -ENOENT);
        r = funcname_resolve(fd, id, idn > 0 ? (size_t) idn : 0, s, n, names, info);
        if (r >= 0)
                check_same_ranges(fd, id, idn > 0 ? (size_t) idn : 0, s, n);
        return r;
}

typedef struct Case {
        const char *symbol;     /* the offset: this symbol's start ... */
        int64_t delta;          /* ... plus this */
        const char *want;       /* NULL: unnamed */
        const char *want_start; /* the symbol whose start is the function's (want's when NULL) */
} Case;

static uint64_t offset_of(const char *path, const char *symbol) {
        return ref_offset(path, ref_must(path, symbol).value);
}

/* All cases' offsets at once, in reverse order (the API takes them in any). */
static void check_cases(const char *path, const Case *cases, size_t n, FuncTable table) {
        _cleanup_free_ FuncSym *s = calloc(n, sizeof(*s));
        _cleanup_free_ char *names = NULL;
        FuncNameInfo info;
        int r;

        ASSERT_NOT_NULL(s);
        for (size_t i = 0; i < n; i++)
                s[n - 1 - i].offset = ref_offset(path, ref_must(path, cases[i].symbol).value) + (uint64_t) cases[i].delta;
        r = name_in(path, NULL, s, n, &names, &info);
        ASSERT_OK(r);
        ASSERT_EQ(info.table, table);
        for (size_t i = 0; i < n; i++) {
                const Case *c = &cases[i];
                const FuncSym *f = &s[n - 1 - i];

                if (!c->want) {
                        if (f->name)
                                test_fail("%s%+" PRIi64 ": named %s, expected unnamed", c->symbol, c->delta, f->name);
                        continue;
                }
                if (!f->name || !streq(f->name, c->want))
                        test_fail("%s%+" PRIi64 ": named %s, expected %s", c->symbol, c->delta, f->name ?: "(unnamed)", c->want);
                ASSERT_U64_EQ(f->start, ref_must(path, c->want_start ?: c->symbol).value);
                ASSERT_TRUE(f->vaddr >= f->start && f->vaddr < f->end);
        }
}

TEST(compiled_symtab) {
        RefSym a, b;
        const char *tie;
        Case cases[] = {
                { "fn_sized", 0, "fn_sized", NULL },
                { "fn_sized", 31, "fn_sized", NULL },
                { "fn_sized", 32, NULL, NULL },                 /* between functions */
                { "fn_sized", 63, NULL, NULL },
                { "fn_sizeless", 0, "fn_sizeless", NULL },
                { "fn_sizeless", 47, "fn_sizeless", NULL },     /* up to the next symbol */
                { "alias_weak", 0, "alias_global", NULL },
                { "alias_weak", 15, "alias_global", NULL },
                { "label_local", 3, "label_local", NULL },      /* untyped, in text */
                { "label_global", 15, "label_global", NULL },
                { "tie_a", 8, NULL, NULL },                     /* set below */
                { "outer", 15, "outer", NULL },
                { "inner", 0, "inner", NULL },                  /* nested: the greatest start */
                { "inner", 15, "inner", NULL },
                { "inner", 16, "outer", "outer" },              /* past the inner one: the outer's */
                { "fn_end", 0, "fn_end", NULL },
                { "local_work", 0, "local_work", NULL },
                { "local_work", (int64_t) ref_must(prog, "local_work").size - 1, "local_work", NULL },
                { "main", 1, "main", NULL },
        };

        /* two global aliases: the first in the table */
        a = ref_must(prog, "tie_a");
        b = ref_must(prog, "tie_b");
        ASSERT_U64_EQ(a.value, b.value);
        tie = a.index < b.index ? "tie_a" : "tie_b";
        cases[10].want = cases[10].want_start = tie;
        check_cases(prog, cases, ELEMENTSOF(cases), FUNC_TABLE_SYMTAB);
}

/* Where an answer holds: what a cache of function ranges would keep. */
TEST(same_ranges) {
        uint64_t sized = offset_of(prog, "fn_sized"), sizeless = offset_of(prog, "fn_sizeless");
        uint64_t alias = offset_of(prog, "alias_global"), inner = offset_of(prog, "inner");
        uint64_t outer = offset_of(prog, "outer");
        const struct {
                uint64_t offset, from, to;
        } want[] = {
                { sized + 5, sized, sized + 32 },
                { sized + 40, sized + 32, sizeless },   /* unnamed, up to the next symbol */
                { sizeless + 10, sizeless, alias },
                { inner + 3, inner, inner + 16 },
                { inner + 20, inner + 16, outer + 48 }, /* the outer function, after the inner one */
                { outer + 2, outer, inner },
        };
        FuncSym s[ELEMENTSOF(want)] = {};
        _cleanup_free_ char *names = NULL;

        for (size_t i = 0; i < ELEMENTSOF(want); i++)
                s[i].offset = want[i].offset;
        ASSERT_EQ(name_in(prog, NULL, s, ELEMENTSOF(want), &names, NULL), (long long) ELEMENTSOF(want) - 1);
        for (size_t i = 0; i < ELEMENTSOF(want); i++) {
                ASSERT_U64_EQ(s[i].same_from, want[i].from);
                ASSERT_U64_EQ(s[i].same_to, want[i].to);
        }
}

/* A separate debug file (objcopy --only-keep-debug, as debuginfod serves
 * it) with the stripped executable's segments names every offset as the
 * unstripped build does: same name, function and range. Alone, its
 * segments hold no file bytes, so it names nothing; with segments of
 * another build, it names nothing either. */
TEST(split_debug_file) {
        static const char *const symbols[] = { "fn_sized", "fn_sizeless", "alias_global", "label_local", "tie_a",
                                               "outer", "inner", "fn_end", "local_work", "main" };
        _cleanup_close_ int fd = open(prog_debug, O_RDONLY | O_CLOEXEC);
        _cleanup_close_ int lfd = open(prog_stripped, O_RDONLY | O_CLOEXEC);
        _cleanup_close_ int other = open(prog_rebuilt, O_RDONLY | O_CLOEXEC);
        _cleanup_free_ char *want_names = NULL, *names = NULL, *none = NULL;
        FuncSym want[3 * ELEMENTSOF(symbols)] = {}, s[ELEMENTSOF(want)] = {};
        uint8_t id[BUILD_ID_MAX];
        FuncNameInfo info;
        int idn, named;

        ASSERT_TRUE(fd >= 0 && lfd >= 0 && other >= 0);
        idn = buildid_read_fd(fd, id);
        ASSERT_TRUE(idn > 0);
        for (size_t i = 0; i < ELEMENTSOF(symbols); i++)
                for (size_t k = 0; k < 3; k++)
                        want[3 * i + k].offset = s[3 * i + k].offset = offset_of(prog, symbols[i]) + 7 * k;
        named = name_in(prog, NULL, want, ELEMENTSOF(want), &want_names, NULL);
        ASSERT_TRUE(named > (int) ELEMENTSOF(symbols));
        ASSERT_EQ(funcname_resolve_split(fd, lfd, id, (size_t) idn, s, ELEMENTSOF(s), &names, &info), named);
        ASSERT_EQ(info.table, FUNC_TABLE_SYMTAB);
        for (size_t i = 0; i < ELEMENTSOF(s); i++) {
                if (!want[i].name != !s[i].name || (want[i].name && !streq(want[i].name, s[i].name)))
                        test_fail("offset 0x%" PRIx64 ": %s from the debug file, %s from the program", s[i].offset,
                                  s[i].name ?: "unnamed", want[i].name ?: "unnamed");
                ASSERT_U64_EQ(s[i].vaddr, want[i].vaddr);
                ASSERT_U64_EQ(s[i].start, want[i].start);
                ASSERT_U64_EQ(s[i].end, want[i].end);
                ASSERT_U64_EQ(s[i].same_from, want[i].same_from);
                ASSERT_U64_EQ(s[i].same_to, want[i].same_to);
        }
        ASSERT_EQ(funcname_resolve(fd, id, (size_t) idn, s, ELEMENTSOF(s), &none, NULL), 0);
        free(TAKE_PTR(none));
        ASSERT_EQ(funcname_resolve_split(fd, other, id, (size_t) idn, s, ELEMENTSOF(s), &none, NULL), -ESTALE);
        for (size_t i = 0; i < ELEMENTSOF(s); i++)
                ASSERT_NULL(s[i].name);
}

TEST(compiled_dynsym_only) {
        const Case cases[] = {
                { "fn_sized", 5, "fn_sized", NULL },
                { "fn_sized", 40, NULL, NULL },
                { "fn_sizeless", 47, "fn_sizeless", NULL },
                { "alias_global", 0, "alias_global", NULL },
                { "alias_global", 16, NULL, NULL },             /* label_local is gone: no neighbour's name */
                { "label_global", 0, "label_global", NULL },
                { "main", 0, "main", NULL },
        };
        RefSym local;
        FuncSym s[2] = {};
        _cleanup_free_ char *names = NULL;

        ASSERT_FALSE(ref_symbol(prog_stripped, "local_work", &local));
        check_cases(prog_stripped, cases, ELEMENTSOF(cases), FUNC_TABLE_DYNSYM);

        /* local_work (a static function) is where the unstripped build has
         * it, and no .dynsym symbol covers it */
        local = ref_must(prog, "local_work");
        s[0].offset = ref_offset(prog, local.value);
        s[1].offset = s[0].offset + local.size - 1;
        ASSERT_EQ(name_in(prog_stripped, NULL, s, 2, &names, NULL), 0);
        ASSERT_NULL(s[0].name);
        ASSERT_NULL(s[1].name);
}


/* Stripped: what no symbol names gets the start of its function from the
 * unwind table (.eh_frame_hdr), the offset where the unstripped build's
 * symbol starts; what has no FDE (the assembly without CFI) gets none. */
TEST(stripped_entries) {
        RefSym local = ref_must(prog, "local_work"), sized = ref_must(prog, "fn_sized");
        uint64_t want = ref_offset(prog, local.value);
        FuncSym s[] = { { .offset = want }, { .offset = want + 1 }, { .offset = want + local.size - 1 },
                        { .offset = ref_offset(prog, sized.value) + 40 }, { .offset = ref_offset(prog, sized.value) } };
        _cleanup_free_ char *names = NULL;
        FuncNameInfo info;

        ASSERT_EQ(name_in(prog_stripped, NULL, s, ELEMENTSOF(s), &names, &info), 1);
        ASSERT_EQ(info.n_entries, 3);
        for (size_t i = 0; i < 3; i++) {
                ASSERT_NULL(s[i].name);
                ASSERT_TRUE(s[i].entry);
                ASSERT_U64_EQ(s[i].entry_offset, want);
                ASSERT_U64_EQ(s[i].start, local.value);
                ASSERT_TRUE(s[i].end >= local.value + local.size);
        }
        ASSERT_NULL(s[3].name);
        ASSERT_FALSE(s[3].entry);
        ASSERT_STREQ(s[4].name, "fn_sized");     /* .dynsym names it: no entry */
        ASSERT_FALSE(s[4].entry);
        /* the unstripped build names it from .symtab, without an entry */
        free(TAKE_PTR(names));
        s[0] = (FuncSym) { .offset = want + 1 };
        ASSERT_EQ(name_in(prog, NULL, s, 1, &names, NULL), 1);
        ASSERT_STREQ(s[0].name, "local_work");
        ASSERT_FALSE(s[0].entry);
}

TEST(other_build) {
        FuncSym s = { .offset = offset_of(prog, "fn_sized") };
        _cleanup_free_ char *names = NULL;
        _cleanup_close_ int fd = -EBADF;

        /* rebuilt in place: same path, another build-id */
        ASSERT_ERROR(name_in(prog_rebuilt, prog, &s, 1, &names, NULL), ESTALE);
        ASSERT_NULL(s.name);
        /* the recorded build had an id and this file has none, and the reverse */
        s.offset = offset_of(prog_noid, "fn_sized");
        ASSERT_ERROR(name_in(prog_noid, prog, &s, 1, &names, NULL), ESTALE);
        s.offset = offset_of(prog, "fn_sized");
        ASSERT_ERROR(name_in(prog, prog_noid, &s, 1, &names, NULL), ESTALE);
        /* a build-id of another length */
        fd = open(prog, O_RDONLY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_ERROR(funcname_resolve(fd, (const uint8_t *) "0123456789abcdef", 16, &s, 1, &names, NULL), ESTALE);

        /* each with its own: named */
        s.offset = offset_of(prog_noid, "fn_sized");
        ASSERT_EQ(name_in(prog_noid, prog_noid, &s, 1, &names, NULL), 1);
        ASSERT_STREQ(s.name, "fn_sized");
        free(TAKE_PTR(names));
        s.offset = offset_of(prog_rebuilt, "fn_sized");
        ASSERT_EQ(name_in(prog_rebuilt, prog_rebuilt, &s, 1, &names, NULL), 1);
        ASSERT_STREQ(s.name, "fn_sized");
}

TEST(cxx_demangled) {
        const Case cases[] = {
                { "_ZNK6solver4GridIdE3sumEi", 2, "solver::Grid<double>::sum(int) const", NULL },
                { "_ZN6solver4GridIdEpLERKS1_", 2,
                  "solver::Grid<double>::operator+=(solver::Grid<double> const&)", NULL },
                { "main", 0, "main", NULL },
        };

        if (!prog_cxx[0]) {
                fprintf(stderr, "no C++ compiler: C++ names not checked (said at the end)\n");
                return;
        }
        check_cases(prog_cxx, cases, ELEMENTSOF(cases), FUNC_TABLE_SYMTAB);
}

TEST(fortran_module_procedure) {
        const Case cases[] = {
                { "__heat_MOD_step", 1, "heat::step", NULL },
                { "MAIN__", 0, "MAIN__", NULL },
        };

        if (!prog_fortran[0]) {
                fprintf(stderr, "no Fortran compiler: Fortran names not checked (said at the end)\n");
                return;
        }
        check_cases(prog_fortran, cases, ELEMENTSOF(cases), FUNC_TABLE_SYMTAB);
}

/* ---- ELF files written here ---- */

typedef struct TSym {
        const char *name;
        uint64_t value, size;
        uint8_t type, bind;
        uint16_t shndx;
} TSym;

typedef struct TLoad {
        uint64_t offset, vaddr, filesz;
} TLoad;

typedef struct TSec {
        uint64_t addr, offset, size;    /* an executable section: index 1, 2, … */
} TSec;

typedef struct TElf {
        bool is32, big;
        uint16_t machine;               /* 0: x86-64 */
        const TLoad *loads;
        size_t n_loads;
        const TSec *secs;
        size_t n_secs;
        const TSym *syms;               /* symbol 1, 2, … */
        size_t n_syms;
        void (*gen)(uint64_t i, TSym *s); /* or symbol i + 1 from gen(i), i < n_gen */
        uint64_t n_gen;
        uint32_t table;                 /* 0: SHT_SYMTAB */
        /* malformed on purpose */
        uint64_t entsize;               /* of the symbol table, 0: right */
        uint64_t table_size;            /* claimed, 0: right (the file is made that long) */
        uint32_t link;                  /* the table's sh_link, 0: its string table */
        bool strtab_unterminated;       /* the last name has no NUL */
} TElf;

typedef struct TLayout {
        uint64_t symtab_off, size;
} TLayout;

static void put(uint8_t *p, uint64_t v, size_t n, bool big) {
        for (size_t i = 0; i < n; i++)
                p[big ? n - 1 - i : i] = (uint8_t) (v >> (8 * i));
}

#define PUT(buf, type, field, v, big) put((buf) + offsetof(type, field), (v), sizeof(((type *) 0)->field), (big))

static void pwrite_all(int fd, const void *buf, size_t n, uint64_t off) {
        ASSERT_EQ(pwrite(fd, buf, n, (off_t) off), (ssize_t) n);
}

static void tsym(const TElf *e, uint64_t i, TSym *s) {
        if (e->gen)
                e->gen(i, s);
        else
                *s = e->syms[i];
}

/* Writes e to fd (truncating it) and says where things went. */
static TLayout telf_write(int fd, const TElf *e) {
        const char *names[64];
        size_t n_names = 0, strsize = 1, entsize = e->is32 ? sizeof(Elf32_Sym) : sizeof(Elf64_Sym);
        size_t shentsize = e->is32 ? sizeof(Elf32_Shdr) : sizeof(Elf64_Shdr);
        size_t phentsize = e->is32 ? sizeof(Elf32_Phdr) : sizeof(Elf64_Phdr);
        size_t ehsize = e->is32 ? sizeof(Elf32_Ehdr) : sizeof(Elf64_Ehdr);
        uint64_t n_syms = e->gen ? e->n_gen : e->n_syms, name_off[64], end = ehsize + e->n_loads * phentsize;
        uint64_t symtab_off, strtab_off, shstr_off, shdr_off, shnum = e->n_secs + 4;
        static const char shstr[] = "\0.text\0.symtab\0.strtab\0.shstrtab";
        _cleanup_free_ uint8_t *buf = malloc(64 * 1024);
        _cleanup_free_ char *strtab = NULL;
        uint8_t eh[sizeof(Elf64_Ehdr)] = {};
        bool big = e->big;
        size_t per = 64 * 1024 / entsize;

        ASSERT_NOT_NULL(buf);
        ASSERT_OK(ftruncate(fd, 0));
        /* the string table: each distinct name once */
        for (uint64_t i = 0; i < n_syms; i++) {
                TSym s;
                size_t k;

                tsym(e, i, &s);
                for (k = 0; k < n_names && !streq(names[k], s.name); k++)
                        ;
                if (k == n_names) {
                        ASSERT_TRUE(n_names < ELEMENTSOF(names));
                        names[n_names] = s.name;
                        name_off[n_names++] = strsize;
                        strsize += strlen(s.name) + 1;
                }
        }
        if (e->strtab_unterminated)
                strsize--;
        strtab = calloc(1, strsize + 1);
        ASSERT_NOT_NULL(strtab);
        for (size_t k = 0; k < n_names; k++)
                memcpy(strtab + name_off[k], names[k], strlen(names[k]));

        for (size_t i = 0; i < e->n_loads; i++)
                end = MAX(end, e->loads[i].offset + e->loads[i].filesz);
        for (size_t i = 0; i < e->n_secs; i++)
                end = MAX(end, e->secs[i].offset + e->secs[i].size);
        symtab_off = ALIGN_TO(end, (uint64_t) 8);
        strtab_off = symtab_off + (n_syms + 1) * entsize;
        shstr_off = strtab_off + strsize;
        shdr_off = ALIGN_TO(shstr_off + sizeof(shstr), (uint64_t) 8);

        memcpy(eh, ELFMAG, SELFMAG);
        eh[EI_CLASS] = e->is32 ? ELFCLASS32 : ELFCLASS64;
        eh[EI_DATA] = big ? ELFDATA2MSB : ELFDATA2LSB;
        eh[EI_VERSION] = EV_CURRENT;
        if (e->is32) {
                PUT(eh, Elf32_Ehdr, e_type, ET_DYN, big);
                PUT(eh, Elf32_Ehdr, e_machine, e->machine ?: EM_386, big);
                PUT(eh, Elf32_Ehdr, e_version, EV_CURRENT, big);
                PUT(eh, Elf32_Ehdr, e_phoff, ehsize, big);
                PUT(eh, Elf32_Ehdr, e_shoff, shdr_off, big);
                PUT(eh, Elf32_Ehdr, e_ehsize, ehsize, big);
                PUT(eh, Elf32_Ehdr, e_phentsize, phentsize, big);
                PUT(eh, Elf32_Ehdr, e_phnum, e->n_loads, big);
                PUT(eh, Elf32_Ehdr, e_shentsize, shentsize, big);
                PUT(eh, Elf32_Ehdr, e_shnum, shnum, big);
                PUT(eh, Elf32_Ehdr, e_shstrndx, shnum - 1, big);
        } else {
                PUT(eh, Elf64_Ehdr, e_type, ET_DYN, big);
                PUT(eh, Elf64_Ehdr, e_machine, e->machine ?: EM_X86_64, big);
                PUT(eh, Elf64_Ehdr, e_version, EV_CURRENT, big);
                PUT(eh, Elf64_Ehdr, e_phoff, ehsize, big);
                PUT(eh, Elf64_Ehdr, e_shoff, shdr_off, big);
                PUT(eh, Elf64_Ehdr, e_ehsize, ehsize, big);
                PUT(eh, Elf64_Ehdr, e_phentsize, phentsize, big);
                PUT(eh, Elf64_Ehdr, e_phnum, e->n_loads, big);
                PUT(eh, Elf64_Ehdr, e_shentsize, shentsize, big);
                PUT(eh, Elf64_Ehdr, e_shnum, shnum, big);
                PUT(eh, Elf64_Ehdr, e_shstrndx, shnum - 1, big);
        }
        pwrite_all(fd, eh, ehsize, 0);

        for (size_t i = 0; i < e->n_loads; i++) {
                uint8_t ph[sizeof(Elf64_Phdr)] = {};
                const TLoad *l = &e->loads[i];

                if (e->is32) {
                        PUT(ph, Elf32_Phdr, p_type, PT_LOAD, big);
                        PUT(ph, Elf32_Phdr, p_flags, PF_R | PF_X, big);
                        PUT(ph, Elf32_Phdr, p_offset, l->offset, big);
                        PUT(ph, Elf32_Phdr, p_vaddr, l->vaddr, big);
                        PUT(ph, Elf32_Phdr, p_filesz, l->filesz, big);
                        PUT(ph, Elf32_Phdr, p_memsz, l->filesz, big);
                } else {
                        PUT(ph, Elf64_Phdr, p_type, PT_LOAD, big);
                        PUT(ph, Elf64_Phdr, p_flags, PF_R | PF_X, big);
                        PUT(ph, Elf64_Phdr, p_offset, l->offset, big);
                        PUT(ph, Elf64_Phdr, p_vaddr, l->vaddr, big);
                        PUT(ph, Elf64_Phdr, p_filesz, l->filesz, big);
                        PUT(ph, Elf64_Phdr, p_memsz, l->filesz, big);
                }
                pwrite_all(fd, ph, phentsize, ehsize + i * phentsize);
        }

        /* the symbol table, in chunks: 100 MB of it must not cost the test 100 MB */
        memset(buf, 0, entsize); /* the null symbol */
        for (uint64_t base = 0; base < n_syms + 1; base += per) {
                size_t m = (size_t) MIN((uint64_t) per, n_syms + 1 - base);

                for (size_t j = 0; j < m; j++) {
                        uint8_t *p = buf + j * entsize;
                        TSym s;
                        size_t k;

                        if (base + j == 0)
                                continue;
                        tsym(e, base + j - 1, &s);
                        for (k = 0; !streq(names[k], s.name); k++)
                                ;
                        memset(p, 0, entsize);
                        if (e->is32) {
                                PUT(p, Elf32_Sym, st_name, name_off[k], big);
                                PUT(p, Elf32_Sym, st_value, s.value, big);
                                PUT(p, Elf32_Sym, st_size, s.size, big);
                                p[offsetof(Elf32_Sym, st_info)] = ELF32_ST_INFO(s.bind, s.type);
                                PUT(p, Elf32_Sym, st_shndx, s.shndx, big);
                        } else {
                                PUT(p, Elf64_Sym, st_name, name_off[k], big);
                                PUT(p, Elf64_Sym, st_value, s.value, big);
                                PUT(p, Elf64_Sym, st_size, s.size, big);
                                p[offsetof(Elf64_Sym, st_info)] = ELF64_ST_INFO(s.bind, s.type);
                                PUT(p, Elf64_Sym, st_shndx, s.shndx, big);
                        }
                }
                pwrite_all(fd, buf, m * entsize, symtab_off + base * entsize);
        }
        pwrite_all(fd, strtab, strsize, strtab_off);
        pwrite_all(fd, shstr, sizeof(shstr), shstr_off);

        for (uint64_t i = 0; i < shnum; i++) {
                uint8_t sh[sizeof(Elf64_Shdr)] = {};
                uint64_t name = 0, type = SHT_NULL, flags = 0, addr = 0, off = 0, size = 0, link = 0, es = 0;

                if (i >= 1 && i <= e->n_secs) {
                        name = 1, type = SHT_PROGBITS, flags = SHF_ALLOC | SHF_EXECINSTR;
                        addr = e->secs[i - 1].addr, off = e->secs[i - 1].offset, size = e->secs[i - 1].size;
                } else if (i == e->n_secs + 1) {
                        name = 7, type = e->table ?: SHT_SYMTAB, off = symtab_off;
                        size = e->table_size ?: (n_syms + 1) * entsize;
                        link = e->link ?: e->n_secs + 2, es = e->entsize ?: entsize;
                } else if (i == e->n_secs + 2) {
                        name = 15, type = SHT_STRTAB, off = strtab_off, size = strsize;
                } else if (i == e->n_secs + 3) {
                        name = 23, type = SHT_STRTAB, off = shstr_off, size = sizeof(shstr);
                }
                if (e->is32) {
                        PUT(sh, Elf32_Shdr, sh_name, name, big);
                        PUT(sh, Elf32_Shdr, sh_type, type, big);
                        PUT(sh, Elf32_Shdr, sh_flags, flags, big);
                        PUT(sh, Elf32_Shdr, sh_addr, addr, big);
                        PUT(sh, Elf32_Shdr, sh_offset, off, big);
                        PUT(sh, Elf32_Shdr, sh_size, size, big);
                        PUT(sh, Elf32_Shdr, sh_link, link, big);
                        PUT(sh, Elf32_Shdr, sh_entsize, es, big);
                } else {
                        PUT(sh, Elf64_Shdr, sh_name, name, big);
                        PUT(sh, Elf64_Shdr, sh_type, type, big);
                        PUT(sh, Elf64_Shdr, sh_flags, flags, big);
                        PUT(sh, Elf64_Shdr, sh_addr, addr, big);
                        PUT(sh, Elf64_Shdr, sh_offset, off, big);
                        PUT(sh, Elf64_Shdr, sh_size, size, big);
                        PUT(sh, Elf64_Shdr, sh_link, link, big);
                        PUT(sh, Elf64_Shdr, sh_entsize, es, big);
                }
                pwrite_all(fd, sh, shentsize, shdr_off + i * shentsize);
        }
        if (e->table_size && symtab_off + e->table_size > shdr_off + shnum * shentsize)
                ASSERT_OK(ftruncate(fd, (off_t) (symtab_off + e->table_size)));
        return (TLayout) { symtab_off, shdr_off + shnum * shentsize };
}

static int temp_fd(void) {
        char path[] = "/tmp/test-funcname.XXXXXX";
        int fd = mkostemp(path, O_CLOEXEC);

        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(unlink(path));
        return fd;
}

#define FUNC(n, v, sz) { n, v, sz, STT_FUNC, STB_GLOBAL, 1 }

/* Names offsets[] in e; want[i] NULL: unnamed. */
static void check_telf(const TElf *e, const uint64_t *offsets, const char *const *want, size_t n) {
        _cleanup_close_ int fd = temp_fd();
        _cleanup_free_ FuncSym *s = calloc(n, sizeof(*s));
        _cleanup_free_ char *names = NULL;
        size_t named = 0;
        int r;

        telf_write(fd, e);
        for (size_t i = 0; i < n; i++)
                s[i].offset = offsets[i];
        for (size_t i = 0; i < n; i++)
                named += want[i] != NULL;
        r = funcname_resolve(fd, NULL, 0, s, n, &names, NULL);
        ASSERT_OK(r);
        for (size_t i = 0; i < n; i++)
                if (!want[i] ? s[i].name != NULL : !s[i].name || !streq(s[i].name, want[i]))
                        test_fail("%s%s offset 0x%" PRIx64 ": named %s, expected %s", e->is32 ? "ELF32" : "ELF64",
                                  e->big ? " big-endian" : "", offsets[i], s[i].name ?: "(unnamed)",
                                  want[i] ?: "(unnamed)");
        ASSERT_EQ(r, (long long) named);
        check_same_ranges(fd, NULL, 0, s, n);
}

TEST(segment_ends_classes_byte_orders) {
        /* two segments back to back in the file, far apart in memory */
        const TLoad loads[] = { { 0x1000, 0x401000, 0x100 }, { 0x1100, 0x505100, 0x100 } };
        const TSec secs[] = { { 0x401000, 0x1000, 0x100 }, { 0x505100, 0x1100, 0x100 } };
        const TSym syms[] = {
                FUNC("f", 0x4010f0, 0x20),      /* runs past its segment's end */
                { "g", 0x505100, 0x10, STT_FUNC, STB_GLOBAL, 2 },
                { "h", 0x505180, 0, STT_FUNC, STB_GLOBAL, 2 },  /* sizeless: to the section's end */
        };
        const uint64_t offsets[] = { 0x10ff, 0x1100, 0x10f0, 0x10ef, 0xfff, 0x1110, 0x117f, 0x1180, 0x11ff, 0x1200, 0 };
        const char *const want[] = { "f", "g", "f", NULL, NULL, NULL, NULL, "h", "h", NULL, NULL };

        for (int v = 0; v < 4; v++) {
                TElf e = { .is32 = v & 1, .big = v & 2, .loads = loads, .n_loads = 2, .secs = secs, .n_secs = 2,
                           .syms = syms, .n_syms = ELEMENTSOF(syms) };

                check_telf(&e, offsets, want, ELEMENTSOF(offsets));
        }
}

TEST(absurd_and_overlapping) {
        const TLoad loads[] = { { 0x1000, 0x1000, 0x200 } };
        const TSec secs[] = { { 0x1000, 0x1000, 0x100 }, { 0x1100, 0x1100, 0x100 } };
        const TSym syms[] = {
                FUNC("huge", 0x1000, UINT64_MAX),       /* not past its section */
                FUNC("small", 0x1010, 8),
                FUNC("wraps", UINT64_MAX - 8, 0x100),
                FUNC("twin_a", 0x1040, 0x40),           /* same start, the first wins */
                FUNC("twin_b", 0x1040, 0x40),
                FUNC("longer", 0x1040, 0x80),           /* same start, covers more: counts only past the others */
                { "weak", 0x1060, 0x10, STT_FUNC, STB_WEAK, 1 },
                { "local", 0x1060, 0x10, STT_FUNC, STB_LOCAL, 1 },
                { "notype_abs", 0x1150, 0x10, STT_NOTYPE, STB_GLOBAL, SHN_ABS },
                { "object", 0x1160, 0x10, STT_OBJECT, STB_GLOBAL, 2 },
        };
        const uint64_t offsets[] = { 0x1000, 0x1014, 0x1018, 0x1044, 0x1064, 0x1090, 0x10ff, 0x1100, 0x1150, 0x1168 };
        const char *const want[] = { "huge", "small", "huge", "twin_a", "weak", "longer", "huge", NULL, NULL, NULL };
        TElf e = { .loads = loads, .n_loads = 1, .secs = secs, .n_secs = 2, .syms = syms, .n_syms = ELEMENTSOF(syms) };

        check_telf(&e, offsets, want, ELEMENTSOF(offsets));
}

static void gen_nested(uint64_t i, TSym *s) {
        /* 200,000 symbols that all cover 0x1000..0x11000 */
        *s = (TSym) FUNC(i % 2 ? "nest_b" : "nest_a", 0x1000 + i / 16, 0x10000 - i / 16);
}

TEST(overlaps_cost_log_time) {
        /* each symbol covers every address: naming 10,000 addresses must not
         * cost 200,000 x 10,000 steps */
        const TLoad loads[] = { { 0x1000, 0x1000, 0x10000 } };
        const TSec secs[] = { { 0x1000, 0x1000, 0x10000 } };
        TElf e = { .loads = loads, .n_loads = 1, .secs = secs, .n_secs = 1, .gen = gen_nested, .n_gen = 200000 };
        _cleanup_close_ int fd = temp_fd();
        _cleanup_free_ FuncSym *s = calloc(10000, sizeof(*s));
        _cleanup_free_ char *names = NULL;
        struct timespec t0, t1;
        double secs_taken;

        telf_write(fd, &e);
        for (size_t i = 0; i < 10000; i++)
                s[i].offset = 0x1000 + i * 6;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        ASSERT_EQ(funcname_resolve(fd, NULL, 0, s, 10000, &names, NULL), 10000);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        secs_taken = (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9;
        fprintf(stderr, "200,000 nested symbols, 10,000 addresses: %.3f s\n", secs_taken);
        ASSERT_TRUE(secs_taken < 5);
        /* the greatest start at or below the address: symbol 16 * (a - 0x1000), the first of its 16 */
        for (size_t i = 0; i < 10000; i++) {
                uint64_t a = 0x1000 + i * 6, first = (a - 0x1000) * 16;

                if (first >= 200000)
                        first = 199984;
                ASSERT_STREQ(s[i].name, first % 2 ? "nest_b" : "nest_a");
                ASSERT_U64_EQ(s[i].start, MIN(a, (uint64_t) 0x1000 + 199999 / 16));
        }
        check_same_ranges(fd, NULL, 0, s, 10000);
}

TEST(arm_mapping_symbols) {
        const TLoad loads[] = { { 0x1000, 0x1000, 0x100 } };
        const TSec secs[] = { { 0x1000, 0x1000, 0x100 } };
        const TSym syms[] = {
                FUNC("armfn", 0x1000, 0x40),
                { "$x", 0x1010, 0, STT_NOTYPE, STB_LOCAL, 1 },
        };
        const uint64_t offsets[] = { 0x1020 };
        const char *const arm[] = { "armfn" }, *const x86[] = { "$x" };
        TElf e = { .machine = EM_AARCH64, .loads = loads, .n_loads = 1, .secs = secs, .n_secs = 1,
                   .syms = syms, .n_syms = ELEMENTSOF(syms) };

        check_telf(&e, offsets, arm, 1);
        /* elsewhere a local label in text is a label of hand-written code */
        e.machine = EM_X86_64;
        check_telf(&e, offsets, x86, 1);
}

static const TLoad small_loads[] = { { 0x1000, 0x1000, 0x100 } };
static const TSec small_secs[] = { { 0x1000, 0x1000, 0x100 } };
static const TSym small_syms[] = { FUNC("first", 0x1000, 0x10), FUNC("second", 0x1010, 0x10) };

static int name_small(const TElf *e, FuncSym *s, char **names) {
        _cleanup_close_ int fd = temp_fd();

        telf_write(fd, e);
        s[0] = (FuncSym) { .offset = 0x1004 };
        s[1] = (FuncSym) { .offset = 0x1014 };
        return funcname_resolve(fd, NULL, 0, s, 2, names, NULL);
}

TEST(malformed_tables) {
        const TElf base = { .loads = small_loads, .n_loads = 1, .secs = small_secs, .n_secs = 1,
                            .syms = small_syms, .n_syms = 2 };
        TElf e;
        FuncSym s[2];
        _cleanup_free_ char *names = NULL;
        _cleanup_close_ int fd = -EBADF;
        char big[SYMNAME_MANGLED_MAX + 100];
        TSym long_syms[2];

        e = base;
        ASSERT_EQ(name_small(&e, s, &names), 2);
        ASSERT_STREQ(s[0].name, "first");
        ASSERT_STREQ(s[1].name, "second");
        free(TAKE_PTR(names));

        e = base;
        e.entsize = 20;
        ASSERT_ERROR(name_small(&e, s, &names), EBADMSG);
        ASSERT_NULL(s[0].name);

        e = base;
        e.table_size = 3 * sizeof(Elf64_Sym) + 1;       /* not whole entries */
        ASSERT_ERROR(name_small(&e, s, &names), EBADMSG);

        e = base;
        e.link = 1;                                     /* names in .text */
        ASSERT_ERROR(name_small(&e, s, &names), EBADMSG);

        e = base;
        e.link = 77;                                    /* no such section */
        ASSERT_ERROR(name_small(&e, s, &names), EBADMSG);

        /* .dynsym when there is no .symtab */
        e = base;
        e.table = SHT_DYNSYM;
        ASSERT_EQ(name_small(&e, s, &names), 2);
        free(TAKE_PTR(names));

        /* a name without its NUL at the string table's end: shown cut */
        e = base;
        e.strtab_unterminated = true;
        ASSERT_EQ(name_small(&e, s, &names), 2);
        ASSERT_STREQ(s[0].name, "first");
        ASSERT_STREQ(s[1].name, "second...");
        free(TAKE_PTR(names));

        /* a name longer than is ever read */
        memset(big, 'x', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        long_syms[0] = small_syms[0];
        long_syms[1] = (TSym) FUNC(big, 0x1010, 0x10);
        e = base;
        e.syms = long_syms;
        ASSERT_EQ(name_small(&e, s, &names), 2);
        ASSERT_EQ(strlen(s[1].name), SYMNAME_MAX);
        ASSERT_TRUE(strncmp(s[1].name, "xxxx", 4) == 0);
        ASSERT_STREQ(s[1].name + SYMNAME_MAX - 3, "...");
        free(TAKE_PTR(names));

        /* more symbols than believable: refused before anything is read
         * (a sparse file claims them) */
        e = base;
        e.table_size = (FUNCNAME_SYMBOLS_MAX + 1) * sizeof(Elf64_Sym);
        ASSERT_ERROR(name_small(&e, s, &names), EFBIG);

        /* the table runs past the file's end */
        e = base;
        fd = temp_fd();
        e.table_size = 2 * 1024 * 1024;
        telf_write(fd, &e);
        ASSERT_OK(ftruncate(fd, 1024 * 1024));
        s[0] = (FuncSym) { .offset = 0x1004 };
        ASSERT_ERROR(funcname_resolve(fd, NULL, 0, s, 1, &names, NULL), EBADMSG);

        /* not for us */
        ASSERT_ERROR(funcname_resolve(fd, NULL, 0, s, FUNCNAME_OFFSETS_MAX + 1, &names, NULL), EINVAL);
        {
                int p[2];

                ASSERT_OK(pipe2(p, O_CLOEXEC));
                ASSERT_ERROR(funcname_resolve(p[0], NULL, 0, s, 1, &names, NULL), EINVAL);
                close(p[0]);
                close(p[1]);
        }
}

/* Every truncation of a valid file is refused, never read past. */
TEST(truncated) {
        const TElf e = { .loads = small_loads, .n_loads = 1, .secs = small_secs, .n_secs = 1,
                         .syms = small_syms, .n_syms = 2 };
        _cleanup_close_ int fd = temp_fd(), src = -EBADF;
        _cleanup_free_ char *names = NULL;
        TLayout l;
        FuncSym s[2];
        struct stat st;
        uint8_t *copy;

        for (uint64_t len = 0;; len++) {
                l = telf_write(fd, &e);
                if (len >= l.size)
                        break;
                ASSERT_OK(ftruncate(fd, (off_t) len));
                s[0] = (FuncSym) { .offset = 0x1004 };
                s[1] = (FuncSym) { .offset = 0x1014 };
                ASSERT_ERROR(funcname_resolve(fd, NULL, 0, s, 2, &names, NULL), EBADMSG);
        }

        /* a compiled program cut anywhere: not ELF, malformed, or (cut
         * before its build-id) another build */
        src = open(prog, O_RDONLY | O_CLOEXEC);
        ASSERT_TRUE(src >= 0 && fstat(src, &st) == 0);
        copy = malloc((size_t) st.st_size);
        ASSERT_NOT_NULL(copy);
        ASSERT_EQ(pread(src, copy, (size_t) st.st_size, 0), st.st_size);
        for (off_t len = 0; len < st.st_size; len += len < 4096 ? 61 : 997) {
                uint8_t id[BUILD_ID_MAX];
                int idn = buildid_read_fd(src, id), r;

                ASSERT_OK(ftruncate(fd, 0));
                pwrite_all(fd, copy, (size_t) len, 0);
                s[0] = (FuncSym) { .offset = 0x1100 };
                r = funcname_resolve(fd, id, (size_t) idn, s, 1, &names, NULL);
                if (r != -EBADMSG && r != -ESTALE)
                        test_fail("%s cut at %jd: %d", prog, (intmax_t) len, r);
        }
        free(copy);
}

/* ---- hostile unwind tables ---- */

typedef struct Stripped {
        uint8_t *bytes;
        size_t size;
        uint64_t phdr;          /* file offset of the PT_GNU_EH_FRAME program header */
        uint64_t hdr;           /* file offset of .eh_frame_hdr */
        uint64_t fde;           /* file offset of local_work's FDE */
        uint64_t want;          /* local_work's start, a file offset */
        uint64_t sample;        /* an offset inside it */
} Stripped;

static Stripped stripped_load(void) {
        _cleanup_close_ int fd = open(prog_stripped, O_RDONLY | O_CLOEXEC);
        RefSym local = ref_must(prog, "local_work");
        Stripped s = { .want = ref_offset(prog, local.value) };
        Elf *elf;
        struct stat st;
        size_t n;

        s.sample = s.want + 2;
        ASSERT_TRUE(fd >= 0 && fstat(fd, &st) == 0);
        s.size = (size_t) st.st_size;
        s.bytes = malloc(s.size);
        ASSERT_NOT_NULL(s.bytes);
        ASSERT_EQ(pread(fd, s.bytes, s.size, 0), (ssize_t) s.size);
        elf = elf_begin(fd, ELF_C_READ, NULL);
        ASSERT_NOT_NULL(elf);
        ASSERT_TRUE(elf_getphdrnum(elf, &n) == 0);
        for (size_t i = 0; i < n; i++) {
                GElf_Phdr ph;

                ASSERT_NOT_NULL(gelf_getphdr(elf, (int) i, &ph));
                if (ph.p_type == PT_GNU_EH_FRAME) {
                        s.phdr = sizeof(Elf64_Ehdr) + i * sizeof(Elf64_Phdr);
                        s.hdr = ph.p_offset;
                        /* x86-64 toolchains: datarel|sdata4 entries after a 12-byte header */
                        ASSERT_EQ(s.bytes[s.hdr + 3], 0x3b);
                        for (uint32_t k = 0; k < *(uint32_t *) (s.bytes + s.hdr + 8); k++) {
                                const int32_t *e = (const int32_t *) (s.bytes + s.hdr + 12 + 8 * k);

                                if (ph.p_vaddr + (uint64_t) (int64_t) e[0] == local.value)
                                        s.fde = ref_offset(prog_stripped, ph.p_vaddr + (uint64_t) (int64_t) e[1]);
                        }
                }
        }
        elf_end(elf);
        ASSERT_TRUE(s.hdr > 0 && s.fde > 0);
        return s;
}

/* Names the stripped program's sample offset with bytes patched: the
 * error, and the entry (0: none). */
static int name_patched(const Stripped *s, void (*patch)(const Stripped *s, uint8_t *b), uint64_t *ret_entry) {
        _cleanup_close_ int fd = temp_fd();
        _cleanup_free_ uint8_t *b = malloc(s->size);
        _cleanup_free_ char *names = NULL;
        uint8_t id[BUILD_ID_MAX];
        FuncSym f = { .offset = s->sample };
        int idn, r;

        ASSERT_NOT_NULL(b);
        memcpy(b, s->bytes, s->size);
        patch(s, b);
        pwrite_all(fd, b, s->size, 0);
        idn = buildid_read_fd(fd, id);
        ASSERT_TRUE(idn > 0);
        r = funcname_resolve(fd, id, (size_t) idn, &f, 1, &names, NULL);
        ASSERT_NULL(f.name);
        if (f.entry)
                ASSERT_TRUE(f.start <= f.vaddr && f.vaddr < f.end);
        *ret_entry = f.entry ? f.entry_offset : 0;
        return r;
}

static void patch_none(const Stripped *s, uint8_t *b) {
}

static void patch_count_absurd(const Stripped *s, uint8_t *b) {
        put(b + s->hdr + 8, UINT32_MAX, 4, false);
}

static void patch_version(const Stripped *s, uint8_t *b) {
        b[s->hdr] = 2;
}

static void patch_table_uleb(const Stripped *s, uint8_t *b) {
        b[s->hdr + 3] = 0x01;   /* uleb128: no fixed size to search */
}

static void patch_table_indirect(const Stripped *s, uint8_t *b) {
        b[s->hdr + 3] = 0xbb;
}

static void patch_table_textrel(const Stripped *s, uint8_t *b) {
        b[s->hdr + 3] = 0x2b;
}

static void patch_count_enc(const Stripped *s, uint8_t *b) {
        b[s->hdr + 2] = 0x07;   /* no such format */
}

static void patch_count_omitted(const Stripped *s, uint8_t *b) {
        b[s->hdr + 2] = 0xff;
}

static void patch_reversed(const Stripped *s, uint8_t *b) {
        uint32_t n = *(uint32_t *) (b + s->hdr + 8);

        for (uint32_t k = 0; k < n / 2; k++) {
                uint64_t x, y;

                memcpy(&x, b + s->hdr + 12 + 8 * k, 8);
                memcpy(&y, b + s->hdr + 12 + 8 * (n - 1 - k), 8);
                memcpy(b + s->hdr + 12 + 8 * k, &y, 8);
                memcpy(b + s->hdr + 12 + 8 * (n - 1 - k), &x, 8);
        }
}

static void patch_fde_pointers_wild(const Stripped *s, uint8_t *b) {
        uint32_t n = *(uint32_t *) (b + s->hdr + 8);

        for (uint32_t k = 0; k < n; k++)
                put(b + s->hdr + 12 + 8 * k + 4, 0x7ffffff0, 4, false);
}

static void patch_fde_is_cie(const Stripped *s, uint8_t *b) {
        put(b + s->fde + 4, 0, 4, false);
}

static void patch_fde_cie_wild(const Stripped *s, uint8_t *b) {
        put(b + s->fde + 4, 0xfffffff0, 4, false);
}

static void patch_fde_range_zero(const Stripped *s, uint8_t *b) {
        put(b + s->fde + 12, 0, 4, false);
}

static void patch_fde_range_short(const Stripped *s, uint8_t *b) {
        put(b + s->fde + 12, 1, 4, false);      /* ends before the sample */
}

static void patch_fde_length_zero(const Stripped *s, uint8_t *b) {
        put(b + s->fde, 0, 4, false);           /* the terminator */
}

static void patch_fde_length_short(const Stripped *s, uint8_t *b) {
        put(b + s->fde, 6, 4, false);           /* pc_begin cut */
}

static void patch_fde_length_extended(const Stripped *s, uint8_t *b) {
        put(b + s->fde, UINT32_MAX, 4, false);  /* 64-bit length: what follows is read as one */
}

static void patch_fde_begin_other(const Stripped *s, uint8_t *b) {
        put(b + s->fde + 8, *(uint32_t *) (b + s->fde + 8) - 4, 4, false);
}

static void patch_cie_augmentation(const Stripped *s, uint8_t *b) {
        uint64_t cie = s->fde + 4 - *(uint32_t *) (b + s->fde + 4);

        b[cie + 9] = 'Q';       /* "zR" -> "zQ": data of unknown size before 'R' */
}

static void patch_cie_version(const Stripped *s, uint8_t *b) {
        uint64_t cie = s->fde + 4 - *(uint32_t *) (b + s->fde + 4);

        b[cie + 8] = 9;
}

static void patch_cie_unterminated(const Stripped *s, uint8_t *b) {
        uint64_t cie = s->fde + 4 - *(uint32_t *) (b + s->fde + 4);
        uint32_t len = *(uint32_t *) (b + cie);

        memset(b + cie + 9, 'z', len - 5);
}

static void patch_segment_short(const Stripped *s, uint8_t *b) {
        put(b + s->phdr + offsetof(Elf64_Phdr, p_filesz), 12, 8, false);        /* the header alone */
}

static void patch_segment_beyond(const Stripped *s, uint8_t *b) {
        put(b + s->phdr + offsetof(Elf64_Phdr, p_filesz), UINT64_C(1) << 40, 8, false);
}

static void patch_segment_odd(const Stripped *s, uint8_t *b) {
        put(b + s->phdr + offsetof(Elf64_Phdr, p_filesz), 12 + 8 * 2 + 3, 8, false); /* two entries and a bit */
}

/* Whatever the unwind table says, naming ends in bounded time with an
 * answer or none, never an error of the whole file, never an entry that
 * does not cover the address. */
TEST(hostile_unwind_tables) {
        Stripped s = stripped_load();
        const struct {
                const char *what;
                void (*patch)(const Stripped *s, uint8_t *b);
                bool entry;
        } cases[] = {
                { "as built", patch_none, true },
                { "fde_count 2^32-1 (as many as the segment holds)", patch_count_absurd, true },
                { "version 2", patch_version, false },
                { "table_enc uleb128", patch_table_uleb, false },
                { "table_enc indirect", patch_table_indirect, false },
                { "table_enc textrel", patch_table_textrel, false },
                { "fde_count_enc of no format", patch_count_enc, false },
                { "fde_count omitted", patch_count_omitted, false },
                { "FDE pointers beyond the segments", patch_fde_pointers_wild, false },
                { "FDE's CIE pointer 0 (a CIE)", patch_fde_is_cie, false },
                { "FDE's CIE pointer before the file", patch_fde_cie_wild, false },
                { "pc_range 0", patch_fde_range_zero, false },
                { "pc_range ending before the address", patch_fde_range_short, false },
                { "FDE length 0", patch_fde_length_zero, false },
                { "FDE length cutting pc_begin", patch_fde_length_short, false },
                { "FDE 64-bit length", patch_fde_length_extended, false },
                { "pc_begin not the table's", patch_fde_begin_other, false },
                { "CIE augmentation unknown", patch_cie_augmentation, false },
                { "CIE version 9", patch_cie_version, false },
                { "CIE augmentation without NUL", patch_cie_unterminated, false },
                { "segment holding the header alone", patch_segment_short, false },
                { "segment beyond the file", patch_segment_beyond, false },
        };
        uint64_t entry;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                int r = name_patched(&s, cases[i].patch, &entry);

                if (r < 0 || (entry != 0) != cases[i].entry || (entry != 0 && entry != s.want))
                        test_fail("%s: returned %d, entry 0x%" PRIx64 " (want %s0x%" PRIx64 ")", cases[i].what, r,
                                  entry, cases[i].entry ? "" : "none, not ", s.want);
        }
        /* unsorted, or cut mid-entry: an answer or none, within bounds (name_patched()) */
        ASSERT_OK(name_patched(&s, patch_reversed, &entry));
        ASSERT_OK(name_patched(&s, patch_segment_odd, &entry));
        free(s.bytes);
}

/* ---- a 100 MB .symtab ---- */

#define BIG_BASE UINT64_C(0x100000)
static const char *const big_names[] = { "kernel_a", "kernel_b", "kernel_c", "kernel_d", "target" };
static uint64_t big_target;

static void gen_big(uint64_t i, TSym *s) {
        *s = (TSym) FUNC(i == big_target ? "target" : big_names[i % 4], BIG_BASE + 4 * i, 4);
}

static long status_kb(const char *field) {
        _cleanup_fclose_ FILE *f = fopen("/proc/self/status", "re");
        char line[256];

        ASSERT_NOT_NULL(f);
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, field, strlen(field)) == 0)
                        return strtol(line + strlen(field), NULL, 10);
        test_fail("no %s in /proc/self/status", field);
}

/* The peak RSS from here on starts at the RSS now (clear_refs' "5"), not
 * at this process's or, through exec, its parent's peak so far, as
 * getrusage()'s would. Returns that start. */
static long peak_rss_start(void) {
        FILE *f = fopen("/proc/self/clear_refs", "we");

        if (f) {
                fputs("5", f);
                fclose(f);
        }
        return status_kb("VmHWM:");
}

static long peak_rss_kb(void) {
        return status_kb("VmHWM:");
}

static uint64_t big_symbols(void) {
        /* valgrind runs this 50 times slower: 10 MB there */
        return (getenv("LMK_UNDER_VALGRIND") ? 10 : 100) * UINT64_C(1000000) / sizeof(Elf64_Sym);
}

static int big_file(TLayout *ret) {
        int fd = temp_fd();
        uint64_t n = big_symbols();
        TLoad *load = malloc(sizeof(*load));
        TSec *sec = malloc(sizeof(*sec));
        TElf e;

        ASSERT_TRUE(load && sec);
        *load = (TLoad) { 0x1000, BIG_BASE, 4 * n };
        *sec = (TSec) { BIG_BASE, 0x1000, 4 * n };
        e = (TElf) { .loads = load, .n_loads = 1, .secs = sec, .n_secs = 1, .gen = gen_big, .n_gen = n };
        big_target = n / 3;
        *ret = telf_write(fd, &e);
        free(load);
        free(sec);
        return fd;
}

TEST(big_symtab_bounded) {
        TLayout l;
        _cleanup_close_ int fd = big_file(&l);
        uint64_t n = big_symbols(), m = 10000;
        _cleanup_free_ FuncSym *s = calloc(m, sizeof(*s));
        _cleanup_free_ char *names = NULL;
        FuncNameInfo info;
        struct timespec t0, t1;
        long before, after;
        double secs_taken;

        ASSERT_NOT_NULL(s);
        /* addresses all over the table, the target's among them, unsorted */
        for (uint64_t i = 0; i < m; i++)
                s[i].offset = 0x1000 + 4 * ((i * 7919 * 13 + 1) % n) + i % 4;
        s[m / 2].offset = 0x1000 + 4 * big_target + 3;
        before = peak_rss_start();
        clock_gettime(CLOCK_MONOTONIC, &t0);
        ASSERT_EQ(funcname_resolve(fd, NULL, 0, s, m, &names, &info), (long long) m);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        after = peak_rss_kb();
        secs_taken = (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9;
        fprintf(stderr, "%.0f MB .symtab (%" PRIu64 " symbols), %" PRIu64 " addresses: %.2f s, peak RSS +%ld KiB\n",
                (double) (l.size - l.symtab_off) / 1e6, info.n_symbols, m, secs_taken, after - before);
        ASSERT_EQ(info.table, FUNC_TABLE_SYMTAB);
        ASSERT_EQ(info.n_symbols, n + 1);
        ASSERT_STREQ(s[m / 2].name, "target");
        for (uint64_t i = 0; i < m; i++) {
                uint64_t k = (s[i].offset - 0x1000) / 4;

                ASSERT_STREQ(s[i].name, k == big_target ? "target" : big_names[k % 4]);
                ASSERT_U64_EQ(s[i].start, BIG_BASE + 4 * k);
        }
        /* The table is not held: its 100 MB would show. */
        ASSERT_TRUE(after - before < 16 * 1024);
        ASSERT_TRUE(secs_taken < (getenv("LMK_UNDER_VALGRIND") ? 120 : 20));
}

typedef struct Changer {
        int fd;
        uint64_t at;
        atomic_bool stop;
        unsigned changes;
} Changer;

/* A 32 MB unwind table (4M FDEs; real ones hold up to ~1M): every
 * offset of the stripped program's code gets the answer the program's
 * own table gives, the table is searched, not read (the peak RSS), in
 * bounded time. */
TEST(big_unwind_table_bounded) {
        Stripped s = stripped_load();
        uint32_t n_real = *(uint32_t *) (s.bytes + s.hdr + 8);
        uint64_t n = (getenv("LMK_UNDER_VALGRIND") ? 1 : 4) * (UINT64_C(1) << 20), base = 0x20000000;
        uint64_t at = (s.size + 15) & ~UINT64_C(15), vaddr = 0, size = 12 + 8 * (n_real + n);
        _cleanup_close_ int fd = temp_fd(), small = -EBADF;
        _cleanup_free_ uint8_t *table = malloc(size);
        _cleanup_free_ FuncSym *a = NULL, *b = NULL;
        _cleanup_free_ char *names_a = NULL, *names_b = NULL;
        uint8_t id[BUILD_ID_MAX];
        struct timespec t0, t1;
        long before, after;
        size_t m = 0x400;
        double secs_taken;
        int idn;

        ASSERT_NOT_NULL(table);
        ASSERT_TRUE(n_real > 0);
        /* the real entries, relative to the new header, then fakes past them */
        memcpy(&vaddr, s.bytes + s.phdr + offsetof(Elf64_Phdr, p_vaddr), 8);
        memcpy(table, s.bytes + s.hdr, 8);
        put(table + 8, n_real + n, 4, false);
        for (uint32_t k = 0; k < n_real; k++)
                for (unsigned v = 0; v < 2; v++) {
                        int32_t x;

                        memcpy(&x, s.bytes + s.hdr + 12 + 8 * k + 4 * v, 4);
                        put(table + 12 + 8 * k + 4 * v, vaddr + (uint64_t) (int64_t) x - base, 4, false);
                }
        for (uint64_t k = 0; k < n; k++) {
                put(table + 12 + 8 * (n_real + k), 0x10000000 + 16 * k, 4, false);
                put(table + 12 + 8 * (n_real + k) + 4, 0x40, 4, false);
        }
        pwrite_all(fd, s.bytes, s.size, 0);
        pwrite_all(fd, table, size, at);
        put(table, at, 8, false);
        pwrite_all(fd, table, 8, s.phdr + offsetof(Elf64_Phdr, p_offset));
        put(table, base, 8, false);
        pwrite_all(fd, table, 8, s.phdr + offsetof(Elf64_Phdr, p_vaddr));
        put(table, size, 8, false);
        pwrite_all(fd, table, 8, s.phdr + offsetof(Elf64_Phdr, p_filesz));

        /* every offset of the first 4 KiB of code, against the original */
        a = calloc(m, sizeof(*a));
        b = calloc(m, sizeof(*b));
        ASSERT_TRUE(a && b);
        for (size_t i = 0; i < m; i++)
                a[i].offset = b[i].offset = (s.want & ~UINT64_C(0xfff)) + 4 * i;
        small = open(prog_stripped, O_RDONLY | O_CLOEXEC);
        ASSERT_TRUE(small >= 0);
        idn = buildid_read_fd(small, id);
        ASSERT_TRUE(idn > 0);
        ASSERT_OK(funcname_resolve(small, id, (size_t) idn, a, m, &names_a, NULL));
        before = peak_rss_start();
        clock_gettime(CLOCK_MONOTONIC, &t0);
        ASSERT_OK(funcname_resolve(fd, id, (size_t) idn, b, m, &names_b, NULL));
        clock_gettime(CLOCK_MONOTONIC, &t1);
        after = peak_rss_kb();
        secs_taken = (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9;
        fprintf(stderr, "%.0f MB unwind table (%" PRIu64 " FDEs), %zu addresses: %.3f s, peak RSS +%ld KiB\n",
                (double) size / 1e6, n_real + n, m, secs_taken, after - before);
        for (size_t i = 0; i < m; i++) {
                ASSERT_EQ(a[i].entry, b[i].entry);
                ASSERT_U64_EQ(a[i].entry_offset, b[i].entry_offset);
                ASSERT_EQ(!!a[i].name, !!b[i].name);
        }
        ASSERT_TRUE(b[(s.sample - a[0].offset) / 4].entry);
        ASSERT_TRUE(after - before < 4 * 1024);
        ASSERT_TRUE(secs_taken < (getenv("LMK_UNDER_VALGRIND") ? 60 : 5));
        free(s.bytes);
}

static void *change_file(void *userdata) {
        Changer *c = userdata;

        /* rewrite one symbol's bytes and step the times, until told to stop */
        while (!atomic_load(&c->stop)) {
                uint8_t b[sizeof(Elf64_Sym)];
                struct timespec ts[2] = { { 1000000 + c->changes, 0 }, { 1000000 + c->changes, 0 } };

                ASSERT_EQ(pread(c->fd, b, sizeof(b), (off_t) c->at), (ssize_t) sizeof(b));
                pwrite_all(c->fd, b, sizeof(b), c->at);
                ASSERT_OK(futimens(c->fd, ts));
                c->changes++;
        }
        return NULL;
}

TEST(changed_while_read) {
        TLayout l;
        _cleanup_close_ int fd = big_file(&l);
        FuncSym s = { .offset = 0x1000 + 4 * big_target };
        _cleanup_free_ char *names = NULL;
        Changer c = { .fd = fd, .stop = false };
        pthread_t t;
        int r;

        c.at = l.symtab_off + sizeof(Elf64_Sym) * (big_symbols() / 2);
        ASSERT_OK(-pthread_create(&t, NULL, change_file, &c));
        /* at least one change before naming starts */
        while (c.changes == 0)
                sched_yield();
        r = funcname_resolve(fd, NULL, 0, &s, 1, &names, NULL);
        atomic_store(&c.stop, true);
        ASSERT_OK(-pthread_join(t, NULL));
        fprintf(stderr, "%u changes while naming\n", c.changes);
        ASSERT_ERROR(r, EAGAIN);
        ASSERT_NULL(s.name);
        /* left alone, it is named */
        ASSERT_EQ(funcname_resolve(fd, NULL, 0, &s, 1, &names, NULL), 1);
        ASSERT_STREQ(s.name, "target");
}

/* ---- how names are shown ---- */

static void check_show(const char *raw, size_t n, bool cut, const char *want) {
        char out[SYMNAME_MAX + 1];
        int len = symname_show(raw, n, cut, out);

        ASSERT_OK(len);
        ASSERT_EQ((size_t) len, strlen(out));
        if (!streq(out, want))
                test_fail("\"%.*s\" shown as \"%s\", expected \"%s\"", (int) n, raw, out, want);
}

#define SHOW(raw, want) check_show(raw, strlen(raw), false, want)

TEST(shown_names) {
        char big[SYMNAME_MAX + 8], out[SYMNAME_MAX + 1];

        SHOW("_ZN6solver4stepEv", "solver::step()");
        SHOW("_ZNSt6vectorIiSaIiEE9push_backERKi", "std::vector<int, std::allocator<int> >::push_back(int const&)");
        SHOW("_Z3fooi.cold", "foo(int) [clone .cold]");
        SHOW("_Znotmangled", "_Znotmangled");        /* not a valid mangling: as it is */
        SHOW("i", "i");                              /* a type to __cxa_demangle, a name here */
        SHOW("__heat_MOD_step", "heat::step");
        SHOW("__my_mod_MOD_do_it._omp_fn.0", "my_mod::do_it._omp_fn.0");
        SHOW("__MOD_x", "__MOD_x");                  /* no module */
        SHOW("__m_MOD_", "__m_MOD_");                /* no procedure */
        SHOW("_gfortran_matmul_r8", "_gfortran_matmul_r8");
        SHOW("dgemm_kernel_ZEN", "dgemm_kernel_ZEN");
        SHOW("tab\there\x7f", "tab?here?");
        SHOW("caf\xc3\xa9", "caf\xc3\xa9");
        SHOW("bad\xff\xc3", "bad\xef\xbf\xbd\xef\xbf\xbd");
        check_show("cut", 3, true, "cut...");

        /* exactly SYMNAME_MAX bytes: whole; one more: cut, "..." included */
        memset(big, 'a', sizeof(big));
        ASSERT_EQ(symname_show(big, SYMNAME_MAX, false, out), SYMNAME_MAX);
        ASSERT_TRUE(strspn(out, "a") == SYMNAME_MAX);
        ASSERT_EQ(symname_show(big, SYMNAME_MAX + 1, false, out), SYMNAME_MAX);
        ASSERT_STREQ(out + SYMNAME_MAX - 3, "...");
        /* never cut inside a character */
        memset(big, 'a', sizeof(big));
        memcpy(big + SYMNAME_MAX - 4, "\xc3\xa9\xc3\xa9", 4);
        ASSERT_EQ(symname_show(big, SYMNAME_MAX + 4, false, out), SYMNAME_MAX - 4 + 3);
        ASSERT_STREQ(out + SYMNAME_MAX - 4, "...");
}

/* ---- the fuzz corpus' seeds ---- */

static void write_seed(const char *dir, const char *name, const TElf *e) {
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int fd = -EBADF;

        ASSERT_TRUE(asprintf(&path, "%s/%s", dir, name) > 0);
        fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ASSERT_TRUE(fd >= 0);
        telf_write(fd, e);
}

static void write_seeds(const char *dir) {
        const TLoad loads[] = { { 0x40, 0x1040, 0x100 } };
        const TSec secs[] = { { 0x1040, 0x40, 0x100 } };
        const TSym syms[] = {
                FUNC("sized", 0x1040, 0x20),
                { "sizeless", 0x1070, 0, STT_FUNC, STB_GLOBAL, 1 },
                { "label", 0x1080, 0, STT_NOTYPE, STB_LOCAL, 1 },
                { "_ZN1a1bEv", 0x10a0, 0x10, STT_FUNC, STB_WEAK, 1 },
                { "__m_MOD_p", 0x10b0, 0x10, STT_FUNC, STB_LOCAL, 1 },
                FUNC("outer", 0x10c0, 0x40),
                FUNC("inner", 0x10d0, 0x08),
        };

        for (int v = 0; v < 4; v++) {
                TElf e = { .is32 = v & 1, .big = v & 2, .loads = loads, .n_loads = 1, .secs = secs, .n_secs = 1,
                           .syms = syms, .n_syms = ELEMENTSOF(syms), .table = v == 3 ? SHT_DYNSYM : 0 };
                char name[32];

                snprintf(name, sizeof(name), "seed-elf%s-%s", v & 1 ? "32" : "64", v & 2 ? "msb" : "lsb");
                write_seed(dir, name, &e);
        }
}

/* ---- cost: bench/funcname/run ---- */

static uint64_t xorshift(uint64_t *x) {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        return *x;
}

static int cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

        return CMP(x, y);
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return CMP(x, y);
}

/* Names n distinct offsets drawn evenly from path's executable segments,
 * as one interval's pass over the object would: prints the median time
 * of a pass and the peak memory it added, and writes each offset, its
 * address and its name to out for the referee. */
static int bench(const char *path, size_t n, const char *out) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        _cleanup_free_ uint64_t *offsets = calloc(n, sizeof(*offsets));
        _cleanup_free_ FuncSym *s = calloc(n, sizeof(*s));
        _cleanup_fclose_ FILE *f = NULL;
        uint64_t lo[16], len[16], total = 0, x = 0x9e3779b97f4a7c15 ^ n;
        size_t n_exec = 0, m = 0, phnum, runs = 7, named = 0;
        double ms[7];
        uint8_t id[BUILD_ID_MAX];
        FuncNameInfo info = {};
        long before;
        int idn;
        Elf *elf;

        ASSERT_TRUE(fd >= 0 && offsets && s);
        ASSERT_TRUE(elf_version(EV_CURRENT) != EV_NONE);
        elf = elf_begin(fd, ELF_C_READ, NULL);
        ASSERT_TRUE(elf && elf_getphdrnum(elf, &phnum) == 0);
        for (size_t i = 0; i < phnum && n_exec < ELEMENTSOF(lo); i++) {
                GElf_Phdr ph;

                ASSERT_NOT_NULL(gelf_getphdr(elf, (int) i, &ph));
                if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) && ph.p_filesz > 0) {
                        lo[n_exec] = ph.p_offset;
                        len[n_exec++] = ph.p_filesz;
                        total += ph.p_filesz;
                }
        }
        elf_end(elf);
        ASSERT_TRUE(total >= n);
        while (m < n) {
                for (; m < n; m++) {
                        uint64_t r = xorshift(&x) % total;
                        size_t k = 0;

                        for (; r >= len[k]; k++)
                                r -= len[k];
                        offsets[m] = lo[k] + r;
                }
                qsort(offsets, m, sizeof(*offsets), cmp_u64);
                for (size_t i = 1, j = 1; i <= m; i++)
                        if (i == m) {
                                m = j;
                                break;
                        } else if (offsets[i] != offsets[j - 1])
                                offsets[j++] = offsets[i];
        }
        /* in the order samples come, not sorted */
        for (size_t i = n; i > 1; i--) {
                size_t j = xorshift(&x) % i;
                uint64_t t = offsets[i - 1];

                offsets[i - 1] = offsets[j];
                offsets[j] = t;
        }
        idn = buildid_read_fd(fd, id);
        before = peak_rss_start();
        for (size_t r = 0; r <= runs; r++) {
                _cleanup_free_ char *names = NULL;
                struct timespec t0, t1;
                int k;

                for (size_t i = 0; i < n; i++)
                        s[i].offset = offsets[i];
                clock_gettime(CLOCK_MONOTONIC, &t0);
                k = funcname_resolve(fd, id, idn > 0 ? (size_t) idn : 0, s, n, &names, &info);
                clock_gettime(CLOCK_MONOTONIC, &t1);
                ASSERT_OK(k);
                named = (size_t) k;
                if (r > 0) /* the first warms the page cache */
                        ms[r - 1] = (double) (t1.tv_sec - t0.tv_sec) * 1e3 + (double) (t1.tv_nsec - t0.tv_nsec) / 1e6;
                if (r == runs) {
                        f = fopen(out, "we");
                        ASSERT_NOT_NULL(f);
                        for (size_t i = 0; i < n; i++)
                                fprintf(f, "%" PRIx64 "\t%" PRIx64 "\t%s\n", s[i].offset, s[i].vaddr, s[i].name ?: "");
                }
        }
        qsort(ms, runs, sizeof(ms[0]), cmp_double);
        printf("offsets=%zu named=%zu functions=%zu table=%s symbols=%" PRIu64 " median_ms=%.2f min_ms=%.2f "
               "peak_rss_kib=%ld\n",
               n, named, info.n_functions, info.table == FUNC_TABLE_SYMTAB ? "symtab" : info.table == FUNC_TABLE_DYNSYM ? "dynsym" : "none",
               info.n_symbols, ms[runs / 2], ms[0], peak_rss_kb() - before);
        return 0;
}

int main(int argc, char **argv) {
        if (argc == 3 && streq(argv[1], "--write-seeds")) {
                write_seeds(argv[2]);
                return 0;
        }
        if (argc == 5 && streq(argv[1], "--bench"))
                return bench(argv[2], strtoul(argv[3], NULL, 10), argv[4]);
        if (argc != 8) {
                fprintf(stderr, "usage: %s PROG REBUILT NOID STRIPPED DEBUG CXX|\"\" FORTRAN|\"\"\n"
                                "       %s --bench ELF-FILE OFFSETS OUT\n"
                                "       %s --write-seeds DIR\n", argv[0], argv[0], argv[0]);
                return 2;
        }
        prog = argv[1];
        prog_rebuilt = argv[2];
        prog_noid = argv[3];
        prog_stripped = argv[4];
        prog_debug = argv[5];
        prog_cxx = argv[6];
        prog_fortran = argv[7];

        RUN(shown_names);
        RUN(compiled_symtab);
        RUN(same_ranges);
        RUN(split_debug_file);
        RUN(compiled_dynsym_only);
        RUN(stripped_entries);
        RUN(hostile_unwind_tables);
        RUN(big_unwind_table_bounded);
        RUN(other_build);
        RUN(cxx_demangled);
        RUN(fortran_module_procedure);
        RUN(segment_ends_classes_byte_orders);
        RUN(absurd_and_overlapping);
        RUN(overlaps_cost_log_time);
        RUN(arm_mapping_symbols);
        RUN(malformed_tables);
        RUN(truncated);
        RUN(big_symtab_bounded);
        RUN(changed_while_read);
        /* all else checked: a build without a C++ or Fortran compiler says
         * what it left out, not a pass */
        if (!prog_cxx[0] || !prog_fortran[0])
                test_skip("all but %s%s%s names checked: no such compiler in this build", !prog_cxx[0] ? "C++" : "",
                          !prog_cxx[0] && !prog_fortran[0] ? " and " : "", !prog_fortran[0] ? "Fortran" : "");
        return 0;
}
