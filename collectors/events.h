/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>

#define EVENT_MAX 4             /* LMK_MAX_COUNTERS */
#define EVENT_ROLE_MAX 32
#define EVENT_NAME_MAX 128

/* A counter lmkd reads alongside its samples: a role ("cycles",
 * "instructions", or the event's own name for extra events) and the event,
 * named as perf names it ("task-clock"), as a PAPI preset ("PAPI_DP_OPS") or
 * as a native event libpfm4 knows ("RETIRED_INSTRUCTIONS", "perf::PAGE-FAULTS"). */
typedef struct EventSpec {
        char role[EVENT_ROLE_MAX];
        char name[EVENT_NAME_MAX];
        struct perf_event_attr attr;    /* valid after event_resolve() */
        const char *source;             /* "perf", "papi", "pfm", "raw" */
        bool resolved;                  /* attr is valid */
        char detail[256];               /* why it is unavailable, for people */
} EventSpec;

/* What an event counts, told by its name alone: core cycles (perf's cycles
 * and cpu-cycles, PAPI_TOT_CYC, libpfm4's CPU_CLK_UNHALTED, …), retired
 * instructions (instructions, PAPI_TOT_INS, INST_RETIRED, …), or something
 * else. A libpfm4 "pmu::" prefix and the privilege modifiers u, k and h do
 * not change it; other unit masks and modifiers (REF_TSC, NOP, c=1) do. */
typedef enum EventKind {
        EVENT_KIND_OTHER,
        EVENT_KIND_CYCLES,
        EVENT_KIND_INSTRUCTIONS,
} EventKind;

EventKind event_kind(const char *name);

/* Parses "ROLE=EVENT" and "EVENT" entries separated by commas, e.g.
 * "cycles=PAPI_TOT_CYC,instructions=PAPI_TOT_INS,PAPI_L1_DCM". An entry
 * without a role takes it from what the event counts (event_kind()): cycles,
 * instructions, else the event's own name, so that "PAPI_TOT_CYC,PAPI_L1_DCM"
 * never calls L1 misses instructions. An explicit role may name any event
 * (cycles=task-clock stands in for cycles where the PMU has none), but not
 * one that counts the other of cycles and instructions. On failure, -EINVAL
 * (malformed or contradictory), -EEXIST (a role twice) or -E2BIG (more than
 * EVENT_MAX), with what was expected instead written to why: a phrase that
 * reads after "expected", naming the offending entry. */
int event_list_parse(const char *list, EventSpec ret[EVENT_MAX], size_t *ret_n, char *why, size_t why_size);

/* Fills e->attr. -ENOENT: no such event anywhere (a typo). -EOPNOTSUPP: the
 * event is known but this machine cannot count it (e->detail says why). */
int event_resolve(EventSpec *e);

/* Releases PAPI and libpfm4 if event_resolve() initialised them. */
void event_resolve_done(void);
