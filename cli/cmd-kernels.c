/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The site's functions (GET /api/v1/functions): lmk top --functions, the
 * ranking by core-hours, and lmk kernels, the smallest set of functions
 * that covers a share of the site's core-hours, by family and
 * application (docs/kernels.md). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

static void print_header(json_object *o, const char *what) {
        char a[32], b[32], total[32];

        printf("%s, %s to %s\n(shares of all %s samples of the jobs you may see, %.2f core-hours)\n", what,
               fmt_time(jnum(o, "since"), a, sizeof(a)), fmt_time(jnum(o, "until"), b, sizeof(b)),
               fmt_count(jint(o, "total_samples"), total, sizeof(total)), jnum(o, "total_core_hours"));
}

int top_functions(Cli *cli, const CliQuery *q, const char *family, const char *app, const char *user,
                  bool by_family) {
        const char *query[] = { "since", cli_query_get(q, "since"), "until", cli_query_get(q, "until"),
                                "limit", cli_query_get(q, "limit"), "account", cli_query_get(q, "account"),
                                "family", family, "app", app, "user", user,
                                "group", by_family ? "family" : NULL, NULL };
        _cleanup_(json_object_putp) json_object *o = NULL;
        json_object *list;
        int r;

        r = cli_get_list(cli, "/api/v1/functions", query, &o);
        if (r <= 0)
                return r;
        print_header(o, by_family ? "Time per family of functions" : "Time per function");
        list = jget(o, "functions");
        if (json_object_array_length(list) == 0) {
                printf("No functions in this time: lmkd names them (lmkd.conf(5), functions).\n");
                return 0;
        }
        printf("%6s %-15s %10s %5s %5s %5s %5s %-13s %s\n", "SHARE", "95% INTERVAL", "CORE-H", "JOBS", "USERS",
               "APPS", "IPC", "FAMILY", by_family ? "FUNCTIONS" : "FUNCTION  (OBJECT)");
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                json_object *x = json_object_array_get_idx(list, i);
                char share[16], interval[48], ipc[16], name[96], obj[64];

                fmt_share(x, share, sizeof(share));
                fmt_interval(x, false, interval, sizeof(interval));
                fmt_ipc(jget(x, "ipc"), ipc, sizeof(ipc));
                if (by_family) {
                        printf("%6s %-15s %10.2f %5s %5s %5s %5s %-13s %" PRId64 "\n", share, interval,
                               jnum(x, "core_hours"), "", "", "", ipc, jstr(x, "family") ?: "-", jint(x, "functions"));
                        continue;
                }
                printf("%6s %-15s %10.2f %5" PRId64 " %5" PRId64 " %5" PRId64 " %5s %-13s %s  (%s)\n", share, interval,
                       jnum(x, "core_hours"), jint(x, "jobs"), jint(x, "users"), jint(x, "apps"), ipc,
                       jstr(x, "family") ?: "-", fmt_fit(jstr(x, "function") ?: "?", 60, false, name, sizeof(name)),
                       fmt_fit(jstr(x, "object") ?: "?", 40, true, obj, sizeof(obj)));
        }
        if (json_object_get_boolean(jget(o, "truncated")))
                printf("(more: --limit)\n");
        return 0;
}

