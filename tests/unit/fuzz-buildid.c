/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Feeds the input both to the note parser and, as a whole file, to the ELF
 * reader (libelf plus our bounds checks). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "buildid.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        uint8_t id[BUILD_ID_MAX];
        int fd, r;

        r = buildid_find_in_notes(data, size, id);
        if (r > BUILD_ID_MAX || r == 0)
                abort();

        fd = memfd_create("fuzz-elf", MFD_CLOEXEC);
        if (fd < 0)
                return 0;
        if (write(fd, data, size) == (ssize_t) size) {
                r = buildid_read_fd(fd, id);
                if (r > BUILD_ID_MAX || r == 0)
                        abort();
        }
        close(fd);
        return 0;
}
