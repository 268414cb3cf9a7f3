/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>
#include <time.h>

/* Burns CPU for at least ns nanoseconds of this thread's CPU time and
 * returns how much it burnt. The thread CPU clock is read only every ~0.1 ms
 * of work, so the system calls it costs stay below 1% of the time. */
static inline uint64_t thread_cpu_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

#define SPIN_BODY(ns)                                                   \
        do {                                                            \
                uint64_t _t0 = thread_cpu_ns(), _t;                     \
                volatile double _x = 1.0;                               \
                do {                                                    \
                        for (int _i = 0; _i < 50000; _i++)              \
                                _x = _x * 1.0000001 + 1e-9;             \
                        _t = thread_cpu_ns() - _t0;                     \
                } while (_t < (ns));                                    \
                return _t;                                              \
        } while (0)

uint64_t liba_spin(uint64_t ns);
uint64_t libb_spin(uint64_t ns);
