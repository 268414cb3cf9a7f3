/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <sys/stat.h>

#include "buildid.h"
#include "elfsym.h"
#include "macro.h"

#define NT_GNU_BUILD_ID_ 3
#define NOTES_MAX (64 * 1024) /* a build-id note sits in a small segment */

int buildid_find_in_notes(const void *notes, size_t size, uint8_t ret_id[BUILD_ID_MAX]) {
        const uint8_t *p = notes;
        size_t off = 0;

        /* Each note: namesz, descsz, type (4 bytes each), name and desc each
         * padded to 4 bytes. Every length comes from the file: check each
         * against what remains before using it. */
        while (size - off >= 12) {
                uint32_t namesz, descsz, type;
                size_t name_pad, desc_pad;

                memcpy(&namesz, p + off, 4);
                memcpy(&descsz, p + off + 4, 4);
                memcpy(&type, p + off + 8, 4);
                off += 12;
                name_pad = ALIGN_TO((size_t) namesz, (size_t) 4);
                desc_pad = ALIGN_TO((size_t) descsz, (size_t) 4);
                if (name_pad < namesz || desc_pad < descsz) /* wrapped */
                        return -EBADMSG;
                if (name_pad > size - off)
                        return -EBADMSG;
                if (type == NT_GNU_BUILD_ID_ && namesz == 4 && memcmp(p + off, "GNU", 4) == 0) {
                        size_t n;

                        if (descsz > size - off - name_pad || descsz == 0)
                                return -EBADMSG;
                        n = MIN((size_t) descsz, (size_t) BUILD_ID_MAX);
                        memcpy(ret_id, p + off + name_pad, n);
                        return (int) n;
                }
                off += name_pad;
                if (desc_pad > size - off)
                        return -EBADMSG;
                off += desc_pad;
        }
        return -ENOENT;
}

static int read_exact(int fd, void *buf, size_t n, off_t at) {
        ssize_t k = pread(fd, buf, n, at);

        if (k < 0)
                return -errno;
        return (size_t) k == n ? 0 : -EBADMSG;
}

int buildid_read_fd(int fd, uint8_t ret_id[BUILD_ID_MAX]) {
        _cleanup_free_ void *buf = NULL;
        struct stat st;
        Elf *elf;
        size_t phnum;
        int r = -ENOENT;

        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADMSG;
        /* segments are bounds-checked against the file size before they are read */
        r = elf_open_fd(fd, &elf, &phnum);
        if (r < 0)
                return r;
        r = -ENOENT;
        for (size_t i = 0; i < phnum && r == -ENOENT; i++) {
                GElf_Phdr ph;

                if (!gelf_getphdr(elf, (int) i, &ph)) {
                        r = -EBADMSG;
                        break;
                }
                if (ph.p_type != PT_NOTE)
                        continue;
                if (ph.p_filesz == 0 || ph.p_filesz > NOTES_MAX || ph.p_offset > (uint64_t) st.st_size ||
                    ph.p_filesz > (uint64_t) st.st_size - ph.p_offset)
                        continue;
                free(buf);
                buf = malloc(ph.p_filesz);
                if (!buf) {
                        r = -ENOMEM;
                        break;
                }
                if (read_exact(fd, buf, ph.p_filesz, (off_t) ph.p_offset) < 0)
                        continue;
                r = buildid_find_in_notes(buf, ph.p_filesz, ret_id);
                if (r == -EBADMSG)
                        r = -ENOENT; /* one bad note segment: try the others */
        }
        if (r == -ENOENT) {
                /* Some files (e.g. split debug files) carry the note only as a section. */
                Elf_Scn *scn = NULL;

                while (r == -ENOENT && (scn = elf_nextscn(elf, scn))) {
                        GElf_Shdr sh;
                        Elf_Data *d;

                        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
                                continue;
                        if (sh.sh_offset > (uint64_t) st.st_size || sh.sh_size > (uint64_t) st.st_size - sh.sh_offset)
                                continue;
                        d = elf_rawdata(scn, NULL);
                        if (!d || !d->d_buf || d->d_size > NOTES_MAX)
                                continue;
                        r = buildid_find_in_notes(d->d_buf, d->d_size, ret_id);
                        if (r == -EBADMSG)
                                r = -ENOENT;
                }
        }
        elf_end(elf);
        return r;
}

void buildid_to_hex(const uint8_t *id, size_t len, char *out) {
        static const char hex[] = "0123456789abcdef";

        for (size_t i = 0; i < len; i++) {
                out[2 * i] = hex[id[i] >> 4];
                out[2 * i + 1] = hex[id[i] & 15];
        }
        out[2 * len] = '\0';
}
