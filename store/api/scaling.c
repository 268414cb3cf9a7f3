/* SPDX-License-Identifier: GPL-2.0-or-later */
/* GET /api/v1/scaling?app=APP: how one application scales across its runs
 * (docs/scaling.md). Its ended jobs are grouped by problem size, executable,
 * cluster and node type; each group gets a table per core count, fitted
 * computation and communication forms (scaling-fit.h), the leave-one-out
 * error of those forms, a prediction at predict=P and the runs far off the
 * curve. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "analysis/scaling-fit.h"
#include "api/api.h"
#include "http/json-out.h"
#include "util.h"

/* The most recently seen runs of the application that are looked at. */
#define MAX_RUNS 1000
#define MAX_PREDICT 10000000
#define DECIMALS 3
#define STAND_IN_SIZE 320

static const char *const scaling_args[] = { "app", "size", "predict", "since", "until", NULL };

/* One row per group and core count (the group's table); the runs, fits and
 * prediction are in the JSON answer only. */
const CsvTable api_scaling_csv = CSV_TABLE("groups", "core_counts", "lmk-scaling.csv",
        { "app", "../app" }, { "size", "../size" }, { "executable", "../executable" },
        { "cluster", "../cluster" }, { "node_type", "../node_type" },
        { "node_type_source", "../node_type_source" }, { "run_count", "../run_count" },
        { "p" }, { "runs" }, { "elapsed_seconds" }, { "computation_seconds" }, { "communication_seconds" },
        { "max_useful_seconds" }, { "mean_useful_seconds" }, { "wall_seconds" }, { "samples" },
        { "speedup" }, { "efficiency" });

/* A run as the fits see it: the busiest rank's sampled time, split. Its
 * node type is the job's (stored with issue 15) where all its nodes told
 * theirs; else "partition/NNcpu" stands in for it (docs/scaling.md). */
typedef struct Run {
        const StoredJob *job;
        const RunFigures *fig;
        bool stand_in;
        char stand_in_type[STAND_IN_SIZE];
        int64_t p;
        size_t ranks;
        int64_t samples;
        double elapsed, computation, communication; /* the busiest rank's */
        double max_useful, mean_useful, wall;
} Run;

static int key_cmp(const char *a, const char *b) {
        if (!a || !b)
                return !a - !b;
        return strcmp(a, b);
}

static const char *run_node_type(const Run *r) {
        return r->stand_in ? r->stand_in_type : r->job->node_type;
}

static const char *run_node_type_source(const Run *r) {
        return r->stand_in ? "partition/cpus_per_node" : "node_type";
}

/* A real node type and a stand-in are never one group, whatever their names. */
static int group_cmp(const Run *x, const Run *y) {
        int c;

        if ((c = key_cmp(x->fig->size, y->fig->size)) != 0 || (c = key_cmp(x->fig->exe, y->fig->exe)) != 0 ||
            (c = key_cmp(x->job->cluster, y->job->cluster)) != 0 || (c = (int) x->stand_in - (int) y->stand_in) != 0)
                return c;
        return strcmp(run_node_type(x), run_node_type(y));
}

static int run_cmp(const void *a, const void *b) {
        const Run *x = a, *y = b;
        int c = group_cmp(x, y);

        if (c != 0)
                return c;
        if (x->p != y->p)
                return CMP(x->p, y->p);
        return CMP(x->job->row_id, y->job->row_id);
}

/* A run from its ranks: false when it has no rank with samples (not an
 * MPI job lmk saw ranks of, or one without a sample). */
static bool run_of(const StoredJob *j, const RunFigures *fig, Run *ret) {
        Run r = { .job = j, .fig = fig, .ranks = fig->n_ranks };
        double first = INFINITY, last = -INFINITY, sum_useful = 0;

        for (size_t i = 0; i < fig->n_ranks; i++) {
                const RankFigures *k = &fig->ranks[i];
                double useful = MAX(k->cpu_seconds - k->comm_seconds, 0.0);

                r.samples += k->samples;
                sum_useful += useful;
                r.max_useful = MAX(r.max_useful, useful);
                if (useful + k->comm_seconds > r.elapsed) {
                        r.elapsed = useful + k->comm_seconds;
                        r.computation = useful;
                        r.communication = k->comm_seconds;
                }
                first = MIN(first, k->first_seen);
                last = MAX(last, k->last_seen);
        }
        if (!(r.elapsed > 0) || !isfinite(r.elapsed))
                return false;
        r.mean_useful = sum_useful / (double) fig->n_ranks;
        r.wall = isfinite(last - first) ? MAX(last - first, 0.0) : 0;
        /* the job's MPI ranks as Slurm counts tasks, else its CPUs, else
         * the ranks lmk saw */
        r.p = j->tasks > 0 ? j->tasks : fig->cpus_alloc > 0 ? fig->cpus_alloc : (int64_t) fig->n_ranks;
        r.stand_in = !(j->node_type_id > 0 && j->node_type);
        if (r.stand_in && fig->node_cpus > 0)
                snprintf(r.stand_in_type, sizeof(r.stand_in_type), "%s/%" PRId64 "cpu", j->partition ?: "-",
                         fig->node_cpus);
        else if (r.stand_in)
                snprintf(r.stand_in_type, sizeof(r.stand_in_type), "%s/?cpu", j->partition ?: "-");
        *ret = r;
        return true;
}

