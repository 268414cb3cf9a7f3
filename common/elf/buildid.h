/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define BUILD_ID_MAX 20 /* SHA-1; longer ids are cut, as the kernel does */

/* Reads the GNU build-id note of the ELF file open at fd (from its program
 * headers' PT_NOTE segments, falling back to SHT_NOTE sections). Returns the
 * id's length (> 0), -ENOENT when the file has none, -EBADMSG when the file
 * is not an ELF file or is malformed/truncated. */
int buildid_read_fd(int fd, uint8_t ret_id[BUILD_ID_MAX]);

/* Finds a GNU build-id in a buffer of ELF notes (the contents of a PT_NOTE
 * segment). Bounded; used by buildid_read_fd() and by the fuzz target. */
int buildid_find_in_notes(const void *notes, size_t size, uint8_t ret_id[BUILD_ID_MAX]);

/* Lower-case hex, NUL-terminated; out must hold 2 * len + 1 bytes. */
void buildid_to_hex(const uint8_t *id, size_t len, char *out);
