/* SPDX-License-Identifier: GPL-2.0-or-later */
/* GET /api/v1/jobs/{id}: one job's summary, with its shares, POP
 * metrics, time line, measurements, functions and findings. */
#include <errno.h>
#include <math.h>

#include "analysis/pop.h"
#include "api/api.h"
#include "api/measured.h"
#include "util.h"

#define IPC_DECIMALS 3
#define POP_DECIMALS 4
/* per_rank lists at most this many ranks (the metrics use all) */
#define POP_MAX_PER_RANK 1024

static json_object *ipc(int64_t instructions, int64_t cycles) {
        return json_ratio(instructions, cycles, IPC_DECIMALS);
}

static int add_counters(json_object *o, int64_t cpu_time_ns, int64_t cycles, int64_t instructions) {
        int r;

        if ((r = json_add(o, "cpu_time_ns", json_int_or_null(cpu_time_ns))) < 0 ||
            (r = json_add(o, "cycles", json_int_or_null(cycles))) < 0 ||
            (r = json_add(o, "instructions", json_int_or_null(instructions))) < 0 ||
            (r = json_add(o, "ipc", ipc(instructions, cycles))) < 0)
                return r;
        return 0;
}

static int add_share_list(json_object *o, const char *key, const char *name_key, const ShareList *l,
                          int64_t total, bool with_kind) {
        json_object *a = json_object_new_array();
        int r;

        r = json_add(o, key, a);
        for (size_t i = 0; r >= 0 && i < l->n; i++) {
                const Share *x = &l->items[i];
                json_object *e = json_object_new_object();

                if ((r = json_append(a, e)) < 0 ||
                    (r = json_add(e, name_key, json_object_new_string(x->name))) < 0 ||
                    (with_kind && (r = json_add(e, "kind", json_string_or_null(x->kind))) < 0) ||
                    (with_kind && (r = json_add(e, "build_id", json_string_or_null(x->build_id))) < 0) ||
                    (r = json_add(e, "samples", json_object_new_int64(x->samples))) < 0 ||
                    (r = api_add_share(e, x->samples, total)) < 0 ||
                    (r = json_add(e, "cpu_seconds", json_number(x->cpu_seconds, TIME_DECIMALS))) < 0 ||
                    (r = add_counters(e, x->cpu_time_ns, x->cycles, x->instructions)) < 0 ||
                    (r = json_add(e, "multiplexed_samples", json_object_new_int64(x->multiplexed_samples))) < 0)
                        return r;
        }
        return r;
}

static int add_kinds(json_object *o, const JobSummary *js) {
        json_object *k = json_object_new_object();
        int r;

        /* Every kind, zero or not, so that clients need not guess. */
        r = json_add(o, "kinds", k);
        for (int i = 0; r >= 0 && i < _CODE_KIND_MAX; i++) {
                const char *name = code_kind_to_string(i);
                const Share *x = NULL;
                json_object *e;

                for (size_t j = 0; j < js->kinds.n; j++)
                        if (streq(js->kinds.items[j].name, name))
                                x = &js->kinds.items[j];
                e = json_object_new_object();
                if ((r = json_add(k, name, e)) < 0 ||
                    (r = json_add(e, "samples", json_object_new_int64(x ? x->samples : 0))) < 0 ||
                    (r = api_add_share(e, x ? x->samples : 0, js->info.samples)) < 0 ||
                    (r = json_add(e, "cpu_seconds", json_number(x ? x->cpu_seconds : 0, TIME_DECIMALS))) < 0 ||
                    (r = json_add(e, "ipc", x ? ipc(x->instructions, x->cycles) : json_null())) < 0)
                        return r;
        }
        return r;
}

static int add_nodes(json_object *o, const JobSummary *js) {
        json_object *a = json_object_new_array();
        int r;

        r = json_add(o, "nodes", a);
        for (size_t i = 0; r >= 0 && i < js->nodes.n; i++) {
                const Share *x = &js->nodes.items[i];
                json_object *e = json_object_new_object();

                if ((r = json_append(a, e)) < 0 ||
                    (r = json_add(e, "node", json_object_new_string(x->name))) < 0 ||
                    (r = json_add(e, "samples", json_object_new_int64(x->samples))) < 0 ||
                    (r = api_add_share(e, x->samples, js->info.samples)) < 0 ||
                    (r = json_add(e, "cpu_seconds", json_number(x->cpu_seconds, TIME_DECIMALS))) < 0 ||
                    (r = json_add(e, "cpus_allocated", json_int_or_null(x->cpus_alloc))) < 0 ||
                    (r = json_add(e, "first_seen", json_number(x->first_seen, TIME_DECIMALS))) < 0 ||
                    (r = json_add(e, "last_seen", json_number(x->last_seen, TIME_DECIMALS))) < 0 ||
                    (r = api_add_node_measured(e, x)) < 0)
                        return r;
        }
        return r;
}

