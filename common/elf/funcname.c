/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <byteswap.h>
#include <elf.h>
#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "buildid.h"
#include "funcname.h"
#include "macro.h"
#include "symname.h"

/* The file is read with pread() into small buffers, never mapped (a file
 * truncated under us would be SIGBUS) nor read whole into memory (libelf's
 * elf_getdata() would hold a 100 MB .symtab): what the file says is
 * checked against the size it had when reading began. */

#define LOADS_MAX 16
#define SECTIONS_MAX (1u << 20)
#define CHUNK_BYTES (64u * 1024)
#define NAME_FIRST_READ 256u            /* most names are shorter: one small read */

typedef struct Reader {
        int fd;
        struct stat st;                 /* when reading began */
        bool is64, swap;
        uint16_t machine;
        bool debug;                     /* a separate debug file: its sections' bytes are gone (NOBITS) */
} Reader;

typedef struct Load {
        uint64_t offset, vaddr, filesz;
        bool exec;
} Load;

typedef struct Section {
        uint32_t type, link, info;
        uint64_t flags, addr, offset, size, entsize;
} Section;

/* A symbol that may name an address: better ones have a greater start,
 * then a greater rank (binding, sized, earlier in the table). rank 0: none. */
typedef struct Cand {
        uint64_t start, rank;
} Cand;

#define RANK_INDEX_MASK UINT64_C(0xffffffff)

/* One sampled address (they are sorted by vaddr). Slot fields hold, until
 * finish_points(), what falls between the previous address and this one. */
typedef struct Point {
        uint64_t seccut;        /* greatest executable section boundary <= vaddr; 0: none */
        uint64_t cut;           /* greatest function start or such boundary <= vaddr */
        uint64_t next;          /* least of those > vaddr; UINT64_MAX: none */
        uint64_t prev_end;      /* greatest end of a sized symbol <= vaddr; 0: none */
        uint64_t seg_start, seg_end; /* its segment, as virtual addresses */
        Cand sizeless;          /* the best sizeless symbol starting at or before vaddr */
        size_t item;            /* its FuncSym */
} Point;

typedef struct Points {
        size_t n;
        uint64_t *vaddr;
        Point *p;
        Cand *tree;             /* 2n: sized symbols, by the addresses they cover */
} Points;

static void points_done(Points *pts) {
        free(pts->vaddr);
        free(pts->p);
        free(pts->tree);
}

static uint16_t get16(const Reader *r, const uint8_t *p) {
        uint16_t v;

        memcpy(&v, p, sizeof(v));
        return r->swap ? bswap_16(v) : v;
}

static uint32_t get32(const Reader *r, const uint8_t *p) {
        uint32_t v;

        memcpy(&v, p, sizeof(v));
        return r->swap ? bswap_32(v) : v;
}

static uint64_t get64(const Reader *r, const uint8_t *p) {
        uint64_t v;

        memcpy(&v, p, sizeof(v));
        return r->swap ? bswap_64(v) : v;
}

/* Whether [off, off + n) lies in the file as it was when reading began. */
static bool within(const Reader *r, uint64_t off, uint64_t n) {
        return off <= (uint64_t) r->st.st_size && n <= (uint64_t) r->st.st_size - off;
}

static int read_at(const Reader *r, void *buf, size_t n, uint64_t off) {
        uint8_t *b = buf;

        if (!within(r, off, n))
                return -EBADMSG;
        while (n > 0) {
                ssize_t k = pread(r->fd, b, n, (off_t) off);

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        return -EAGAIN; /* shorter than when we began */
                b += k;
                n -= (size_t) k;
                off += (uint64_t) k;
        }
        return 0;
}

static bool file_changed(const Reader *r) {
        struct stat now;

        if (fstat(r->fd, &now) < 0)
                return true;
        return now.st_dev != r->st.st_dev || now.st_ino != r->st.st_ino || now.st_size != r->st.st_size ||
               now.st_mtim.tv_sec != r->st.st_mtim.tv_sec || now.st_mtim.tv_nsec != r->st.st_mtim.tv_nsec ||
               now.st_ctim.tv_sec != r->st.st_ctim.tv_sec || now.st_ctim.tv_nsec != r->st.st_ctim.tv_nsec;
}

static int check_build_id(int fd, const uint8_t *want, size_t want_size) {
        uint8_t id[BUILD_ID_MAX];
        int r;

        r = buildid_read_fd(fd, id);
        if (r == -ENOENT)
                return want_size == 0 ? 0 : -ESTALE;
        if (r < 0)
                return r;
        if (want_size != (size_t) r || memcmp(id, want, want_size) != 0)
                return -ESTALE;
        return 0;
}

typedef struct Header {
        uint64_t phoff, shoff, phnum, shnum;
        uint16_t phentsize, shentsize;
} Header;

static void parse_section(const Reader *r, const uint8_t *p, Section *s) {
        if (r->is64) {
                s->type = get32(r, p + offsetof(Elf64_Shdr, sh_type));
                s->flags = get64(r, p + offsetof(Elf64_Shdr, sh_flags));
                s->addr = get64(r, p + offsetof(Elf64_Shdr, sh_addr));
                s->offset = get64(r, p + offsetof(Elf64_Shdr, sh_offset));
                s->size = get64(r, p + offsetof(Elf64_Shdr, sh_size));
                s->link = get32(r, p + offsetof(Elf64_Shdr, sh_link));
                s->info = get32(r, p + offsetof(Elf64_Shdr, sh_info));
                s->entsize = get64(r, p + offsetof(Elf64_Shdr, sh_entsize));
        } else {
                s->type = get32(r, p + offsetof(Elf32_Shdr, sh_type));
                s->flags = get32(r, p + offsetof(Elf32_Shdr, sh_flags));
                s->addr = get32(r, p + offsetof(Elf32_Shdr, sh_addr));
                s->offset = get32(r, p + offsetof(Elf32_Shdr, sh_offset));
                s->size = get32(r, p + offsetof(Elf32_Shdr, sh_size));
                s->link = get32(r, p + offsetof(Elf32_Shdr, sh_link));
                s->info = get32(r, p + offsetof(Elf32_Shdr, sh_info));
                s->entsize = get32(r, p + offsetof(Elf32_Shdr, sh_entsize));
        }
}

static int read_section(const Reader *r, const Header *h, uint64_t i, Section *ret) {
        uint8_t b[sizeof(Elf64_Shdr)];
        int k;

        if (i >= h->shnum)
                return -EBADMSG;
        k = read_at(r, b, h->shentsize, h->shoff + i * h->shentsize);
        if (k < 0)
                return k;
        parse_section(r, b, ret);
        return 0;
}

