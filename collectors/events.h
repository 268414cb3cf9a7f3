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

/* Parses "cycles,instructions,PAPI_DP_OPS" or
 * "cycles=task-clock,instructions=page-faults": without explicit roles the
 * first two entries take the roles cycles and instructions. -EINVAL with
 * *ret_bad set to the offending entry (static storage) on malformed input. */
int event_list_parse(const char *list, EventSpec ret[EVENT_MAX], size_t *ret_n, const char **ret_bad);

/* Fills e->attr. -ENOENT: no such event anywhere (a typo). -EOPNOTSUPP: the
 * event is known but this machine cannot count it (e->detail says why). */
int event_resolve(EventSpec *e);

/* Releases PAPI and libpfm4 if event_resolve() initialised them. */
void event_resolve_done(void);
