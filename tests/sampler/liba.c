/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "spin.h"

uint64_t liba_spin(uint64_t ns) {
        SPIN_BODY(ns);
}
