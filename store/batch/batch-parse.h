/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "batch-format.h"
#include "macro.h"

/* A batch as lmkd pushes it (docs/batch-format.md), parsed and validated but
 * not yet stored. Parsing needs no database, so the fuzz target and the unit
 * tests exercise it alone. The Batch, its arrays and its strings are in one
 * arena (arena.h) with the parsed text: they live until batch_free(). */

#define BATCH_MAX_ROWS 100000u
#define BATCH_MAX_JOBS 10000u
#define BATCH_MAX_MARKERS 10000u
/* lmkd sends at most 4,096 (daemon/histogram.h); room for bigger nodes */
#define BATCH_MAX_RANKS 65536u
#define BATCH_MAX_RANK 2147483646 /* MPI ranks are C ints */
#define BATCH_MAX_NOTES 32u
#define BATCH_MAX_NOTES_BYTES 1024u
#define BATCH_JSON_DEPTH 16
#define BATCH_MAX_INSTALLED 64u    /* node.installed entries */
#define BATCH_MAX_FAMILY_NAME 32u
/* Counter values above 2^53 would lose precision in JSON clients and cannot
 * occur in one interval (2^53 cycles is 35 days of one CPU at 3 GHz). */
#define BATCH_MAX_COUNTER (UINT64_C(1) << 53)
#define BATCH_NULL INT64_C(-1) /* a counter that lmkd did not have */
#define BATCH_DIGEST_SIZE 32u   /* SHA-256 */
/* The oldest batch format version this store reads: version 1 has no
 * functions[] (LMK_BATCH_VERSION, common/batch-format.h, the newest). */
#define BATCH_VERSION_MIN 1

/* Numbers a node can produce (docs/batch-format.md, "Limits"). Sampling
 * below once in 1000 s tells nothing; above 100 kHz perf itself throttles. */
#define BATCH_MIN_FREQUENCY_HZ 0.001
#define BATCH_MAX_FREQUENCY_HZ 100000.0
/* lmkd pushes at least once a day (push-interval ≤ 86400 s); twice that
 * leaves room for a suspended node. */
#define BATCH_MAX_INTERVAL_S 172800.0
/* No CPU runs above 10 GHz or retires more than 10 instructions a cycle. */
#define BATCH_MAX_CYCLES_PER_CPU_SECOND 1e10
#define BATCH_MAX_IPC 10.0

/* Named counter events (rows[].events, jobs[].events, rows[].burst):
 * lmkd reads at most 4 counters; a batch may name at most this many
 * roles, cycles and instructions included. No event counts more than 64
 * a cycle (two 512-bit FMA units retire 32 double-precision FLOPs). */
#define BATCH_MAX_ROLES 8u
#define BATCH_MAX_ROLE_NAME 31u
#define BATCH_MAX_EVENTS_PER_CYCLE 64.0
/* Burst samples: lmkd takes 3 after a sample that starts a burst. */
#define BATCH_MAX_BURSTS_PER_SAMPLE 3
/* Energy: no node draws more than 100 kW through its CPUs and memory. */
#define BATCH_MAX_NODE_WATTS 100000.0
#define BATCH_MAX_ZONES 64u
/* node.type */
#define BATCH_MAX_GPU_MODELS 16u
#define BATCH_MAX_NODE_TEXT 512u

/* Per-row maxima of one batch, from its node.cpus, sampling.frequency_hz and
 * interval: 2 × CPUs × rate × seconds (at most BATCH_MAX_COUNTER). events
 * bounds a named event's count, burst_samples a row's burst samples,
 * joules the node's energy. */
typedef struct BatchLimits {
        int64_t samples, cpu_time_ns, cycles, instructions, events, burst_samples;
        double joules;
} BatchLimits;


typedef struct BatchNote {
        const char *key;
        const char *value;
} BatchNote;

/* Counts of named events by role: count[i] belongs to Batch.roles[i];
 * BATCH_NULL where the event was not counted. */
typedef struct BatchEvents {
        int64_t count[BATCH_MAX_ROLES];
} BatchEvents;

/* A row's burst samples (lmkd --burst): short windows right after a
 * sample, for rates at that code location. */
typedef struct BatchBurst {
        int64_t samples;                        /* burst windows */
        int64_t window_ns;                      /* their length together */
        double per_second[BATCH_MAX_ROLES];     /* events a second, by role; NAN where not counted */
        double counts[BATCH_MAX_ROLES];         /* per_second × window_ns / 1e9, by role; NAN likewise */
} BatchBurst;

