/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buildid.h"
#include "tests.h"
#include "util.h"

/* The referee: what binutils' readelf says the build-id is. */
static int readelf_build_id(const char *path, char *hex, size_t size) {
        char cmd[4200], line[512];
        FILE *p;
        int found = 0;

        snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", path);
        p = popen(cmd, "re");
        if (!p)
                return -errno;
        while (fgets(line, sizeof(line), p))
                if (sscanf(line, " Build ID: %127s", hex) == 1 && strlen(hex) < size)
                        found = 1;
        pclose(p);
        return found ? 0 : -ENOENT;
}

static int memfd_with(const void *data, size_t n) {
        int fd = memfd_create("elf", MFD_CLOEXEC);

        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(loop_write(fd, data, n));
        return fd;
}

TEST(matches_readelf) {
        char want[128], got[2 * BUILD_ID_MAX + 1], self[4096];
        uint8_t id[BUILD_ID_MAX];
        ssize_t k;
        int fd, n;

        /* readelf must be given our path: its own /proc/self/exe is readelf */
        k = readlink("/proc/self/exe", self, sizeof(self) - 1);
        ASSERT_TRUE(k > 0);
        self[k] = '\0';
        if (readelf_build_id(self, want, sizeof(want)) < 0)
                test_skip("readelf (binutils) is not installed or finds no build-id: no referee");
        fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        n = buildid_read_fd(fd, id);
        close(fd);
        ASSERT_EQ(n, 20);
        buildid_to_hex(id, (size_t) n, got);
        ASSERT_STREQ(got, want);
}

TEST(truncated_and_hostile_files) {
        _cleanup_free_ char *elf = NULL;
        uint8_t want[BUILD_ID_MAX], id[BUILD_ID_MAX];
        size_t size;
        int fd, n, ok = 0;

        ASSERT_OK(read_full_file("/proc/self/exe", 64 * 1024 * 1024, &elf, &size));
        fd = memfd_with(elf, size);
        ASSERT_EQ(buildid_read_fd(fd, want), 20);
        close(fd);

        /* Every prefix up to 16 KiB, then coarser: a truncated file gives an
         * error or the right id, never another id and never a crash. */
        for (size_t cut = 0; cut < size; cut += cut < 16384 ? 1 : 4096) {
                fd = memfd_with(elf, cut);
                n = buildid_read_fd(fd, id);
                close(fd);
                if (n > 0) {
                        ASSERT_EQ(n, 20);
                        ASSERT_TRUE(memcmp(id, want, 20) == 0);
                        ok++;
                } else
                        ASSERT_TRUE(n == -EBADMSG || n == -ENOENT);
        }
        ASSERT_TRUE(ok > 0);

        /* flipped bytes in the ELF and program headers */
        for (size_t i = 0; i < 256 && i < size; i++) {
                char saved = elf[i];

                elf[i] ^= (char) 0xff;
                fd = memfd_with(elf, size);
                n = buildid_read_fd(fd, id);
                close(fd);
                ASSERT_TRUE(n == 20 || n == -EBADMSG || n == -ENOENT);
                elf[i] = saved;
        }

        fd = memfd_with("#!/bin/sh\necho hi\n", 18);
        ASSERT_ERROR(buildid_read_fd(fd, id), EBADMSG);
        close(fd);
        fd = memfd_with("", 0);
        ASSERT_ERROR(buildid_read_fd(fd, id), EBADMSG);
        close(fd);
        fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_ERROR(buildid_read_fd(fd, id), EBADMSG);
        close(fd);
}

struct note {
        uint32_t namesz, descsz, type;
        char name[4];
        uint8_t desc[24];
};

TEST(notes) {
        struct note good = { 4, 20, 3, "GNU", { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 } };
        struct note two[2] = {
                { 4, 4, 1, "GNU", { 0 } }, /* ABI tag first */
                { 4, 24, 3, "GNU", { 0xaa } },
        };
        uint8_t buf[64], id[BUILD_ID_MAX];

        ASSERT_EQ(buildid_find_in_notes(&good, 12 + 4 + 20, id), 20);
        ASSERT_EQ(id[19], 20);
        /* desc cut short by the segment's end */
        ASSERT_ERROR(buildid_find_in_notes(&good, 12 + 4 + 19, id), EBADMSG);
        ASSERT_ERROR(buildid_find_in_notes(&good, 11, id), ENOENT);
        ASSERT_ERROR(buildid_find_in_notes(&good, 0, id), ENOENT);

        /* the first note's desc is 4 bytes, then the id; longer ids are cut to 20 */
        memcpy(buf, &two[0], 12 + 4 + 4);
        memcpy(buf + 20, &two[1], 12 + 4 + 24);
        ASSERT_EQ(buildid_find_in_notes(buf, 20 + 40, id), 20);
        ASSERT_EQ(id[0], 0xaa);

        /* lengths that wrap or point past the end */
        good.namesz = 0xffffffff;
        ASSERT_ERROR(buildid_find_in_notes(&good, sizeof(good), id), EBADMSG);
        good.namesz = 4;
        good.descsz = 0xfffffffd;
        ASSERT_ERROR(buildid_find_in_notes(&good, sizeof(good), id), EBADMSG);
        good.descsz = 0;
        ASSERT_ERROR(buildid_find_in_notes(&good, sizeof(good), id), EBADMSG);
        /* a build-id note with another owner name is not a GNU build-id */
        good.descsz = 20;
        memcpy(good.name, "XYZ", 4);
        ASSERT_ERROR(buildid_find_in_notes(&good, 12 + 4 + 20, id), ENOENT);
}

int main(void) {
        RUN(notes);
        RUN(truncated_and_hostile_files);
        RUN(matches_readelf);
        return 0;
}
