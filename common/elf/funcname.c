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

static int read_loads(const Reader *r, const Header *h, Load loads[static LOADS_MAX], size_t *ret_n) {
        _cleanup_free_ uint8_t *buf = NULL;
        size_t per, n = 0;
        int k;

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

                        if (get32(r, p) != PT_LOAD)
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

/* The segment whose file bytes hold offset: [p_offset, p_offset + p_filesz),
 * so the byte at p_offset + p_filesz is the next segment's or none's. */
static const Load *load_for_offset(const Load *loads, size_t n, uint64_t offset) {
        const Load *found = NULL;

        for (size_t i = 0; i < n; i++)
                if (offset >= loads[i].offset && offset - loads[i].offset < loads[i].filesz &&
                    (!found || (loads[i].exec && !found->exec)))
                        found = &loads[i];
        return found;
}

typedef struct VaddrItem {
        uint64_t vaddr, seg_start, seg_end;
        size_t item;
} VaddrItem;

static int cmp_vaddr_item(const void *a, const void *b) {
        const VaddrItem *x = a, *y = b;

        if (x->vaddr != y->vaddr)
                return x->vaddr < y->vaddr ? -1 : 1;
        return x->item < y->item ? -1 : x->item > y->item;
}

static int points_init(Points *pts, FuncSym *syms, size_t n, const Load *loads, size_t n_loads) {
        _cleanup_free_ VaddrItem *v = NULL;
        size_t m = 0;

        v = malloc(MAX(n, (size_t) 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const Load *l = load_for_offset(loads, n_loads, syms[i].offset);

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
                return x->index < y->index ? -1 : 1;
        return x->item < y->item ? -1 : x->item > y->item;
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

/* The segments come from lr, the symbols and sections from r: the same
 * file, or an executable and its separate debug file. */
static int resolve(Reader *r, Reader *lr, FuncSym *syms, size_t n, Names *names, size_t *name_at,
                   FuncNameInfo *info) {
        _cleanup_(points_done) Points pts = {};
        _cleanup_free_ Winner *w = NULL;
        _cleanup_(table_done) Table t = {};
        Load loads[LOADS_MAX];
        size_t n_loads, n_w;
        Header h;
        int k;

        k = read_header(lr, &h);
        if (k < 0)
                return k;
        k = read_loads(lr, &h, loads, &n_loads);
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
        if (t.kind == FUNC_TABLE_NONE || pts.n == 0)
                return 0;
        finish_seccuts(&pts);
        k = read_symbols(r, &t, &pts, &info->n_symbols);
        if (k < 0)
                return k;
        finish_points(&pts);
        k = pick_winners(&pts, syms, &w, &n_w);
        if (k < 0)
                return k;
        return name_winners(r, &t, w, n_w, syms, names, name_at, &info->n_functions);
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
