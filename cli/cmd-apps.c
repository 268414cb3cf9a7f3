/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lmk apps: the site's application mix (GET /api/v1/apps): CPU time per
 * application, user, account or partition, the top N and everything else,
 * and with --weekly the same week by week. */
#include <errno.h>
#include <stdio.h>

#include "cli.h"

static void print_weekly(json_object *o, json_object *groups) {
        json_object *weeks = jget(o, "weeks");
        size_t n = json_object_array_length(groups);

        printf("\nCore-hours per week (columns as the rows above, then everything else):\n");
        for (size_t w = 0; w < json_object_array_length(weeks); w++) {
                json_object *x = json_object_array_get_idx(weeks, w), *g = jget(x, "groups");
                char day[32];

                fmt_time(jnum(x, "start"), day, sizeof(day));
                day[10] = 0; /* the date of "YYYY-MM-DD HH:MM" */
                printf("week of %s %9.2f |", day, jnum(x, "cpu_seconds") / 3600);
                for (size_t i = 0; i < n; i++)
                        printf(" %8.2f", json_object_get_double(json_object_array_get_idx(g, i)) / 3600);
                if (json_object_get_type(jget(o, "other")) == json_type_object)
                        printf(" %8.2f", jnum(x, "other") / 3600);
                printf("\n");
        }
}

int do_apps(Cli *cli, int argc, char **argv) {
        bool weekly = false;
        const CliOption options[] = {
                { "by", 0, CLI_QUERY, "by" },
                { "top", 'n', CLI_QUERY, "top" },
                { "since", 0, CLI_QUERY, "since", "30d" },
                { "until", 0, CLI_QUERY, "until" },
                { "user", 0, CLI_QUERY, "user" },
                { "account", 0, CLI_QUERY, "account" },
                { "partition", 0, CLI_QUERY, "partition" },
                { "app", 0, CLI_QUERY, "app" },
                { "weekly", 0, CLI_FLAG, .flag = &weekly },
        };
        _cleanup_(json_object_putp) json_object *o = NULL;
        json_object *groups, *other;
        char a[32], b[32], total[32];
        const char *by;
        CliQuery query;
        int r;

        r = cli_parse(cli, "apps", options, 0, argc, argv, &query);
        if (r < 0)
                return r;

        r = cli_get_list(cli, "/api/v1/apps", query.pairs, &o);
        if (r <= 0)
                return r;
        by = jstr(o, "by") ?: "app";
        printf("CPU time per %s, %s to %s: %.2f core-hours in %s samples, %" PRId64 " job%s started\n",
               streq(by, "app") ? "application" : by, fmt_time(jnum(o, "since"), a, sizeof(a)),
               fmt_time(jnum(o, "until"), b, sizeof(b)), jnum(o, "total_core_hours"),
               fmt_count(jint(o, "total_samples"), total, sizeof(total)), jint(o, "total_runs"),
               jint(o, "total_runs") == 1 ? "" : "s");
        groups = jget(o, "groups");
        if (json_object_array_length(groups) == 0) {
                printf("No job time in this range.\n");
                return 0;
        }
        printf("%6s %-15s %9s %6s  %s\n", "SHARE", "95% INTERVAL", "CPU TIME", "JOBS",
               streq(by, "app") ? "APPLICATION (from)" : "NAME");
        for (size_t i = 0; i < json_object_array_length(groups); i++) {
                json_object *x = json_object_array_get_idx(groups, i);
                char share[16], interval[48], cpu[32], name[200];

                if (jstr(x, "kind"))
                        snprintf(name, sizeof(name), "%s (%s)", jstr(x, "name") ?: "unknown", jstr(x, "kind"));
                else
                        snprintf(name, sizeof(name), "%s", jstr(x, "name") ?: "unknown");
                printf("%6s %-15s %9s %6" PRId64 "  %s\n", fmt_share(x, share, sizeof(share)),
                       fmt_interval(x, false, interval, sizeof(interval)),
                       fmt_duration(jnum(x, "cpu_seconds"), cpu, sizeof(cpu)), jint(x, "runs"), name);
        }
        other = jget(o, "other");
        if (json_object_get_type(other) == json_type_object) {
                char share[16], interval[48], cpu[32];

                printf("%6s %-15s %9s %6" PRId64 "  everything else (%" PRId64 " more)\n",
                       fmt_share(other, share, sizeof(share)), fmt_interval(other, false, interval, sizeof(interval)),
                       fmt_duration(jnum(other, "cpu_seconds"), cpu, sizeof(cpu)), jint(other, "runs"),
                       jint(other, "groups"));
        }
        if (weekly)
                print_weekly(o, groups);
        return 0;
}
