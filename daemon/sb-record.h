/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* One of the kernel's process records (mmap2, comm, fork, exit, cgroup,
 * lost) as sideband.c parses it, timestamped with CLOCK_MONOTONIC like the
 * BPF samples: a plain value, so that what orders and applies records
 * (event-order.c, monitor.c) needs no perf event. */

typedef enum SbType {
        SB_MMAP,
        SB_COMM,
        SB_FORK,
        SB_EXIT,
        SB_CGROUP,
        SB_LOST,
} SbType;

typedef struct SbRecord {
        uint64_t time;
        uint64_t seq;           /* arrival order: breaks ties in time */
        SbType type;
        bool exec;              /* SB_COMM: the comm changed because of exec */
        uint32_t pid, tid, ppid;
        uint64_t addr, len, pgoff;
        uint32_t maj, min, prot;
        uint64_t ino;           /* SB_MMAP; SB_CGROUP: the cgroup id */
        uint64_t lost;          /* SB_LOST: records the kernel dropped */
        char *str;              /* path (mmap, cgroup) or comm; malloc'd */
} SbRecord;

static inline void sb_record_done(SbRecord *r) {
        free(r->str);
        r->str = NULL;
}
