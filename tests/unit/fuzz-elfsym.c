/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reads the input as lmkd reads a file a process maps, to find liblmk's
 * state in it (process_table_abi_address()): the lmk_abi symbol, the PT_LOAD
 * segments that place it, and the "lmk" USDT notes. Any process can map any
 * file, so none of this may crash, leak or read out of bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elfsym.h"
#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        ElfLoad loads[8]; /* as many as an Object keeps */
        uint64_t value, addr;
        size_t n = SIZE_MAX;
        int fd;

        fd = memfd_create("fuzz-elfsym", MFD_CLOEXEC);
        if (fd < 0)
                return 0;
        if (write(fd, data, size) != (ssize_t) size) {
                close(fd);
                return 0;
        }
        if (elf_find_symbol(fd, "lmk_abi", &value, loads, ELEMENTSOF(loads), &n) >= 0) {
                if (n > ELEMENTSOF(loads))
                        abort();
                (void) elf_has_usdt_provider(fd, "lmk");
                /* mapped at a typical library address, from its first page */
                (void) elf_runtime_address(loads, n, UINT64_C(0x7f0000000000), 0, value, &addr);
        }
        close(fd);
        return 0;
}
