/* SPDX-License-Identifier: GPL-2.0-or-later */
/* GET /api/v1/compare?a=JOB&b=JOB: two runs side by side (docs/api.md):
 * each run's figures, and per kind, object, phase and function both runs'
 * CPU time and share with the difference b − a and whether the samples
 * can tell it from none (store/analysis/compare.h). Each job is read as
 * its own answer reads it, with the same visibility. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "analysis/compare.h"
#include "analysis/pop.h"
#include "api/api.h"
#include "util.h"

#define IPC_DECIMALS 3
#define RATIO_DECIMALS 4
#define SHARE_DECIMALS 6
#define POP_DECIMALS 4

static json_object *interval(Estimate e, int decimals) {
        json_object *a = json_object_new_array_ext(2);

        if (a && (json_append(a, json_number(e.low, decimals)) < 0 ||
                  json_append(a, json_number(e.high, decimals)) < 0)) {
                json_object_put(a);
                return NULL;
        }
        return a;
}

/* The CPUs the run was given (null when a node did not say) and the cores
 * it kept busy, summed over its nodes as the findings judge them. */
static int add_cores(json_object *o, const JobSummary *js) {
        int64_t alloc = 0;
        double busy = 0;
        int r;

        for (size_t i = 0; i < js->nodes.n; i++) {
                const Share *n = &js->nodes.items[i];
                double t = n->last_seen - n->first_seen;

                alloc = alloc == STORAGE_NULL || n->cpus_alloc == STORAGE_NULL ? STORAGE_NULL : alloc + n->cpus_alloc;
                if (t > 0)
                        busy += n->cpu_seconds / t;
        }
        if (js->nodes.n == 0)
                alloc = STORAGE_NULL;
        if ((r = json_add(o, "cpus_allocated", json_int_or_null(alloc))) < 0 ||
            (r = json_add(o, "busy_cores", json_number(js->nodes.n > 0 ? busy : NAN, IPC_DECIMALS))) < 0)
                return r;
        return 0;
}

/* The run's POP metrics over all its ranks, null without MPI ranks. */
static int add_pop(json_object *o, const JobSummary *js) {
        _cleanup_(pop_report_free) PopReport rep = {};
        json_object *p;
        int r;

        if (js->n_ranks == 0)
                return json_add(o, "pop", json_null());
        r = pop_compute(js->ranks, js->n_ranks, &rep);
        if (r < 0)
                return r;
        p = json_object_new_object();
        if ((r = json_add(o, "pop", p)) < 0 ||
            (r = json_add(p, "ranks", json_object_new_int64((int64_t) rep.job.ranks))) < 0 ||
            (r = json_add(p, "parallel_efficiency", json_number(rep.job.parallel_efficiency, POP_DECIMALS))) < 0 ||
            (r = json_add(p, "load_balance", json_number(rep.job.load_balance, POP_DECIMALS))) < 0 ||
            (r = json_add(p, "communication_efficiency",
                          json_number(rep.job.communication_efficiency, POP_DECIMALS))) < 0)
                return r;
        return 0;
}

static int add_run(Server *s, json_object *o, const char *key, const JobSummary *js) {
        json_object *run = json_object_new_object();
        int r;

        if ((r = json_add(o, key, run)) < 0 ||
            (r = api_add_job_info(run, &js->info)) < 0 ||
            (r = add_cores(run, js)) < 0 ||
            (r = json_add(run, "ipc", json_ratio(js->info.instructions, js->info.cycles, IPC_DECIMALS))) < 0 ||
            (r = json_add(run, "objects_truncated", json_object_new_boolean(js->objects_truncated))) < 0 ||
            (r = json_add(run, "functions_truncated", json_object_new_boolean(js->functions.truncated))) < 0 ||
            (r = add_pop(run, js)) < 0 ||
            (r = api_job_findings(s, js, run)) < 0)
                return r;
        return 0;
}

static double elapsed(const StoredJob *j) {
        return j->last_seen - j->first_seen; /* NAN when either is unknown */
}

/* b − a and b / a of the runs' totals: measured, not sampled, so without
 * an interval. */
