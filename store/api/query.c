/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The read-only query API: /api/v1/jobs, /api/v1/jobs/{id}, /api/v1/objects,
 * /api/v1/nodes, and the store's own /metrics and /healthz. Shares and
 * ratios are computed here, from the sums the storage backend returns. */
#include <errno.h>
#include <math.h>
#include <time.h>

#include "api/measured.h"
#include "http/json-out.h"
#include "analysis/pop.h"
#include "http/server.h"
#include "analysis/share-interval.h"
#include "api/timeparam.h"
#include "util.h"

#define DEFAULT_LIMIT 100
#define MAX_LIMIT 1000
#define MAX_OFFSET 10000000
#define OBJECTS_DEFAULT_SINCE "7d"

#define TIME_DECIMALS 3
#define SHARE_DECIMALS 6
#define IPC_DECIMALS 3
#define POP_DECIMALS 4
/* per_rank lists at most this many ranks (the metrics use all) */
#define POP_MAX_PER_RANK 1024

bool arg_time(Request *req, const char *key, const char *fallback, int64_t now, int64_t *ret,
                     Reply *reply) {
        const char *v = request_arg(req, key) ?: fallback;
        int r;

        if (!v)
                return true;
        r = time_param_parse(v, now, ret);
        if (r < 0) {
                reply_error(reply, MHD_HTTP_BAD_REQUEST, key,
                            "%s=%s: expected Unix seconds, \"now\", or an age such as 90m, 24h, 7d, 2w", key, v);
                return false;
        }
        return true;
}

bool arg_uint(Request *req, const char *key, unsigned min, unsigned max, unsigned *ret, Reply *reply) {
        const char *v = request_arg(req, key);
        uint64_t n;

        if (!v)
                return true;
        if (safe_atou64(v, 10, &n) < 0 || n < min || n > max) {
                reply_error(reply, MHD_HTTP_BAD_REQUEST, key, "%s=%s: expected an integer from %u to %u",
                            key, v, min, max);
                return false;
        }
        *ret = (unsigned) n;
        return true;
}

static json_object *share_of(int64_t part, int64_t total) {
        return total > 0 ? json_number((double) part / (double) total, SHARE_DECIMALS) : json_number(0, 0);
}

/* "share" and what it rests on (docs/uncertainty.md): its 95% interval,
 * the samples in its denominator, and whether they are enough for more
 * than a rough figure. A part larger than its whole (which the storage
 * never returns) gets a null interval rather than a made-up one. */
int api_add_share(json_object *e, int64_t part, int64_t total) {
        ShareInterval si;
        json_object *ci;
        int r;

        if ((r = json_add(e, "share", share_of(part, total))) < 0)
                return r;
        if (share_interval(part, total, SHARE_Z95, &si) < 0) {
                if ((r = json_add(e, "share_ci95", json_null())) < 0 ||
                    (r = json_add(e, "share_of_samples", json_object_new_int64(MAX(total, 0)))) < 0 ||
                    (r = json_add(e, "share_reliable", json_object_new_boolean(false))) < 0)
                        return r;
                return 0;
        }
        ci = json_object_new_array_ext(2);
        if ((r = json_add(e, "share_ci95", ci)) < 0 ||
            (r = json_append(ci, json_number(si.low, SHARE_DECIMALS))) < 0 ||
            (r = json_append(ci, json_number(si.high, SHARE_DECIMALS))) < 0 ||
            (r = json_add(e, "share_of_samples", json_object_new_int64(si.n))) < 0 ||
            (r = json_add(e, "share_reliable", json_object_new_boolean(si.reliable))) < 0)
                return r;
        return 0;
}

static json_object *ipc(int64_t instructions, int64_t cycles) {
        return json_ratio(instructions, cycles, IPC_DECIMALS);
}

static double elapsed(double first, double last) {
        return isnan(first) || isnan(last) ? NAN : last - first;
}

