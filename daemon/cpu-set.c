/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpu-list.h"
#include "cpu-set.h"

static size_t words(unsigned n) {
        return ((size_t) n + 63) / 64;
}

int cpu_set_init(CpuSet *set, unsigned n_possible) {
        *set = (CpuSet) { .n = n_possible };
        set->bits = calloc(words(n_possible) ?: 1, sizeof(uint64_t));
        return set->bits ? 0 : -ENOMEM;
}

void cpu_set_done(CpuSet *set) {
        free(set->bits);
        *set = (CpuSet) {};
}

int cpu_set_parse(CpuSet *set, const char *list) {
        return cpu_list_parse(list, strlen(list), set->bits, set->n);
}

unsigned cpu_set_count(const CpuSet *set) {
        unsigned k = 0;

        for (size_t i = 0; i < words(set->n); i++)
                k += (unsigned) __builtin_popcountll(set->bits[i]);
        return k;
}
