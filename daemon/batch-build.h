/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

#include "interval.h"
#include "node-software.h"
#include "node-type.h"
#include "push-thread.h"
#include "spool.h"

/* A closed interval as a batch (docs/batch-format.md): JSON, gzip'd. The
 * interval's times are its own; the batch adds who sends it and lmkd's
 * push health. */
typedef struct BatchInfo {
        const char *node;
        const char *boot_id;
        const char *spool_id;           /* batch.spool; NULL: none */
        const char *cluster;
        uint64_t seq;
        const SpoolStats *spool;
        const PushStats *push;
        const NodeSoftware *software;   /* NULL: not looked */
        const NodeType *node_type;      /* NULL: not looked */
        const char *inventory;          /* the software inventory's report (inventory_to_json()),
                                         * written as it is; NULL: none */
} BatchInfo;

int batch_build(const Interval *iv, const BatchInfo *info, void **ret_gz, size_t *ret_size);

/* The batch as a JSON tree, what batch_build() writes with
 * BATCH_JSON_FLAGS: 0, or -ENOMEM with nothing made. It holds
 * info->inventory as it is, which must live until it is written. */
int batch_json(const Interval *iv, const BatchInfo *info, json_object **ret);
#define BATCH_JSON_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/* /proc/sys/kernel/random/boot_id */
int read_boot_id(char **ret);
