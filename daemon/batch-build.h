/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "monitor.h"
#include "push.h"
#include "spool.h"

/* One interval as a batch (docs/batch-format.md): JSON, gzip'd. */
typedef struct BatchInfo {
        const char *node;
        const char *boot_id;
        const char *cluster;
        uint64_t seq;
        double start, end;      /* Unix time */
        const SpoolStats *spool;
        const PushStats *push;
} BatchInfo;

int batch_build(Monitor *m, const BatchInfo *info, void **ret_gz, size_t *ret_size);

/* /proc/sys/kernel/random/boot_id */
int read_boot_id(char **ret);
