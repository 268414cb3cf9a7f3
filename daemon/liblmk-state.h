/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lmk-bpf.h"
#include "process.h"

/* What lmkd knows of one process's liblmk: its region names by id, learned
 * once per registration from the lmk:region probe or, for processes that
 * registered before lmkd started, from the process's own region table. */
typedef struct MarkerState {
        char **names;           /* by region id; NULL = not known */
        uint32_t n_names;
        uint32_t *off;          /* LMK_REGION_OFF_* flags by region id */
        uint64_t abi_addr;      /* where lmk_abi is in the process, 0 = not found */
        uint64_t last_read;     /* CLOCK_MONOTONIC ns of the last read of its memory */
        bool marked;            /* the sampling program knows its TLS offset */
} MarkerState;

/* lmkd's bound on a process's region table (struct lmk_abi's capacity): the
 * ABI itself (lmk-abi.h) leaves the size to liblmk. */
#define LMK_REGIONS_MAX 1024

MarkerState *markers_of(Process *p, bool create);
void markers_release(Process *p);
void markers_inherit(const Process *parent, Process *child);

int markers_set_name(MarkerState *ms, uint32_t id, const char *name);
int markers_set_off(MarkerState *ms, uint32_t id, uint32_t reason);
const char *markers_name(const MarkerState *ms, uint32_t id);

/* Reads lmk_abi (and, with regions, the region table) from the process's
 * memory. -ESRCH: gone; -EBADMSG: not an ABI v1 descriptor. */
int markers_read_abi(pid_t pid, uint64_t addr, struct lmk_abi *ret);
int markers_read_regions(MarkerState *ms, pid_t pid, const struct lmk_abi *abi);

/* "outer/inner" from a sample's stack; unknown ids as "#id". */
void markers_path(const MarkerState *ms, const uint32_t *stack, uint32_t depth, char *buf, size_t size);

const char *marker_off_reason(uint32_t reason);