static int add_notes_markers(json_object *o, const JobSummary *js) {
        json_object *n = json_object_new_object(), *a;
        int r;

        r = json_add(o, "notes", n);
        for (size_t i = 0; r >= 0 && i < js->n_notes; i++)
                r = json_add(n, js->notes[i].key, json_object_new_string(js->notes[i].value));
        if (r < 0)
                return r;

        a = json_object_new_array();
        r = json_add(o, "markers_off", a);
        for (size_t i = 0; r >= 0 && i < js->n_markers; i++) {
                const Marker *m = &js->markers[i];
                json_object *e = json_object_new_object();

                if ((r = json_append(a, e)) < 0 ||
                    (r = json_add(e, "phase", json_object_new_string(m->phase))) < 0 ||
                    (r = json_add(e, "comm", json_object_new_string(m->comm))) < 0 ||
                    (r = json_add(e, "state", json_object_new_string(m->state))) < 0 ||
                    (r = json_add(e, "batches", json_object_new_int64(m->batches))) < 0 ||
                    (r = json_add(e, "first_seen", json_number(m->first_seen, TIME_DECIMALS))) < 0 ||
                    (r = json_add(e, "last_seen", json_number(m->last_seen, TIME_DECIMALS))) < 0)
                        return r;
        }
        return r;
}

static int add_pop_metrics(json_object *e, const PopMetrics *m) {
        int r;

        if ((r = json_add(e, "ranks", json_object_new_int64((int64_t) m->ranks))) < 0 ||
            (r = json_add(e, "load_balance", json_number(m->load_balance, POP_DECIMALS))) < 0 ||
            (r = json_add(e, "communication_efficiency", json_number(m->communication_efficiency, POP_DECIMALS))) < 0 ||
            (r = json_add(e, "parallel_efficiency", json_number(m->parallel_efficiency, POP_DECIMALS))) < 0 ||
            (r = json_add(e, "useful_seconds", json_number(m->useful_seconds, TIME_DECIMALS))) < 0 ||
            (r = json_add(e, "communication_seconds", json_number(m->communication_seconds, TIME_DECIMALS))) < 0 ||
            (r = json_add(e, "mean_useful_seconds", json_number(m->mean_useful_seconds, TIME_DECIMALS))) < 0 ||
            (r = json_add(e, "max_useful_seconds", json_number(m->max_useful_seconds, TIME_DECIMALS))) < 0 ||
            (r = json_add(e, "elapsed_seconds", json_number(m->elapsed_seconds, TIME_DECIMALS))) < 0 ||
            (r = json_add(e, "wall_seconds", json_number(m->wall_seconds, TIME_DECIMALS))) < 0 ||
            (r = json_add(e, "samples", json_object_new_int64(m->samples))) < 0 ||
            (r = json_add(e, "comm_samples", json_object_new_int64(m->comm_samples))) < 0)
                return r;
        return 0;
}

/* "pop": POP metrics of the job's MPI ranks, null when lmkd saw none. */
static int add_pop(json_object *o, const JobSummary *js) {
        _cleanup_(pop_report_free) PopReport rep = {};
        json_object *p, *a;
        int r;

        if (js->n_ranks == 0)
                return json_add(o, "pop", json_null());
        r = pop_compute(js->ranks, js->n_ranks, &rep);
        if (r < 0)
                return r;
        p = json_object_new_object();
        if ((r = json_add(o, "pop", p)) < 0 ||
            (r = add_pop_metrics(p, &rep.job)) < 0 ||
            (r = json_add(p, "truncated", json_object_new_boolean(js->ranks_truncated))) < 0)
                return r;
        a = json_object_new_array();
        r = json_add(p, "phases", a);
        for (size_t i = 0; r >= 0 && i < rep.n_phases; i++) {
                json_object *e = json_object_new_object();

                if ((r = json_append(a, e)) < 0 ||
                    (r = json_add(e, "phase", json_object_new_string(rep.phases[i].phase))) < 0)
                        return r;
                r = add_pop_metrics(e, &rep.phases[i]);
        }
        if (r < 0)
                return r;
        a = json_object_new_array();
        if ((r = json_add(p, "per_rank", a)) < 0 ||
            (r = json_add(p, "per_rank_truncated", json_object_new_boolean(rep.n_per_rank > POP_MAX_PER_RANK))) < 0)
                return r;
        for (size_t i = 0; r >= 0 && i < MIN(rep.n_per_rank, (size_t) POP_MAX_PER_RANK); i++) {
                const PopRank *x = &rep.per_rank[i];
                json_object *e = json_object_new_object();

                if ((r = json_append(a, e)) < 0 ||
                    (r = json_add(e, "rank", json_object_new_int64(x->rank))) < 0 ||
                    (r = json_add(e, "samples", json_object_new_int64(x->samples))) < 0 ||
                    (r = json_add(e, "comm_samples", json_object_new_int64(x->comm_samples))) < 0 ||
                    (r = json_add(e, "useful_seconds", json_number(x->useful_seconds, TIME_DECIMALS))) < 0 ||
                    (r = json_add(e, "communication_seconds",
                                  json_number(x->communication_seconds, TIME_DECIMALS))) < 0)
                        return r;
        }
        return r;
}