static int add_job_info(json_object *o, const StoredJob *j) {
        int r;

        if ((r = json_add(o, "job", json_object_new_string(j->job))) < 0 ||
            (r = json_add(o, "cluster", json_string_or_null(*j->cluster ? j->cluster : NULL))) < 0 ||
            (r = json_add(o, "user", json_string_or_null(j->user))) < 0 ||
            (r = json_add(o, "account", json_string_or_null(j->account))) < 0 ||
            (r = json_add(o, "partition", json_string_or_null(j->partition))) < 0 ||
            (r = json_add(o, "name", json_string_or_null(j->name))) < 0 ||
            (r = json_add(o, "app", json_string_or_null(j->app))) < 0 ||
            (r = json_add(o, "nodes_allocated", json_int_or_null(j->nodes_alloc))) < 0 ||
            (r = json_add(o, "tasks", json_int_or_null(j->tasks))) < 0 ||
            (r = json_add(o, "nodes_seen", json_object_new_int64((int64_t) j->n_nodes))) < 0 ||
            (r = json_add(o, "ended", json_object_new_boolean(j->ended))) < 0 ||
            (r = json_add(o, "metadata_conflicts", json_object_new_int64(j->metadata_conflicts))) < 0 ||
            (r = json_add(o, "first_seen", json_number(j->first_seen, TIME_DECIMALS))) < 0 ||
            (r = json_add(o, "last_seen", json_number(j->last_seen, TIME_DECIMALS))) < 0 ||
            (r = json_add(o, "elapsed_seconds", json_number(elapsed(j->first_seen, j->last_seen), TIME_DECIMALS))) < 0 ||
            (r = json_add(o, "samples", json_object_new_int64(j->samples))) < 0 ||
            (r = json_add(o, "cpu_seconds", json_number(j->cpu_seconds, TIME_DECIMALS))) < 0 ||
            (r = api_add_job_measured_info(o, j)) < 0)
                return r;
        return 0;
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

void api_viewer(const Request *req, JobFilter *f) {
        if (req->identity.admin)
                return;
        f->viewer = req->identity.user;
        f->viewer_accounts = req->identity.accounts;
}

/* A person who is no admin, with no name (which lmk-store never lets
 * through), sees no job rather than every one. */
static JobViewer job_viewer(const Request *req) {
        if (req->identity.admin)
                return (JobViewer) {};
        return (JobViewer) { .user = req->identity.user ?: "", .accounts = req->identity.accounts };
}

static const char *const jobs_args[] = { "user", "cluster", "account", "partition", "app", "name", "node_type",
                                        "state", "since", "until", "sort", "order", "limit", "offset", NULL };

/* ?format=csv: a row of the list per job, as add_job_info() writes it. */
const CsvTable api_jobs_csv = CSV_TABLE("jobs", NULL, "lmk-jobs.csv",
        { "job" }, { "cluster" }, { "user" }, { "account" }, { "partition" }, { "name" }, { "app" },
        { "nodes_allocated" }, { "tasks" }, { "nodes_seen" }, { "ended" }, { "metadata_conflicts" },
        { "first_seen" }, { "last_seen" }, { "elapsed_seconds" }, { "samples" }, { "cpu_seconds" },
        { "node_type" }, { "node_types_differ" }, { "energy_joules", "energy.joules" },
        { "energy_alone_joules", "energy.alone_joules" }, { "energy_estimated_joules", "energy.estimated_joules" },
        { "energy_mean_watts", "energy.mean_watts" }, { "exact_cpu_time_ns", "exact.cpu_time_ns" },
        { "exact_cycles", "exact.cycles" }, { "exact_instructions", "exact.instructions" },
        { "exact_ipc", "exact.ipc" });

/* A word from a closed list: false when the reply holds a 400. */
static bool arg_word(Request *req, const char *key, int (*from_string)(const char *), const char *expected,
                     int *ret, Reply *reply) {
        const char *v = request_arg(req, key);
        int x;

        if (!v)
                return true;
        x = from_string(v);
        if (x < 0) {
                reply_error(reply, MHD_HTTP_BAD_REQUEST, key, "%s=%s: expected %s", key, v, expected);
                return false;
        }
        *ret = x;
        return true;
}

static int order_from_string(const char *s) {
        return streq(s, "asc") ? 1 : streq(s, "desc") ? 0 : -EINVAL;
}

void api_jobs(Server *s, Request *req, Reply *reply) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        json_object *a;
        int64_t now = (int64_t) time(NULL);
        JobFilter f = {
                .user = request_arg(req, "user"),
                .cluster = request_arg(req, "cluster"),
                .account = request_arg(req, "account"),
                .partition = request_arg(req, "partition"),
                .app = request_arg(req, "app"),
                .name = request_arg(req, "name"),
                .node_type = request_arg(req, "node_type"),
                .since = INT64_MIN,
                .until = INT64_MAX,
                .limit = DEFAULT_LIMIT,
                .count = true,
        };
        int state = JOB_STATE_ANY, sort = JOB_SORT_LAST_SEEN, ascending = 0;
        JobList l = {};
        int r;

        if (!request_check_args(req, jobs_args, reply) ||
            !arg_time(req, "since", NULL, now, &f.since, reply) ||
            !arg_time(req, "until", NULL, now, &f.until, reply) ||
            !arg_word(req, "state", job_state_from_string, "running or ended", &state, reply) ||
            !arg_word(req, "sort", job_sort_from_string, "last_seen, first_seen or cpu_seconds",
                      &sort, reply) ||
            !arg_word(req, "order", order_from_string, "asc or desc", &ascending, reply) ||
            !arg_uint(req, "limit", 1, MAX_LIMIT, &f.limit, reply) ||
            !arg_uint(req, "offset", 0, MAX_OFFSET, &f.offset, reply))
                return;
        f.state = state;
        f.sort = sort;
        f.ascending = ascending;
        api_viewer(req, &f);

        r = s->storage->ops->list_jobs(s->storage, &f, &l);
        if (r < 0) {
                reply_storage_error(reply, r);
                return;
        }
        o = json_object_new_object();
        a = json_object_new_array();
        r = o ? 0 : -ENOMEM;
        if (r >= 0)
                r = json_add(o, "limit", json_object_new_int64(f.limit));
        if (r >= 0)
                r = json_add(o, "offset", json_object_new_int64(f.offset));
        if (r >= 0)
                r = json_add(o, "sort", json_object_new_string(job_sort_to_string(f.sort)));
        if (r >= 0)
                r = json_add(o, "order", json_object_new_string(f.ascending ? "asc" : "desc"));
        if (r >= 0)
                r = json_add(o, "total", json_object_new_int64((int64_t) l.total));
        if (r >= 0)
                r = json_add(o, "total_exact", json_object_new_boolean(l.total_exact));
        if (r >= 0)
                r = json_add(o, "more", json_object_new_boolean(l.more));
        if (r >= 0)
                r = json_add(o, "jobs", a);
        else
                json_object_put(a);
        for (size_t i = 0; r >= 0 && i < l.n; i++) {
                json_object *j = json_object_new_object();

                r = json_append(a, j);
                if (r >= 0)
                        r = add_job_info(j, &l.items[i]);
        }
        job_list_free(&l);
        if (r < 0) {
                reply_oom(reply);
                return;
        }
        reply_json(reply, MHD_HTTP_OK, TAKE_PTR(o));
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
        JobViewer viewer = job_viewer(req);
        JobSummary js = {};
        int r;

        if (!request_check_args(req, job_args, reply))
                return;
        if (strlen(id) > 64 || strchr(id, '/')) {
                if (!req->identity.admin)
                        server_denied(s, req, "not-yours");
                reply_error(reply, MHD_HTTP_NOT_FOUND, NULL, "no such job: %.64s", id);
                return;
        }
        /* Only the jobs the asker may see are looked at: someone else's job
         * is answered as one that does not exist, and an id on several
         * clusters is ambiguous only among the asker's own. */
        r = s->storage->ops->get_job(s->storage, id, request_arg(req, "cluster"), &viewer, &js);
        if (r == -ENOENT || r == -EACCES) {
                /* counted for people whether or not the job exists:
                 * /metrics, open to all, must not tell either */
                if (!req->identity.admin)
                        server_denied(s, req, "not-yours");
                reply_error(reply, MHD_HTTP_NOT_FOUND, NULL, "no such job: %s", id);
                return;
        }
        if (r == -ENOTUNIQ) {
                reply_error(reply, MHD_HTTP_CONFLICT, "cluster",
                            "job %s exists on several clusters, name one with ?cluster=", id);
                return;
        }
        if (r < 0) {
                reply_storage_error(reply, r);
                return;
        }

        o = json_object_new_object();
        if (!o ||
            add_job_info(o, &js.info) < 0 ||
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
            api_job_findings(s, &js, o) < 0) {
                job_summary_free(&js);
                reply_oom(reply);
                return;
        }
        job_summary_free(&js);
        reply_json(reply, MHD_HTTP_OK, TAKE_PTR(o));
}

