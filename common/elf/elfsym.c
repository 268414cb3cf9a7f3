/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <sys/stat.h>

#include "elfsym.h"
#include "macro.h"

#define SYMBOLS_MAX (4u * 1024 * 1024) /* beyond that a symbol table is not believable */

static int search(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, const char *name, uint64_t *ret) {
        Elf_Data *d = elf_getdata(scn, NULL);
        size_t n;

        if (!d || sh->sh_entsize == 0)
                return -ENOENT;
        n = sh->sh_size / sh->sh_entsize;
        if (n > SYMBOLS_MAX)
                return -EBADMSG;
        for (size_t i = 0; i < n; i++) {
                GElf_Sym sym;
                const char *s;

                if (!gelf_getsym(d, (int) i, &sym))
                        return -EBADMSG;
                if (sym.st_shndx == SHN_UNDEF || GELF_ST_TYPE(sym.st_info) != STT_OBJECT)
                        continue;
                s = elf_strptr(elf, sh->sh_link, sym.st_name);
                if (s && streq(s, name)) {
                        *ret = sym.st_value;
                        return 0;
                }
        }
        return -ENOENT;
}

int elf_open_fd(int fd, Elf **ret, size_t *ret_phnum) {
        Elf *elf;
        size_t phnum;

        if (elf_version(EV_CURRENT) == EV_NONE)
                return -EIO;
        elf = elf_begin(fd, ELF_C_READ, NULL);
        if (!elf)
                return -EBADMSG;
        if (elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &phnum) < 0) {
                elf_end(elf);
                return -EBADMSG;
        }
        *ret = elf;
        if (ret_phnum)
                *ret_phnum = phnum;
        return 0;
}

int elf_find_symbol(int fd, const char *name, uint64_t *ret_value, ElfLoad *ret_loads, size_t max_loads,
                    size_t *ret_n_loads) {
        Elf *elf;
        Elf_Scn *scn = NULL;
        size_t phnum, nl = 0;
        uint64_t value = 0;
        int r;

        r = elf_open_fd(fd, &elf, &phnum);
        if (r < 0)
                return r;
        r = -ENOENT;
        /* dynamic symbols first: what the loader would find */
        for (int pass = 0; pass < 2 && r == -ENOENT; pass++)
                while ((scn = elf_nextscn(elf, scn))) {
                        GElf_Shdr sh;

                        if (!gelf_getshdr(scn, &sh) || sh.sh_type != (pass == 0 ? SHT_DYNSYM : SHT_SYMTAB))
                                continue;
                        r = search(elf, scn, &sh, name, &value);
                        if (r != -ENOENT)
                                break;
                }
        for (size_t i = 0; r >= 0 && i < phnum; i++) {
                GElf_Phdr ph;

                if (!gelf_getphdr(elf, (int) i, &ph)) {
                        r = -EBADMSG;
                        break;
                }
                if (ph.p_type == PT_LOAD && nl < max_loads)
                        ret_loads[nl++] = (ElfLoad) { ph.p_offset, ph.p_vaddr, ph.p_filesz };
        }
        elf_end(elf);
        if (r < 0)
                return r;
        *ret_value = value;
        *ret_n_loads = nl;
        return 0;
}

int elf_runtime_address(const ElfLoad *loads, size_t n, uint64_t start, uint64_t pgoff, uint64_t vaddr,
                        uint64_t *ret) {
        const uint64_t page = 4096;

        for (size_t i = 0; i < n; i++) {
                uint64_t first = loads[i].offset & ~(page - 1);

                if (pgoff < first || pgoff >= loads[i].offset + loads[i].filesz)
                        continue;
                /* file offset X of this segment is at vaddr X - offset + p_vaddr, and
                 * the mapping puts pgoff at start: bias = start - pgoff + offset - p_vaddr */
                *ret = start - pgoff + loads[i].offset - loads[i].vaddr + vaddr;
                return 0;
        }
        return -ENOENT;
}

bool elf_has_usdt_provider(int fd, const char *provider) {
        Elf *elf;
        Elf_Scn *scn = NULL;
        size_t shstrndx, plen = strlen(provider);
        bool found = false;

        if (elf_open_fd(fd, &elf, NULL) < 0)
                return false;
        if (elf_getshdrstrndx(elf, &shstrndx) < 0) {
                elf_end(elf);
                return false;
        }
        while (!found && (scn = elf_nextscn(elf, scn))) {
                GElf_Shdr sh;
                GElf_Nhdr nh;
                size_t off = 0, name_off, desc_off;
                Elf_Data *d;
                const char *secname;

                if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
                        continue;
                secname = elf_strptr(elf, shstrndx, sh.sh_name);
                if (!secname || !streq(secname, ".note.stapsdt"))
                        continue;
                d = elf_getdata(scn, NULL);
                /* each note: three addresses (pc, base, semaphore), then
                 * "provider\0name\0args\0" */
                while (d && !found && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
                        const char *desc = (const char *) d->d_buf + desc_off;
                        size_t skip = 3 * (gelf_getclass(elf) == ELFCLASS32 ? 4 : 8);

                        if (nh.n_type != 3 || nh.n_descsz <= skip + plen)
                                continue;
                        found = memcmp(desc + skip, provider, plen + 1) == 0;
                }
        }
        elf_end(elf);
        return found;
}
