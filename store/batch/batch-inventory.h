/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "batch/arena.h"
#include "batch/batch-parse.h"
#include "batch/json-tree.h"

/* A batch's "inventory": the node's software (docs/inventory.md), sent in
 * the first batch after lmkd saw it change. o is the batch's member, NULL
 * when absent (most batches); read into b->inventory, in arena. Returns 0,
 * or the errors of batch_parse() with err filled in. */
int batch_parse_inventory(const JsonValue *o, Arena *arena, Batch *b, BatchError *err);
