/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "hashmap.h"
#include "db/storage.h"

/* A batch's named events and burst windows summed per key in memory, so
 * that each row of job_object_events, job_phase_events, job_events and
 * job_bursts (schema/0015) is written once per batch. A key is four ids:
 * (job, object, role, 0), (job, phase, role, 0), (job, 0, role, 0) or, for
 * bursts, (job, object, phase, role); a role is its index in the batch's
 * roles until the sums are written. */
typedef struct EventAcc {
        int64_t key[4];
        /* named events over the rows that had one; of those, the rows
         * with instructions too */
        int64_t count, samples, cpu_time_ns, instructions, count_with_instructions;
        int64_t exact_count;    /* job_events: lmkd's exact count (jobs[].events); STORAGE_NULL: none */
        size_t exact_job;       /* its jobs[] index, for an error */
        /* bursts: windows, their length, the events in them */
        int64_t bursts, window_ns;
        double burst_count;
} EventAcc;

typedef struct EventMap {
        Hashmap *map;
        EventAcc *pool;
        size_t n, max;
} EventMap;

/* A map for at most max keys (allocated when max > 0). */
int event_map_init(EventMap *m, size_t max);
void event_map_done(EventMap *m);
void event_map_reset(EventMap *m);
/* The sums of the key (a, b, c, d), made empty when new. -ENOBUFS: more
 * keys than max. */
int event_map_get(EventMap *m, int64_t a, int64_t b, int64_t c, int64_t d, EventAcc **ret);
