/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

#include "sampler.h"

/* The sample ring's size and the fill at which the sampling program wakes
 * lmkd (sampler.c), for a configuration on n_possible_cpus CPUs. */
typedef struct RingSize {
        size_t bytes;           /* a power of two, at least 64 KiB */
        size_t wakeup_bytes;
} RingSize;

RingSize ring_size(const SamplerConfig *cfg, unsigned n_possible_cpus);
