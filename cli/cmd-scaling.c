/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lmk scaling APP: how an application scales across its runs, per problem
 * size, executable and node type, with the fitted forms and a prediction
 * (GET /api/v1/scaling, docs/scaling.md). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>

#include "cli.h"

/* "12.345" or "-": the JSON's number with its three decimals. */
static const char *fmt_s(json_object *o, const char *key, char *buf, size_t size) {
        double v = jnum(o, key);

        if (isnan(v))
                snprintf(buf, size, "-");
        else
                snprintf(buf, size, "%.3f", v);
        return buf;
}

static void print_fit(json_object *g) {
        json_object *fit = jget(g, "fit"), *comp = jget(fit, "computation"), *comm = jget(fit, "communication");
        json_object *pr = jget(g, "prediction"), *runs = jget(g, "runs");
        char a[32], b[32], c[32], d[32], e[32];
        double loo;

        if (!fit) {
                printf("No fit: the runs do not determine the forms.\n");
                return;
        }
        printf("Computation     T(p) = a/p + b with a = %s s, b = %s s (residual %.1f%%)\n", fmt_s(comp, "a", a, sizeof(a)),
               fmt_s(comp, "b", b, sizeof(b)), 100 * jnum(comp, "relative_residual"));
        printf("Communication   C(p) = %s with c1 = %.6g, c2 = %.6g, c3 = %.6g, c4 = %.6g (residual %.1f%%)\n",
               jstr(comm, "form") ?: "?", jnum(comm, "c1"), jnum(comm, "c2"), jnum(comm, "c3"), jnum(comm, "c4"),
               100 * jnum(comm, "relative_residual"));
        loo = jnum(fit, "leave_one_out_error");
        if (isnan(loo))
                printf("Leave-one-out   needs three core counts or more\n");
        else
                printf("Leave-one-out   %.1f%% (RMS relative error of elapsed time, each core count predicted "
                       "from the others)\n", 100 * loo);
        if (pr)
                printf("Predicted       %" PRId64 " cores: elapsed %s s (95%% interval %s-%s s), computation %s s, "
                       "communication %s s\n", jint(pr, "p"), fmt_s(pr, "elapsed_seconds", a, sizeof(a)),
                       fmt_s(pr, "low_seconds", b, sizeof(b)), fmt_s(pr, "high_seconds", c, sizeof(c)),
                       fmt_s(pr, "computation_seconds", d, sizeof(d)),
                       fmt_s(pr, "communication_seconds", e, sizeof(e)));
        for (size_t i = 0; i < json_object_array_length(runs); i++) {
                json_object *x = json_object_array_get_idx(runs, i);

                if (!json_object_get_boolean(jget(x, "off_curve")))
                        continue;
                printf("Off the curve   job %s: %" PRId64 " cores, elapsed %s s, the fit says %s s%s\n",
                       jstr(x, "job") ?: "?", jint(x, "p"), fmt_s(x, "elapsed_seconds", a, sizeof(a)),
                       fmt_s(x, "fit_elapsed_seconds", b, sizeof(b)),
                       json_object_get_boolean(jget(x, "in_fit")) ? "" : " (left out of the fit)");
        }
}

static void print_group(json_object *g) {
        json_object *cc = jget(g, "core_counts");

        bool stand_in = !streq(jstr(g, "node_type_source") ?: "", "node_type");

        printf("\n%s, size %s: %s\n  on %s, node type %s%s, %" PRId64 " runs\n",
               jstr(g, "app") ?: "?", jstr(g, "size") ?: "-", jstr(g, "executable") ?: "?",
               jstr(g, "cluster") ?: "-", jstr(g, "node_type") ?: "?",
               stand_in ? " (partition/CPUs per node: its nodes told no type)" : "", jint(g, "run_count"));
        printf("%7s %5s %10s %10s %10s %8s %8s %10s\n", "CORES", "RUNS", "ELAPSED", "COMPUTE", "COMMUNIC",
               "SPEEDUP", "EFFIC", "WALL");
        for (size_t i = 0; i < json_object_array_length(cc); i++) {
                json_object *x = json_object_array_get_idx(cc, i);
                char e[32], c[32], m[32], s[32], f[32], w[32];

                printf("%7" PRId64 " %5" PRId64 " %10s %10s %10s %8s %8s %10s\n", jint(x, "p"), jint(x, "runs"),
                       fmt_s(x, "elapsed_seconds", e, sizeof(e)), fmt_s(x, "computation_seconds", c, sizeof(c)),
                       fmt_s(x, "communication_seconds", m, sizeof(m)), fmt_s(x, "speedup", s, sizeof(s)),
                       fmt_s(x, "efficiency", f, sizeof(f)), fmt_s(x, "wall_seconds", w, sizeof(w)));
        }
        print_fit(g);
}

int do_scaling(Cli *cli, int argc, char **argv) {
        static const CliOption options[] = {
                { NULL, 0, CLI_FIXED, "app" },
                { "size", 0, CLI_QUERY, "size" },
                { "predict", 0, CLI_QUERY, "predict" },
                { "since", 0, CLI_QUERY, "since" },
                { "until", 0, CLI_QUERY, "until" },
        };
        _cleanup_(json_object_putp) json_object *o = NULL;
        json_object *groups;
        CliQuery query;
        int r;

        r = cli_parse(cli, "scaling", options, INT_MAX, argc, argv, &query);
        if (r < 0)
                return r;
        if (r + 1 != argc)
                return cli_error(cli, EINVAL, "scaling: give one application: lmk scaling APP [--size S] [--predict P]");
        cli_query_set(&query, "app", argv[r]);

        r = cli_get_list(cli, "/api/v1/scaling", query.pairs, &o);
        if (r <= 0)
                return r;
        groups = jget(o, "groups");
        printf("Scaling of %s: %" PRId64 " runs with MPI ranks", jstr(o, "app") ?: "?", jint(o, "runs"));
        if (jint(o, "runs_without_ranks") > 0)
                printf(" (%" PRId64 " more without ranks left out)", jint(o, "runs_without_ranks"));
        if (jint(o, "runs_mixed_node_types") > 0)
                printf(" (%" PRId64 " more on nodes of several types left out)", jint(o, "runs_mixed_node_types"));
        printf(".\nTimes are the busiest rank's sampled seconds: elapsed = computation + communication.\n");
        if (json_object_array_length(groups) == 0)
                printf("No ended runs of %s with MPI ranks in this time.\n", jstr(o, "app") ?: "?");
        for (size_t i = 0; i < json_object_array_length(groups); i++)
                print_group(json_object_array_get_idx(groups, i));
        if (json_object_get_boolean(jget(o, "truncated")))
                printf("\nOnly the most recent runs were looked at.\n");
        return 0;
}
