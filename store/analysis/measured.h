/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "db/storage.h"

/* Rates and ratios of what lmkd measures beyond samples (docs/api.md),
 * from the sums storage keeps. NAN where the sums do not tell. */

/* Events per CPU second: the rate while the code ran (count over the
 * samples' CPU time, the time the windows' counts are scaled to). */
double event_per_cpu_second(const EventSum *e);
/* Events per 1,000 instructions, from the rows that had both. */
double event_per_kilo_instruction(const EventSum *e);
/* Events per second in burst windows. */
double burst_per_second(const BurstSum *b);
