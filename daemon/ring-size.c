/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "macro.h"
#include "ring-size.h"

/* A quiet drain's samples up to this much get a ring that holds them: at
 * 1 Hz, 30 s of 512 CPUs. The kernel maps the ring's data twice (for
 * wrap-around) and resident memory counts both, so a ring read through
 * costs lmkd twice its size: at most 8 MiB here. */
#define QUIET_MAX_BYTES (3.0 * 1024 * 1024)
#define RING_MIN_BYTES ((size_t) 64 * 1024)
#define RING_MAX_BYTES ((size_t) 256 * 1024 * 1024)

static size_t power_of_two_at_least(double bytes) {
        size_t sz = RING_MIN_BYTES;

        while (sz < bytes && sz < RING_MAX_BYTES)
                sz <<= 1;
        return sz;
}

RingSize ring_size(const SamplerConfig *cfg, unsigned n_possible_cpus) {
        double per_s = cfg->frequency * n_possible_cpus * (sizeof(struct lmk_sample) + 8) *
                       (1.0 + cfg->burst * LMK_BURST_SAMPLES);
        double quiet = per_s * (MAX(cfg->quiet_poll_ms, cfg->poll_ms) / 1000.0);
        size_t sz;

        /* At low rates the ring holds a quiet drain's samples
         * (--quiet-poll-ms) in three quarters, and wakes lmkd only when
         * they are there: else the fill, not the timer, would set how
         * often a node with many CPUs drains at 1 Hz (a 64 KiB ring's
         * quarter every 0.6 s on 128 CPUs). The last quarter, a third of
         * a quiet drain (10 s by default), is lmkd's time to drain it. */
        if (cfg->quiet_poll_ms > cfg->poll_ms && quiet <= QUIET_MAX_BYTES) {
                sz = power_of_two_at_least(quiet * 4 / 3);
                return (RingSize) { sz, sz / 4 * 3 };
        }
        /* Else one drain interval (--poll-ms) of samples from every CPU,
         * and lmkd woken when a quarter is full: only a lmkd kept from
         * running for most of an interval loses samples (counted). At
         * higher rates the samples cost more than the wakeups, and the
         * ring stays small. */
        sz = power_of_two_at_least(per_s * (cfg->poll_ms / 1000.0));
        return (RingSize) { sz, sz / 4 };
}
