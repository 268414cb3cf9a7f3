/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <math.h>

#include "analysis/measured.h"

double event_per_cpu_second(const EventSum *e) {
        return e->cpu_time_ns > 0 ? (double) e->count / ((double) e->cpu_time_ns / 1e9) : NAN;
}

double event_per_kilo_instruction(const EventSum *e) {
        return e->instructions > 0 ? 1000.0 * (double) e->count_with_instructions / (double) e->instructions : NAN;
}

double burst_per_second(const BurstSum *b) {
        return b->window_ns > 0 ? b->count / ((double) b->window_ns / 1e9) : NAN;
}
