/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

/* A perf event's mmap'd ring buffer, read by us, written by the kernel. */
typedef struct PerfRing {
        int fd;
        int cpu;
        void *base;             /* metadata page followed by the data pages */
        size_t data_size;       /* a power of two */
        uint8_t *scratch;       /* a record that wraps around the end is copied here */
} PerfRing;

int perf_event_open_cpu(struct perf_event_attr *attr, int cpu, int group_fd);

/* Opens the event on cpu and maps 2^order data pages. */
int perf_ring_open(PerfRing *ring, struct perf_event_attr *attr, int cpu, unsigned order);
void perf_ring_close(PerfRing *ring);

/* Hands every complete record to cb in ring order, then frees the space.
 * Returns the number of records, or cb's first negative return. */
typedef int (*perf_ring_cb_t)(const struct perf_event_header *hdr, void *userdata);
int perf_ring_drain(PerfRing *ring, perf_ring_cb_t cb, void *userdata);
