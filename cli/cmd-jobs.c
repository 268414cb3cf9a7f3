/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lmk jobs: the jobs the store has seen, most recent first. */
#include <errno.h>
#include <stdio.h>

#include "cli.h"

int do_jobs(Cli *cli, int argc, char **argv) {
        static const struct option options[] = {
                CLI_COMMON_OPTIONS,
                { "user", required_argument, NULL, 'u' },
                { "cluster", required_argument, NULL, 'c' },
                { "since", required_argument, NULL, 'S' },
                { "until", required_argument, NULL, 'U' },
                { "limit", required_argument, NULL, 'n' },
                { "offset", required_argument, NULL, 'o' },
                {}
        };
        const char *query[] = { "user", NULL, "cluster", NULL, "since", NULL, "until", NULL,
                                "limit", NULL, "offset", NULL, NULL };
        _cleanup_(json_object_putp) json_object *o = NULL;
        json_object *jobs;
        int opt, r;

        while ((opt = getopt_long(argc, argv, "hju:n:", options, NULL)) >= 0) {
                r = cli_common_option(cli, opt, optarg);
                if (r != 0)
                        continue;
                switch (opt) {
                case 'u':
                        query[1] = optarg;
                        break;
                case 'c':
                        query[3] = optarg;
                        break;
                case 'S':
                        query[5] = optarg;
                        break;
                case 'U':
                        query[7] = optarg;
                        break;
                case 'n':
                        query[9] = optarg;
                        break;
                case 'o':
                        query[11] = optarg;
                        break;
                default:
                        return cli_error(cli, EINVAL, "jobs: unknown option %s", argv[optind - 1]);
                }
        }
        if (optind < argc)
                return cli_error(cli, EINVAL, "jobs: unexpected argument %s", argv[optind]);

        r = cli_get(cli, "/api/v1/jobs", query, &o);
        if (r < 0)
                return r;
        if (cli->json) {
                cli_print_json(o);
                return 0;
        }

        jobs = jget(o, "jobs");
        if (json_object_array_length(jobs) == 0) {
                printf("No jobs.\n");
                return 0;
        }
        printf("%-12s %-10s %-13s %5s %-16s %8s %9s\n", "JOB", "USER", "NAME", "NODES", "FIRST SEEN",
               "ELAPSED", "CPU TIME");
        for (size_t i = 0; i < json_object_array_length(jobs); i++) {
                json_object *j = json_object_array_get_idx(jobs, i);
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
        if (json_object_get_boolean(jget(o, "more")))
                printf("(more jobs: use --limit or --offset)\n");
        return 0;
}
