/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Opens the ELF file at fd with libelf, read()-based: a file truncated
 * under us gives an error, never SIGBUS as a mapping would. -EBADMSG if it
 * is not an ELF file. The caller ends it with elf_end(). */
int elf_open_fd(int fd, Elf **ret, size_t *ret_phnum);

typedef struct ElfLoad {
        uint64_t offset;
        uint64_t vaddr;
        uint64_t filesz;
} ElfLoad;

/* Looks up a defined data symbol by name in the ELF file open at fd
 * (.dynsym first, then .symtab) and returns its value, and the file's
 * PT_LOAD segments (up to max_loads) so callers can place it in a process.
 * -ENOENT: no such symbol; -EBADMSG: not ELF or malformed. */
int elf_find_symbol(int fd, const char *name, uint64_t *ret_value, ElfLoad *ret_loads, size_t max_loads,
                    size_t *ret_n_loads);

/* Whether the ELF file open at fd carries USDT probes of provider in its
 * .note.stapsdt notes. */
bool elf_has_usdt_provider(int fd, const char *provider);

/* Where the object whose segments are loads and which is mapped at start
 * from file offset pgoff puts its virtual address vaddr. -ENOENT if no
 * segment holds pgoff. */
int elf_runtime_address(const ElfLoad *loads, size_t n, uint64_t start, uint64_t pgoff, uint64_t vaddr,
                        uint64_t *ret);
