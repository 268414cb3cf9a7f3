/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

#include "lib-families.h"

/* Which library families are installed on this node: the findings need to
 * know that an optimised BLAS was there to be used when a job spent its
 * time in the reference one. lmkd looks once, at start, in the system's
 * library folders (and one level below them, where Debian keeps
 * openblas-pthread/, blas/, atlas/, blis-*), and reports the list with
 * every batch as node.installed (docs/batch-format.md). */

#define NODE_SOFTWARE_MAX 64

typedef struct NodeFamily {
        char purpose[LIB_FAMILY_NAME_MAX + 1];
        char family[LIB_FAMILY_NAME_MAX + 1];
        char *path; /* the first file found, resolved */
} NodeFamily;

typedef struct NodeSoftware {
        size_t n;
        NodeFamily v[NODE_SOFTWARE_MAX];
        size_t files;   /* library files looked at */
} NodeSoftware;

/* Looks through dirs (NULL-terminated; NULL: the default folders) for
 * shared libraries of a family in t. Folders that do not exist are
 * skipped. -ENOMEM. */
int node_software_scan(const LibFamilies *t, const char *const *dirs, NodeSoftware *ret);
void node_software_done(NodeSoftware *s);
