/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <math.h>
#include <stdlib.h>

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

void node_type_info_free(NodeTypeInfo *t) {
        free(t->name);
        free(t->cpu_model);
        free(t->gpus);
        *t = (NodeTypeInfo) {};
}

static void event_sums_free(EventSum *v, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(v[i].name);
                free(v[i].role);
        }
        free(v);
}

void job_measured_free(JobMeasured *m) {
        for (size_t i = 0; i < m->n_counters; i++) {
                free(m->counters[i].role);
                free(m->counters[i].event);
        }
        free(m->counters);
        event_sums_free(m->events, m->n_events);
        event_sums_free(m->object_events, m->n_object_events);
        event_sums_free(m->phase_events, m->n_phase_events);
        for (size_t i = 0; i < m->n_bursts; i++) {
                free(m->bursts[i].object);
                free(m->bursts[i].phase);
                free(m->bursts[i].role);
        }
        free(m->bursts);
        node_type_info_free(&m->node_type);
        *m = (JobMeasured) {};
}
