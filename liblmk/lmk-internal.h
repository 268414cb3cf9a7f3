/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What liblmk's files share; nothing here is exported. */

#include <stdbool.h>
#include <stdint.h>

#include "lmk.h"

#define _public_ __attribute__((visibility("default")))

/* Regions a process can name; the last entry is the catch-all that every
 * name beyond the table maps to (switched off, LMK_REGION_OFF_FULL). A
 * table entry is 128 bytes of .bss, untouched until used. */
#define LMK_REGIONS_MAX 1024
#define LMK_REGION_OFF_ANY (LMK_REGION_OFF_RATE | LMK_REGION_OFF_ENV | LMK_REGION_OFF_FULL)

#define LMK_MAX_RATE_DEFAULT 10000

struct lmk_settings {
        bool disabled;                  /* LMK_DISABLE: every region off at registration */
        uint64_t rate_window_ns;        /* 1024 BEGINs faster than this: too hot; 0 = no limit */
};

/* The files in layers, each calling only those above it here:
 * abi.c, the state lmkd reads: lmk_tls, lmk_abi and the region table. */
extern struct lmk_region lmk_regions[LMK_REGIONS_MAX];
/* Publishes the table's address and the TLS offset, fires lmk:init. */
void lmk_abi_publish(void);

/* regions.c, the table's names, sites and switch-offs. */
int lmk_regions_setup(void);
/* A new region is off from the start when the settings say so. */
int lmk_region_register(struct lmk_site *site, const char *name, size_t name_len, const char *where,
                        const struct lmk_settings *settings);
void lmk_region_switch_off(unsigned int id, uint32_t reason);

static inline bool lmk_region_is_off(unsigned int id) {
        return __atomic_load_n(&lmk_regions[id - 1].flags, __ATOMIC_RELAXED) & LMK_REGION_OFF_ANY;
}

/* setup.c: runs once per process (constructor or first registration):
 * reads the settings, sets up regions.c and publishes abi.c's state.
 * markers.c, the entry points, is the top. */
const struct lmk_settings *lmk_setup(void);