static const char *const objects_args[] = { "since", "until", "kind", "limit", "cluster", "partition", "account",
                                            NULL };

const CsvTable api_objects_csv = CSV_TABLE("objects", NULL, "lmk-objects.csv",
        { "object" }, { "kind" }, { "samples" }, CSV_SHARE_COLUMNS, { "cpu_seconds" });

bool api_account_allowed(Server *s, Request *req, const char *account, Reply *reply) {
        /* an admin, or a lead of the account (a job of nobody in it) */
        if (!account || identity_may_see(&req->identity, NULL, account))
                return true;
        /* the same answer whether the account exists or not */
        server_denied(s, req, "not-yours");
        reply_error(reply, MHD_HTTP_FORBIDDEN, "account",
                    "a site view narrowed to an account is for admins and the account's leads");
        return false;
}

bool api_scope(Server *s, Request *req, JobScope *ret, Reply *reply) {
        *ret = (JobScope) {
                .cluster = request_arg(req, "cluster"),
                .partition = request_arg(req, "partition"),
                .account = request_arg(req, "account"),
        };
        return api_account_allowed(s, req, ret->account, reply);
}

const char *api_grain_name(int64_t grain) {
        return grain == 86400 ? "day" : grain == 3600 ? "hour" : "jobs";
}