typedef struct BatchJob {
        const char *job;
        const char *cluster; /* NULL: the node's cluster */
        const char *user, *account, *partition, *name;
        int64_t nodes, tasks;          /* BATCH_NULL when absent */
        int64_t cpus_allocated;        /* the job's CPUs on this node; BATCH_NULL when absent */
        double first_seen, last_seen;  /* NAN when absent */
        bool ended;
        BatchNote *notes;
        size_t n_notes;
        /* Exact figures of the job on this node in the interval (lmkd's
         * totals: CPU time from the scheduler, counters with
         * --exact-counters); BATCH_NULL / NULL when not had. */
        int64_t cpu_time_ns, cycles, instructions;
        BatchEvents *events;
        /* Its energy on this node in the interval (docs/batch-format.md,
         * "Energy"): all of it, and the part while it ran alone there;
         * NAN when the node has no energy counters. */
        double energy_joules, energy_alone_joules;
        /* sbatch --lmk=off: the job has no rows, functions or ranks, only
         * these samples on the node in the interval (0 when absent) */
        bool opted_out;
        int64_t samples;
        bool counters_released;         /* sbatch --lmk=nocounters */
} BatchJob;

typedef struct BatchRow {
        const char *job; /* NULL: system work */
        const char *step, *user, *comm, *object, *build_id, *phase; /* never NULL; "" when absent */
        CodeKind kind;
        int64_t samples;
        int64_t cpu_time_ns, cycles, instructions; /* BATCH_NULL when null */
        int64_t multiplexed_samples;    /* of samples, whose window had a multiplexed counter; 0 when absent */
        BatchEvents *events;            /* named events beyond cycles and instructions; NULL: none */
        BatchBurst *burst;              /* NULL: no burst samples */
} BatchRow;

/* A counter lmkd read (counters[]): the role it fills and the event. */
typedef struct BatchCounter {
        const char *role;       /* one of Batch.roles */
        const char *event;      /* "PAPI_TOT_CYC", "task-clock", ... */
        const char *source;     /* "perf", "papi", "pfm", "raw"; NULL when absent */
        bool available;
        const char *error;      /* why not available; NULL when absent */
} BatchCounter;

/* The node's type (node.type): strings NULL and numbers BATCH_NULL when
 * not known. */
typedef struct BatchGpu {
        const char *vendor;             /* "NVIDIA" */
        const char *vendor_id;          /* 4 lower-case hex digits */
        const char *device_id;          /* likewise; NULL: not known */
        const char *name;               /* the model; NULL: not known */
        int64_t count;
} BatchGpu;

typedef struct BatchNodeType {
        const char *cpu_model;
        int64_t sockets, cores, threads, memory_bytes;
        BatchGpu *gpus;
        size_t n_gpus;
        int64_t gpus_other;             /* GPUs of models beyond those listed */
        const char *kernel;
} BatchNodeType;

/* The node's energy in the interval (energy): per zone, and together. */
typedef struct BatchZone {
        const char *zone;               /* "package-0", "package-0/dram" */
        const char *kind;               /* "package", "dram" */
        double joules;
} BatchZone;

typedef struct BatchEnergy {
        const char *source;             /* "powercap" */
        double joules;                  /* all zones */
        double unattributed_joules;     /* while no job ran on the node */
        BatchZone *zones;
        size_t n_zones;
} BatchEnergy;

typedef struct BatchMarker {
        const char *job; /* NULL: outside jobs */
        const char *comm, *phase, *state;
} BatchMarker;

/* A library family installed on the node (node.installed[]). */
typedef struct BatchFamily {
        const char *purpose, *family;
} BatchFamily;
/* Per-rank figures for POP metrics (docs/pop.md). */
typedef struct BatchRank {
        const char *job;
        const char *step, *phase; /* never NULL; "" when absent */
        int64_t rank;
        int64_t samples, comm_samples;
        double first, last;       /* Unix time of the first and last sample */
} BatchRank;

/* A function of one (job, step, object, phase) in the interval
 * (functions[], batch version 2): named by lmkd, unnamed (its file
 * offset, for the store to name by build-id), or the rest of that key's
 * samples, "(other functions)". Exactly one of function, offset and
 * other says which. Its build_id is that of some of its key's rows, or ""
 * (an "other" entry over several builds of the object). */
#define BATCH_MAX_FUNCTIONS 100000u
#define BATCH_MAX_FUNCTION_NAME 1024u
/* lmkd rounds an unnamed offset down to a page, unless the object's unwind
 * table gave it the function's start (entry) */
#define BATCH_FUNCTION_PAGE 4096

typedef struct BatchFunction {
        const char *job;                /* NULL: system work */
        const char *step, *object, *build_id, *phase; /* never NULL; "" when absent */
        const char *function;           /* its name; NULL: unnamed or other */
        int64_t offset;                 /* unnamed: the file offset; BATCH_NULL otherwise */
        bool entry;                     /* offset is the function's first byte, else a 4 KiB page's */
        bool other;                     /* "(other functions)" */
        int64_t samples;
        int64_t cycles, instructions;   /* BATCH_NULL when null */
        BatchEvents *events;            /* NULL: none */
        /* The first rows[] entry of its (job, step, object, phase) and
         * build_id; of its (job, step, object, phase) alone when it has
         * no build_id and they have (an "other" entry over several
         * builds), and the kind of that row, exe or lib. */
        size_t row;
        CodeKind kind;
} BatchFunction;

