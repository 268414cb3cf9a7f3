/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

#include "macro.h"

/* Memory for one parsed batch: everything its Batch points into (the text,
 * the JSON tree, the arrays of rows and jobs) comes from a few large blocks
 * and goes with one arena_free(), so parsing costs no malloc() per value. */
typedef struct Arena Arena;

/* An arena whose first block holds first_block bytes; NULL when out of memory. */
Arena *arena_new(size_t first_block);

/* size bytes aligned for any type, valid until arena_free(); NULL when out
 * of memory. */
void *arena_alloc(Arena *a, size_t size);

/* n zeroed elements of size bytes; NULL when out of memory or n * size
 * overflows. */
void *arena_calloc(Arena *a, size_t n, size_t size);

Arena *arena_free(Arena *a);
DEFINE_TRIVIAL_CLEANUP_FUNC(Arena *, arena_free);
