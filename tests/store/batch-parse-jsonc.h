/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "batch/batch-parse.h"

/* The json-c parser lmk-store had before its own (batch-parse-jsonc.c):
 * the same contract as batch_parse() and batch_free(). */
int batch_parse_jsonc(const char *data, size_t size, Batch **ret, BatchError *err);
Batch *batch_free_jsonc(Batch *b);
DEFINE_TRIVIAL_CLEANUP_FUNC(Batch *, batch_free_jsonc);
