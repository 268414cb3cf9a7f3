/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reads the input as lmkd names the functions sampled in a file a process
 * maps (funcname_resolve()): its segments, section headers, symbol and
 * string tables, its unwind table (.eh_frame_hdr, FDEs, CIEs), at
 * offsets spread over the whole input; and shows its first bytes as a
 * symbol's name (symname_show(): the C++ demangler and the Fortran rule);
 * then as lmk-store names offsets from a debug file and an executable a
 * debuginfod server sent (funcname_resolve_split()), the input as both.
 * Any process can map any file and a server may send anything, so none of
 * this may crash, leak, read out of bounds or run away. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "funcname.h"
#include "macro.h"
#include "symname.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_range(int fd, const FuncSym *f) {
        FuncSym ends[2] = { { .offset = f->same_from }, { .offset = f->same_to - 1 } };
        char *names = NULL;

        if (f->same_from == f->same_to)
                return;
        if (funcname_resolve(fd, NULL, 0, ends, 2, &names, NULL) < 0)
                abort(); /* the same file, read a second time */
        for (size_t k = 0; k < 2; k++)
                if ((!f->name ? ends[k].name != NULL
                              : !ends[k].name || strcmp(ends[k].name, f->name) != 0 || ends[k].start != f->start) ||
                    ends[k].entry != f->entry || ends[k].entry_offset != f->entry_offset)
                        abort();
        free(names);
}

static void check_answers(const FuncSym *syms, size_t n, size_t size) {
        for (size_t i = 0; i < n; i++) {
                if (syms[i].name && (strlen(syms[i].name) > SYMNAME_MAX || syms[i].start > syms[i].vaddr ||
                                     syms[i].vaddr >= syms[i].end))
                        abort();
                /* an entry: the FDE covers the address, its start is in the file */
                if (syms[i].entry && (syms[i].name || syms[i].start > syms[i].vaddr ||
                                      syms[i].vaddr >= syms[i].end || syms[i].entry_offset >= size))
                        abort();
                if (syms[i].same_from != syms[i].same_to &&
                    (syms[i].offset < syms[i].same_from || syms[i].offset >= syms[i].same_to))
                        abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        FuncSym syms[67];
        char *names = NULL, shown[SYMNAME_MAX + 1];
        const uint8_t *nul = memchr(data, 0, size);
        size_t stride = MAX(size / 64, (size_t) 1);
        int fd, r;

        r = symname_show((const char *) data, MIN(nul ? (size_t) (nul - data) : size, (size_t) SYMNAME_MANGLED_MAX),
                         false, shown);
        if (r < 0 || strlen(shown) != (size_t) r || r > SYMNAME_MAX)
                abort();

        fd = memfd_create("fuzz-funcname", MFD_CLOEXEC);
        if (fd < 0)
                return 0;
        if (write(fd, data, size) != (ssize_t) size) {
                close(fd);
                return 0;
        }
        /* offsets over the whole file, and its end and first bytes past it */
        for (size_t i = 0; i < 64; i++)
                syms[i] = (FuncSym) { .offset = i * stride + i % 8 };
        syms[64] = (FuncSym) { .offset = size - 1 };
        syms[65] = (FuncSym) { .offset = size };
        syms[66] = (FuncSym) { .offset = UINT64_MAX };
        r = funcname_resolve(fd, NULL, 0, syms, ELEMENTSOF(syms), &names, NULL);
        if (r >= 0)
                check_answers(syms, ELEMENTSOF(syms), size);
        /* Each answer holds over its range: the ends of a few ranges are
         * named as the offset was. */
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(syms); i += 8)
                check_range(fd, &syms[i]);
        free(TAKE_PTR(names));
        r = funcname_resolve_split(fd, fd, NULL, 0, syms, ELEMENTSOF(syms), &names, NULL);
        if (r >= 0)
                check_answers(syms, ELEMENTSOF(syms), size);
        free(names);
        close(fd);
        return 0;
}
