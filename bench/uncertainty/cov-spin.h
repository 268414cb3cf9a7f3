/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>

/* Pure user-space work, no system calls: the workload times each call from
 * outside, so all of a call's CPU time is the library's. */
void cova_spin(uint64_t iterations);
void covb_spin(uint64_t iterations);