/* "timeline": per node and step, the job's busy cores (CPU seconds per
 * second covered) and their share of the job's CPUs there; null where no
 * batch covered the step (docs/lmk-store.md). */
static int add_timeline(json_object *o, const JobSummary *js) {
        json_object *t = json_object_new_object(), *a;
        int r;

        if ((r = json_add(o, "timeline", t)) < 0 ||
            (r = json_add(t, "start", json_number(js->timeline_start, TIME_DECIMALS))) < 0 ||
            (r = json_add(t, "step_seconds", json_number(js->timeline_step, TIME_DECIMALS))) < 0 ||
            (r = json_add(t, "steps", json_object_new_int64((int64_t) js->n_timeline))) < 0 ||
            (r = json_add(t, "nodes_truncated", json_object_new_boolean(js->timeline_truncated))) < 0)
                return r;
        a = json_object_new_array();
        if ((r = json_add(t, "nodes", a)) < 0)
                return r;
        for (size_t i = 0; i < js->n_timeline_nodes; i++) {
                const TimelineNode *tn = &js->timeline[i];
                json_object *e = json_object_new_object(), *cores, *share;

                if ((r = json_append(a, e)) < 0 ||
                    (r = json_add(e, "node", json_object_new_string(tn->node))) < 0 ||
                    (r = json_add(e, "cpus_allocated", json_int_or_null(tn->cpus_alloc))) < 0 ||
                    (r = json_add(e, "busy_cores", cores = json_object_new_array_ext((int) js->n_timeline))) < 0 ||
                    (r = json_add(e, "busy_share", share = json_object_new_array_ext((int) js->n_timeline))) < 0)
                        return r;
                for (size_t k = 0; k < js->n_timeline; k++) {
                        double c = tn->seconds[k] > 0 ? tn->cpu_seconds[k] / tn->seconds[k] : NAN;

                        if ((r = json_append(cores, isnan(c) ? json_null() : json_number(c, IPC_DECIMALS))) < 0 ||
                            (r = json_append(share, isnan(c) || tn->cpus_alloc <= 0 ? json_null() :
                                           json_number(c / (double) tn->cpus_alloc, IPC_DECIMALS))) < 0)
                                return r;
                }
        }
        return 0;
}

static const char *const job_args[] = { "cluster", NULL };

void api_job(Server *s, Request *req, Reply *reply) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        const char *id = req->path_arg;
        JobViewer viewer = api_job_viewer(req);
        JobSummary js = {};
        int r;

        if (!request_check_args(req, job_args, reply))
                return;
        /* Only the jobs the asker may see are looked at: someone else's job
         * is answered as one that does not exist, and an id on several
         * clusters is ambiguous only among the asker's own. */
        r = api_job_id_valid(id) ? s->storage->ops->get_job(s->storage, id, request_arg(req, "cluster"), &viewer, &js)
                                 : -ENOENT;
        if (r < 0) {
                api_job_lookup_failed(s, req, r, NULL, id, reply);
                return;
        }

        o = json_object_new_object();
        if (!o ||
            api_add_job_info(o, &js.info) < 0 ||
            add_counters(o, js.info.cpu_time_ns, js.info.cycles, js.info.instructions) < 0 ||
            add_nodes(o, &js) < 0 ||
            add_kinds(o, &js) < 0 ||
            add_share_list(o, "objects", "object", &js.objects, js.info.samples, true) < 0 ||
            json_add(o, "objects_truncated", json_object_new_boolean(js.objects_truncated)) < 0 ||
            add_share_list(o, "phases", "phase", &js.phases, js.info.samples, false) < 0 ||
            add_notes_markers(o, &js) < 0 ||
            add_pop(o, &js) < 0 ||
            add_timeline(o, &js) < 0 ||
            api_add_job_measured(o, &js) < 0 ||
            api_add_functions(o, "functions", &js.functions, js.info.samples) < 0 ||
            json_add(o, "functions_truncated", json_object_new_boolean(js.functions.truncated)) < 0 ||
            api_add_functions(o, "phase_functions", &js.phase_functions, js.info.samples) < 0 ||
            json_add(o, "phase_functions_truncated", json_object_new_boolean(js.phase_functions.truncated)) < 0 ||
            api_job_findings(s, &js, o) < 0) {
                job_summary_free(&js);
                reply_oom(reply);
                return;
        }
        job_summary_free(&js);
        reply_json(reply, MHD_HTTP_OK, TAKE_PTR(o));
}
