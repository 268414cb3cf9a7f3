/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Findings over HTTP: a job's in its summary (GET /api/v1/jobs/{id}) and the
 * site's, ranked by core-hours at stake (GET /api/v1/findings). The rules
 * run when asked (store/analysis/findings.c), over the rollups a job summary reads,
 * so a site's new thresholds apply to old jobs as soon as it reloads. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "analysis/findings-cache.h"
#include "analysis/findings.h"
#include "api/api.h"
#include "http/json-out.h"
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
                        r = json_append(a, e);
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

static int by_stake(const void *a, const void *b) {
        const SiteFinding *x = a, *y = b;

        if (x->f.core_hours != y->f.core_hours)
                return x->f.core_hours < y->f.core_hours ? 1 : -1;
        if (x->f.severity != y->f.severity)
                return CMP(y->f.severity, x->f.severity);
        return CMP(y->last_seen, x->last_seen);
}

/* One request's walk over the jobs of its range. */
typedef struct Scan {
        Server *s;
        int64_t now;
        int rule, min_severity;
        SiteFindings out;       /* the findings that pass the filter */
        size_t flagged_jobs;
        int error;
} Scan;

static void scan_done(Scan *x) {
        site_findings_done(&x->out);
}

static bool keep(const Finding *f, void *userdata) {
        const Scan *x = userdata;

        return (x->rule < 0 || (int) f->rule == x->rule) && (int) f->severity >= x->min_severity;
}

/* Asked about each job of the range: its findings from the cache when they
 * are still those of its revision; else its summary is to be read. */
static bool want(int64_t row_id, int64_t revision, void *userdata) {
        Scan *x = userdata;
        size_t kept;
        int r;

        if (x->error < 0)
                return false;
        r = findings_cache_get(x->s->findings_cache, row_id, revision, x->now, keep, x, &x->out, &kept);
        if (r < 0)
                x->error = r;
        if (kept > 0)
                x->flagged_jobs++;
        return r == 0;
}

/* Judges a job the cache did not know, and keeps its findings there. */
static int judge(Scan *x, const JobSummary *js, FamilyMemo *memo) {
        _cleanup_(finding_list_done) FindingList fl = {};
        _cleanup_(site_findings_done) SiteFindings all = {};
        size_t kept = 0;
        int r;

        r = evaluate(x->s, memo, js, &fl);
        for (size_t i = 0; r >= 0 && i < fl.n; i++)
                r = site_findings_add(&all, &fl.items[i], &js->info);
        if (r >= 0)
                r = findings_cache_put(x->s->findings_cache, js->info.row_id, js->info.revision, x->now, &all);
        for (size_t i = 0; r >= 0 && i < all.n; i++)
                if (keep(&all.v[i].f, x)) {
                        r = site_findings_add_copy(&x->out, &all.v[i]);
                        kept++;
                }
        if (kept > 0)
                x->flagged_jobs++;
        return r;
}

static const char *const findings_args[] = { "since", "until", "user", "cluster", "rule", "severity", "limit", NULL };

const CsvTable api_findings_csv = CSV_TABLE("findings", NULL, "lmk-findings.csv",
        { "rule" }, { "severity" }, { "core_hours" }, { "node" }, { "message" }, { "advice" }, { "job" },
        { "cluster" }, { "user" }, { "account" }, { "last_seen" });

