/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lmk flagged: the site's findings (jobs that waste their allocation, and
 * why), largest core-hours at stake first; and the findings of one job for
 * lmk job. */
#include <errno.h>
#include <math.h>
#include <stdio.h>

#include "cli.h"

static void print_wrapped(const char *indent, const char *text, size_t width) {
        const char *p = text;

        while (*p) {
                size_t n = strlen(p), cut = n;

                if (n > width) {
                        cut = width;
                        while (cut > 0 && p[cut] != ' ')
                                cut--;
                        if (cut == 0)
                                cut = width;
                }
                printf("%s%.*s\n", indent, (int) cut, p);
                p += cut;
                while (*p == ' ')
                        p++;
        }
}

void print_findings(json_object *findings, bool advice) {
        size_t n = json_object_array_length(findings);

        if (n == 0)
                return;
        printf("\nFindings\n");
        for (size_t i = 0; i < n; i++) {
                json_object *f = json_object_array_get_idx(findings, i);
                double ch = jnum(f, "core_hours");

                printf("  %-8s %-16s %s", jstr(f, "severity") ?: "?", jstr(f, "rule") ?: "?",
                       jstr(f, "message") ?: "");
                if (!isnan(ch) && ch > 0)
                        printf(" (%.1f core-hours)", ch);
                printf("\n");
                if (advice && jstr(f, "advice"))
                        print_wrapped("           ", jstr(f, "advice"), 66);
        }
}

int do_flagged(Cli *cli, int argc, char **argv) {
        static const CliOption options[] = {
                { "user", 'u', CLI_QUERY, "user" },
                { "cluster", 0, CLI_QUERY, "cluster" },
                { "since", 0, CLI_QUERY, "since" },
                { "until", 0, CLI_QUERY, "until" },
                { "rule", 0, CLI_QUERY, "rule" },
                { "severity", 0, CLI_QUERY, "severity" },
                { "limit", 'n', CLI_QUERY, "limit" },
        };
        _cleanup_(json_object_putp) json_object *o = NULL;
        json_object *findings;
        CliQuery query;
        int r;

        r = cli_parse(cli, "flagged", options, 0, argc, argv, &query);
        if (r < 0)
                return r;

        r = cli_get_list(cli, "/api/v1/findings", query.pairs, &o);
        if (r <= 0)
                return r;
        findings = jget(o, "findings");
        if (json_object_array_length(findings) == 0)
                printf("No findings in %" PRId64 " jobs.\n", jint(o, "jobs_scanned"));
        else {
                printf("%-12s %-10s %-8s %-16s %10s  %s\n", "JOB", "USER", "SEVERITY", "RULE", "CORE-HOURS",
                       "FINDING");
                for (size_t i = 0; i < json_object_array_length(findings); i++) {
                        json_object *f = json_object_array_get_idx(findings, i);
                        char id[64], user[32];

                        printf("%-12s %-10s %-8s %-16s %10.1f  %s\n",
                               fmt_fit(jstr(f, "job") ?: "?", 12, false, id, sizeof(id)),
                               fmt_fit(jstr(f, "user") ?: "-", 10, false, user, sizeof(user)),
                               jstr(f, "severity") ?: "?", jstr(f, "rule") ?: "?",
                               jnum(f, "core_hours"), jstr(f, "message") ?: "");
                }
                printf("(%" PRId64 " of %" PRId64 " jobs flagged; lmk job ID shows the advice)\n",
                       jint(o, "jobs_flagged"), jint(o, "jobs_scanned"));
                if (jint(o, "total") > (int64_t) json_object_array_length(findings))
                        printf("(%" PRId64 " findings in all: use --limit)\n", jint(o, "total"));
        }
        if (json_object_get_boolean(jget(o, "truncated")))
                printf("(only the most recent %" PRId64 " jobs were looked at: narrow --since)\n",
                       jint(o, "jobs_scanned"));
        return 0;
}
