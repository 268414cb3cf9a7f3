/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/findings.h"

/* The site's list of findings (GET /api/v1/findings) judges every job of
 * its range when asked; a job's findings are kept here from one request to
 * the next, while the job stays at the same revision (storage.h: every
 * batch that changes anything of the job makes a new one) and the rules
 * stay the same (server_set_findings clears the cache), and for at most
 * FINDINGS_CACHE_TTL_S: what a job's revision does not see, the families
 * installed on its nodes, counts again after that. At most
 * FINDINGS_CACHE_MAX_JOBS jobs; past that the cache starts over. */
#define FINDINGS_CACHE_TTL_S 300
#define FINDINGS_CACHE_MAX_JOBS 100000

/* A finding of the site's list: the job it is about travels with it. */
typedef struct SiteFinding {
        Finding f;
        char *job, *cluster, *user, *account;
        double last_seen;
} SiteFinding;

typedef struct SiteFindings {
        SiteFinding *v;
        size_t n, alloc;
} SiteFindings;

/* Appends a copy of f about job to l. -ENOMEM. */
int site_findings_add(SiteFindings *l, const Finding *f, const StoredJob *job);
/* Appends a copy of x to l. -ENOMEM. */
int site_findings_add_copy(SiteFindings *l, const SiteFinding *x);
void site_findings_done(SiteFindings *l);

typedef struct FindingsCache FindingsCache;

FindingsCache *findings_cache_new(void);
void findings_cache_free(FindingsCache *c);
void findings_cache_clear(FindingsCache *c);

/* When the findings of job row_id at revision are known (and younger than
 * the TTL at now): copies those keep() accepts to out and returns 1 (*ret_kept:
 * how many); 0 when not known; -ENOMEM. */
int findings_cache_get(FindingsCache *c, int64_t row_id, int64_t revision, int64_t now,
                       bool (*keep)(const Finding *f, void *userdata), void *userdata, SiteFindings *out,
                       size_t *ret_kept);
/* Keeps a copy of the findings of job row_id at revision, all of them. */
int findings_cache_put(FindingsCache *c, int64_t row_id, int64_t revision, int64_t now, const SiteFindings *l);