static int add_totals(json_object *o, const JobSummary *a, const JobSummary *b) {
        json_object *d = json_object_new_object();
        double ea = elapsed(&a->info), eb = elapsed(&b->info);
        int r;

        if ((r = json_add(o, "difference", d)) < 0 ||
            (r = json_add(d, "elapsed_seconds", json_number(eb - ea, TIME_DECIMALS))) < 0 ||
            (r = json_add(d, "elapsed_ratio", json_number(ea > 0 ? eb / ea : NAN, RATIO_DECIMALS))) < 0 ||
            (r = json_add(d, "cpu_seconds", json_number(b->info.cpu_seconds - a->info.cpu_seconds,
                                                        TIME_DECIMALS))) < 0 ||
            (r = json_add(d, "cpu_ratio", json_number(a->info.cpu_seconds > 0 ?
                                                      b->info.cpu_seconds / a->info.cpu_seconds : NAN,
                                                      RATIO_DECIMALS))) < 0)
                return r;
        return 0;
}

/* One run's side of a row; null when its list left the item out. */
static int add_side(json_object *row, const char *key, const CompareSide *x) {
        json_object *e;
        int r;

        if (!x->known)
                return json_add(row, key, json_null());
        e = json_object_new_object();
        if ((r = json_add(row, key, e)) < 0 ||
            (r = json_add(e, "samples", json_object_new_int64(x->item.samples))) < 0 ||
            (r = api_add_share(e, x->item.samples, x->share.n)) < 0 ||
            (r = json_add(e, "cpu_seconds", json_number(x->cpu_seconds.value, TIME_DECIMALS))) < 0 ||
            (r = json_add(e, "cpu_seconds_ci95", interval(x->cpu_seconds, TIME_DECIMALS))) < 0 ||
            (r = json_add(e, "ipc", json_ratio(x->item.instructions, x->item.cycles, IPC_DECIMALS))) < 0)
                return r;
        return 0;
}

/* What the samples say of b − a in CPU time, in words. */
static const char *verdict(const CompareRow *x) {
        if (!estimate_excludes(x->cpu_difference, 0))
                return "not distinguishable";
        return x->cpu_difference.value > 0 ? "more in b" : "less in b";
}

/* b − a in CPU time and in share, b / a, each with its 95% interval, and
 * whether the interval leaves out "no difference". */
static int add_difference(json_object *row, const CompareRow *x) {
        json_object *d;
        int r;

        if (!x->a.known || !x->b.known)
                return json_add(row, "difference", json_null());
        d = json_object_new_object();
        if ((r = json_add(row, "difference", d)) < 0 ||
            (r = json_add(d, "cpu_seconds", json_number(x->cpu_difference.value, TIME_DECIMALS))) < 0 ||
            (r = json_add(d, "cpu_seconds_ci95", interval(x->cpu_difference, TIME_DECIMALS))) < 0 ||
            (r = json_add(d, "ratio", json_number(x->cpu_ratio.value, RATIO_DECIMALS))) < 0 ||
            (r = json_add(d, "ratio_ci95", interval(x->cpu_ratio, RATIO_DECIMALS))) < 0 ||
            (r = json_add(d, "beyond_uncertainty",
                          json_object_new_boolean(estimate_excludes(x->cpu_difference, 0)))) < 0 ||
            (r = json_add(d, "verdict", json_object_new_string(verdict(x)))) < 0 ||
            (r = json_add(d, "share", json_number(x->share_difference.value, SHARE_DECIMALS))) < 0 ||
            (r = json_add(d, "share_ci95", interval(x->share_difference, SHARE_DECIMALS))) < 0 ||
            (r = json_add(d, "share_beyond_uncertainty",
                          json_object_new_boolean(estimate_excludes(x->share_difference, 0)))) < 0)
                return r;
        return 0;
}

static json_object *row_name(const CompareRow *x) {
        char buf[FUNCTION_TEXT_MAX];

        if (x->id.object)
                return json_object_new_string(
                        api_function_text(x->id.object, x->id.name, x->id.offset, x->id.other, buf, sizeof(buf)));
        return json_object_new_string(x->id.name);
}

static int add_rows(json_object *o, const CompareRows *rows) {
        json_object *a = json_object_new_array();
        int r;

        r = json_add(o, "rows", a);
        for (size_t i = 0; r >= 0 && i < rows->n; i++) {
                const CompareRow *x = &rows->items[i];
                json_object *e = json_object_new_object();

                if ((r = json_append(a, e)) < 0 ||
                    (r = json_add(e, "dimension", json_object_new_string(x->dimension->name))) < 0 ||
                    (r = json_add(e, "name", row_name(x))) < 0 ||
                    (r = json_add(e, "kind", json_string_or_null(x->id.kind))) < 0 ||
                    (r = json_add(e, "object", json_string_or_null(x->id.object))) < 0 ||
                    (r = add_side(e, "a", &x->a)) < 0 ||
                    (r = add_side(e, "b", &x->b)) < 0 ||
                    (r = add_difference(e, x)) < 0)
                        return r;
        }
        return r;
}