/* The node's software inventory (docs/inventory.md), in the batch after
 * lmkd saw it change. */
#define BATCH_MAX_PACKAGES 100000u
#define BATCH_MAX_PACKAGE_FILES 100000u
#define BATCH_MAX_INVENTORY_FILES 1000000u
#define BATCH_MAX_PATH 4096u

typedef struct BatchPackage {
        const char *manager;            /* debian, spack, easybuild, opt, rpm, module */
        const char *name, *version;     /* version "" when not known */
        const char *arch, *hash, *prefix; /* NULL when absent */
        int64_t size;                   /* bytes on disk */
        const char **files;             /* real paths of its executables and libraries */
        size_t n_files;
} BatchPackage;

typedef struct BatchInventory {
        const char *digest;             /* 64 hex digits */
        BatchPackage *packages;
        size_t n_packages, n_files;
} BatchInventory;

typedef struct Batch {
        int64_t version;                /* BATCH_VERSION_MIN … LMK_BATCH_VERSION */
        const char *node, *boot_id;
        const char *spool;              /* LMK_BATCH_SPOOL_ID_LEN lower-case hex digits; NULL: not sent (an older lmkd) */
        int64_t seq;
        /* SHA-256 of the text parsed: what tells a retry of a batch (the
         * same text) from other content under the same key */
        uint8_t digest[BATCH_DIGEST_SIZE];
        const char *hostname, *cluster; /* NULL when absent */
        int64_t cpus;
        double start, end;
        const char *event;
        double frequency_hz;
        int64_t samples_lost;
        BatchFamily *installed;
        size_t n_installed;
        bool has_installed; /* node.installed was there (maybe empty) */

        BatchJob *jobs;
        size_t n_jobs;
        BatchRow *rows;
        size_t n_rows;
        BatchMarker *markers;
        size_t n_markers;
        BatchRank *ranks;
        size_t n_ranks;
        BatchFunction *functions;       /* version 2 */
        size_t n_functions;
        BatchInventory *inventory;      /* NULL: none in this batch */
        /* The roles of named events: from counters[], and those rows[],
         * jobs[] and bursts name beyond them. */
        const char *roles[BATCH_MAX_ROLES];
        size_t n_roles;
        BatchCounter *counters;
        size_t n_counters;
        BatchNodeType *node_type;       /* NULL: not sent */
        BatchEnergy *energy;            /* NULL: the node has no energy counters (or lmkd is older) */

        BatchLimits limits;
        /* Where rows[].events, rows[].burst and jobs[].events point: one
         * array each, made when the first of them comes. */
        BatchEvents *row_events, *job_events, *function_events;
        BatchBurst *row_bursts;
        /* Sums over all rows; counters not reported count as 0. Each fits
         * an int64, so every part of them the store adds up does too. */
        int64_t total_samples, total_cpu_time_ns, total_cycles, total_instructions;
        int64_t total_events[BATCH_MAX_ROLES];  /* over rows[].events */
        double total_cpu_seconds; /* finite */
        /* The same over functions[]: their samples are parts of the rows'
         * (and so fit), their counters are not. */
        int64_t total_function_cycles, total_function_instructions;
        int64_t total_function_events[BATCH_MAX_ROLES];
        void *memory; /* what everything above points into; batch_free() frees it */
} Batch;

/* Why a batch was rejected: the first offending field ("rows[17].samples")
 * and what is wrong with it, for the 400 answer. */
typedef struct BatchError {
        char field[96];
        char message[160];
} BatchError;

/* Parses and validates a JSON batch of size bytes (need not be NUL-terminated).
 * Returns 0 and a Batch to free with batch_free(), or:
 *   -EBADMSG         not JSON (or nested deeper than BATCH_JSON_DEPTH)
 *   -EINVAL          JSON, but not a valid batch
 *   -EPROTONOSUPPORT a format or version this store does not know
 *   -E2BIG           more rows, jobs, markers, ranks or functions than allowed
 *   -ENOMEM
 * with err filled in for every error but -ENOMEM. The Batch's digest is the
 * SHA-256 of the size bytes at data. */
int batch_parse(const char *data, size_t size, Batch **ret, BatchError *err);
/* The SHA-256 of size bytes at data: a Batch's digest. */
void batch_digest(const char *data, size_t size, uint8_t ret[static BATCH_DIGEST_SIZE]);

/* The per-row maxima for b's node.cpus, frequency_hz and interval. */
void batch_limits(const Batch *b, BatchLimits *ret);

Batch *batch_free(Batch *b);

/* The index of role in b->roles, or -1. */
int batch_role_index(const Batch *b, const char *role);

/* The package managers an inventory may name (docs/inventory.md), and
 * the same list as text for messages. */
bool batch_package_manager_is_known(const char *manager);
#define BATCH_PACKAGE_MANAGERS "debian, spack, easybuild, opt, rpm, module"

DEFINE_TRIVIAL_CLEANUP_FUNC(Batch *, batch_free);
