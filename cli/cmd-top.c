/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lmk top: where the site's CPU time went, per library or executable, per
 * library family (--families) or per installed package (--packages). */
#include <errno.h>
#include <stdio.h>

#include "cli.h"

/* Time per library family or per installed package, of the whole site or
 * of a cluster's, partition's or account's jobs (top's query: since,
 * until, limit and the scope). */
static int top_groups(Cli *cli, bool families, const CliQuery *q) {
        const char *scope[] = { cli_query_get(q, "cluster"), cli_query_get(q, "partition"),
                                cli_query_get(q, "account") };
        const char *fq[] = { "since", cli_query_get(q, "since"), "until", cli_query_get(q, "until"),
                             "cluster", scope[0], "partition", scope[1], "account", scope[2], NULL };
        const char *pq[] = { "since", cli_query_get(q, "since"), "until", cli_query_get(q, "until"),
                             "limit", cli_query_get(q, "limit"), "cluster", scope[0], "partition", scope[1],
                             "account", scope[2], NULL };
        _cleanup_(json_object_putp) json_object *o = NULL;
        char a[32], b[32], total[32];
        json_object *list;
        int r;

        r = cli_get_list(cli, families ? "/api/v1/families" : "/api/v1/packages", families ? fq : pq, &o);
        if (r <= 0)
                return r;
        printf("Time per %s, %s to %s\n(shares of all %s samples in that time%s)\n",
               families ? "library family" : "installed package", fmt_time(jnum(o, "since"), a, sizeof(a)),
               fmt_time(jnum(o, "until"), b, sizeof(b)), fmt_count(jint(o, "total_samples"), total, sizeof(total)),
               scope[0] || scope[1] || scope[2] ? " of these jobs, each prorated to the time" : "");
        list = jget(o, families ? "families" : "packages");
        if (json_object_array_length(list) == 0) {
                printf(families ? "No samples in a known library family in this time.\n" :
                                  "No installed package known: lmkd reports them ([inventory], lmkd.conf(5)).\n");
                return 0;
        }
        printf("%6s %-15s %9s  %s\n", "SHARE", "95% INTERVAL", "CPU TIME", families ? "PURPOSE  FAMILY" :
                                                                                   "MANAGER    PACKAGE");
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                json_object *x = json_object_array_get_idx(list, i);
                char share[16], interval[48], cpu[32], name[160];

                if (families)
                        snprintf(name, sizeof(name), "%-8s %s", jstr(x, "purpose") ?: "?", jstr(x, "family") ?: "?");
                else
                        snprintf(name, sizeof(name), "%-10s %s %s", jstr(x, "manager") ?: "?", jstr(x, "name") ?: "?",
                                 jstr(x, "version") ?: "");
                printf("%6s %-15s %9s  %s\n", fmt_share(x, share, sizeof(share)),
                       fmt_interval(x, false, interval, sizeof(interval)),
                       fmt_duration(jnum(x, "cpu_seconds"), cpu, sizeof(cpu)), name);
        }
        return 0;
}

int do_top(Cli *cli, int argc, char **argv) {
        bool families = false, packages = false, functions = false, group_family = false;
        const char *family = NULL, *app = NULL, *user = NULL;
        const CliOption options[] = {
                { "libs", 0, CLI_QUERY_AS, "kind", "lib" },
                { "exes", 0, CLI_QUERY_AS, "kind", "exe" },
                { "kind", 0, CLI_QUERY, "kind" },
                { "since", 0, CLI_QUERY, "since", "7d" },
                { "until", 0, CLI_QUERY, "until" },
                { "limit", 'n', CLI_QUERY, "limit", "20" },
                { "families", 0, CLI_FLAG, .flag = &families },
                { "packages", 0, CLI_FLAG, .flag = &packages },
                { "cluster", 0, CLI_QUERY, "cluster" },
                { "partition", 0, CLI_QUERY, "partition" },
                { "account", 0, CLI_QUERY, "account" },
                { "functions", 0, CLI_FLAG, .flag = &functions },
                { "by-family", 0, CLI_FLAG, .flag = &group_family },
                { "family", 0, CLI_STRING, .string = &family },
                { "app", 0, CLI_STRING, .string = &app },
                { "user", 0, CLI_STRING, .string = &user },
        };
        _cleanup_(json_object_putp) json_object *o = NULL;
        char a[32], b[32], total[32];
        json_object *objects;
        const char *what, *kind;
        CliQuery query;
        int r;

        r = cli_parse(cli, "top", options, 0, argc, argv, &query);
        if (r < 0)
                return r;
        kind = cli_query_get(&query, "kind");

        if ((families || packages) && (kind || (families && packages)))
                return cli_error(cli, EINVAL, "top: --families and --packages go alone, without a kind");
        if (functions) {
                if (families || packages || kind || cli_query_get(&query, "cluster") ||
                    cli_query_get(&query, "partition"))
                        return cli_error(cli, EINVAL, "top: --functions goes with --since, --until, --limit, "
                                         "--account, --app, --user, --family and --by-family only");
                return top_functions(cli, &query, family, app, user, group_family);
        }
        if (family || app || user || group_family)
                return cli_error(cli, EINVAL, "top: --family, --app, --user and --by-family are --functions's");
        if (families || packages)
                return top_groups(cli, families, &query);

        r = cli_get_list(cli, "/api/v1/objects", query.pairs, &o);
        if (r <= 0)
                return r;

        what = !kind ? "object" : streq(kind, "lib") ? "library" : streq(kind, "exe") ? "executable" : kind;
        printf("Time per %s, %s to %s\n(shares of all %s samples in that time)\n", what,
               fmt_time(jnum(o, "since"), a, sizeof(a)), fmt_time(jnum(o, "until"), b, sizeof(b)),
               fmt_count(jint(o, "total_samples"), total, sizeof(total)));
        objects = jget(o, "objects");
        if (json_object_array_length(objects) == 0) {
                printf("No samples in this time.\n");
                return 0;
        }
        printf("%6s %-15s %9s %-6s %s\n", "SHARE", "95% INTERVAL", "CPU TIME", "KIND", "OBJECT");
        for (size_t i = 0; i < json_object_array_length(objects); i++) {
                json_object *x = json_object_array_get_idx(objects, i);
                char share[16], interval[48], cpu[32], path[128];

                printf("%6s %-15s %9s %-6s %s\n",
                       fmt_share(x, share, sizeof(share)),
                       fmt_interval(x, false, interval, sizeof(interval)),
                       fmt_duration(jnum(x, "cpu_seconds"), cpu, sizeof(cpu)),
                       jstr(x, "kind") ?: "?",
                       fmt_fit(jstr(x, "object") ?: "?", 40, true, path, sizeof(path)));
        }
        return 0;
}