static const char *comm_form(unsigned terms) {
        static const char *const forms[] = {
                "c4", "c4 + c3*log2(p)", "c4 + c3*log2(p) + c1*p", "c4 + c3*log2(p) + c1*p + c2*p^2",
        };

        return terms >= 1 && terms <= ELEMENTSOF(forms) ? forms[terms - 1] : "none";
}

static json_object *seconds(double v) {
        return json_number(isfinite(v) ? v : NAN, DECIMALS);
}

/* The table per core count: means over the runs at each p; speedup and
 * efficiency of the mean elapsed time against the smallest p. */
static int add_core_counts(json_object *g, const Run *v, size_t n) {
        json_object *a = json_object_new_array();
        double e0 = NAN, p0 = NAN;
        int r;

        if ((r = json_add(g, "core_counts", a)) < 0)
                return r;
        for (size_t i = 0, end; i < n; i = end) {
                double e = 0, c = 0, m = 0, w = 0, mu = 0, au = 0;
                int64_t samples = 0;
                json_object *x;

                for (end = i; end < n && v[end].p == v[i].p; end++) {
                        e += v[end].elapsed;
                        c += v[end].computation;
                        m += v[end].communication;
                        w += v[end].wall;
                        mu += v[end].max_useful;
                        au += v[end].mean_useful;
                        samples += v[end].samples;
                }
                double k = (double) (end - i);
                e /= k;
                if (i == 0) {
                        e0 = e;
                        p0 = (double) v[i].p;
                }
                x = json_object_new_object();
                if ((r = json_append(a, x)) < 0 ||
                    (r = json_add(x, "p", json_object_new_int64(v[i].p))) < 0 ||
                    (r = json_add(x, "runs", json_object_new_int64((int64_t) (end - i)))) < 0 ||
                    (r = json_add(x, "elapsed_seconds", seconds(e))) < 0 ||
                    (r = json_add(x, "computation_seconds", seconds(c / k))) < 0 ||
                    (r = json_add(x, "communication_seconds", seconds(m / k))) < 0 ||
                    (r = json_add(x, "max_useful_seconds", seconds(mu / k))) < 0 ||
                    (r = json_add(x, "mean_useful_seconds", seconds(au / k))) < 0 ||
                    (r = json_add(x, "wall_seconds", seconds(w / k))) < 0 ||
                    (r = json_add(x, "samples", json_object_new_int64(samples))) < 0 ||
                    (r = json_add(x, "speedup", json_number(e > 0 ? e0 / e : NAN, DECIMALS))) < 0 ||
                    (r = json_add(x, "efficiency",
                                  json_number(e > 0 ? e0 / e * p0 / (double) v[i].p : NAN, DECIMALS))) < 0)
                        return r;
        }
        return 0;
}

static int add_prediction(json_object *o, const char *key, const ScalingPrediction *x) {
        json_object *e = json_object_new_object();
        int r;

        if ((r = json_add(o, key, e)) < 0 ||
            (r = json_add(e, "p", json_object_new_int64((int64_t) x->p))) < 0 ||
            (r = json_add(e, "computation_seconds", seconds(x->computation))) < 0 ||
            (r = json_add(e, "communication_seconds", seconds(x->communication))) < 0 ||
            (r = json_add(e, "elapsed_seconds", seconds(x->elapsed))) < 0 ||
            (r = json_add(e, "low_seconds", seconds(x->low))) < 0 ||
            (r = json_add(e, "high_seconds", seconds(x->high))) < 0)
                return r;
        return 0;
}

/* For each core count: the forms fitted to the other core counts'
 * runs (their form chosen afresh) and what they predict there. */
