/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>

#include "batch/batch-parse.h"

/* Node types (docs/lmk-store.md, "Node types"): nodes whose batches
 * describe the same hardware share a type, so that runs on different
 * hardware are never mixed up. The type's name is its key:
 *
 *   "Intel(R) Xeon(R) Platinum 8480+, 2 x 56 cores, 224 threads, 512 GiB, 4 x NVIDIA GH100 [H100 SXM5 80GB]"
 *
 * The kernel is not part of it (a kernel update does not make new
 * hardware); memory is MemTotal rounded up to the installed size, so that
 * the few hundred MiB firmware and kernel keep do not split one type. */

/* MemTotal in bytes rounded up to a multiple of the largest power of two
 * GiB at most a sixteenth of it (at least 1 GiB): 187.2 GiB is 192 GiB,
 * 503.5 GiB 512 GiB, 7.7 GiB 8 GiB. 0 for 0. */
int64_t node_memory_gib(int64_t bytes);

/* The GPUs as text: "4 x NVIDIA GH100 [H100 SXM5 80GB]", models joined by
 * ", ", "" for none. malloc'd, NULL on ENOMEM. */
char *node_gpus_text(const BatchNodeType *t);

/* The type's name (malloc'd, NULL on ENOMEM); unknown parts as "?". */
char *node_type_name(const BatchNodeType *t);
