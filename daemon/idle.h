/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>

#include "histogram.h"

/* Idle time: a CPU with nothing to run takes no time-based samples on some
 * kernels, and none with cycle events. Each CPU's missing samples — those
 * its event's enabled time made due, less those it took or lost — are
 * added as [idle], never more than once. */
typedef struct IdleSynth {
        unsigned n_cpus;
        uint64_t *seen;                 /* per CPU: samples attributed so far */
        uint64_t *synth;                /* per CPU: idle samples synthesized so far */
} IdleSynth;

int idle_init(IdleSynth *is, unsigned n_cpus);
void idle_done(IdleSynth *is);

static inline void idle_count_sample(IdleSynth *is, unsigned cpu) {
        if (cpu < is->n_cpus)
                is->seen[cpu]++;
}

/* due: the samples the CPU's event was due to take by now; lost: those the
 * ring could not take. Adds the deficit to h under key; returns how many
 * samples were added. */
uint64_t idle_synthesize(IdleSynth *is, unsigned cpu, double due, uint64_t lost, Histogram *h,
                         const HistKey *key);
