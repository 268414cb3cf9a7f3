/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lmk compare A B: two runs side by side: their figures, and per kind,
 * object, phase and function both runs' CPU time and share with B − A,
 * its 95% interval and whether the samples tell it apart from no
 * difference. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>

#include "cli.h"

#define MAX_ROWS 25

static const struct {
        const char *dimension, *title, *column;
} dimensions[] = {
        { "kind", "Time by kind", "KIND" },
        { "object", "Objects", "OBJECT" },
        { "phase", "Phases", "PHASE" },
        { "function", "Functions", "FUNCTION (OBJECT)" },
};

/* CPU time as fmt_duration() writes it, with a decimal under a minute:
 * a test run's phases last seconds. */
static const char *fmt_seconds(double v, char *buf, size_t size) {
        if (!isnan(v) && v >= 0 && v < 59.95)
                snprintf(buf, size, "%.1fs", v);
        else
                fmt_duration(v, buf, size);
        return buf;
}

/* "+1m05s", "-12.5s": a signed amount of time */
static const char *fmt_signed(double v, char *buf, size_t size) {
        char d[32];

        if (isnan(v))
                snprintf(buf, size, "-");
        else
                snprintf(buf, size, "%s%s", v < 0 ? "-" : "+", fmt_seconds(fabs(v), d, sizeof(d)));
        return buf;
}

static const char *fmt_ratio(json_object *v, char *buf, size_t size) {
        if (!v || json_object_is_type(v, json_type_null))
                snprintf(buf, size, "new");
        else
                snprintf(buf, size, "x%.2f", json_object_get_double(v));
        return buf;
}

/* The ends of a [low, high] member; NAN for null. */
static void ends(json_object *e, const char *key, double *low, double *high) {
        json_object *ci = jget(e, key);

        *low = *high = NAN;
        if (!ci || !json_object_is_type(ci, json_type_array) || json_object_array_length(ci) != 2)
                return;
        if (json_object_array_get_idx(ci, 0))
                *low = json_object_get_double(json_object_array_get_idx(ci, 0));
        if (json_object_array_get_idx(ci, 1))
                *high = json_object_get_double(json_object_array_get_idx(ci, 1));
}

/* "+2m10s (+1m56s..+2m23s)" */
static const char *fmt_difference(json_object *d, char *buf, size_t size) {
        char v[48], l[48], h[48];
        double low, high;

        ends(d, "cpu_seconds_ci95", &low, &high);
        snprintf(buf, size, "%s (%s..%s)", fmt_signed(jnum(d, "cpu_seconds"), v, sizeof(v)),
                 fmt_signed(low, l, sizeof(l)), fmt_signed(high, h, sizeof(h)));
        return buf;
}


static void print_side(json_object *x) {
        char t[32], s[16];

        if (!x || json_object_is_type(x, json_type_null))
                printf("%8s %7s ", "?", "?");
        else
                printf("%8s %7s ", fmt_seconds(jnum(x, "cpu_seconds"), t, sizeof(t)), fmt_share(x, s, sizeof(s)));
}

static void print_rows(json_object *o, size_t d) {
        json_object *rows = jget(o, "rows");
        size_t n = json_object_array_length(rows), shown = 0, total = 0;
        bool phase = streq(dimensions[d].dimension, "phase");
        bool function = streq(dimensions[d].dimension, "function");

        for (size_t i = 0; i < n; i++)
                total += streq(jstr(json_object_array_get_idx(rows, i), "dimension") ?: "", dimensions[d].dimension);
        if (total == 0)
                return;
        printf("\n%s\n%8s %7s %8s %7s %-26s %7s %-19s %s\n", dimensions[d].title, "A TIME", "A SHARE", "B TIME",
               "B SHARE", "B - A (95% INTERVAL)", "B / A", "DIFFERENCE", dimensions[d].column);
        for (size_t i = 0; i < n && shown < MAX_ROWS; i++) {
                json_object *e = json_object_array_get_idx(rows, i), *diff = jget(e, "difference");
                const char *name = jstr(e, "name") ?: "?";
                char dt[160], ratio[32], fit[128], obj[64];

                if (!streq(jstr(e, "dimension") ?: "", dimensions[d].dimension))
                        continue;
                shown++;
                print_side(jget(e, "a"));
                print_side(jget(e, "b"));
                if (diff && !json_object_is_type(diff, json_type_null))
                        printf("%-26s %7s %-19s ", fmt_difference(diff, dt, sizeof(dt)),
                               fmt_ratio(jget(diff, "ratio"), ratio, sizeof(ratio)), jstr(diff, "verdict") ?: "?");
                else
                        printf("%-26s %7s %-19s ", "? (not listed)", "", "not known");
                if (function)
                        printf("%s (%s)\n", fmt_fit(name, 40, false, fit, sizeof(fit)),
                               fmt_fit(jstr(e, "object") ?: "?", 30, true, obj, sizeof(obj)));
                else
                        printf("%s\n", phase && !*name ? "(outside markers)" : fmt_fit(name, 40, true, fit, sizeof(fit)));
        }
        if (shown < total)
                printf("(%zu more: lmk --csv compare)\n", total - shown);
}

static void print_fact(const char *label, const char *a, const char *b, const char *diff) {
        printf("  %-13s %-24s %-24s %s\n", label, a, b, diff ?: "");
}

static const char *fmt_cores(json_object *r, char *buf, size_t size) {
        int64_t alloc = jint(r, "cpus_allocated");

        if (isnan(jnum(r, "busy_cores")))
                snprintf(buf, size, "-");
        else if (alloc >= 0)
                snprintf(buf, size, "%.1f busy of %" PRId64, jnum(r, "busy_cores"), alloc);
        else
                snprintf(buf, size, "%.1f busy", jnum(r, "busy_cores"));
        return buf;
}

