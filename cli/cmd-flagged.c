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
        static const struct option options[] = {
                CLI_COMMON_OPTIONS,
                { "user", required_argument, NULL, 'u' },
                { "cluster", required_argument, NULL, 'c' },
                { "since", required_argument, NULL, 'S' },
                { "until", required_argument, NULL, 'U' },
                { "rule", required_argument, NULL, 'r' },
                { "severity", required_argument, NULL, 'e' },
                { "limit", required_argument, NULL, 'n' },
                {}
        };
        const char *query[] = { "user", NULL, "cluster", NULL, "since", NULL, "until", NULL,
                                "rule", NULL, "severity", NULL, "limit", NULL, NULL };
        _cleanup_(json_object_putp) json_object *o = NULL;
        json_object *findings;
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
                case 'r':
                        query[9] = optarg;
                        break;
                case 'e':
                        query[11] = optarg;
                        break;
                case 'n':
                        query[13] = optarg;
                        break;
                default:
                        return cli_error(cli, EINVAL, "flagged: unknown option %s", argv[optind - 1]);
                }
        }
        if (optind < argc)
                return cli_error(cli, EINVAL, "flagged: unexpected argument %s", argv[optind]);

        if (cli->csv)
                return cli_get_csv(cli, "/api/v1/findings", query);
        r = cli_get(cli, "/api/v1/findings", query, &o);
        if (r < 0)
                return r;
        if (cli->json) {
                cli_print_json(o);
                return 0;
        }
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
