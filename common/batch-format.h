/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* The batch format (docs/batch-format.md): the contract between lmkd, which
 * writes batches, and lmk-store, which reads them. What both sides must
 * spell the same lives here and, the member names, in batch-fields.h, and
 * nowhere else. */

#define LMK_BATCH_FORMAT "lmk-batch"
/* 2: functions[] (lmkd names them); 3: functions[] entries name their
 * rows[] entry by index instead of repeating its strings. A store reads
 * 1 and 2 too. */
#define LMK_BATCH_VERSION 3

/* The software inventory a batch may carry (docs/inventory.md). */
#define LMK_INVENTORY_FORMAT "lmk-inventory"
#define LMK_INVENTORY_VERSION 1

/* batch.spool: the id lmkd draws when it makes a spool, 128 random bits as
 * lower-case hex, so that a new spool's batch keys never meet an old one's. */
#define LMK_BATCH_SPOOL_ID_LEN 32

/* What kind of code a sample ran in: a row's "kind". */
typedef enum CodeKind {
        CODE_EXE,               /* the process's main executable */
        CODE_LIB,               /* a shared library (or the vDSO) */
        CODE_KERNEL,
        CODE_IDLE,
        CODE_ANON,              /* anonymous executable memory: JIT code */
        CODE_UNKNOWN,           /* no mapping known for the address */
        _CODE_KIND_MAX,
} CodeKind;

/* "exe", "lib", "kernel", "idle", "anon", "unknown"; NULL out of range. */
const char *code_kind_to_string(CodeKind k);
/* The kind a batch names, or -EINVAL. */
int code_kind_from_string(const char *s);
