/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* A set of CPUs by number, as the kernel lists them ("0-3,8"). */
typedef struct CpuSet {
        unsigned n;                     /* possible CPUs */
        uint64_t *bits;
} CpuSet;

int cpu_set_init(CpuSet *set, unsigned n_possible);
void cpu_set_done(CpuSet *set);
/* Replaces the set with a kernel CPU list; CPUs beyond n_possible are an error. */
int cpu_set_parse(CpuSet *set, const char *list);

static inline bool cpu_set_has(const CpuSet *set, unsigned cpu) {
        return cpu < set->n && (set->bits[cpu / 64] & (UINT64_C(1) << (cpu % 64)));
}

static inline void cpu_set_put(CpuSet *set, unsigned cpu, bool on) {
        if (cpu >= set->n)
                return;
        if (on)
                set->bits[cpu / 64] |= UINT64_C(1) << (cpu % 64);
        else
                set->bits[cpu / 64] &= ~(UINT64_C(1) << (cpu % 64));
}

unsigned cpu_set_count(const CpuSet *set);
