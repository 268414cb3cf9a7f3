/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/findings-cache.h"
#include "hashmap.h"
#include "macro.h"

static char *dup_or_null(const char *s, int *r) {
        char *p;

        if (!s)
                return NULL;
        p = strdup(s);
        if (!p)
                *r = -ENOMEM;
        return p;
}

static void site_finding_free(SiteFinding *x) {
        free(x->f.node);
        free(x->f.message);
        free(x->job);
        free(x->cluster);
        free(x->user);
        free(x->account);
}

static int site_findings_grow(SiteFindings *l, SiteFinding **ret) {
        if (l->n == l->alloc) {
                size_t na = l->alloc ? l->alloc * 2 : 16;
                SiteFinding *nv = reallocarray(l->v, na, sizeof(*nv));

                if (!nv)
                        return -ENOMEM;
                l->v = nv;
                l->alloc = na;
        }
        *ret = &l->v[l->n];
        return 0;
}

/* A copy of f (its advice points into the rules, which outlive it) about
 * job, or of what x says about its job. */
static int site_finding_set(SiteFinding *x, const Finding *f, const char *job, const char *cluster,
                            const char *user, const char *account, double last_seen) {
        int r = 0;

        *x = (SiteFinding) { .f = *f, .last_seen = last_seen };
        x->f.node = dup_or_null(f->node, &r);
        x->f.message = dup_or_null(f->message, &r);
        x->job = dup_or_null(job, &r);
        x->cluster = dup_or_null(cluster, &r);
        x->user = dup_or_null(user, &r);
        x->account = dup_or_null(account, &r);
        if (r < 0)
                site_finding_free(x);
        return r;
}

int site_findings_add(SiteFindings *l, const Finding *f, const StoredJob *job) {
        SiteFinding *x;
        int r = site_findings_grow(l, &x);

        if (r >= 0)
                r = site_finding_set(x, f, job->job, job->cluster, job->user, job->account, job->last_seen);
        if (r >= 0)
                l->n++;
        return r;
}

int site_findings_add_copy(SiteFindings *l, const SiteFinding *y) {
        SiteFinding *x;
        int r = site_findings_grow(l, &x);

        if (r >= 0)
                r = site_finding_set(x, &y->f, y->job, y->cluster, y->user, y->account, y->last_seen);
        if (r >= 0)
                l->n++;
        return r;
}

void site_findings_done(SiteFindings *l) {
        for (size_t i = 0; i < l->n; i++)
                site_finding_free(&l->v[i]);
        free(l->v);
        *l = (SiteFindings) {};
}

typedef struct Entry {
        int64_t revision, evaluated_at;
        SiteFindings findings;
} Entry;

struct FindingsCache {
        pthread_mutex_t lock;
        Hashmap *jobs; /* row id → Entry */
};

FindingsCache *findings_cache_new(void) {
        FindingsCache *c = calloc(1, sizeof(*c));

        if (!c)
                return NULL;
        c->jobs = hashmap_new(&uint64_hash_ops);
        if (!c->jobs) {
                free(c);
                return NULL;
        }
        pthread_mutex_init(&c->lock, NULL);
        return c;
}

static void entries_free(Hashmap *h) {
        Entry *e;
        size_t i;

        HASHMAP_FOREACH(e, h, i) {
                site_findings_done(&e->findings);
                free(e);
        }
        hashmap_clear(h);
}

void findings_cache_free(FindingsCache *c) {
        if (!c)
                return;
        entries_free(c->jobs);
        hashmap_free(c->jobs);
        pthread_mutex_destroy(&c->lock);
        free(c);
}

void findings_cache_clear(FindingsCache *c) {
        pthread_mutex_lock(&c->lock);
        entries_free(c->jobs);
        pthread_mutex_unlock(&c->lock);
}

int findings_cache_get(FindingsCache *c, int64_t row_id, int64_t revision, int64_t now,
                       bool (*keep)(const Finding *f, void *userdata), void *userdata, SiteFindings *out,
                       size_t *ret_kept) {
        size_t kept = 0;
        const Entry *e;
        int r = 1;

        pthread_mutex_lock(&c->lock);
        e = hashmap_get(c->jobs, INT_TO_KEY(row_id));
        if (!e || e->revision != revision || now - e->evaluated_at >= FINDINGS_CACHE_TTL_S || now < e->evaluated_at)
                r = 0;
        for (size_t i = 0; r > 0 && i < e->findings.n; i++)
                if (keep(&e->findings.v[i].f, userdata)) {
                        r = site_findings_add_copy(out, &e->findings.v[i]);
                        if (r >= 0) {
                                kept++;
                                r = 1;
                        }
                }
        pthread_mutex_unlock(&c->lock);
        *ret_kept = kept;
        return r;
}

int findings_cache_put(FindingsCache *c, int64_t row_id, int64_t revision, int64_t now, const SiteFindings *l) {
        Entry *e = calloc(1, sizeof(*e)), *old = NULL;
        int r = 0;

        if (!e)
                return -ENOMEM;
        *e = (Entry) { .revision = revision, .evaluated_at = now };
        for (size_t i = 0; r >= 0 && i < l->n; i++)
                r = site_findings_add_copy(&e->findings, &l->v[i]);
        if (r < 0) {
                site_findings_done(&e->findings);
                free(e);
                return r;
        }
        pthread_mutex_lock(&c->lock);
        if (hashmap_size(c->jobs) >= FINDINGS_CACHE_MAX_JOBS && !hashmap_get(c->jobs, INT_TO_KEY(row_id)))
                entries_free(c->jobs);
        r = hashmap_replace(c->jobs, INT_TO_KEY(row_id), e, (void **) &old);
        pthread_mutex_unlock(&c->lock);
        if (r < 0) {
                site_findings_done(&e->findings);
                free(e);
                return r;
        }
        if (old) {
                site_findings_done(&old->findings);
                free(old);
        }
        return 0;
}
