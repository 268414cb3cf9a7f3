/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>

#include "histogram.h"
#include "job-table.h"
#include "lib-families.h"
#include "lmk-bpf.h"
#include "object.h"
#include "phases.h"
#include "process.h"

/* Attribution: a sample becomes a row of the histogram — job and step,
 * user, command, phase, and the executable, library, kernel or idle it ran
 * in — from the process table the kernel's records keep up to date. */

typedef struct Attribution {
        ObjectTable *objects;
        ProcessTable *procs;
        JobTable *jobs;
        Phases *phases;
        const LibFamilies *families;    /* tells communication libraries; NULL: none are */
        uint64_t unknown;               /* samples attributed to [unknown] */
        uint64_t rescans;               /* /proc re-reads after a miss */
} Attribution;

/* Adds the sample (or burst sample) s, and for an MPI rank also to its
 * rank row (useful or communication, see docs/pop.md), taken at monotonic time s->time_ns,
 * to h. now is the monotonic time of this tick (for rescans), and
 * real_offset_ns converts monotonic to wall-clock time for jobs. */
int attribute_sample(Attribution *a, Histogram *h, const struct lmk_sample *s, uint64_t now,
                     int64_t real_offset_ns);
