/* SPDX-License-Identifier: GPL-2.0-or-later */
/* GET /api/v1/jobs: the jobs, filtered, sorted and a page at a time. */
#include <errno.h>
#include <math.h>
#include <time.h>

#include "api/api.h"
#include "api/measured.h"
#include "util.h"

#define DEFAULT_LIMIT 100
#define MAX_LIMIT 1000
#define MAX_OFFSET 10000000

static double elapsed(double first, double last) {
        return isnan(first) || isnan(last) ? NAN : last - first;
}

int api_add_job_info(json_object *o, const StoredJob *j) {
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
            (r = json_add(o, "opted_out", json_object_new_boolean(j->opted_out))) < 0 ||
            (r = json_add(o, "counters_released", json_object_new_boolean(j->counters_released))) < 0 ||
            (r = json_add(o, "first_seen", json_number(j->first_seen, TIME_DECIMALS))) < 0 ||
            (r = json_add(o, "last_seen", json_number(j->last_seen, TIME_DECIMALS))) < 0 ||
            (r = json_add(o, "elapsed_seconds", json_number(elapsed(j->first_seen, j->last_seen), TIME_DECIMALS))) < 0 ||
            (r = json_add(o, "samples", json_object_new_int64(j->samples))) < 0 ||
            (r = json_add(o, "cpu_seconds", json_number(j->cpu_seconds, TIME_DECIMALS))) < 0 ||
            (r = api_add_job_measured_info(o, j)) < 0)
                return r;
        return 0;
}
static const char *const jobs_args[] = { "user", "cluster", "account", "partition", "app", "name", "node_type",
                                        "state", "since", "until", "sort", "order", "limit", "offset", NULL };

/* ?format=csv: a row of the list per job, as api_add_job_info() writes it. */
const CsvTable api_jobs_csv = CSV_TABLE("jobs", NULL, "lmk-jobs.csv",
        { "job" }, { "cluster" }, { "user" }, { "account" }, { "partition" }, { "name" }, { "app" },
        { "nodes_allocated" }, { "tasks" }, { "nodes_seen" }, { "ended" }, { "metadata_conflicts" },
        { "opted_out" }, { "counters_released" },
        { "first_seen" }, { "last_seen" }, { "elapsed_seconds" }, { "samples" }, { "cpu_seconds" },
        { "node_type" }, { "node_types_differ" }, { "energy_joules", "energy.joules" },
        { "energy_alone_joules", "energy.alone_joules" }, { "energy_estimated_joules", "energy.estimated_joules" },
        { "energy_mean_watts", "energy.mean_watts" }, { "exact_cpu_time_ns", "exact.cpu_time_ns" },
        { "exact_cycles", "exact.cycles" }, { "exact_instructions", "exact.instructions" },
        { "exact_ipc", "exact.ipc" });

static int order_from_string(const char *s) {
        return streq(s, "asc") ? 1 : streq(s, "desc") ? 0 : -EINVAL;
}

void api_jobs(Server *s, Request *req, Reply *reply) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        json_object *a;
        int64_t now = (int64_t) time(NULL);
        JobFilter f = api_job_filter(req);
        int state = JOB_STATE_ANY, sort = JOB_SORT_LAST_SEEN, ascending = 0;
        JobList l = {};
        int r;

        f.since = INT64_MIN;
        f.until = INT64_MAX;
        f.limit = DEFAULT_LIMIT;
        f.count = true;
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
                        r = api_add_job_info(j, &l.items[i]);
        }
        job_list_free(&l);
        if (r < 0) {
                reply_oom(reply);
                return;
        }
        reply_json(reply, MHD_HTTP_OK, TAKE_PTR(o));
}
