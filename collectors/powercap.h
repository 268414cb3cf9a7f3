/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The node's energy from RAPL through the kernel's powercap interface
 * (/sys/class/powercap): one zone per CPU package ("intel-rapl:N", named
 * package-N; AMD's are named so too) and the DRAM zone below it
 * ("intel-rapl:N:M" named dram). Core, uncore and psys zones are left out:
 * the first two are parts of their package, psys holds the packages.
 * intel-rapl-mmio zones repeat the packages through another interface.
 *
 * A zone's energy_uj counts microjoules up to max_energy_range_uj and
 * starts again from 0; read more often than it wraps (minutes at full
 * power), the difference of two reads, taken across the wrap, is the
 * energy used between them. */

#define POWERCAP_MAX_ZONES 64
#define POWERCAP_ZONE_NAME_MAX 64

typedef struct PowercapZone {
        char name[POWERCAP_ZONE_NAME_MAX];      /* "package-0", "package-0/dram" */
        const char *kind;                       /* "package", "dram" */
        int fd;                                 /* its energy_uj, read again with pread() */
        uint64_t max_uj;                        /* max_energy_range_uj */
        uint64_t last_uj;                       /* at the last read */
        double joules;                          /* since powercap_reset() */
        double joules_total;                    /* since powercap_open() */
        uint64_t wraps, bad_reads;
} PowercapZone;

typedef struct Powercap {
        PowercapZone zones[POWERCAP_MAX_ZONES];
        size_t n;
} Powercap;

/* Finds the zones under root (NULL: /sys/class/powercap) and reads each
 * once as the baseline. -ENOENT: no zone that can be read there (no RAPL,
 * or a virtual machine); -EACCES: zones, but energy_uj is not readable
 * (root only since Linux 5.10); -ENOMEM. */
int powercap_open(const char *root, Powercap **ret);
Powercap *powercap_free(Powercap *p);

/* Reads every zone and adds what each used since the last read to its
 * joules; returns that energy, all zones together. A zone that cannot be
 * read this time, or reads beyond its range, adds nothing (counted in
 * bad_reads) and is read again next time. */
double powercap_read(Powercap *p);

/* Starts the zones' joules again from 0 (a new interval). */
void powercap_reset(Powercap *p);

/* The joules since powercap_reset(), all zones together. */
double powercap_joules(const Powercap *p);

#include "macro.h"
DEFINE_TRIVIAL_CLEANUP_FUNC(Powercap *, powercap_free);
