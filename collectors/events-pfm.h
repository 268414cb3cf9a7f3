/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* libpfm4 ships its own copy of the kernel's perf_event.h, which clashes with
 * <linux/perf_event.h>: its use is kept behind this plain interface. */
typedef struct PfmEncoding {
        uint32_t type;
        uint64_t config, config1, config2;
} PfmEncoding;

/* -ENOENT: libpfm4 knows no such event (or lmkd has no libpfm4);
 * -EOPNOTSUPP: known, not encodable here (detail says why). */
int pfm_encode(const char *name, PfmEncoding *ret, char *detail, size_t detail_size);
void pfm_done(void);