/* ?format=csv: a row per compared item, its columns named as the JSON's
 * fields ("a": {"samples"} is a_samples, an interval two columns). */
#define CSV_SIDE(x)                                                                                         \
        { #x "_samples", #x ".samples" }, { #x "_share", #x ".share" },                                     \
        { #x "_share_ci95_low", #x ".share_ci95[0]" }, { #x "_share_ci95_high", #x ".share_ci95[1]" },      \
        { #x "_share_of_samples", #x ".share_of_samples" }, { #x "_share_reliable", #x ".share_reliable" }, \
        { #x "_cpu_seconds", #x ".cpu_seconds" }, { #x "_cpu_seconds_ci95_low", #x ".cpu_seconds_ci95[0]" }, \
        { #x "_cpu_seconds_ci95_high", #x ".cpu_seconds_ci95[1]" }, { #x "_ipc", #x ".ipc" }
const CsvTable api_compare_csv = CSV_TABLE("rows", NULL, "lmk-compare.csv",
        { "dimension" }, { "name" }, { "kind" }, { "object" }, CSV_SIDE(a), CSV_SIDE(b),
        { "difference_cpu_seconds", "difference.cpu_seconds" },
        { "difference_cpu_seconds_ci95_low", "difference.cpu_seconds_ci95[0]" },
        { "difference_cpu_seconds_ci95_high", "difference.cpu_seconds_ci95[1]" },
        { "difference_ratio", "difference.ratio" }, { "difference_ratio_ci95_low", "difference.ratio_ci95[0]" },
        { "difference_ratio_ci95_high", "difference.ratio_ci95[1]" },
        { "difference_beyond_uncertainty", "difference.beyond_uncertainty" },
        { "difference_verdict", "difference.verdict" },
        { "difference_share", "difference.share" },
        { "difference_share_ci95_low", "difference.share_ci95[0]" },
        { "difference_share_ci95_high", "difference.share_ci95[1]" },
        { "difference_share_beyond_uncertainty", "difference.share_beyond_uncertainty" });

/* One of the two jobs, as GET /api/v1/jobs/{id} finds it: false with the
 * reply set when it is not there for the asker (404, whether it does not
 * exist or is someone else's), ambiguous (409) or unreadable. */
static bool read_job(Server *s, Request *req, const char *key, const char *cluster, JobSummary *ret,
                     Reply *reply) {
        const char *id = request_arg(req, key);
        JobViewer viewer = api_job_viewer(req);
        int r;

        if (!id) {
                reply_error(reply, MHD_HTTP_BAD_REQUEST, key, "%s=: the id of a job to compare is missing", key);
                return false;
        }
        r = api_job_id_valid(id) ? s->storage->ops->get_job(s->storage, id, cluster, &viewer, ret) : -ENOENT;
        if (r < 0) {
                api_job_lookup_failed(s, req, r, key, id, reply);
                return false;
        }
        return true;
}

static const char *const compare_args[] = { "a", "b", "cluster", "cluster_a", "cluster_b", NULL };

void api_compare(Server *s, Request *req, Reply *reply) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        const char *cluster;
        JobSummary a = {}, b = {};
        CompareRows rows = {};

        if (!request_check_args(req, compare_args, reply))
                return;
        cluster = request_arg(req, "cluster");
        if (!read_job(s, req, "a", request_arg(req, "cluster_a") ?: cluster, &a, reply))
                return;
        if (!read_job(s, req, "b", request_arg(req, "cluster_b") ?: cluster, &b, reply)) {
                job_summary_free(&a);
                return;
        }

        o = json_object_new_object();
        if (!o ||
            compare_runs(&a, &b, &rows) < 0 ||
            add_run(s, o, "a", &a) < 0 ||
            add_run(s, o, "b", &b) < 0 ||
            add_totals(o, &a, &b) < 0 ||
            add_rows(o, &rows) < 0)
                reply_oom(reply);
        else
                reply_json(reply, MHD_HTTP_OK, TAKE_PTR(o));
        compare_rows_free(&rows);
        job_summary_free(&a);
        job_summary_free(&b);
}
