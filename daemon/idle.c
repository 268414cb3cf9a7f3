/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "idle.h"

int idle_init(IdleSynth *is, unsigned n_cpus) {
        *is = (IdleSynth) { .n_cpus = n_cpus };
        is->seen = calloc(n_cpus, sizeof(uint64_t));
        is->synth = calloc(n_cpus, sizeof(uint64_t));
        if (!is->seen || !is->synth) {
                idle_done(is);
                return -ENOMEM;
        }
        return 0;
}

void idle_done(IdleSynth *is) {
        free(is->seen);
        free(is->synth);
        *is = (IdleSynth) {};
}

uint64_t idle_synthesize(IdleSynth *is, unsigned cpu, double due, uint64_t lost, Histogram *h,
                         const HistKey *key) {
        double deficit;
        uint64_t add;

        if (cpu >= is->n_cpus)
                return 0;
        deficit = floor(due - (double) (is->seen[cpu] + lost));
        if (!(deficit > (double) is->synth[cpu]))
                return 0;
        add = (uint64_t) deficit - is->synth[cpu];
        if (!histogram_add(h, key, add))
                return 0;
        is->synth[cpu] += add;
        return add;
}