int do_kernels(Cli *cli, int argc, char **argv) {
        const CliOption options[] = {
                { "since", 0, CLI_QUERY, "since", "365d" },
                { "until", 0, CLI_QUERY, "until" },
                { "share", 0, CLI_QUERY, "share", "80" },
                { "account", 0, CLI_QUERY, "account" },
        };
        const char *query[6];
        _cleanup_(json_object_putp) json_object *o = NULL;
        json_object *list;
        char *end;
        double want, covered = 0;
        size_t n = 0, nq = 0;
        CliQuery q;
        int r;

        r = cli_parse(cli, "kernels", options, 0, argc, argv, &q);
        if (r < 0)
                return r;
        errno = 0;
        want = strtod(cli_query_get(&q, "share"), &end);
        if (errno || *end || !(want > 0 && want <= 100))
                return cli_error(cli, EINVAL, "kernels: --share %s: expected a percentage in (0, 100]",
                                 cli_query_get(&q, "share"));
        if (cli->csv)
                return cli_error(cli, EINVAL, "kernels: --csv is lmk top --functions --csv's (the whole ranking); "
                                 "--json gives the ranking this shortlist is cut from.");
        query[nq++] = "since";
        query[nq++] = cli_query_get(&q, "since");
        query[nq++] = "until";
        query[nq++] = cli_query_get(&q, "until");
        query[nq] = NULL;
        {
                const char *full[] = { query[0], query[1], query[2], query[3], "limit", "100000", "account",
                                       cli_query_get(&q, "account"), NULL };

                r = cli_get_list(cli, "/api/v1/functions", full, &o);
        }
        if (r <= 0)
                return r;
        print_header(o, "The smallest set of functions covering the core-hours");
        list = jget(o, "functions");
        /* ranked by samples: the shortest prefix that reaches the share */
        for (; n < json_object_array_length(list) && covered * 100 < want; n++)
                covered += jnum(json_object_array_get_idx(list, n), "share");
        if (n == 0) {
                printf("No functions in this time: lmkd names them (lmkd.conf(5), functions).\n");
                return 0;
        }
        printf("%zu function%s cover %.1f%% of the core-hours (asked: %.0f%%%s).\n\n", n, n == 1 ? "" : "s",
               covered * 100, want, covered * 100 < want ? "; all named functions together cover less" : "");

        /* by family */
        printf("By family:\n%6s %10s %5s  %-14s %s\n", "SHARE", "CORE-H", "IPC", "FAMILY", "FUNCTIONS");
        {
                const char *seen[256];
                size_t n_seen = 0;

                for (size_t i = 0; i < n && n_seen < ELEMENTSOF(seen); i++) {
                        const char *fam = jstr(json_object_array_get_idx(list, i), "family") ?: "-";
                        double share = 0, hours = 0, ins = 0, cyc = 0;
                        size_t count = 0;
                        bool done = false;
                        char ipc[16];

                        for (size_t k = 0; k < n_seen; k++)
                                done = done || streq(seen[k], fam);
                        if (done)
                                continue;
                        seen[n_seen++] = fam;
                        for (size_t j = i; j < n; j++) {
                                json_object *x = json_object_array_get_idx(list, j);

                                if (!streq(jstr(x, "family") ?: "-", fam))
                                        continue;
                                share += jnum(x, "share");
                                hours += jnum(x, "core_hours");
                                count++;
                                if (!isnan(jnum(x, "cycles")) && !isnan(jnum(x, "instructions"))) {
                                        cyc += jnum(x, "cycles");
                                        ins += jnum(x, "instructions");
                                }
                        }
                        if (cyc > 0)
                                snprintf(ipc, sizeof(ipc), "%.2f", ins / cyc);
                        else
                                snprintf(ipc, sizeof(ipc), "-");
                        printf("%5.1f%% %10.2f %5s  %-14s %zu\n", share * 100, hours, ipc, fam, count);
                }
        }

        /* the list, each with its applications */
        printf("\nThe functions, with the applications that spend their time in them:\n");
        printf("%6s %10s %5s %-13s %s\n", "SHARE", "CORE-H", "IPC", "FAMILY", "FUNCTION  (OBJECT)  [APPLICATIONS]");
        for (size_t i = 0; i < n; i++) {
                json_object *x = json_object_array_get_idx(list, i);
                char ipc[16], name[96], obj[64];

                fmt_ipc(jget(x, "ipc"), ipc, sizeof(ipc));
                printf("%5.1f%% %10.2f %5s %-13s %s  (%s)", jnum(x, "share") * 100, jnum(x, "core_hours"), ipc,
                       jstr(x, "family") ?: "-", fmt_fit(jstr(x, "function") ?: "?", 60, false, name, sizeof(name)),
                       fmt_fit(jstr(x, "object") ?: "?", 40, true, obj, sizeof(obj)));
                {
                        json_object *top = jget(x, "top_apps");

                        printf("  [");
                        for (size_t k = 0; k < json_object_array_length(top); k++) {
                                json_object *t = json_object_array_get_idx(top, k);

                                printf("%s%s", k ? ", " : "", jstr(t, "app") ?: "?");
                                /* a share only where the store knows the range's samples */
                                if (jint(t, "samples") >= 0)
                                        printf(" %.0f%%", 100.0 * (double) jint(t, "samples") /
                                                                  (double) MAX(jint(x, "samples"), 1));
                        }
                        printf("%s]", jint(x, "apps") > (int64_t) json_object_array_length(top) ? ", ..." : "");
                }
                printf("\n");
        }
        return 0;
}
