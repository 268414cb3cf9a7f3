/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lmk jobs: the jobs the store has seen, with the job list's filters and
 * sorts (docs/api.md, GET /api/v1/jobs), most recently seen first. */
#include <errno.h>
#include <stdio.h>

#include "cli.h"

int do_jobs(Cli *cli, int argc, char **argv) {
        static const CliOption options[] = {
                { "user", 'u', CLI_QUERY, "user" },
                { "cluster", 0, CLI_QUERY, "cluster" },
                { "account", 0, CLI_QUERY, "account" },
                { "partition", 0, CLI_QUERY, "partition" },
                { "state", 0, CLI_QUERY, "state" },
                { "app", 0, CLI_QUERY, "app" },
                { "name", 0, CLI_QUERY, "name" },
                { "since", 0, CLI_QUERY, "since" },
                { "until", 0, CLI_QUERY, "until" },
                { "sort", 0, CLI_QUERY, "sort" },
                { "order", 0, CLI_QUERY, "order" },
                { "limit", 'n', CLI_QUERY, "limit" },
                { "offset", 0, CLI_QUERY, "offset" },
                { "node-type", 0, CLI_QUERY, "node_type" },
        };
        _cleanup_(json_object_putp) json_object *o = NULL;
        json_object *jobs;
        int64_t offset, n, total;
        char count[32];
        CliQuery query;
        int r;

        r = cli_parse(cli, "jobs", options, 0, argc, argv, &query);
        if (r < 0)
                return r;

        r = cli_get_list(cli, "/api/v1/jobs", query.pairs, &o);
        if (r <= 0)
                return r;

        jobs = jget(o, "jobs");
        n = (int64_t) json_object_array_length(jobs);
        offset = jint(o, "offset");
        total = jint(o, "total");
        if (n == 0) {
                if (total > 0)
                        printf("No jobs past %" PRId64 " (%s in all).\n", offset, fmt_count(total, count, sizeof(count)));
                else
                        printf("No jobs.\n");
                return 0;
        }
        printf("%-12s %-10s %-13s %5s %-16s %8s %9s\n", "JOB", "USER", "NAME", "NODES", "FIRST SEEN",
               "ELAPSED", "CPU TIME");
        for (int64_t i = 0; i < n; i++) {
                json_object *j = json_object_array_get_idx(jobs, (size_t) i);
                char id[64], user[32], name[32], t[32], el[32], cpu[32];

                printf("%-12s %-10s %-13s %5" PRId64 " %-16s %8s %9s\n",
                       fmt_fit(jstr(j, "job") ?: "?", 12, false, id, sizeof(id)),
                       fmt_fit(jstr(j, "user") ?: "-", 10, false, user, sizeof(user)),
                       fmt_fit(jstr(j, "name") ?: "-", 13, false, name, sizeof(name)),
                       jint(j, "nodes_seen"),
                       fmt_time(jnum(j, "first_seen"), t, sizeof(t)),
                       fmt_duration(jnum(j, "elapsed_seconds"), el, sizeof(el)),
                       fmt_duration(jnum(j, "cpu_seconds"), cpu, sizeof(cpu)));
        }
        /* where this page is, when it is not all there is */
        if (offset > 0 || json_object_get_boolean(jget(o, "more"))) {
                printf("jobs %" PRId64 "-%" PRId64 " of %s%s", offset + 1, offset + n,
                       json_object_get_boolean(jget(o, "total_exact")) ? "" : "more than ",
                       fmt_count(total, count, sizeof(count)));
                if (json_object_get_boolean(jget(o, "more")))
                        printf("; next: --offset %" PRId64, offset + n);
                printf("\n");
        }
        return 0;
}
