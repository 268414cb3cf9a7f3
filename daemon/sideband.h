/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>

#include "perf-ring.h"
#include "sb-record.h"

/* The kernel's process records (sb-record.h) from one dummy perf event per
 * CPU, timestamped with CLOCK_MONOTONIC like the BPF samples, so lmkd can
 * apply them in order with the samples (event-order.h). */

#define SIDEBAND_SAMPLE_TYPE (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)

/* Parses one record written with sample_id_all and SIDEBAND_SAMPLE_TYPE.
 * Returns 1 and fills *ret for records lmkd uses, 0 for others, -EBADMSG
 * for malformed ones. */
int sideband_parse(const void *rec, size_t size, SbRecord *ret);

void sideband_attr(struct perf_event_attr *attr, size_t ring_bytes);

typedef struct Sideband {
        PerfRing *rings;        /* indexed by CPU; fd < 0 when closed */
        unsigned n_cpus;
        unsigned ring_order;
        SbRecord *pending;
        size_t n_pending, alloc_pending;
        uint64_t lost;          /* records the kernel dropped (ring full) */
        uint64_t malformed;
        uint64_t seq;
        int epoll_fd;           /* ring fds are added here: readable at the watermark */
} Sideband;

int sideband_init(Sideband *sb, unsigned n_possible_cpus, unsigned ring_order, int epoll_fd);
void sideband_done(Sideband *sb);
int sideband_cpu_open(Sideband *sb, int cpu);
void sideband_cpu_close(Sideband *sb, int cpu);
/* Moves every record out of the rings into sb->pending. */
int sideband_drain(Sideband *sb);
