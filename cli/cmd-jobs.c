/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lmk jobs: the jobs the store has seen, with the job list's filters and
 * sorts (docs/api.md, GET /api/v1/jobs), most recently seen first. */
#include <errno.h>
#include <stdio.h>

#include "cli.h"

/* Each option sets the query parameter of its name. */
static const char *const params[] = {
        "user", "cluster", "account", "partition", "state", "app", "name",
        "since", "until", "sort", "order", "limit", "offset", "node_type",
};
#define PARAM_OPT 0x100

int do_jobs(Cli *cli, int argc, char **argv) {
        static const struct option options[] = {
                CLI_COMMON_OPTIONS,
                { "user", required_argument, NULL, PARAM_OPT + 0 },
                { "cluster", required_argument, NULL, PARAM_OPT + 1 },
                { "account", required_argument, NULL, PARAM_OPT + 2 },
                { "partition", required_argument, NULL, PARAM_OPT + 3 },
                { "state", required_argument, NULL, PARAM_OPT + 4 },
                { "app", required_argument, NULL, PARAM_OPT + 5 },
                { "name", required_argument, NULL, PARAM_OPT + 6 },
                { "since", required_argument, NULL, PARAM_OPT + 7 },
                { "until", required_argument, NULL, PARAM_OPT + 8 },
                { "sort", required_argument, NULL, PARAM_OPT + 9 },
                { "order", required_argument, NULL, PARAM_OPT + 10 },
                { "limit", required_argument, NULL, PARAM_OPT + 11 },
                { "offset", required_argument, NULL, PARAM_OPT + 12 },
                { "node-type", required_argument, NULL, PARAM_OPT + 13 },
                {}
        };
        const char *query[2 * ELEMENTSOF(params) + 1] = {};
        _cleanup_(json_object_putp) json_object *o = NULL;
        json_object *jobs;
        int64_t offset, n, total;
        char count[32];
        int opt, r;

        for (size_t i = 0; i < ELEMENTSOF(params); i++)
                query[2 * i] = params[i];
        while ((opt = getopt_long(argc, argv, "hju:n:", options, NULL)) >= 0) {
                r = cli_common_option(cli, opt, optarg);
                if (r != 0)
                        continue;
                if (opt == 'u')
                        opt = PARAM_OPT + 0;
                else if (opt == 'n')
                        opt = PARAM_OPT + 11;
                if (opt < PARAM_OPT || opt >= PARAM_OPT + (int) ELEMENTSOF(params))
                        return cli_error(cli, EINVAL, "jobs: unknown option %s", argv[optind - 1]);
                query[2 * (opt - PARAM_OPT) + 1] = optarg;
        }
        if (optind < argc)
                return cli_error(cli, EINVAL, "jobs: unexpected argument %s", argv[optind]);

        if (cli->csv)
                return cli_get_csv(cli, "/api/v1/jobs", query);
        r = cli_get(cli, "/api/v1/jobs", query, &o);
        if (r < 0)
                return r;
        if (cli->json) {
                cli_print_json(o);
                return 0;
        }

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
