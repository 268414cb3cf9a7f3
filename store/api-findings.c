/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Findings over HTTP: a job's in its summary (GET /api/v1/jobs/{id}) and the
 * site's, ranked by core-hours at stake (GET /api/v1/findings). The rules
 * run when asked (store/findings.c), over the rollups a job summary reads,
 * so a site's new thresholds apply to old jobs as soon as it reloads. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "findings.h"
#include "json-out.h"
#include "server.h"
#include "util.h"

#define FINDINGS_DEFAULT_LIMIT 100
#define FINDINGS_MAX_LIMIT 1000
/* Jobs looked at per request, most recently seen first; a wider range says
 * "truncated" and names how far it got. */
#define FINDINGS_MAX_JOBS 5000

static int finding_json(const Finding *f, json_object **ret) {
        json_object *e = json_object_new_object();
        int r;

        if (!e)
                return -ENOMEM;
        if ((r = json_add(e, "rule", json_object_new_string(finding_rule_to_string(f->rule)))) < 0 ||
            (r = json_add(e, "severity", json_object_new_string(severity_to_string(f->severity)))) < 0 ||
            (r = json_add(e, "core_hours", json_number(f->core_hours, 3))) < 0 ||
            (r = json_add(e, "node", json_string_or_null(f->node))) < 0 ||
            (r = json_add(e, "message", json_object_new_string(f->message))) < 0 ||
            (r = json_add(e, "advice", json_object_new_string(f->advice))) < 0) {
                json_object_put(e);
                return r;
        }
        *ret = e;
        return 0;
}