void api_findings(Server *s, Request *req, Reply *reply) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        _cleanup_(job_summary_list_free) JobSummaryList jl = {};
        int64_t now = (int64_t) time(NULL);
        JobFilter jf = {
                .user = request_arg(req, "user"),
                .cluster = request_arg(req, "cluster"),
                .until = now,
                .limit = FINDINGS_MAX_JOBS,
        };
        const char *rule_arg = request_arg(req, "rule"), *sev_arg = request_arg(req, "severity");
        unsigned limit = FINDINGS_DEFAULT_LIMIT;
        _cleanup_(scan_done) Scan x = { .s = s, .now = now, .rule = -1, .min_severity = SEVERITY_INFO };
        FamilyMemo memo = {};
        json_object *a;
        int r = 0;

        if (!request_check_args(req, findings_args, reply))
                return;
        if (!arg_time(req, "since", "7d", now, &jf.since, reply) ||
            !arg_time(req, "until", NULL, now, &jf.until, reply) ||
            !arg_uint(req, "limit", 1, FINDINGS_MAX_LIMIT, &limit, reply))
                return;
        if (rule_arg && (x.rule = finding_rule_from_string(rule_arg)) < 0) {
                reply_error(reply, MHD_HTTP_BAD_REQUEST, "rule",
                            "rule=%s: expected idle-cores, single-thread, unbalanced-nodes, communication, "
                            "kernel-time, low-ipc, reference-blas or markers-off", rule_arg);
                return;
        }
        if (sev_arg && (x.min_severity = severity_from_string(sev_arg)) < 0) {
                reply_error(reply, MHD_HTTP_BAD_REQUEST, "severity",
                            "severity=%s: expected info, warning or critical (the least shown)", sev_arg);
                return;
        }
        api_viewer(req, &jf);

        /* The jobs of the range, most recently seen first: those the cache
         * knows at their revision from there, the others read together and
         * judged. The rules stay the same until the answer is written (its
         * advice points into them; and the cache is theirs: a reload
         * clears it under this lock). */
        pthread_rwlock_rdlock(&s->findings_lock);
        r = s->storage->ops->list_job_summaries(s->storage, &jf, want, &x, &jl);
        if (r >= 0)
                r = x.error;
        if (r >= 0 && jl.n > 0)
                r = family_memo_init(&memo, s->families);
        for (size_t i = 0; r >= 0 && i < jl.n; i++)
                r = judge(&x, &jl.items[i], &memo);
        family_memo_done(&memo);
        if (r < 0) {
                pthread_rwlock_unlock(&s->findings_lock);
                reply_storage_error(reply, r);
                return;
        }
        if (x.out.n > 1)
                qsort(x.out.v, x.out.n, sizeof(SiteFinding), by_stake);

        o = json_object_new_object();
        a = json_object_new_array();
        if (!o || !a ||
            json_add(o, "since", json_object_new_int64(jf.since)) < 0 ||
            json_add(o, "until", json_object_new_int64(jf.until)) < 0 ||
            json_add(o, "jobs_scanned", json_object_new_int64((int64_t) jl.n_jobs)) < 0 ||
            json_add(o, "jobs_flagged", json_object_new_int64((int64_t) x.flagged_jobs)) < 0 ||
            json_add(o, "truncated", json_object_new_boolean(jl.more)) < 0 ||
            json_add(o, "total", json_object_new_int64((int64_t) x.out.n)) < 0) {
                json_object_put(a);
                r = -ENOMEM;
        } else
                r = json_add(o, "findings", a);
        for (size_t i = 0; r >= 0 && i < x.out.n && i < limit; i++) {
                const SiteFinding *y = &x.out.v[i];
                json_object *e;

                r = finding_json(&y->f, &e);
                if (r < 0)
                        break;
                if ((r = json_add(e, "job", json_object_new_string(y->job))) < 0 ||
                    (r = json_add(e, "cluster", json_string_or_null(y->cluster && *y->cluster ? y->cluster : NULL))) < 0 ||
                    (r = json_add(e, "user", json_string_or_null(y->user))) < 0 ||
                    (r = json_add(e, "account", json_string_or_null(y->account))) < 0 ||
                    (r = json_add(e, "last_seen", json_number(y->last_seen, 3))) < 0) {
                        json_object_put(e);
                        break;
                }
                r = json_append(a, e);
        }
        pthread_rwlock_unlock(&s->findings_lock);
        if (r < 0) {
                reply_oom(reply);
                return;
        }
        reply_json(reply, MHD_HTTP_OK, TAKE_PTR(o));
}
