/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Names the functions that sampled file offsets of one ELF file fall in,
 * from the file's own symbols (.symtab, else .dynsym): all the offsets an
 * interval sampled in one object at once, in one pass over its symbol
 * table, off the sampling path. Nothing is kept between calls; each answer
 * says over which file offsets it holds, so that a caller may keep the
 * ranges of an object's hot functions (by build-id) and pass only the
 * offsets they do not cover.
 *
 * What names an offset:
 *  - the PT_LOAD segment whose file bytes [p_offset, p_offset + p_filesz)
 *    hold it (an executable one where segments overlap) gives its virtual
 *    address; an offset in no segment is unnamed;
 *  - of the function symbols that cover that address, the one with the
 *    greatest start. Function symbols: STT_FUNC and STT_GNU_IFUNC, and
 *    STT_NOTYPE ones defined in an executable section (labels of
 *    hand-written assembly, as perf counts them; not ARM's and AArch64's
 *    local mapping symbols "$x", "$d"). A symbol with a size covers
 *    [start, start + size), but not past the end of the executable section
 *    it starts in; one without a size covers up to the next function
 *    symbol's start or executable section's boundary. An address that no
 *    symbol covers (between functions, in padding or a PLT) is unnamed:
 *    never a neighbour's name.
 *  - an unnamed address that an FDE of the unwind table covers (the
 *    PT_GNU_EH_FRAME segment's .eh_frame_hdr: its sorted table, searched
 *    by reading O(log n) entries, then that FDE and its CIE) gets an entry:
 *    the file offset where that FDE's function starts, for a reader of the
 *    build's debug info to name exactly. Stripped files keep this table.
 *    A table or FDE that is malformed, that lmkd cannot search (table
 *    entries of no fixed size, indirect or text-relative pointers) or that
 *    does not cover the address gives none, and never an error.
 *  - aliases (same start, both covering): GLOBAL over WEAK over LOCAL, then
 *    one with a size over one without, then the first in the table.
 *
 * Bounded whatever the file says: the symbol table is read in chunks
 * (memory O(offsets), not O(symbols)), at most FUNCNAME_SYMBOLS_MAX
 * entries; only the winning names are read from the string table, at most
 * SYMNAME_MANGLED_MAX bytes each. Both ELF classes and byte orders. */

#define FUNCNAME_OFFSETS_MAX (1u << 20)
#define FUNCNAME_SYMBOLS_MAX (UINT64_C(1) << 26)  /* a 1.5 GiB .symtab; real ones hold ~1M */

typedef struct FuncSym {
        uint64_t offset;        /* in: a file offset sampled in the object */
        /* out: */
        const char *name;       /* shown as symname_show() does; NULL: unnamed */
        uint64_t vaddr;         /* the offset's ELF virtual address (0 when no PT_LOAD holds it) */
        uint64_t start, end;    /* the named function's [start, end), virtual addresses;
                                 * an entry's: its FDE's [pc_begin, pc_begin + pc_range) */
        /* Unnamed, but the unwind table (.eh_frame_hdr) says where its
         * function starts: entry_offset, that start's file offset. */
        bool entry;
        uint64_t entry_offset;
        /* File offsets [same_from, same_to) around offset that all get this
         * same answer, named or unnamed: what a cache of function ranges may
         * keep for the object's build-id. Empty when no segment holds offset. */
        uint64_t same_from, same_to;
} FuncSym;

typedef enum FuncTable {
        FUNC_TABLE_NONE,        /* neither .symtab nor .dynsym: all unnamed */
        FUNC_TABLE_DYNSYM,
        FUNC_TABLE_SYMTAB,
} FuncTable;

typedef struct FuncNameInfo {
        FuncTable table;
        uint64_t n_symbols;     /* entries of that table read */
        size_t n_functions;     /* distinct functions named */
        size_t n_entries;       /* offsets given an entry by the unwind table */
} FuncNameInfo;

/* Names syms[0..n) (distinct offsets in any order; outputs are reset
 * first) in the ELF file open at fd, which must be the build whose GNU
 * build-id lmkd recorded for the object: build_id_size bytes, 0 when the
 * object had none. Returns how many were named and hands over the names'
 * storage in *ret_names (one block: free() it after the last use of a
 * name) and, when ret_info is not NULL, what was read. Errors:
 *   -ESTALE     another build: the build-ids differ, or only one of the
 *               recorded object and the file has one (never named);
 *   -EAGAIN     the file changed (size, times, inode) while it was read;
 *   -EBADMSG    not an ELF file, or malformed: truncated, a table beyond
 *               the file's end, a wrong entry size;
 *   -EFBIG      more than FUNCNAME_SYMBOLS_MAX symbols, 2^20 sections or
 *               16 PT_LOAD segments;
 *   -EINVAL     n > FUNCNAME_OFFSETS_MAX, or fd not a regular file;
 *   -ENOMEM, or a read's errno. */
int funcname_resolve(int fd, const uint8_t *build_id, size_t build_id_size, FuncSym *syms, size_t n,
                     char **ret_names, FuncNameInfo *ret_info);

/* The same for a separate debug file open at fd (objcopy --only-keep-debug,
 * what debuginfod serves): its symbols and sections name the offsets, but
 * its PT_LOAD segments no longer say where their bytes were in the file,
 * so the offsets become addresses with the segments of the executable or
 * library of the same build, open at loads_fd. Both must carry build_id
 * (-ESTALE otherwise, or when their ELF class, byte order or machine
 * differ). loads_fd -1: as funcname_resolve(). */
int funcname_resolve_split(int fd, int loads_fd, const uint8_t *build_id, size_t build_id_size, FuncSym *syms,
                           size_t n, char **ret_names, FuncNameInfo *ret_info);
