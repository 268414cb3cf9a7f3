/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

#include "db/storage.h"

/* Names a build's unnamed functions (schema/0021: the file offset of a
 * function's first byte, entry, or of a 4 KiB page) from its debug file
 * open at fd, with the segments of the build's executable or library open
 * at loads_fd (-1: the debug file's own, as when the server's debug file
 * is the unstripped build), by common/elf/funcname.h's rule:
 *  - an entry is named by the function that holds its address (the one
 *    starting there, for an offset lmkd found in the unwind table);
 *  - a page only when one function covers all of it, [offset, offset +
 *    4096): a page that holds pieces of several gets no name, never one of
 *    them.
 * Sets each names[i].name (malloc'd; "" for none). build_id: lower-case hex,
 * which both files must carry. Returns how many got a name, or a negative
 * errno of funcname_resolve_split() (-ESTALE: another build), -EINVAL for a
 * build_id that is not hex of at most 20 bytes or more than 2^20 names. */
int debug_names_resolve(int fd, int loads_fd, const char *build_id, FunctionName *names, size_t n);
