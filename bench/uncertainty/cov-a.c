/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cov-spin.h"

void cova_spin(uint64_t iterations) {
        volatile double x = 1.0;

        for (uint64_t i = 0; i < iterations; i++)
                x = x * 1.0000001 + 1e-9;
}