static int add_leave_one_out(json_object *fit, const ScalingPoint *pts, size_t n) {
        _cleanup_free_ ScalingPoint *w = malloc(n * sizeof(ScalingPoint));
        json_object *a = json_object_new_array();
        int r;

        if (!w) {
                json_object_put(a);
                return -ENOMEM;
        }
        if ((r = json_add(fit, "leave_one_out", a)) < 0)
                return r;
        for (size_t i = 0, end; i < n; i = end) {
                double measured = 0;
                size_t m = 0;
                ScalingPrediction x;
                ScalingFit f;
                json_object *e;

                for (end = i; end < n && pts[end].p == pts[i].p; end++)
                        measured += pts[end].computation + pts[end].communication;
                measured /= (double) (end - i);
                for (size_t j = 0; j < n; j++)
                        if (pts[j].p != pts[i].p)
                                w[m++] = pts[j];
                if (m == 0 || scaling_fit(w, m, &f) < 0)
                        continue;
                scaling_predict(&f, w, m, pts[i].p, &x);
                e = json_object_new_object();
                if ((r = json_append(a, e)) < 0 ||
                    (r = json_add(e, "p", json_object_new_int64((int64_t) pts[i].p))) < 0 ||
                    (r = json_add(e, "measured_elapsed_seconds", seconds(measured))) < 0 ||
                    (r = json_add(e, "predicted_elapsed_seconds", seconds(x.elapsed))) < 0 ||
                    (r = json_add(e, "low_seconds", seconds(x.low))) < 0 ||
                    (r = json_add(e, "high_seconds", seconds(x.high))) < 0 ||
                    (r = json_add(e, "error", json_number(measured > 0 ? (x.elapsed - measured) / measured : NAN,
                                                          4))) < 0)
                        return r;
        }
        return 0;
}

static int add_fit(json_object *g, const Run *v, size_t n, unsigned predict) {
        _cleanup_free_ ScalingPoint *pts = malloc(n * sizeof(ScalingPoint)), *fitted = malloc(n * sizeof(ScalingPoint));
        _cleanup_free_ bool *used = calloc(n, sizeof(bool)), *off = calloc(n, sizeof(bool));
        json_object *fit, *comp, *comm, *runs = NULL;
        size_t m = 0;
        ScalingFit f;
        int r;

        if (!pts || !fitted || !used || !off)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                pts[i] = (ScalingPoint) { (double) v[i].p, v[i].computation, v[i].communication };
        r = scaling_fit_robust(pts, n, used, &f);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return (r = json_add(g, "fit", json_null())) < 0 ? r : json_add(g, "prediction", json_null());
        for (size_t i = 0; i < n; i++)
                if (used[i])
                        fitted[m++] = pts[i];
        if ((r = scaling_off_curve(&f, fitted, m, off)) < 0)
                return r;

        fit = json_object_new_object();
        if ((r = json_add(g, "fit", fit)) < 0)
                return r;
        comp = json_object_new_object();
        if ((r = json_add(fit, "computation", comp)) < 0 ||
            (r = json_add(comp, "form", json_object_new_string("a/p + b"))) < 0 ||
            (r = json_add(comp, "a", json_number(f.a, 6))) < 0 ||
            (r = json_add(comp, "b", json_number(f.b, 6))) < 0 ||
            (r = json_add(comp, "relative_residual", json_number(f.s_computation, 4))) < 0)
                return r;
        comm = json_object_new_object();
        if ((r = json_add(fit, "communication", comm)) < 0 ||
            (r = json_add(comm, "form", json_object_new_string(comm_form(f.comm_terms)))) < 0 ||
            (r = json_add(comm, "c1", json_number(f.c[COMM_LINEAR], 9))) < 0 ||
            (r = json_add(comm, "c2", json_number(f.c[COMM_SQUARE], 12))) < 0 ||
            (r = json_add(comm, "c3", json_number(f.c[COMM_LOG2], 6))) < 0 ||
            (r = json_add(comm, "c4", json_number(f.c[COMM_CONST], 6))) < 0 ||
            (r = json_add(comm, "relative_residual", json_number(f.s_communication, 4))) < 0 ||
            (r = json_add(fit, "runs", json_object_new_int64((int64_t) m))) < 0 ||
            (r = json_add(fit, "distinct_core_counts", json_object_new_int64((int64_t) f.distinct))) < 0 ||
            (r = json_add(fit, "leave_one_out_error", json_number(f.loo_error, 4))) < 0)
                return r;
        if (f.distinct >= 3 && (r = add_leave_one_out(fit, fitted, m)) < 0)
                return r;
        if (predict > 0) {
                ScalingPrediction x;

                scaling_predict(&f, fitted, m, predict, &x);
                if ((r = add_prediction(g, "prediction", &x)) < 0)
                        return r;
        } else if ((r = json_add(g, "prediction", json_null())) < 0)
                return r;

        json_object_object_get_ex(g, "runs", &runs);
        for (size_t i = 0, k = 0; runs && i < n; i++) {
                json_object *e = json_object_array_get_idx(runs, i);
                double at = scaling_computation(&f, pts[i].p) + scaling_communication(&f, pts[i].p);

                if ((r = json_add(e, "fit_elapsed_seconds", seconds(at))) < 0 ||
                    (r = json_add(e, "in_fit", json_object_new_boolean(used[i]))) < 0 ||
                    (r = json_add(e, "off_curve", json_object_new_boolean(used[i] ? off[k++] : true))) < 0)
                        return r;
        }
        return 0;
}