static int read_header(Reader *r, Header *ret) {
        uint8_t e[sizeof(Elf64_Ehdr)];
        Header h = {};
        size_t ehsize;
        int k;

        k = read_at(r, e, EI_NIDENT, 0);
        if (k < 0)
                return k;
        if (memcmp(e, ELFMAG, SELFMAG) != 0 || e[EI_VERSION] != EV_CURRENT ||
            (e[EI_CLASS] != ELFCLASS32 && e[EI_CLASS] != ELFCLASS64) ||
            (e[EI_DATA] != ELFDATA2LSB && e[EI_DATA] != ELFDATA2MSB))
                return -EBADMSG;
        r->is64 = e[EI_CLASS] == ELFCLASS64;
        r->swap = (e[EI_DATA] == ELFDATA2LSB) != (__BYTE_ORDER == __LITTLE_ENDIAN);
        ehsize = r->is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
        k = read_at(r, e, ehsize, 0);
        if (k < 0)
                return k;
        if (r->is64) {
                r->machine = get16(r, e + offsetof(Elf64_Ehdr, e_machine));
                h.phoff = get64(r, e + offsetof(Elf64_Ehdr, e_phoff));
                h.shoff = get64(r, e + offsetof(Elf64_Ehdr, e_shoff));
                h.phentsize = get16(r, e + offsetof(Elf64_Ehdr, e_phentsize));
                h.phnum = get16(r, e + offsetof(Elf64_Ehdr, e_phnum));
                h.shentsize = get16(r, e + offsetof(Elf64_Ehdr, e_shentsize));
                h.shnum = get16(r, e + offsetof(Elf64_Ehdr, e_shnum));
        } else {
                r->machine = get16(r, e + offsetof(Elf32_Ehdr, e_machine));
                h.phoff = get32(r, e + offsetof(Elf32_Ehdr, e_phoff));
                h.shoff = get32(r, e + offsetof(Elf32_Ehdr, e_shoff));
                h.phentsize = get16(r, e + offsetof(Elf32_Ehdr, e_phentsize));
                h.phnum = get16(r, e + offsetof(Elf32_Ehdr, e_phnum));
                h.shentsize = get16(r, e + offsetof(Elf32_Ehdr, e_shentsize));
                h.shnum = get16(r, e + offsetof(Elf32_Ehdr, e_shnum));
        }
        if (h.shoff == 0)
                h.shnum = 0;
        else if (h.shentsize != (r->is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr)))
                return -EBADMSG;
        /* More than 0xff00 sections or 0xffff segments: the counts are in
         * section 0 (the ELF gABI's extended numbering). */
        if (h.shoff != 0 && (h.shnum == 0 || h.phnum == PN_XNUM)) {
                uint64_t shnum = h.shnum;
                Section s0;

                h.shnum = 1; /* enough to read section 0 */
                k = read_section(r, &h, 0, &s0);
                if (k < 0)
                        return k;
                h.shnum = shnum == 0 ? s0.size : shnum;
                if (h.phnum == PN_XNUM)
                        h.phnum = s0.info;
        }
        if (h.phnum > 0 && h.phentsize != (r->is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)))
                return -EBADMSG;
        if (h.shnum > SECTIONS_MAX)
                return -EFBIG;
        /* both header tables within the file (counts < 2^32, entries < 2^16: no overflow) */
        if (!within(r, h.phoff, h.phnum * h.phentsize) || !within(r, h.shoff, h.shnum * h.shentsize))
                return -EBADMSG;
        *ret = h;
        return 0;
}

static int read_loads(const Reader *r, const Header *h, Load loads[static LOADS_MAX], size_t *ret_n, Load *ret_eh) {
        _cleanup_free_ uint8_t *buf = NULL;
        size_t per, n = 0;
        int k;

        *ret_eh = (Load) {};
        if (h->phnum == 0) {
                *ret_n = 0;
                return 0;
        }
        per = CHUNK_BYTES / h->phentsize; /* checked by read_header() when there are segments */
        buf = malloc(CHUNK_BYTES);
        if (!buf)
                return -ENOMEM;
        for (uint64_t base = 0; base < h->phnum; base += per) {
                size_t m = (size_t) MIN((uint64_t) per, h->phnum - base);

                k = read_at(r, buf, m * h->phentsize, h->phoff + base * h->phentsize);
                if (k < 0)
                        return k;
                for (size_t i = 0; i < m; i++) {
                        const uint8_t *p = buf + i * h->phentsize;
                        Load l;

                        uint32_t type = get32(r, p);

                        if (type != PT_LOAD && (type != PT_GNU_EH_FRAME || ret_eh->filesz > 0))
                                continue;
                        if (r->is64) {
                                l.offset = get64(r, p + offsetof(Elf64_Phdr, p_offset));
                                l.vaddr = get64(r, p + offsetof(Elf64_Phdr, p_vaddr));
                                l.filesz = get64(r, p + offsetof(Elf64_Phdr, p_filesz));
                                l.exec = get32(r, p + offsetof(Elf64_Phdr, p_flags)) & PF_X;
                        } else {
                                l.offset = get32(r, p + offsetof(Elf32_Phdr, p_offset));
                                l.vaddr = get32(r, p + offsetof(Elf32_Phdr, p_vaddr));
                                l.filesz = get32(r, p + offsetof(Elf32_Phdr, p_filesz));
                                l.exec = get32(r, p + offsetof(Elf32_Phdr, p_flags)) & PF_X;
                        }
                        if (l.filesz == 0)
                                continue;
                        if (type == PT_GNU_EH_FRAME) {
                                /* the unwind table: only where it lies in the file */
                                if (within(r, l.offset, l.filesz))
                                        *ret_eh = l;
                                continue;
                        }
                        /* a segment's bytes must lie in the file and its addresses not wrap */
                        if (!within(r, l.offset, l.filesz) || l.vaddr + l.filesz < l.vaddr)
                                return -EBADMSG;
                        if (n == LOADS_MAX)
                                return -EFBIG;
                        loads[n++] = l;
                }
        }
        *ret_n = n;
        return 0;
}

/* The segment whose file bytes hold x, a file offset (by_vaddr false:
 * [p_offset, p_offset + p_filesz), so the byte at p_offset + p_filesz is
 * the next segment's or none's) or an address (by_vaddr true): an
 * executable one first. */
static const Load *load_holding(const Load *loads, size_t n, uint64_t x, bool by_vaddr) {
        const Load *found = NULL;

        for (size_t i = 0; i < n; i++) {
                uint64_t base = by_vaddr ? loads[i].vaddr : loads[i].offset;

                if (x >= base && x - base < loads[i].filesz && (!found || (loads[i].exec && !found->exec)))
                        found = &loads[i];
        }
        return found;
}

typedef struct VaddrItem {
        uint64_t vaddr, seg_start, seg_end;
        size_t item;
} VaddrItem;