void api_objects(Server *s, Request *req, Reply *reply) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        json_object *a;
        int64_t now = (int64_t) time(NULL);
        ObjectFilter f = { .until = now, .kind = -1, .limit = DEFAULT_LIMIT };
        const char *kind = request_arg(req, "kind");
        ObjectList l = {};
        int r;

        if (!request_check_args(req, objects_args, reply) ||
            !api_scope(s, req, &f.scope, reply) ||
            !arg_time(req, "since", OBJECTS_DEFAULT_SINCE, now, &f.since, reply) ||
            !arg_time(req, "until", NULL, now, &f.until, reply) ||
            !arg_uint(req, "limit", 1, MAX_LIMIT, &f.limit, reply))
                return;
        if (kind && (f.kind = code_kind_from_string(kind)) < 0) {
                reply_error(reply, MHD_HTTP_BAD_REQUEST, "kind",
                            "kind=%s: expected exe, lib, kernel, idle, anon or unknown", kind);
                return;
        }

        r = s->storage->ops->list_objects(s->storage, &f, &l);
        if (r < 0) {
                reply_storage_error(reply, r);
                return;
        }
        o = json_object_new_object();
        a = json_object_new_array();
        if (!o || !a ||
            json_add(o, "since", json_object_new_int64(l.since)) < 0 ||
            json_add(o, "until", json_object_new_int64(l.until)) < 0 ||
            json_add(o, "grain", json_object_new_string(api_grain_name(l.grain))) < 0 ||
            json_add(o, "kind", json_string_or_null(kind)) < 0 ||
            json_add(o, "total_samples", json_object_new_int64(l.total_samples)) < 0 ||
            json_add(o, "total_cpu_seconds", json_number(l.total_cpu_seconds, TIME_DECIMALS)) < 0) {
                json_object_put(a);
                r = -ENOMEM;
        } else
                r = json_add(o, "objects", a);
        for (size_t i = 0; r >= 0 && i < l.objects.n; i++) {
                const Share *x = &l.objects.items[i];
                json_object *e = json_object_new_object();

                if ((r = json_append(a, e)) < 0 ||
                    (r = json_add(e, "object", json_object_new_string(x->name))) < 0 ||
                    (r = json_add(e, "kind", json_object_new_string(x->kind))) < 0 ||
                    (r = json_add(e, "samples", json_object_new_int64(x->samples))) < 0 ||
                    (r = api_add_share(e, x->samples, l.total_samples)) < 0 ||
                    (r = json_add(e, "cpu_seconds", json_number(x->cpu_seconds, TIME_DECIMALS))) < 0)
                        break;
        }
        object_list_free(&l);
        if (r < 0) {
                reply_oom(reply);
                return;
        }
        reply_json(reply, MHD_HTTP_OK, TAKE_PTR(o));
}

static const char *const no_args[] = { NULL };

const CsvTable api_nodes_csv = CSV_TABLE("nodes", NULL, "lmk-nodes.csv",
        { "node" }, { "hostname" }, { "cluster" }, { "cpus" }, { "boot_id" }, { "last_seq" }, { "batches" },
        { "samples" }, { "samples_lost" }, { "first_seen" }, { "last_seen" }, { "last_push" },
        { "last_push_age_seconds" }, { "node_type_id", "node_type.id" }, { "node_type_name", "node_type.name" },
        { "node_type_cpu_model", "node_type.cpu_model" }, { "node_type_sockets", "node_type.sockets" },
        { "node_type_cores", "node_type.cores" }, { "node_type_threads", "node_type.threads" },
        { "node_type_memory_gib", "node_type.memory_gib" }, { "node_type_gpus", "node_type.gpus" },
        { "kernel" }, { "memory_bytes" });