static int add_runs(json_object *g, const Run *v, size_t n) {
        json_object *a = json_object_new_array();
        int r;

        if ((r = json_add(g, "runs", a)) < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_new_object();

                if ((r = json_append(a, e)) < 0 ||
                    (r = json_add(e, "job", json_object_new_string(v[i].job->job))) < 0 ||
                    (r = json_add(e, "cluster", json_string_or_null(v[i].job->cluster))) < 0 ||
                    (r = json_add(e, "p", json_object_new_int64(v[i].p))) < 0 ||
                    (r = json_add(e, "ranks", json_object_new_int64((int64_t) v[i].ranks))) < 0 ||
                    (r = json_add(e, "samples", json_object_new_int64(v[i].samples))) < 0 ||
                    (r = json_add(e, "elapsed_seconds", seconds(v[i].elapsed))) < 0 ||
                    (r = json_add(e, "computation_seconds", seconds(v[i].computation))) < 0 ||
                    (r = json_add(e, "communication_seconds", seconds(v[i].communication))) < 0 ||
                    (r = json_add(e, "max_useful_seconds", seconds(v[i].max_useful))) < 0 ||
                    (r = json_add(e, "mean_useful_seconds", seconds(v[i].mean_useful))) < 0 ||
                    (r = json_add(e, "wall_seconds", seconds(v[i].wall))) < 0 ||
                    (r = json_add(e, "first_seen", seconds(v[i].job->first_seen))) < 0 ||
                    (r = json_add(e, "ranks_truncated", json_object_new_boolean(v[i].fig->ranks_truncated))) < 0)
                        return r;
        }
        return 0;
}

static int add_group(json_object *groups, const char *app, const Run *v, size_t n, unsigned predict) {
        json_object *g = json_object_new_object();
        int r;

        if ((r = json_append(groups, g)) < 0 ||
            (r = json_add(g, "app", json_object_new_string(app))) < 0 ||
            (r = json_add(g, "size", json_string_or_null(v->fig->size))) < 0 ||
            (r = json_add(g, "executable", json_string_or_null(v->fig->exe))) < 0 ||
            (r = json_add(g, "cluster", json_string_or_null(v->job->cluster))) < 0 ||
            (r = json_add(g, "node_type", json_object_new_string(run_node_type(v)))) < 0 ||
            (r = json_add(g, "node_type_source", json_object_new_string(run_node_type_source(v)))) < 0 ||
            (r = json_add(g, "run_count", json_object_new_int64((int64_t) n))) < 0 ||
            (r = add_core_counts(g, v, n)) < 0 ||
            (r = add_runs(g, v, n)) < 0)
                return r;
        return add_fit(g, v, n, predict);
}

static size_t group_end(const Run *v, size_t n, size_t start) {
        size_t end = start;

        while (end < n && group_cmp(&v[start], &v[end]) == 0)
                end++;
        return end;
}

/* Groups with the most runs first, then by their keys. */
typedef struct GroupSpan {
        size_t start, n;
} GroupSpan;

static int span_cmp(const void *a, const void *b) {
        const GroupSpan *x = a, *y = b;

        if (x->n != y->n)
                return CMP(y->n, x->n);
        return CMP(x->start, y->start);
}