static int cmp_vaddr_item(const void *a, const void *b) {
        const VaddrItem *x = a, *y = b;

        if (x->vaddr != y->vaddr)
                return CMP(x->vaddr, y->vaddr);
        return CMP(x->item, y->item);
}

static int points_init(Points *pts, FuncSym *syms, size_t n, const Load *loads, size_t n_loads) {
        _cleanup_free_ VaddrItem *v = NULL;
        size_t m = 0;

        v = malloc(MAX(n, (size_t) 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const Load *l = load_holding(loads, n_loads, syms[i].offset, false);

                if (!l)
                        continue;
                syms[i].vaddr = syms[i].offset - l->offset + l->vaddr;
                /* the segment, narrowed by what the symbols say; where
                 * segments overlap in the file, another offset may map elsewhere */
                syms[i].same_from = l->offset;
                syms[i].same_to = l->offset + l->filesz;
                for (size_t k = 0; k < n_loads; k++)
                        if (&loads[k] != l && loads[k].offset < l->offset + l->filesz &&
                            l->offset < loads[k].offset + loads[k].filesz) {
                                syms[i].same_from = syms[i].offset;
                                syms[i].same_to = syms[i].offset + 1;
                        }
                v[m++] = (VaddrItem) { syms[i].vaddr, l->vaddr, l->vaddr + l->filesz, i };
        }
        qsort(v, m, sizeof(*v), cmp_vaddr_item);
        pts->n = m;
        pts->vaddr = malloc(MAX(m, (size_t) 1) * sizeof(*pts->vaddr));
        pts->p = malloc(MAX(m, (size_t) 1) * sizeof(*pts->p));
        pts->tree = calloc(2 * MAX(m, (size_t) 1), sizeof(*pts->tree));
        if (!pts->vaddr || !pts->p || !pts->tree)
                return -ENOMEM;
        for (size_t j = 0; j < m; j++) {
                pts->vaddr[j] = v[j].vaddr;
                pts->p[j] = (Point) { .next = UINT64_MAX, .seg_start = v[j].seg_start, .seg_end = v[j].seg_end,
                                      .item = v[j].item };
        }
        return 0;
}

/* The first address >= x. */
static size_t lower_bound(const Points *pts, uint64_t x) {
        size_t lo = 0, hi = pts->n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (pts->vaddr[mid] < x)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

/* The first address from `from` on whose section cut is > x (section cuts
 * grow with the address once finished). */
static size_t first_seccut_above(const Points *pts, size_t from, uint64_t x) {
        size_t lo = from, hi = pts->n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (pts->p[mid].seccut <= x)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

static bool better(Cand a, Cand b) {
        return a.rank != 0 && (b.rank == 0 || a.start > b.start || (a.start == b.start && a.rank > b.rank));
}

/* x starts a function or bounds an executable section: a sizeless symbol
 * before it ends there. Kept in the slot of the first address >= x (cut)
 * and of the last one < x (next). */
static size_t add_cut(Points *pts, uint64_t x) {
        size_t i = lower_bound(pts, x);

        if (i > 0)
                pts->p[i - 1].next = MIN(pts->p[i - 1].next, x);
        if (i < pts->n)
                pts->p[i].cut = MAX(pts->p[i].cut, x);
        return i;
}

static void add_section(Points *pts, uint64_t start, uint64_t size) {
        uint64_t end = start + size < start ? UINT64_MAX : start + size;
        uint64_t bounds[2] = { start, end };

        for (size_t b = 0; b < 2; b++) {
                size_t i = add_cut(pts, bounds[b]);

                if (i < pts->n)
                        pts->p[i].seccut = MAX(pts->p[i].seccut, bounds[b]);
        }
}

/* A sized symbol covers addresses [from, to): each tree node on the way
 * keeps the best symbol covering all of its leaves (a segment tree with
 * range updates and point queries: O(log n) per symbol whatever overlaps). */
static void tree_add(Points *pts, size_t from, size_t to, Cand c) {
        for (size_t l = from + pts->n, r = to + pts->n; l < r; l >>= 1, r >>= 1) {
                if (l & 1) {
                        if (better(c, pts->tree[l]))
                                pts->tree[l] = c;
                        l++;
                }
                if (r & 1) {
                        r--;
                        if (better(c, pts->tree[r]))
                                pts->tree[r] = c;
                }
        }
}

static Cand tree_best(const Points *pts, size_t j) {
        Cand best = {};

        for (size_t i = j + pts->n; i > 0; i >>= 1)
                if (better(pts->tree[i], best))
                        best = pts->tree[i];
        return best;
}

typedef struct Table {
        FuncTable kind;
        Section sym, str;
        uint64_t count;
        uint8_t *exec;          /* bitmap: executable sections (for STT_NOTYPE) */
        uint64_t shnum;
} Table;

static void table_done(Table *t) {
        free(t->exec);
}

static bool is_exec_section(const Table *t, uint64_t i) {
        return i < t->shnum && (t->exec[i / 8] & (1u << (i % 8)));
}

/* One pass over the section headers: the symbol tables, and the extent of
 * every executable section. */
static int read_sections(const Reader *r, const Header *h, Points *pts, Table *t) {
        _cleanup_free_ uint8_t *buf = NULL;
        size_t per = CHUNK_BYTES / MAX(h->shentsize, (uint16_t) 1);
        Section symtab = {}, dynsym = {};
        bool have_symtab = false, have_dynsym = false;
        int k;

        t->shnum = h->shnum;
        t->exec = calloc((size_t) h->shnum / 8 + 1, 1);
        buf = malloc(CHUNK_BYTES);
        if (!t->exec || !buf)
                return -ENOMEM;
        for (uint64_t base = 0; base < h->shnum; base += per) {
                size_t m = (size_t) MIN((uint64_t) per, h->shnum - base);

                k = read_at(r, buf, m * h->shentsize, h->shoff + base * h->shentsize);
                if (k < 0)
                        return k;
                for (size_t i = 0; i < m; i++) {
                        uint64_t idx = base + i;
                        Section s;

                        parse_section(r, buf + i * h->shentsize, &s);
                        if (s.type == SHT_SYMTAB && !have_symtab && s.size > 0) {
                                symtab = s;
                                have_symtab = true;
                        } else if (s.type == SHT_DYNSYM && !have_dynsym && s.size > 0) {
                                dynsym = s;
                                have_dynsym = true;
                        }
                        if (idx == 0 || (s.type == SHT_NOBITS && !r->debug) || s.size == 0 ||
                            (s.flags & (SHF_ALLOC | SHF_EXECINSTR)) != (SHF_ALLOC | SHF_EXECINSTR))
                                continue;
                        t->exec[idx / 8] |= (uint8_t) (1u << (idx % 8));
                        add_section(pts, s.addr, s.size);
                }
        }
        if (!have_symtab && !have_dynsym) {
                t->kind = FUNC_TABLE_NONE;
                return 0;
        }
        t->kind = have_symtab ? FUNC_TABLE_SYMTAB : FUNC_TABLE_DYNSYM;
        t->sym = have_symtab ? symtab : dynsym;
        if (t->sym.entsize != (r->is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym)) || t->sym.size % t->sym.entsize != 0 ||
            (t->sym.flags & SHF_COMPRESSED) || !within(r, t->sym.offset, t->sym.size))
                return -EBADMSG;
        t->count = t->sym.size / t->sym.entsize;
        if (t->count > FUNCNAME_SYMBOLS_MAX)
                return -EFBIG;
        k = read_section(r, h, t->sym.link, &t->str);
        if (k < 0)
                return k;
        if (t->str.type != SHT_STRTAB || (t->str.flags & SHF_COMPRESSED) || !within(r, t->str.offset, t->str.size))
                return -EBADMSG;
        return 0;
}

typedef struct Sym {
        uint32_t name;
        uint8_t type, bind;
        uint16_t shndx;
        uint64_t value, size;
} Sym;

static void parse_sym(const Reader *r, const uint8_t *p, Sym *s) {
        uint8_t info;

        if (r->is64) {
                s->name = get32(r, p + offsetof(Elf64_Sym, st_name));
                info = p[offsetof(Elf64_Sym, st_info)];
                s->shndx = get16(r, p + offsetof(Elf64_Sym, st_shndx));
                s->value = get64(r, p + offsetof(Elf64_Sym, st_value));
                s->size = get64(r, p + offsetof(Elf64_Sym, st_size));
        } else {
                s->name = get32(r, p + offsetof(Elf32_Sym, st_name));
                info = p[offsetof(Elf32_Sym, st_info)];
                s->shndx = get16(r, p + offsetof(Elf32_Sym, st_shndx));
                s->value = get32(r, p + offsetof(Elf32_Sym, st_value));
                s->size = get32(r, p + offsetof(Elf32_Sym, st_size));
        }
        s->type = ELF64_ST_TYPE(info);
        s->bind = ELF64_ST_BIND(info);
}

static bool is_function(const Reader *r, const Table *t, const Sym *s) {
        if (s->name == 0 || s->name >= t->str.size || s->shndx == SHN_UNDEF)
                return false;
        if (s->type == STT_FUNC || s->type == STT_GNU_IFUNC)
                return true;
        if (s->type != STT_NOTYPE || !is_exec_section(t, s->shndx) || s->shndx >= SHN_LORESERVE)
                return false;
        /* ARM's mapping symbols ($a, $t, $d, $x) mark code and data within
         * functions; they are the local untyped symbols there. */
        return !(s->bind == STB_LOCAL && (r->machine == EM_ARM || r->machine == EM_AARCH64));
}

static uint64_t rank_of(const Sym *s, uint64_t index) {
        uint64_t bind = s->bind == STB_GLOBAL || s->bind == STB_GNU_UNIQUE ? 3 : s->bind == STB_WEAK ? 2 : 1;

        return bind << 34 | (uint64_t) (s->size > 0) << 33 | (RANK_INDEX_MASK - index);
}

static void consider(Points *pts, const Sym *s, uint64_t index) {
        Cand c = { s->value, rank_of(s, index) };
        size_t i = add_cut(pts, s->value), k, to;
        uint64_t end;

        if (i == pts->n)
                return;
        if (s->size == 0) {
                if (better(c, pts->p[i].sizeless))
                        pts->p[i].sizeless = c;
                return;
        }
        end = s->value + s->size < s->value ? UINT64_MAX : s->value + s->size;
        k = lower_bound(pts, end);
        if (k < pts->n) /* an answer may change where a symbol ends */
                pts->p[k].prev_end = MAX(pts->p[k].prev_end, end);
        to = MIN(k, first_seccut_above(pts, i, s->value));
        if (i < to)
                tree_add(pts, i, to, c);
}

static int read_symbols(const Reader *r, const Table *t, Points *pts, uint64_t *ret_read) {
        _cleanup_free_ uint8_t *buf = NULL;
        size_t per = CHUNK_BYTES / t->sym.entsize;
        int k;

        buf = malloc(CHUNK_BYTES);
        if (!buf)
                return -ENOMEM;
        for (uint64_t base = 0; base < t->count; base += per) {
                size_t m = (size_t) MIN((uint64_t) per, t->count - base);

                k = read_at(r, buf, m * t->sym.entsize, t->sym.offset + base * t->sym.entsize);
                if (k < 0)
                        return k;
                for (size_t i = 0; i < m; i++) {
                        Sym s;

                        if (base + i == 0) /* the null symbol */
                                continue;
                        parse_sym(r, buf + i * t->sym.entsize, &s);
                        if (is_function(r, t, &s))
                                consider(pts, &s, base + i);
                }
        }
        *ret_read = t->count;
        return 0;
}

/* The slots become what each address sees: the greatest cut and best
 * sizeless symbol at or before it, the least cut after it. */
static void finish_points(Points *pts) {
        for (size_t j = 1; j < pts->n; j++) {
                Point *p = &pts->p[j];

                p->cut = MAX(p->cut, p[-1].cut);
                p->prev_end = MAX(p->prev_end, p[-1].prev_end);
                if (better(p[-1].sizeless, p->sizeless))
                        p->sizeless = p[-1].sizeless;
        }
        for (size_t j = pts->n; j-- > 1;)
                pts->p[j - 1].next = MIN(pts->p[j - 1].next, pts->p[j].next);
}

static void finish_seccuts(Points *pts) {
        for (size_t j = 1; j < pts->n; j++)
                pts->p[j].seccut = MAX(pts->p[j].seccut, pts->p[j - 1].seccut);
}

typedef struct Winner {
        uint64_t index;         /* in the symbol table */
        uint64_t start;
        uint64_t end;           /* of a sizeless symbol: the next cut; a sized one's is its size's */
        bool sizeless;
        size_t item;
} Winner;

static int cmp_winner(const void *a, const void *b) {
        const Winner *x = a, *y = b;

        if (x->index != y->index)
                return CMP(x->index, y->index);
        return CMP(x->item, y->item);
}

typedef struct Names {
        char *buf;
        size_t used, allocated;
} Names;

static int names_add(Names *names, const char *s, size_t len, size_t *ret_at) {
        if (names->allocated - names->used < len + 1) {
                size_t want = MAX(names->allocated * 2, names->used + len + 1);
                char *b = realloc(names->buf, MAX(want, (size_t) 4096));

                if (!b)
                        return -ENOMEM;
                names->buf = b;
                names->allocated = MAX(want, (size_t) 4096);
        }
        memcpy(names->buf + names->used, s, len + 1);
        *ret_at = names->used;
        names->used += len + 1;
        return 0;
}

/* A symbol's name, read from the string table into raw (SYMNAME_MANGLED_MAX
 * + 1 bytes): a first short read and, for a long name, one more. */
static int read_name(const Reader *r, const Table *t, uint32_t name, char *raw, char out[static SYMNAME_MAX + 1]) {
        uint64_t room = t->str.size - name;     /* name < str.size: is_function() */
        size_t n = (size_t) MIN(room, (uint64_t) NAME_FIRST_READ);
        const char *nul;
        int k;

        k = read_at(r, raw, n, t->str.offset + name);
        if (k < 0)
                return k;
        nul = memchr(raw, 0, n);
        if (!nul && room > n) {
                n = (size_t) MIN(room, (uint64_t) SYMNAME_MANGLED_MAX + 1);
                k = read_at(r, raw, n, t->str.offset + name);
                if (k < 0)
                        return k;
                nul = memchr(raw, 0, n);
        }
        /* no NUL within bounds: shown as read, cut */
        return symname_show(raw, nul ? (size_t) (nul - raw) : MIN(n, (size_t) SYMNAME_MANGLED_MAX), !nul, out);
}

/* Reads the name of each distinct winner once; name_at[item]: where the
 * item's name is in names (names->buf moves while it grows). */
static int name_winners(const Reader *r, const Table *t, Winner *w, size_t n_w, FuncSym *syms, Names *names,
                        size_t *name_at, size_t *ret_functions) {
        _cleanup_free_ uint8_t *entry = NULL;
        _cleanup_free_ char *raw = NULL, *shown = NULL;
        size_t functions = 0;
        int k;

        entry = malloc(t->sym.entsize);
        raw = malloc(SYMNAME_MANGLED_MAX + 1);
        shown = malloc(SYMNAME_MAX + 1);
        if (!entry || !raw || !shown)
                return -ENOMEM;
        qsort(w, n_w, sizeof(*w), cmp_winner);
        for (size_t a = 0, b; a < n_w; a = b) {
                size_t at;
                Sym s;
                int len;

                k = read_at(r, entry, t->sym.entsize, t->sym.offset + w[a].index * t->sym.entsize);
                if (k < 0)
                        return k;
                parse_sym(r, entry, &s);
                if (s.value != w[a].start || !is_function(r, t, &s))
                        return -EAGAIN; /* not what the pass read */
                len = read_name(r, t, s.name, raw, shown);
                if (len < 0)
                        return len;
                k = names_add(names, shown, (size_t) len, &at);
                if (k < 0)
                        return k;
                functions++;
                for (b = a; b < n_w && w[b].index == w[a].index; b++) {
                        FuncSym *f = &syms[w[b].item];

                        name_at[w[b].item] = at;
                        f->start = s.value;
                        f->end = w[b].sizeless ? w[b].end
                                 : s.value + s.size < s.value ? UINT64_MAX : s.value + s.size;
                        if (f->end - f->vaddr < f->same_to - f->offset) /* f->end > f->vaddr: it covers */
                                f->same_to = f->offset + (f->end - f->vaddr);
                }
        }
        *ret_functions = functions;
        return 0;
}

/* Each address's winner: the best sized symbol covering it, or the best
 * sizeless one before it when no cut lies between them. And where that
 * answer, named or not, holds: no symbol starts or ends, no section
 * begins or ends, between the address and the range's ends (name_winners()
 * ends it at a sized winner's end too). */
static int pick_winners(const Points *pts, FuncSym *syms, Winner **ret, size_t *ret_n) {
        _cleanup_free_ Winner *w = NULL;
        size_t n = 0;

        w = malloc(MAX(pts->n, (size_t) 1) * sizeof(*w));
        if (!w)
                return -ENOMEM;
        for (size_t j = 0; j < pts->n; j++) {
                const Point *p = &pts->p[j];
                Cand best = tree_best(pts, j);
                bool sizeless = p->sizeless.rank != 0 && p->cut == p->sizeless.start && better(p->sizeless, best);
                FuncSym *f = &syms[p->item];
                uint64_t delta = f->vaddr - f->offset;

                f->same_from = MAX(f->same_from, MAX(MAX(p->cut, p->prev_end), p->seg_start) - delta);
                f->same_to = MIN(f->same_to, MIN(p->next, p->seg_end) - delta);
                if (sizeless)
                        best = p->sizeless;
                if (best.rank == 0)
                        continue;
                w[n++] = (Winner) { RANK_INDEX_MASK - (best.rank & RANK_INDEX_MASK), best.start,
                                    sizeless ? MIN(p->next, p->seg_end) : 0, sizeless, p->item };
        }
        *ret = TAKE_PTR(w);
        *ret_n = n;
        return 0;
}

/* ---- the unwind table: where the function of an unnamed address starts ----
 *
 * .eh_frame_hdr (the PT_GNU_EH_FRAME segment, which strip keeps) holds the
 * initial locations of the FDEs of .eh_frame, sorted, for a binary
 * search; each FDE says over which addresses [pc_begin, pc_begin +
 * pc_range) its function's code lies. Read with pread() as the rest: a
 * few entries per search (the table itself is never read whole), one FDE
 * and its CIE per answer. A table or FDE that is malformed, of an encoding
 * searched in no fixed-size way, or that does not cover the address gives
 * no entry: the address stays unnamed, as before. */

#define EH_PE_OMIT 0xff
#define EH_PE_FORMAT 0x0f
#define EH_PE_APPLICATION 0x70
#define EH_PE_INDIRECT 0x80
#define EH_PE_ABSPTR 0x00
#define EH_PE_ULEB128 0x01
#define EH_PE_UDATA2 0x02
#define EH_PE_UDATA4 0x03
#define EH_PE_UDATA8 0x04
#define EH_PE_SLEB128 0x09
#define EH_PE_SDATA2 0x0a
#define EH_PE_SDATA4 0x0b
#define EH_PE_SDATA8 0x0c
#define EH_PE_PCREL 0x10
#define EH_PE_DATAREL 0x30

#define EH_BLOCK_ENTRIES 256u   /* the search's last steps: one read of at most 4 KiB */
#define EH_FDE_READ 48u         /* length, CIE pointer, pc_begin, pc_range: at most 36 bytes */
#define EH_CIE_READ 256u        /* a CIE up to its 'R' augmentation; real ones are ~20 bytes */

typedef struct EhTable {
        uint64_t vaddr;         /* of .eh_frame_hdr: the table's datarel base */
        uint64_t table_off;     /* file offset of the first entry */
        uint64_t count;
        uint8_t enc;            /* of the entries' two values */
        unsigned width;         /* bytes of one value */
} EhTable;

/* A value of format enc & 0x0f at b[*pos] (n bytes), moving *pos past it. */
static int eh_read_format(const Reader *r, const uint8_t *b, size_t n, size_t *pos, uint8_t enc, uint64_t *ret) {
        uint8_t format = enc & EH_PE_FORMAT;
        unsigned width;
        uint64_t v = 0;

        if (format == EH_PE_ULEB128 || format == EH_PE_SLEB128) {
                unsigned shift = 0;
                uint8_t byte;

                do {
                        if (*pos >= n || shift >= 64)
                                return -EBADMSG;
                        byte = b[(*pos)++];
                        v |= (uint64_t) (byte & 0x7f) << shift;
                        shift += 7;
                } while (byte & 0x80);
                if (format == EH_PE_SLEB128 && shift < 64 && (byte & 0x40))
                        v |= UINT64_MAX << shift;
                *ret = v;
                return 0;
        }
        switch (format) {
        case EH_PE_ABSPTR:
                width = r->is64 ? 8 : 4;
                break;
        case EH_PE_UDATA2:
        case EH_PE_SDATA2:
                width = 2;
                break;
        case EH_PE_UDATA4:
        case EH_PE_SDATA4:
                width = 4;
                break;
        case EH_PE_UDATA8:
        case EH_PE_SDATA8:
                width = 8;
                break;
        default:
                return -EBADMSG;
        }
        if (n - MIN(*pos, n) < width)
                return -EBADMSG;
        v = width == 2 ? get16(r, b + *pos) : width == 4 ? get32(r, b + *pos) : get64(r, b + *pos);
        if (format == EH_PE_SDATA2)
                v = (uint64_t) (int64_t) (int16_t) v;
        else if (format == EH_PE_SDATA4)
                v = (uint64_t) (int64_t) (int32_t) v;
        *pos += width;
        *ret = v;
        return 0;
}

/* A pointer of encoding enc at b[*pos], whose address is b_vaddr + *pos:
 * absolute, or relative to itself (pcrel) or to data (datarel). */
static int eh_read_pointer(const Reader *r, const uint8_t *b, size_t n, size_t *pos, uint8_t enc, uint64_t b_vaddr,
                           uint64_t data, uint64_t *ret) {
        uint64_t here = b_vaddr + *pos, v;
        int k;

        if (enc & EH_PE_INDIRECT)
                return -EBADMSG;        /* a pointer to read from the process, not the file */
        k = eh_read_format(r, b, n, pos, enc, &v);
        if (k < 0)
                return k;
        switch (enc & EH_PE_APPLICATION) {
        case 0:
                break;
        case EH_PE_PCREL:
                v += here;
                break;
        case EH_PE_DATAREL:
                v += data;
                break;
        default:
                return -EBADMSG;        /* textrel, funcrel, aligned: no unwinder's choice for these tables */
        }
        *ret = r->is64 ? v : (uint32_t) v;
        return 0;
}

/* The table of .eh_frame_hdr, if it is one lmkd can search. */
static bool eh_table_init(const Reader *r, const Load *eh, EhTable *ret) {
        uint8_t b[4 + 8 + 8];
        size_t n = (size_t) MIN(eh->filesz, (uint64_t) sizeof(b)), pos = 4;
        uint64_t frame, count;
        uint8_t format;

        if (eh->filesz < 4 || read_at(r, b, n, eh->offset) < 0)
                return false;
        /* version 1; the table's entries of one fixed size, relative to the
         * header (datarel) or absolute */
        format = b[3] & EH_PE_FORMAT;
        if (b[0] != 1 || b[2] == EH_PE_OMIT || b[3] == EH_PE_OMIT || (b[3] & EH_PE_INDIRECT) ||
            ((b[3] & EH_PE_APPLICATION) != EH_PE_DATAREL && (b[3] & EH_PE_APPLICATION) != 0) ||
            (format != EH_PE_UDATA4 && format != EH_PE_SDATA4 && format != EH_PE_UDATA8 &&
             format != EH_PE_SDATA8 && format != EH_PE_ABSPTR))
                return false;
        if (b[1] != EH_PE_OMIT && eh_read_pointer(r, b, n, &pos, b[1], eh->vaddr, eh->vaddr, &frame) < 0)
                return false;
        if (eh_read_pointer(r, b, n, &pos, b[2], eh->vaddr, eh->vaddr, &count) < 0)
                return false;
        *ret = (EhTable) { .vaddr = eh->vaddr, .table_off = eh->offset + pos, .enc = b[3],
                           .width = format == EH_PE_ABSPTR ? (r->is64 ? 8 : 4)
                                    : format == EH_PE_UDATA4 || format == EH_PE_SDATA4 ? 4 : 8 };
        /* as many entries as the segment holds, whatever the count says */
        ret->count = MIN(count, (eh->filesz - pos) / (2 * ret->width));
        return ret->count > 0;
}

/* Entry i's value v (0: initial location, 1: its FDE's address), from
 * b, which holds entries from first on. */
static uint64_t eh_entry(const Reader *r, const EhTable *t, const uint8_t *b, uint64_t first, uint64_t i, unsigned v) {
        size_t pos = (size_t) ((i - first) * 2 + v) * t->width;
        uint64_t ret = 0;

        /* b holds it and the format is fixed-size (eh_table_init()): no error */
        (void) eh_read_pointer(r, b, pos + t->width, &pos, t->enc, 0, t->vaddr, &ret);
        return ret;
}

/* The last entry whose initial location is <= vaddr: its location and its
 * FDE's address (returns 1; 0: none). A binary search, reading single
 * entries until EH_BLOCK_ENTRIES are left, then those in one read.
 * [*ret_low, *ret_high): the addresses for which every comparison on the
 * way goes as for vaddr, so that a search for them ends at the same entry,
 * however the table is ordered. */
static int eh_search(const Reader *r, const EhTable *t, uint64_t vaddr, uint64_t *ret_loc, uint64_t *ret_fde,
                     uint64_t *ret_low, uint64_t *ret_high) {
        uint8_t b[2 * 8 * EH_BLOCK_ENTRIES];
        uint64_t lo = 0, hi = t->count, first, low = 0, high = UINT64_MAX;
        int k;

        while (hi - lo > EH_BLOCK_ENTRIES) {
                uint64_t mid = lo + (hi - lo) / 2, loc;

                k = read_at(r, b, t->width, t->table_off + mid * 2 * t->width);
                if (k < 0)
                        return k;
                loc = eh_entry(r, t, b, mid, mid, 0);
                if (loc <= vaddr) {
                        low = MAX(low, loc);
                        lo = mid + 1;
                } else {
                        high = MIN(high, loc);
                        hi = mid;
                }
        }
        /* the last entries, and the answer among them or just before */
        first = lo;
        if (hi > lo) {
                k = read_at(r, b, (size_t) (hi - lo) * 2 * t->width, t->table_off + lo * 2 * t->width);
                if (k < 0)
                        return k;
        }
        while (lo < hi) {
                uint64_t mid = lo + (hi - lo) / 2, loc = eh_entry(r, t, b, first, mid, 0);

                if (loc <= vaddr) {
                        low = MAX(low, loc);
                        lo = mid + 1;
                } else {
                        high = MIN(high, loc);
                        hi = mid;
                }
        }
        *ret_low = low;
        *ret_high = high;
        if (lo == 0)
                return 0;
        if (lo - 1 >= first) {
                *ret_loc = eh_entry(r, t, b, first, lo - 1, 0);
                *ret_fde = eh_entry(r, t, b, first, lo - 1, 1);
        } else {
                k = read_at(r, b, 2 * t->width, t->table_off + (lo - 1) * 2 * t->width);
                if (k < 0)
                        return k;
                *ret_loc = eh_entry(r, t, b, lo - 1, lo - 1, 0);
                *ret_fde = eh_entry(r, t, b, lo - 1, lo - 1, 1);
        }
        return 1;
}

/* Up to n bytes at vaddr, as far as its segment's file bytes go. */
static int read_vaddr(const Reader *r, const Load *loads, size_t n_loads, uint64_t vaddr, uint8_t *b, size_t n,
                      size_t *ret_n) {
        const Load *l = load_holding(loads, n_loads, vaddr, true);

        if (!l)
                return -EBADMSG;
        *ret_n = (size_t) MIN((uint64_t) n, l->filesz - (vaddr - l->vaddr));
        return read_at(r, b, *ret_n, l->offset + (vaddr - l->vaddr));
}

/* An entry's length field: its length and where what it holds begins. */
static int eh_length(const Reader *r, const uint8_t *b, size_t n, size_t *pos, uint64_t *ret) {
        uint64_t len;

        if (n < 4)
                return -EBADMSG;
        len = get32(r, b);
        *pos = 4;
        if (len == UINT32_MAX) {
                if (n < 12)
                        return -EBADMSG;
                len = get64(r, b + 4);
                *pos = 12;
        }
        if (len == 0)
                return -EBADMSG;        /* the terminator */
        *ret = len;
        return 0;
}

/* The encoding of the FDE pointers of the CIE at cie_vaddr ('R' of its
 * augmentation; absolute, of the address size, without one). */
static int eh_cie_encoding(const Reader *r, const Load *loads, size_t n_loads, uint64_t cie_vaddr, uint8_t *ret) {
        uint8_t b[EH_CIE_READ];
        size_t n, pos, aug;
        uint64_t len, v;
        int k;

        k = read_vaddr(r, loads, n_loads, cie_vaddr, b, sizeof(b), &n);
        if (k < 0)
                return k;
        k = eh_length(r, b, n, &pos, &len);
        if (k < 0)
                return k;
        n = (size_t) MIN((uint64_t) n, pos + len);      /* not past the CIE */
        if (n - MIN(pos, n) < 5 || get32(r, b + pos) != 0 || (b[pos + 4] != 1 && b[pos + 4] != 3))
                return -EBADMSG;                         /* not a CIE of .eh_frame's versions */
        pos += 5;
        aug = pos;
        while (pos < n && b[pos] != 0)
                pos++;
        if (pos++ >= n)
                return -EBADMSG;
        *ret = EH_PE_ABSPTR;
        if (b[aug] == 0)
                return 0;
        if (b[aug] != 'z')
                return -EBADMSG;                         /* augmentation data of unknown size */
        k = eh_read_format(r, b, n, &pos, EH_PE_ULEB128, &v);           /* code alignment */
        if (k >= 0)
                k = eh_read_format(r, b, n, &pos, EH_PE_SLEB128, &v);   /* data alignment */
        if (k >= 0) {
                if (b[aug - 1] == 1) {                  /* the return register: version 1's is a byte */
                        if (pos >= n)
                                return -EBADMSG;
                        pos++;
                } else
                        k = eh_read_format(r, b, n, &pos, EH_PE_ULEB128, &v);
        }
        if (k >= 0)
                k = eh_read_format(r, b, n, &pos, EH_PE_ULEB128, &v);   /* augmentation data length */
        if (k < 0)
                return k;
        for (size_t a = aug + 1; b[a] != 0; a++) {
                uint8_t enc;

                if (pos >= n)
                        return -EBADMSG;
                switch (b[a]) {
                case 'R':
                        *ret = b[pos];
                        return 0;
                case 'P':       /* the personality routine: skipped */
                        enc = b[pos++];
                        if ((enc & EH_PE_APPLICATION) > EH_PE_DATAREL)
                                return -EBADMSG;        /* aligned: padding we do not compute */
                        k = eh_read_format(r, b, n, &pos, enc, &v);
                        if (k < 0)
                                return k;
                        break;
                case 'L':
                        pos++;
                        break;
                case 'S':
                case 'B':
                        break;
                default:
                        return -EBADMSG;
                }
        }
        return 0;
}

/* The function the FDE at fde_vaddr describes, [*ret_start, *ret_end),
 * when its initial location is loc (as the table said). */
static int eh_fde(const Reader *r, const Load *loads, size_t n_loads, uint64_t fde_vaddr, uint64_t loc,
                  uint64_t *ret_start, uint64_t *ret_end) {
        uint8_t b[EH_FDE_READ], enc;
        size_t n, pos;
        uint64_t len, cie, start, range;
        int k;

        k = read_vaddr(r, loads, n_loads, fde_vaddr, b, sizeof(b), &n);
        if (k < 0)
                return k;
        k = eh_length(r, b, n, &pos, &len);
        if (k < 0)
                return k;
        n = (size_t) MIN((uint64_t) n, pos + len);
        if (n - MIN(pos, n) < 4)
                return -EBADMSG;
        cie = get32(r, b + pos);                 /* back from this field to its CIE; 0: a CIE */
        if (cie == 0 || cie > fde_vaddr + pos)
                return -EBADMSG;
        k = eh_cie_encoding(r, loads, n_loads, fde_vaddr + pos - cie, &enc);
        if (k < 0)
                return k;
        pos += 4;
        if ((enc & EH_PE_APPLICATION) == EH_PE_DATAREL)
                return -EBADMSG;        /* no data base is defined for .eh_frame */
        k = eh_read_pointer(r, b, n, &pos, enc, fde_vaddr, 0, &start);
        if (k < 0)
                return k;
        /* the range: the same format, no base */
        k = eh_read_format(r, b, n, &pos, enc & EH_PE_FORMAT, &range);
        if (k < 0)
                return k;
        if (!r->is64)
                range = (uint32_t) range;
        if (start != loc || range == 0)
                return -EBADMSG;
        *ret_start = start;
        *ret_end = start + range < start ? UINT64_MAX : start + range;
        return 0;
}

/* Narrows where f's answer holds to the addresses [from, to) around its own. */
static void narrow(FuncSym *f, uint64_t from, uint64_t to) {
        uint64_t back = f->vaddr - from, fwd = to - f->vaddr;  /* from <= vaddr < to */

        f->same_from = MAX(f->same_from, f->offset >= back ? f->offset - back : 0);
        f->same_to = MIN(f->same_to, fwd <= UINT64_MAX - f->offset ? f->offset + fwd : UINT64_MAX);
}

/* For each sampled address no symbol named: the start of the function
 * the unwind table says holds it, as a file offset (entry), and where
 * that answer holds. Addresses in order: one FDE serves its neighbours. */
static int find_entries(const Reader *r, const Load *eh, const Load *loads, size_t n_loads, const Points *pts,
                        FuncSym *syms, const size_t *name_at, size_t *ret_entries) {
        uint64_t from = 0, to = 0, start = 0, end = 0, entry = 0;
        size_t entries = 0;
        bool have = false;
        EhTable t;

        *ret_entries = 0;
        if (!eh_table_init(r, eh, &t))
                return 0;
        for (size_t j = 0; j < pts->n; j++) {
                FuncSym *f = &syms[pts->p[j].item];
                uint64_t v = f->vaddr, loc, fde, low, high;
                const Load *l;
                int k;

                if (name_at[pts->p[j].item] != SIZE_MAX)
                        continue;
                if (!have || v < from || v >= to) {
                        have = false;
                        k = eh_search(r, &t, v, &loc, &fde, &low, &high);
                        if (k < 0)
                                return k;
                        if (k > 0 && eh_fde(r, loads, n_loads, fde, loc, &start, &end) >= 0) {
                                if (v >= end)   /* past its function's end */
                                        low = MAX(low, end);
                                else if ((l = load_holding(loads, n_loads, start, true))) {
                                        entry = start - l->vaddr + l->offset;
                                        from = MAX(low, start);
                                        to = MIN(high, end);
                                        have = true;
                                }
                        }
                        if (!have) {
                                narrow(f, low, high);
                                continue;
                        }
                }
                f->entry = true;
                f->entry_offset = entry;
                f->start = start;
                f->end = end;
                narrow(f, from, to);
                entries++;
        }
        *ret_entries = entries;
        return 0;
}

/* The segments come from lr, the symbols and sections from r: the same
 * file, or an executable and its separate debug file. */
static int resolve(Reader *r, Reader *lr, FuncSym *syms, size_t n, Names *names, size_t *name_at,
                   FuncNameInfo *info) {
        _cleanup_(points_done) Points pts = {};
        _cleanup_free_ Winner *w = NULL;
        _cleanup_(table_done) Table t = {};
        Load loads[LOADS_MAX], eh;
        size_t n_loads, n_w;
        Header h;
        int k;

        k = read_header(lr, &h);
        if (k < 0)
                return k;
        k = read_loads(lr, &h, loads, &n_loads, &eh);
        if (k < 0)
                return k;
        if (r != lr) {
                k = read_header(r, &h);
                if (k < 0)
                        return k;
                if (r->is64 != lr->is64 || r->swap != lr->swap || r->machine != lr->machine)
                        return -ESTALE; /* not the build of the executable */
        }
        k = points_init(&pts, syms, n, loads, n_loads);
        if (k < 0)
                return k;
        k = read_sections(r, &h, &pts, &t);
        if (k < 0)
                return k;
        info->table = t.kind;
        if (pts.n == 0)
                return 0;
        if (t.kind != FUNC_TABLE_NONE) {
                finish_seccuts(&pts);
                k = read_symbols(r, &t, &pts, &info->n_symbols);
                if (k < 0)
                        return k;
                finish_points(&pts);
                k = pick_winners(&pts, syms, &w, &n_w);
                if (k < 0)
                        return k;
                k = name_winners(r, &t, w, n_w, syms, names, name_at, &info->n_functions);
                if (k < 0)
                        return k;
        }
        /* the unwind table is the executable's, as its segments */
        return find_entries(lr, &eh, loads, n_loads, &pts, syms, name_at, &info->n_entries);
}

static void reset(FuncSym *syms, size_t n) {
        for (size_t i = 0; i < n; i++)
                syms[i] = (FuncSym) { .offset = syms[i].offset, .same_from = syms[i].offset, .same_to = syms[i].offset };
}

static int open_reader(Reader *r, const uint8_t *build_id, size_t build_id_size) {
        int k;

        if (fstat(r->fd, &r->st) < 0)
                return -errno;
        if (!S_ISREG(r->st.st_mode))
                return -EINVAL;
        k = check_build_id(r->fd, build_id, build_id_size);
        if (k < 0)
                return file_changed(r) ? -EAGAIN : k;
        return 0;
}

int funcname_resolve(int fd, const uint8_t *build_id, size_t build_id_size, FuncSym *syms, size_t n,
                     char **ret_names, FuncNameInfo *ret_info) {
        return funcname_resolve_split(fd, -1, build_id, build_id_size, syms, n, ret_names, ret_info);
}

int funcname_resolve_split(int fd, int loads_fd, const uint8_t *build_id, size_t build_id_size, FuncSym *syms,
                           size_t n, char **ret_names, FuncNameInfo *ret_info) {
        _cleanup_free_ size_t *name_at = NULL;
        Names names = {};
        FuncNameInfo info = {};
        Reader r = { .fd = fd, .debug = loads_fd >= 0 }, lr = { .fd = loads_fd };
        size_t named = 0;
        int k;

        if (n > FUNCNAME_OFFSETS_MAX || build_id_size > BUILD_ID_MAX)
                return -EINVAL;
        reset(syms, n);
        k = open_reader(&r, build_id, build_id_size);
        if (k >= 0 && loads_fd >= 0)
                k = open_reader(&lr, build_id, build_id_size);
        if (k < 0)
                return k;
        name_at = malloc(MAX(n, (size_t) 1) * sizeof(*name_at));
        if (!name_at)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                name_at[i] = SIZE_MAX;
        k = resolve(&r, loads_fd >= 0 ? &lr : &r, syms, n, &names, name_at, &info);
        /* Whatever went wrong, a file that changed under us is why. */
        if (file_changed(&r) || (loads_fd >= 0 && file_changed(&lr)))
                k = -EAGAIN;
        if (k < 0) {
                free(names.buf);
                reset(syms, n);
                return k;
        }
        for (size_t i = 0; i < n; i++)
                if (name_at[i] != SIZE_MAX) {
                        syms[i].name = names.buf + name_at[i];
                        named++;
                }
        *ret_names = names.buf;
        if (ret_info)
                *ret_info = info;
        return (int) named;
}
