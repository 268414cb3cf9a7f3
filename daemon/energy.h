/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "job-table.h"
#include "powercap.h"

/* The node's energy and each job's part of it (docs/batch-format.md,
 * "Energy"). The counters are read at every tick and at each Prolog and
 * Epilog notice; what the node used since the last read goes to the jobs
 * on it then: all of it to a job alone there, split by the jobs' samples
 * since the last read between several (equally when none had one), and
 * to nobody (unattributed) when no job ran. The split is an estimate:
 * samples say where the CPUs' time went, not their power. */
typedef struct Energy {
        Powercap *powercap;             /* NULL: no energy counters */
        double unattributed_joules;     /* this interval, while no job ran */
        double unattributed_total;      /* since the start */
} Energy;

/* Opens the counters under root (NULL: /sys/class/powercap). Without any,
 * e->powercap stays NULL and why (for the log, once) says why:
 * "unavailable (no powercap zones under ..., no perf power PMU)". Only
 * -ENOMEM is an error. */
int energy_open(Energy *e, const char *root, char *why, size_t why_size);
void energy_done(Energy *e);

/* Reads the counters and gives what the node used since the last read
 * to the jobs on it: those not ended, and those with samples since the
 * last read (Job.samples). A job that gets energy is active in the
 * interval (Job.seen). */
void energy_account(Energy *e, JobTable *t);

/* A new interval: the node's and the jobs' joules start from 0. Call
 * after the interval's batch is written and jobs_end_interval(). */
void energy_reset(Energy *e, JobTable *t);
