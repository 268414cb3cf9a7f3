/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Three cut points in [0, size], in order, from the input's first bytes:
 * a streaming parser fed the input in these pieces must end as it does
 * fed the whole (fuzz-dpkg-status, fuzz-rpm-query). size > 0. */
static inline void fuzz_cut_points(const uint8_t *data, size_t size, size_t cuts[3]) {
        cuts[0] = data[0] * size / 256;
        cuts[1] = cuts[0] + (size - cuts[0]) * (size > 1 ? data[1] : 0) / 256;
        cuts[2] = cuts[1] + (size > cuts[1] ? 1 : 0);
}