void api_scaling(Server *s, Request *req, Reply *reply) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        int64_t now = (int64_t) time(NULL);
        JobFilter f = {
                .app = request_arg(req, "app"),
                /* ended jobs only, but not asked of the index: with
                 * state=ended SQLite walks jobs_by_state and, for a person,
                 * filters their jobs out of everyone's (docs/scaling.md) */
                .since = INT64_MIN,
                .until = INT64_MAX,
                .sort = JOB_SORT_LAST_SEEN,
                .limit = MAX_RUNS,
        };
        const char *size = request_arg(req, "size");
        _cleanup_free_ RunFigures *figs = NULL;
        _cleanup_free_ int64_t *ids = NULL;
        _cleanup_free_ GroupSpan *spans = NULL;
        _cleanup_free_ Run *runs = NULL;
        size_t n_runs = 0, without_ranks = 0, mixed = 0, n_spans = 0;
        unsigned predict = 0;
        json_object *groups;
        JobList l = {};
        int r;

        if (!request_check_args(req, scaling_args, reply) ||
            !arg_time(req, "since", "365d", now, &f.since, reply) ||
            !arg_time(req, "until", NULL, now, &f.until, reply) ||
            !arg_uint(req, "predict", 1, MAX_PREDICT, &predict, reply))
                return;
        if (!f.app) {
                reply_error(reply, MHD_HTTP_BAD_REQUEST, "app",
                            "app is missing: name the application (its LMK_NOTES app=, else its executable's file name)");
                return;
        }
        /* a backend written before scaling (docs/lmk-store.md) */
        if (!s->storage->ops->get_run_figures) {
                reply_error(reply, MHD_HTTP_NOT_IMPLEMENTED, NULL, "scaling across runs: the %s backend cannot read "
                            "runs' figures yet", s->storage->ops->name);
                return;
        }
        api_viewer(req, &f);
        r = s->storage->ops->list_jobs(s->storage, &f, &l);
        if (r < 0) {
                reply_storage_error(reply, r);
                return;
        }
        ids = malloc(MAX(l.n, (size_t) 1) * sizeof(int64_t));
        figs = calloc(MAX(l.n, (size_t) 1), sizeof(RunFigures));
        runs = calloc(MAX(l.n, (size_t) 1), sizeof(Run));
        spans = calloc(MAX(l.n, (size_t) 1), sizeof(GroupSpan));
        r = ids && figs && runs && spans ? 0 : -ENOMEM;
        for (size_t i = 0; r >= 0 && i < l.n; i++)
                ids[i] = l.items[i].row_id;
        if (r >= 0 && (r = s->storage->ops->get_run_figures(s->storage, ids, l.n, figs)) < 0) {
                job_list_free(&l);
                reply_storage_error(reply, r);
                return;
        }
        for (size_t i = 0; r >= 0 && i < l.n; i++) {
                if (!l.items[i].ended || (size && (!figs[i].size || !streq(size, figs[i].size))))
                        continue;
                /* its times mix node types: comparable to no group's */
                if (l.items[i].node_types_differ)
                        mixed++;
                else if (run_of(&l.items[i], &figs[i], &runs[n_runs]))
                        n_runs++;
                else
                        without_ranks++;
        }
        if (n_runs > 1)
                qsort(runs, n_runs, sizeof(Run), run_cmp);
        for (size_t i = 0, end; i < n_runs; i = end) {
                end = group_end(runs, n_runs, i);
                spans[n_spans++] = (GroupSpan) { i, end - i };
        }
        if (n_spans > 1)
                qsort(spans, n_spans, sizeof(GroupSpan), span_cmp);

        o = json_object_new_object();
        groups = json_object_new_array();
        if (r >= 0 && (!o || !groups))
                r = -ENOMEM;
        if (r < 0 || (r = json_add(o, "app", json_object_new_string(f.app))) < 0 ||
                       (r = json_add(o, "size", json_string_or_null(size))) < 0 ||
                       (r = json_add(o, "since", json_object_new_int64(f.since))) < 0 ||
                       (r = json_add(o, "until", json_object_new_int64(f.until))) < 0 ||
                       (r = json_add(o, "runs", json_object_new_int64((int64_t) n_runs))) < 0 ||
                       (r = json_add(o, "runs_without_ranks", json_object_new_int64((int64_t) without_ranks))) < 0 ||
                       (r = json_add(o, "runs_mixed_node_types", json_object_new_int64((int64_t) mixed))) < 0 ||
                       (r = json_add(o, "truncated", json_object_new_boolean(l.more))) < 0)
                json_object_put(TAKE_PTR(groups));
        if (r >= 0)
                r = json_add(o, "groups", groups);
        for (size_t i = 0; r >= 0 && i < n_spans; i++)
                r = add_group(groups, f.app, runs + spans[i].start, spans[i].n, predict);
        run_figures_free(figs, l.n);
        job_list_free(&l);
        if (r < 0) {
                reply_oom(reply);
                return;
        }
        reply_json(reply, MHD_HTTP_OK, TAKE_PTR(o));
}