static const char *fmt_pop(json_object *r, char *buf, size_t size) {
        json_object *p = jget(r, "pop");

        if (!p || json_object_is_type(p, json_type_null))
                snprintf(buf, size, "-");
        else
                snprintf(buf, size, "PE %.1f%% (LB %.1f%%, CE %.1f%%)", jnum(p, "parallel_efficiency") * 100,
                         jnum(p, "load_balance") * 100, jnum(p, "communication_efficiency") * 100);
        return buf;
}

static void print_runs(json_object *o) {
        json_object *a = jget(o, "a"), *b = jget(o, "b"), *d = jget(o, "difference");
        char x[64], y[64], z[96], w[48];

        printf("Job %s (%s) vs job %s (%s)\n", jstr(a, "job") ?: "?", jstr(a, "name") ?: "no name",
               jstr(b, "job") ?: "?", jstr(b, "name") ?: "no name");
        print_fact("", "A", "B", "B - A");
        snprintf(x, sizeof(x), "%s%s%s", jstr(a, "user") ?: "-", jstr(a, "cluster") ? " on " : "",
                 jstr(a, "cluster") ?: "");
        snprintf(y, sizeof(y), "%s%s%s", jstr(b, "user") ?: "-", jstr(b, "cluster") ? " on " : "",
                 jstr(b, "cluster") ?: "");
        print_fact("User", x, y, NULL);
        print_fact("Application", jstr(a, "app") ?: "-", jstr(b, "app") ?: "-", NULL);
        print_fact("Started", fmt_time(jnum(a, "first_seen"), x, sizeof(x)),
                   fmt_time(jnum(b, "first_seen"), y, sizeof(y)), NULL);
        snprintf(z, sizeof(z), "%s (x%.2f)", fmt_signed(jnum(d, "elapsed_seconds"), w, sizeof(w)),
                 jnum(d, "elapsed_ratio"));
        print_fact("Elapsed", fmt_duration(jnum(a, "elapsed_seconds"), x, sizeof(x)),
                   fmt_duration(jnum(b, "elapsed_seconds"), y, sizeof(y)), z);
        snprintf(z, sizeof(z), "%s (x%.2f)", fmt_signed(jnum(d, "cpu_seconds"), w, sizeof(w)), jnum(d, "cpu_ratio"));
        print_fact("CPU time", fmt_seconds(jnum(a, "cpu_seconds"), x, sizeof(x)),
                   fmt_seconds(jnum(b, "cpu_seconds"), y, sizeof(y)), z);
        print_fact("Samples", fmt_count(jint(a, "samples"), x, sizeof(x)), fmt_count(jint(b, "samples"), y, sizeof(y)),
                   NULL);
        print_fact("Cores", fmt_cores(a, x, sizeof(x)), fmt_cores(b, y, sizeof(y)), NULL);
        print_fact("IPC", fmt_ipc(jget(a, "ipc"), x, sizeof(x)), fmt_ipc(jget(b, "ipc"), y, sizeof(y)), NULL);
        print_fact("MPI (POP)", fmt_pop(a, x, sizeof(x)), fmt_pop(b, y, sizeof(y)), NULL);
        snprintf(x, sizeof(x), "%zu", json_object_array_length(jget(a, "findings")));
        snprintf(y, sizeof(y), "%zu", json_object_array_length(jget(b, "findings")));
        print_fact("Findings", x, y, NULL);
}

static void print_findings_of(const char *which, json_object *run) {
        json_object *findings = jget(run, "findings");

        for (size_t i = 0; i < json_object_array_length(findings); i++) {
                json_object *f = json_object_array_get_idx(findings, i);

                printf("  %s  %-8s %-16s %s\n", which, jstr(f, "severity") ?: "?", jstr(f, "rule") ?: "?",
                       jstr(f, "message") ?: "");
        }
}

int do_compare(Cli *cli, int argc, char **argv) {
        static const CliOption options[] = {
                { "cluster", 0, CLI_QUERY, "cluster" },
                { "cluster-a", 0, CLI_QUERY, "cluster_a" },
                { "cluster-b", 0, CLI_QUERY, "cluster_b" },
                { NULL, 0, CLI_FIXED, "a" },
                { NULL, 0, CLI_FIXED, "b" },
        };
        _cleanup_(json_object_putp) json_object *o = NULL;
        CliQuery query;
        int r;

        r = cli_parse(cli, "compare", options, INT_MAX, argc, argv, &query);
        if (r < 0)
                return r;
        if (r + 2 != argc)
                return cli_error(cli, EINVAL, "compare: expected two job ids: lmk compare A B, see lmk --help.");
        cli_query_set(&query, "a", argv[r]);
        cli_query_set(&query, "b", argv[r + 1]);

        r = cli_get_list(cli, "/api/v1/compare", query.pairs, &o);
        if (r <= 0)
                return r;
        print_runs(o);
        for (size_t i = 0; i < ELEMENTSOF(dimensions); i++)
                print_rows(o, i);
        printf("\nB - A with its 95%% interval. DIFFERENCE: more or less in B beyond the samples'\n"
               "uncertainty, or not distinguishable where the samples cannot tell A and B apart\n"
               "(lmk(1), COMPARE).\n");
        if (json_object_array_length(jget(jget(o, "a"), "findings")) +
            json_object_array_length(jget(jget(o, "b"), "findings")) > 0) {
                printf("\nFindings\n");
                print_findings_of("A", jget(o, "a"));
                print_findings_of("B", jget(o, "b"));
        }
        return 0;
}
