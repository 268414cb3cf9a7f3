/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* A profile as pprof reads it (profile.proto, gzip-compressed;
 * docs/profiles.md): flat, one sample per function and phase, each with a
 * single location in its object's mapping. Values: samples/count and
 * cpu time in cpu_unit, the latter the default pprof shows. */

typedef struct PprofEntry {
        const char *object;     /* the file: the mapping's filename */
        const char *build_id;   /* hex; NULL or "": not known */
        /* the function's name; NULL: unnamed, at offset in the file, for
         * pprof to name from the binary (no line) */
        const char *function;
        uint64_t offset;
        const char *phase;      /* the label "phase"; NULL or "": none */
        int64_t samples, cpu;   /* cpu: in the profile's cpu_unit */
} PprofEntry;

typedef struct PprofProfile {
        const PprofEntry *entries;
        size_t n_entries;
        int64_t time_ns, duration_ns; /* 0: not known */
        const char *cpu_unit;   /* "nanoseconds" (NULL), or coarser where their sums would not fit */
        int64_t period;         /* cpu time per sample, in cpu_unit */
        const char *const *comments; /* NULL-terminated, or NULL */
} PprofProfile;

/* The profile, gzip-compressed, into a buffer of *ret_size bytes that the
 * caller frees. -ENOMEM, -EOVERFLOW when the objects' offsets do not fit
 * in one 64-bit address space. */
int pprof_write(const PprofProfile *p, char **ret, size_t *ret_size);
