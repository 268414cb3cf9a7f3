/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lmk top: where the site's CPU time went, per library or executable, per
 * library family (--families) or per installed package (--packages). */
#include <errno.h>
#include <stdio.h>

#include "cli.h"

/* Time per library family or per installed package, of the whole site or
 * of a cluster's, partition's or account's jobs (scope: their values). */
static int top_groups(Cli *cli, bool families, const char *since, const char *until, const char *limit,
                      const char *const *scope) {
        const char *fq[] = { "since", since, "until", until, "cluster", scope[0], "partition", scope[1],
                             "account", scope[2], NULL };
        const char *pq[] = { "since", since, "until", until, "limit", limit, "cluster", scope[0],
                             "partition", scope[1], "account", scope[2], NULL };
        _cleanup_(json_object_putp) json_object *o = NULL;
        char a[32], b[32], total[32];
        json_object *list;
        int r;

        if (cli->csv)
                return cli_get_csv(cli, families ? "/api/v1/families" : "/api/v1/packages", families ? fq : pq);
        r = cli_get(cli, families ? "/api/v1/families" : "/api/v1/packages", families ? fq : pq, &o);
        if (r < 0)
                return r;
        if (cli->json) {
                cli_print_json(o);
                return 0;
        }
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
        static const struct option options[] = {
                CLI_COMMON_OPTIONS,
                { "libs", no_argument, NULL, 'l' },
                { "exes", no_argument, NULL, 'e' },
                { "kind", required_argument, NULL, 'K' },
                { "since", required_argument, NULL, 'S' },
                { "until", required_argument, NULL, 'U' },
                { "limit", required_argument, NULL, 'n' },
                { "families", no_argument, NULL, 'f' },
                { "packages", no_argument, NULL, 'p' },
                { "cluster", required_argument, NULL, 'C' },
                { "partition", required_argument, NULL, 'P' },
                { "account", required_argument, NULL, 'A' },
                {}
        };
        bool families = false, packages = false;
        const char *query[] = { "kind", NULL, "since", "7d", "until", NULL, "limit", "20", "cluster", NULL,
                                "partition", NULL, "account", NULL, NULL };
        _cleanup_(json_object_putp) json_object *o = NULL;
        char a[32], b[32], total[32];
        json_object *objects;
        const char *what;
        int opt, r;

        while ((opt = getopt_long(argc, argv, "hjn:", options, NULL)) >= 0) {
                r = cli_common_option(cli, opt, optarg);
                if (r != 0)
                        continue;
                switch (opt) {
                case 'l':
                case 'e':
                case 'K':
                        if (query[1])
                                return cli_error(cli, EINVAL, "top: give one of --libs, --exes, --kind");
                        query[1] = opt == 'l' ? "lib" : opt == 'e' ? "exe" : optarg;
                        break;
                case 'S':
                        query[3] = optarg;
                        break;
                case 'U':
                        query[5] = optarg;
                        break;
                case 'n':
                        query[7] = optarg;
                        break;
                case 'f':
                        families = true;
                        break;
                case 'p':
                        packages = true;
                        break;
                case 'C':
                        query[9] = optarg;
                        break;
                case 'P':
                        query[11] = optarg;
                        break;
                case 'A':
                        query[13] = optarg;
                        break;
                default:
                        return cli_error(cli, EINVAL, "top: unknown option %s", argv[optind - 1]);
                }
        }
        if (optind < argc)
                return cli_error(cli, EINVAL, "top: unexpected argument %s", argv[optind]);

        if ((families || packages) && (query[1] || (families && packages)))
                return cli_error(cli, EINVAL, "top: --families and --packages go alone, without a kind");
        if (families || packages)
                return top_groups(cli, families, query[3], query[5], query[7],
                                  (const char *const[]) { query[9], query[11], query[13] });

        if (cli->csv)
                return cli_get_csv(cli, "/api/v1/objects", query);
        r = cli_get(cli, "/api/v1/objects", query, &o);
        if (r < 0)
                return r;
        if (cli->json) {
                cli_print_json(o);
                return 0;
        }

        what = !query[1] ? "object" : streq(query[1], "lib") ? "library" : streq(query[1], "exe") ? "executable"
                                                                                                    : query[1];
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