static int array_append(json_object *a, json_object *v) {
        if (json_object_array_add(a, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

/* The caller holds findings_lock for reading: SIGHUP may swap the rules,
 * and a finding's advice points into them. */
static int evaluate(Server *s, FamilyMemo *memo, const JobSummary *js, FindingList *ret) {
        return findings_evaluate(s->findings, s->families, memo, js, ret);
}

static int job_findings(Server *s, const JobSummary *js, json_object *o) {
        _cleanup_(finding_list_done) FindingList l = {};
        json_object *a;
        int r;

        r = evaluate(s, NULL, js, &l);
        if (r < 0)
                return r;
        a = json_object_new_array();
        r = json_add(o, "findings", a);
        for (size_t i = 0; r >= 0 && i < l.n; i++) {
                json_object *e;

                r = finding_json(&l.items[i], &e);
                if (r >= 0)
                        r = array_append(a, e);
        }
        return r;
}

int api_job_findings(Server *s, const JobSummary *js, json_object *o) {
        int r;

        pthread_rwlock_rdlock(&s->findings_lock);
        r = job_findings(s, js, o);
        pthread_rwlock_unlock(&s->findings_lock);
        return r;
}

/* A finding of the site's list: the job it is about travels with it. */
typedef struct SiteFinding {
        Finding f;
        char *job, *cluster, *user, *account;
        double last_seen;
} SiteFinding;

static void site_findings_free(SiteFinding *v, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(v[i].f.node);
                free(v[i].f.message);
                free(v[i].job);
                free(v[i].cluster);
                free(v[i].user);
                free(v[i].account);
        }
        free(v);
}

static int by_stake(const void *a, const void *b) {
        const SiteFinding *x = a, *y = b;

        if (x->f.core_hours != y->f.core_hours)
                return x->f.core_hours < y->f.core_hours ? 1 : -1;
        if (x->f.severity != y->f.severity)
                return x->f.severity < y->f.severity ? 1 : -1;
        return x->last_seen < y->last_seen ? 1 : x->last_seen > y->last_seen ? -1 : 0;
}

static char *dup_or_null(const char *s, int *r) {
        char *p;

        if (!s)
                return NULL;
        p = strdup(s);
        if (!p)
                *r = -ENOMEM;
        return p;
}

/* Moves the findings of one job that pass the filter into *v. */
static int collect(const FindingList *l, const JobSummary *js, int rule, int min_severity,
                   SiteFinding **v, size_t *n, size_t *alloc) {
        int r = 0;

        for (size_t i = 0; i < l->n; i++) {
                const Finding *f = &l->items[i];
                SiteFinding *x;

                if ((rule >= 0 && (int) f->rule != rule) || (int) f->severity < min_severity)
                        continue;
                if (*n == *alloc) {
                        size_t na = *alloc ? *alloc * 2 : 64;
                        SiteFinding *nv = reallocarray(*v, na, sizeof(*nv));

                        if (!nv)
                                return -ENOMEM;
                        *v = nv;
                        *alloc = na;
                }
                x = &(*v)[(*n)++];
                *x = (SiteFinding) { .f = *f, .last_seen = js->info.last_seen };
                x->f.node = dup_or_null(f->node, &r);
                x->f.message = dup_or_null(f->message, &r);
                x->job = dup_or_null(js->info.job, &r);
                x->cluster = dup_or_null(js->info.cluster, &r);
                x->user = dup_or_null(js->info.user, &r);
                x->account = dup_or_null(js->info.account, &r);
                if (r < 0)
                        return r;
        }
        return 0;
}

static const char *const findings_args[] = { "since", "until", "user", "cluster", "rule", "severity", "limit", NULL };

void api_findings(Server *s, Request *req, Reply *reply) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        int64_t now = (int64_t) time(NULL);
        JobFilter jf = {
                .user = request_arg(req, "user"),
                .cluster = request_arg(req, "cluster"),
                .until = now,
                .limit = FINDINGS_MAX_JOBS,
        };
        const char *rule_arg = request_arg(req, "rule"), *sev_arg = request_arg(req, "severity");
        unsigned limit = FINDINGS_DEFAULT_LIMIT;
        int rule = -1, min_severity = SEVERITY_INFO;
        _cleanup_(job_summary_list_free) JobSummaryList jl = {};
        FamilyMemo memo = {};
        SiteFinding *v = NULL;
        size_t n = 0, alloc = 0, flagged_jobs = 0;
        json_object *a;
        int r = 0;

        if (!request_check_args(req, findings_args, reply))
                return;
        if (!arg_time(req, "since", "7d", now, &jf.since, reply) ||
            !arg_time(req, "until", NULL, now, &jf.until, reply) ||
            !arg_uint(req, "limit", 1, FINDINGS_MAX_LIMIT, &limit, reply))
                return;
        if (rule_arg && (rule = finding_rule_from_string(rule_arg)) < 0) {
                reply_error(reply, MHD_HTTP_BAD_REQUEST, "rule",
                            "rule=%s: expected idle-cores, single-thread, unbalanced-nodes, communication, "
                            "kernel-time, low-ipc, reference-blas or markers-off", rule_arg);
                return;
        }
        if (sev_arg && (min_severity = severity_from_string(sev_arg)) < 0) {
                reply_error(reply, MHD_HTTP_BAD_REQUEST, "severity",
                            "severity=%s: expected info, warning or critical (the least shown)", sev_arg);
                return;
        }
        api_viewer(req, &jf);

        /* the jobs in the range, most recently seen first, read together;
         * the rules stay the same throughout */
        r = s->storage->ops->list_job_summaries(s->storage, &jf, &jl);
        pthread_rwlock_rdlock(&s->findings_lock);
        if (r >= 0)
                r = family_memo_init(&memo, s->families);
        for (size_t i = 0; r >= 0 && i < jl.n; i++) {
                _cleanup_(finding_list_done) FindingList fl = {};
                size_t before = n;

                r = evaluate(s, &memo, &jl.items[i], &fl);
                if (r >= 0)
                        r = collect(&fl, &jl.items[i], rule, min_severity, &v, &n, &alloc);
                if (n > before)
                        flagged_jobs++;
        }
        family_memo_done(&memo);
        if (r < 0) {
                pthread_rwlock_unlock(&s->findings_lock);
                site_findings_free(v, n);
                reply_storage_error(reply, r);
                return;
        }
        if (n > 1)
                qsort(v, n, sizeof(*v), by_stake);

        o = json_object_new_object();
        a = json_object_new_array();
        if (!o || !a ||
            json_add(o, "since", json_object_new_int64(jf.since)) < 0 ||
            json_add(o, "until", json_object_new_int64(jf.until)) < 0 ||
            json_add(o, "jobs_scanned", json_object_new_int64((int64_t) jl.n)) < 0 ||
            json_add(o, "jobs_flagged", json_object_new_int64((int64_t) flagged_jobs)) < 0 ||
            json_add(o, "truncated", json_object_new_boolean(jl.more)) < 0 ||
            json_add(o, "total", json_object_new_int64((int64_t) n)) < 0) {
                json_object_put(a);
                r = -ENOMEM;
        } else
                r = json_add(o, "findings", a);
        for (size_t i = 0; r >= 0 && i < n && i < limit; i++) {
                json_object *e;

                r = finding_json(&v[i].f, &e);
                if (r < 0)
                        break;
                if ((r = json_add(e, "job", json_object_new_string(v[i].job))) < 0 ||
                    (r = json_add(e, "cluster", json_string_or_null(v[i].cluster && *v[i].cluster ? v[i].cluster : NULL))) < 0 ||
                    (r = json_add(e, "user", json_string_or_null(v[i].user))) < 0 ||
                    (r = json_add(e, "account", json_string_or_null(v[i].account))) < 0 ||
                    (r = json_add(e, "last_seen", json_number(v[i].last_seen, 3))) < 0) {
                        json_object_put(e);
                        break;
                }
                r = array_append(a, e);
        }
        pthread_rwlock_unlock(&s->findings_lock);
        site_findings_free(v, n);
        if (r < 0) {
                reply_oom(reply);
                return;
        }
        reply_json(reply, MHD_HTTP_OK, TAKE_PTR(o));
}