void api_nodes(Server *s, Request *req, Reply *reply) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        json_object *a;
        int64_t now = (int64_t) time(NULL);
        NodeList l = {};
        int r;

        if (!request_check_args(req, no_args, reply))
                return;
        r = s->storage->ops->list_nodes(s->storage, &l);
        if (r < 0) {
                reply_storage_error(reply, r);
                return;
        }
        o = json_object_new_object();
        a = json_object_new_array();
        if (o)
                r = json_add(o, "nodes", a);
        else {
                json_object_put(a);
                r = -ENOMEM;
        }
        for (size_t i = 0; r >= 0 && i < l.n; i++) {
                const NodeInfo *n = &l.items[i];
                json_object *e = json_object_new_object();
                /* A batch's key (node, boot id, spool, seq) is for admins:
                 * whoever holds a node token and knows it could push the
                 * node's next batch first. */
                bool keys = req->identity.admin;
                int64_t age;

                /* measured on this store's monotonic clock where it took
                 * the node's pushes (node-health.h): a step of the wall
                 * clock makes no node younger or older */
                if (!s->node_health || node_health_age(s->node_health, n->name, &age) < 0)
                        age = MAX(now - n->last_push, INT64_C(0));

                if ((r = json_append(a, e)) < 0 ||
                    (r = json_add(e, "node", json_object_new_string(n->name))) < 0 ||
                    (r = json_add(e, "hostname", json_string_or_null(n->hostname))) < 0 ||
                    (r = json_add(e, "cluster", json_string_or_null(n->cluster))) < 0 ||
                    (r = json_add(e, "cpus", json_object_new_int64(n->cpus))) < 0 ||
                    (r = json_add(e, "boot_id", json_string_or_null(keys ? n->boot_id : NULL))) < 0 ||
                    (r = json_add(e, "last_seq", keys ? json_object_new_int64(n->last_seq) : json_null())) < 0 ||
                    (r = json_add(e, "batches", json_object_new_int64(n->batches))) < 0 ||
                    (r = json_add(e, "samples", json_object_new_int64(n->samples))) < 0 ||
                    (r = json_add(e, "samples_lost", json_object_new_int64(n->samples_lost))) < 0 ||
                    (r = json_add(e, "first_seen", json_number(n->first_seen, TIME_DECIMALS))) < 0 ||
                    (r = json_add(e, "last_seen", json_number(n->last_seen, TIME_DECIMALS))) < 0 ||
                    (r = json_add(e, "last_push", json_object_new_int64(n->last_push))) < 0 ||
                    (r = json_add(e, "last_push_age_seconds", json_object_new_int64(age))) < 0 ||
                    (r = json_add(e, "node_type", api_node_type_json(&n->type))) < 0 ||
                    (r = json_add(e, "kernel", json_string_or_null(n->kernel))) < 0 ||
                    (r = json_add(e, "memory_bytes", n->memory_bytes > 0 ? json_object_new_int64(n->memory_bytes)
                                                                         : json_null())) < 0)
                        break;
        }
        node_list_free(&l);
        if (r < 0) {
                reply_oom(reply);
                return;
        }
        reply_json(reply, MHD_HTTP_OK, TAKE_PTR(o));
}

void api_metrics(Server *s, Request *req, Reply *reply) {
        StorageStats st = {};
        FILE *f;

        if (!request_check_args(req, no_args, reply))
                return;
        f = open_memstream(&reply->text, &reply->text_size);
        if (!f) {
                reply_oom(reply);
                return;
        }
        metrics_write(&s->metrics, s->storage->ops->stats(s->storage, &st) >= 0 ? (int64_t) st.db_bytes : -1, f);
        if (s->node_health)
                (void) node_health_write_metrics(s->node_health, f);
        if (fclose(f) != 0) {
                free(reply->text);
                reply->text = NULL;
                reply_oom(reply);
                return;
        }
        reply->status = MHD_HTTP_OK;
        reply->content_type = "text/plain; version=0.0.4; charset=utf-8";
}

/* 200 only when the store takes batches: its database answers a read, and
 * its disk took the last write tried (a full one refuses every batch while
 * reads still work). */
void api_healthz(Server *s, Request *req, Reply *reply) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        int64_t full_since = atomic_load(&s->metrics.disk_full_since);
        const char *status;
        int r;

        if (!request_check_args(req, no_args, reply))
                return;
        r = s->storage->ops->check(s->storage);
        status = r < 0 ? "database unavailable" : full_since != 0 ? "database disk full" : "ok";
        o = json_object_new_object();
        if (!o ||
            json_add(o, "status", json_object_new_string(status)) < 0 ||
            json_add(o, "version", json_object_new_string(PACKAGE_VERSION)) < 0 ||
            json_add(o, "storage", json_object_new_string(s->storage->ops->name)) < 0 ||
            (full_since != 0 && json_add(o, "disk_full_since", json_object_new_int64(full_since)) < 0)) {
                reply_oom(reply);
                return;
        }
        reply_json(reply, streq(status, "ok") ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE, TAKE_PTR(o));
        /* the episode was logged when it began */
        reply->quiet = full_since != 0 && r >= 0;
}
