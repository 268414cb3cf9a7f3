/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* A job's function sums of one object packed into one value
 * (job_function_packs.packed, schema/0025): what job_functions and
 * job_phase_functions held as one row each. Format, version 1:
 *
 *   byte 0       1, the version
 *   then per entry, in increasing (phase_id, function_id) order:
 *     phase_id        varint: the phase's id, 0 for the function's sums
 *                     over all the job's phases (phase ids start at 1);
 *                     as the difference from the previous entry's
 *     function_id     varint: as the difference from the previous entry's
 *                     when the phase is the same (> 0), else the id
 *     samples         varint
 *     cpu_seconds     8 bytes, an IEEE 754 double, little-endian: the
 *                     sum of samples / each batch's rate, as added
 *     one byte        which counters follow: bit 0 cycles, bit 1
 *                     instructions (the others NULL)
 *     each counter that follows, a varint
 *
 * A varint is an int64 taken as uint64 in 7-bit groups, the lowest first,
 * each but the last with the high bit set (LEB128), as in sample-pack.h.
 * The sums over phases are kept beside those per phase, not summed from
 * them when read: they are added batch by batch, as job_functions' were,
 * so that CPU seconds (floating point) and the overflow guard stay what
 * they were. */

#define FUNCTION_PACK_VERSION 1

/* One entry; cycles and instructions are STORAGE_NULL when NULL. */
typedef struct JobFunctionSum {
        int64_t phase_id, function_id, samples;
        double cpu_seconds;
        int64_t cycles, instructions;
} JobFunctionSum;

/* Entries in increasing (phase_id, function_id) order, each key once. */
typedef struct JobFunctionSums {
        JobFunctionSum *items;
        size_t n, alloc;
} JobFunctionSums;

void function_sums_done(JobFunctionSums *s);
/* Appends x, in any order: function_sums_sort() puts them in order, adding
 * up entries of the same key (counters as the stored sums' upserts do: a
 * NULL side is taken as the other). */
int function_sums_append(JobFunctionSums *s, const JobFunctionSum *x);
void function_sums_sort(JobFunctionSums *s);
/* The entry of (phase_id, function_id), or NULL. */
const JobFunctionSum *function_sums_find(const JobFunctionSums *s, int64_t phase_id, int64_t function_id);

/* Replaces *ret's entries with those of a packed value. -EBADMSG: not a
 * pack of this version, cut short, out of order or with bytes past its
 * end; *ret is then empty. */
int function_pack_decode(const uint8_t *data, size_t len, JobFunctionSums *ret);
/* Adds added's entries into stored's (both sorted). -EOVERFLOW, stored
 * unchanged, when a sum of samples, cycles or instructions would pass
 * 2^63 - 1. */
int function_sums_merge(JobFunctionSums *stored, const JobFunctionSums *added);
/* Packs s (sorted) into a new value of *ret_len bytes. */
int function_pack_encode(const JobFunctionSums *s, uint8_t **ret, size_t *ret_len);
