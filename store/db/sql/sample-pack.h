/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* The raw rows of one batch and job, packed into one value
 * (sample_packs.packed, schema/0017). Format, version 1:
 *
 *   byte 0       1, the version
 *   bytes 1-8    the batch's sampling.frequency_hz, an IEEE 754 double,
 *                little-endian: a row's CPU seconds are samples * (1 / Hz),
 *                computed as ingest computes them for the rollups
 *   then per row, in the batch's order:
 *     object_id, phase_id, task_id, samples    varints
 *     one byte                                 which counters follow: bit 0
 *                                              cpu_time_ns, 1 cycles, 2
 *                                              instructions (the others NULL)
 *     each counter that follows                a varint
 *
 * A varint is an int64 taken as uint64 in 7-bit groups, the lowest first,
 * each but the last with the high bit set (LEB128): ids and counts of a few
 * thousand take two bytes. Rows are not merged: two rows of the batch with
 * the same (object, phase, task) stay two, as the batch had them. */

#define SAMPLE_PACK_VERSION 1

typedef struct SamplePack {
        uint8_t *data;
        size_t len, size;
        int64_t n_rows, samples;
} SamplePack;

/* A row as packed; counters are STORAGE_NULL when NULL. */
typedef struct SampleRow {
        int64_t object_id, phase_id, task_id, samples;
        double cpu_seconds;
        int64_t cpu_time_ns, cycles, instructions;
} SampleRow;

/* Starts p (empty or reset) for a batch sampled at frequency_hz. */
int sample_pack_begin(SamplePack *p, double frequency_hz);
/* Appends a row; row->cpu_seconds is not stored (see above). */
int sample_pack_add(SamplePack *p, const SampleRow *row);
/* Forgets the rows, keeps the memory. */
void sample_pack_reset(SamplePack *p);
void sample_pack_done(SamplePack *p);

/* Reads the row at *offset of a packed value (start with *offset = 0) and
 * moves *offset past it. 1: a row, 0: the end, -EBADMSG: not a pack of
 * this version, or cut short. */
int sample_pack_next(const uint8_t *data, size_t len, size_t *offset, SampleRow *ret);
