/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "histogram.h"
#include "lmk-bpf.h"
#include "object.h"
#include "process.h"

/* The functions of a closed interval (docs/function-names.md, "In lmkd"):
 * the file offsets its samples ran at (histogram_offsets()) named from
 * each file's own symbols (collectors/funcname.h), once per file, when
 * the interval closes; per (job, step, object, phase) of the rows the top
 * functions by samples and one entry for the rest. The file is the one
 * lmkd recorded when it sampled it (device, inode, build-id): opened by
 * its path, else through /proc/<pid>/map_files of a live process that
 * maps it, and never named from another build. */

/* A batch carries at most this many: the store's limit is 100,000, and
 * the top functions of the hottest (job, step, object, phase)s say what
 * a job spends its time on. */
#define FUNCTIONS_MAX 50000

typedef enum FunctionKind {
        FUNCTION_NAMED,         /* name */
        FUNCTION_UNNAMED,       /* offset and the object's build-id: a function's start (entry) or a 4 KiB page */
        FUNCTION_OTHER,         /* "(other functions)": past the top, or nameable by nobody */
} FunctionKind;

typedef struct FunctionRow {
        /* the (job, step, object, phase) of rows[]: the histogram's strings
         * and object, valid while it is not reset */
        const char *job;
        const char *step;
        const char *phase;
        const Object *obj;      /* path and build-id: with other builds of one path, the first */
        bool build_id;          /* the entry carries obj's build-id (an "other" of several builds does not) */
        FunctionKind kind;
        const char *name;       /* FUNCTION_NAMED */
        uint64_t offset;        /* FUNCTION_UNNAMED */
        bool entry;             /* offset is the start of the function (the unwind table's), not a page */
        uint64_t samples;
        uint64_t window_ns;
        uint64_t counts[LMK_MAX_COUNTERS];
        uint32_t counted;       /* bit i: some window had counter i */
} FunctionRow;

typedef struct FunctionStats {
        uint64_t files;                 /* files whose symbols were read */
        uint64_t files_unopened;        /* not to be had: gone, another file at the path, no live mapping */
        uint64_t files_other_build;     /* another build at the path than the one sampled */
        uint64_t files_unread;          /* changed while read, malformed, too big */
        uint64_t samples_named;
        uint64_t samples_unnamed;       /* with a build-id, for the store */
        uint64_t samples_entry;         /* of those, at a function's start (entry), not a page */
        uint64_t samples_other;         /* past the top N, or nameable by nobody */
        uint64_t samples_dropped;       /* beyond FUNCTIONS_MAX, or of no row */
        uint64_t ns;                    /* time spent naming */
        uint64_t cpu_ns;                /* of it, lmkd's CPU time (naming runs on its main thread) */
} FunctionStats;

typedef struct Functions {
        FunctionRow *v;         /* sorted by (job, step, object, phase), then by samples */
        size_t n;
        char **names;           /* the names' storage: one block per file */
        size_t n_names;
        FunctionStats stats;
} Functions;

/* Names the offsets of h and keeps, per (job, step, object, phase) of its
 * rows, the top functions by samples and an "other" entry. top 0: none.
 * pt opens the files (process_table_open_object()). ret is valid until h
 * is reset; -ENOMEM leaves it empty. */
int functions_name(const Histogram *h, ProcessTable *pt, unsigned top, Functions *ret);
void functions_done(Functions *f);
