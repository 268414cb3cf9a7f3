/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Two runs side by side, /compare?a=JOB&b=JOB: GET /api/v1/compare drawn
 * for people, per kind, object, phase and function. With one job or none, the form to choose them and recent
 * jobs to choose from. */
#include <math.h>

#include "util.h"
#include "web/web.h"

/* rows per dimension on the page; the JSON and CSV have all */
#define ROWS_SHOWN 50
#define RECENT_JOBS 20

static const struct {
        const char *dimension, *title, *column;
} dimensions[] = {
        { "kind", "Time by kind", "Kind" },
        { "object", "Executables and libraries", "Object" },
        { "phase", "Phases", "Phase" },
        { "function", "Functions", "Function" },
};

static const char *const kind_names[][2] = {
        { "exe", "executable" }, { "lib", "libraries" }, { "kernel", "kernel" },
        { "anon", "anonymous code" }, { "unknown", "unknown" }, { "idle", "idle" },
};

static const char *kind_name(const char *kind) {
        for (size_t i = 0; kind && i < ELEMENTSOF(kind_names); i++)
                if (streq(kind_names[i][0], kind))
                        return kind_names[i][1];
        return kind;
}

/* The ends of a [low, high] member; NAN for a null end or no member. */
static void ends(json_object *e, const char *key, double *low, double *high) {
        json_object *ci = jget(e, key), *l, *u;

        *low = *high = NAN;
        if (!ci || !json_object_is_type(ci, json_type_array) || json_object_array_length(ci) != 2)
                return;
        l = json_object_array_get_idx(ci, 0);
        u = json_object_array_get_idx(ci, 1);
        if (l)
                *low = json_object_get_double(l);
        if (u)
                *high = json_object_get_double(u);
}

/* A signed amount of CPU time and its interval (NAN: none) in one unit:
 * the one web_cpu_time() picks for the largest of them. */
static void cpu_signed(Html *h, double v, double low, double high) {
        double m, unit;
        const char *name;

        if (!isfinite(v)) {
                html_raw(h, "–");
                return;
        }
        m = fmax(fabs(v), fmax(isfinite(low) ? fabs(low) : 0, isfinite(high) ? fabs(high) : 0));
        unit = m >= 3600 ? 3600 : m >= 60 ? 60 : 1;
        name = m >= 3600 ? "core-h" : m >= 60 ? "core-min" : "core-s";
        html_rawf(h, "%+.1f %s", v / unit, name);
        if (isfinite(low) && isfinite(high))
                html_rawf(h, " <small>(%+.1f to %+.1f)</small>", low / unit, high / unit);
}

static void cpu_difference(Html *h, json_object *d) {
        double low, high;

        ends(d, "cpu_seconds_ci95", &low, &high);
        cpu_signed(h, jnum(d, "cpu_seconds"), low, high);
}

/* b / a and its interval; "new" where a had none. */
static void ratio(Html *h, json_object *d) {
        double v = jnum(d, "ratio"), low, high;

        if (!isfinite(v)) {
                html_raw(h, "new");
                return;
        }
        ends(d, "ratio_ci95", &low, &high);
        html_rawf(h, "×%.2f", v);
        if (!isfinite(low))
                return;
        html_rawf(h, " <small>(%.2f–", low);
        if (isfinite(high))
                html_rawf(h, "%.2f", high);
        else
                html_raw(h, "∞");
        html_raw(h, ")</small>");
}

/* What the samples say of the difference in CPU time, in words. */
static void verdict(Html *h, json_object *d) {
        if (!jbool(d, "beyond_uncertainty"))
                html_raw(h, "<span class=\"same\" title=\"the 95% interval of the difference holds 0: the samples "
                            "cannot tell the runs apart here\">≈ not distinguishable</span>");
        else if (jnum(d, "cpu_seconds") > 0)
                html_raw(h, "<span class=\"more\" title=\"beyond the uncertainty of the samples\">▲ more in B</span>");
        else
                html_raw(h, "<span class=\"less\" title=\"beyond the uncertainty of the samples\">▼ less in B</span>");
}

/* One run's CPU time of an item over its share, or why the run does not
 * say. */
static void side_cell(Html *h, json_object *x) {
        if (!x) {
                html_raw(h, "<td class=\"num muted\">not listed: the run lists only its largest</td>");
                return;
        }
        html_raw(h, "<td class=\"num\">");
        web_cpu_time(h, jnum(x, "cpu_seconds"));
        html_raw(h, "<br><small class=\"share\">");
        web_share(h, x);
        html_raw(h, "</small></td>");
}

static void rows_section(Html *h, json_object *cmp, size_t d) {
        json_object *rows = jget(cmp, "rows");
        size_t n = rows ? json_object_array_length(rows) : 0, shown = 0, total = 0;
        bool objects = streq(dimensions[d].dimension, "object"), phases = streq(dimensions[d].dimension, "phase");
        bool functions = streq(dimensions[d].dimension, "function");

        html_rawf(h, "<h2 id=\"%s\">%s</h2>", dimensions[d].dimension, dimensions[d].title);
        for (size_t i = 0; i < n; i++)
                total += streq(jstr(json_object_array_get_idx(rows, i), "dimension") ?: "", dimensions[d].dimension);
        if (total == 0) {
                html_raw(h, phases      ? "<p class=\"note\">No phases: neither program marks any (liblmk, "
                                          "docs/markers.md).</p>"
                            : functions ? "<p class=\"note\">No functions: lmkd named none in either run.</p>"
                                        : "<p class=\"note\">No samples in either run.</p>");
                return;
        }
        html_rawf(h, "<table class=\"compare compare-%s\"><thead><tr><th>%s</th>%s"
                     "<th class=\"num\">A: CPU time<br><small>share (95%%)</small></th>"
                     "<th class=\"num\">B: CPU time<br><small>share (95%%)</small></th>"
                     "<th class=\"num\">B − A (95%%)</th><th class=\"num\">B / A</th>"
                     "<th>Difference</th></tr></thead><tbody>",
                  dimensions[d].dimension, dimensions[d].column,
                  objects ? "<th>Kind</th>" : functions ? "<th>Object</th>" : "");
        for (size_t i = 0; i < n && shown < ROWS_SHOWN; i++) {
                json_object *e = json_object_array_get_idx(rows, i), *diff = jget(e, "difference");
                const char *name = jstr(e, "name");

                if (!streq(jstr(e, "dimension") ?: "", dimensions[d].dimension))
                        continue;
                shown++;
                html_rawf(h, "<tr><td%s>", objects || phases || functions ? " class=\"path\"" : "");
                if (phases && name && !*name)
                        html_raw(h, "<span class=\"muted\">(outside markers)</span>");
                else
                        html_text(h, objects || phases || functions ? name : kind_name(name));
                html_raw(h, "</td>");
                if (objects || functions) {
                        html_rawf(h, "<td%s>", functions ? " class=\"path\"" : "");
                        html_text(h, jstr(e, objects ? "kind" : "object") ?: "–");
                        html_raw(h, "</td>");
                }
                side_cell(h, jget(e, "a"));
                side_cell(h, jget(e, "b"));
                if (!diff) {
                        html_raw(h, "<td class=\"num\" colspan=\"2\">–</td><td class=\"verdict muted\">not known"
                                    "</td></tr>");
                        continue;
                }
                html_raw(h, "<td class=\"num\">");
                cpu_difference(h, diff);
                html_raw(h, "</td><td class=\"num\">");
                ratio(h, diff);
                html_raw(h, "</td><td class=\"verdict\">");
                verdict(h, diff);
                html_raw(h, "</td></tr>");
        }
        html_raw(h, "</tbody></table>");
        if (shown < total)
                html_rawf(h, "<p class=\"note\">The %zu largest of %zu are shown; the JSON and CSV have all.</p>",
                          shown, total);
}

/* A row of the runs' table: a label, each run's cell, and how B compares. */
typedef void (*Cell)(Html *h, json_object *run);

static void facts_row(Html *h, const char *label, json_object *a, json_object *b, Cell cell, json_object *diff,
                      const char *delta, const char *ratio_key) {
        html_raw(h, "<tr><th scope=\"row\">");
        html_text(h, label);
        html_raw(h, "</th><td>");
        cell(h, a);
        html_raw(h, "</td><td>");
        cell(h, b);
        html_raw(h, "</td><td class=\"num\">");
        if (delta && isfinite(jnum(diff, delta))) {
                if (streq(delta, "elapsed_seconds")) {
                        html_raw(h, jnum(diff, delta) < 0 ? "−" : "+");
                        html_duration(h, fabs(jnum(diff, delta)));
                } else
                        cpu_signed(h, jnum(diff, delta), NAN, NAN);
                if (isfinite(jnum(diff, ratio_key)))
                        html_rawf(h, " <small>(×%.2f)</small>", jnum(diff, ratio_key));
        }
        html_raw(h, "</td></tr>");
}

static void cell_name(Html *h, json_object *r) {
        html_text(h, jstr(r, "name") ?: "–");
}

static void cell_user(Html *h, json_object *r) {
        html_text(h, jstr(r, "user") ?: "–");
        if (jstr(r, "account")) {
                html_raw(h, " <small>(");
                html_text(h, jstr(r, "account"));
                html_raw(h, ")</small>");
        }
}

static void cell_app(Html *h, json_object *r) {
        html_text(h, jstr(r, "app") ?: "–");
}

static void cell_where(Html *h, json_object *r) {
        html_text(h, jstr(r, "cluster") ?: "–");
        html_raw(h, " / ");
        html_text(h, jstr(r, "partition") ?: "–");
}

static void cell_started(Html *h, json_object *r) {
        html_time(h, jnum(r, "first_seen"));
        if (!jbool(r, "ended"))
                html_raw(h, " <span class=\"state-running\">running</span>");
}

static void cell_elapsed(Html *h, json_object *r) {
        html_duration(h, jnum(r, "elapsed_seconds"));
}

static void cell_cpu(Html *h, json_object *r) {
        web_cpu_time(h, jnum(r, "cpu_seconds"));
        html_rawf(h, " <small>(%" PRId64 " samples)</small>", jint(r, "samples", 0));
}

static void cell_nodes(Html *h, json_object *r) {
        html_rawf(h, "%" PRId64, jint(r, "nodes_seen", 0));
        if (jint(r, "nodes_allocated", -1) >= 0)
                html_rawf(h, " <small>of %" PRId64 " allocated</small>", jint(r, "nodes_allocated", 0));
}

static void cell_cores(Html *h, json_object *r) {
        html_number(h, jnum(r, "busy_cores"), 1);
        html_raw(h, " busy");
        if (jint(r, "cpus_allocated", -1) >= 0)
                html_rawf(h, " <small>of %" PRId64 " allocated</small>", jint(r, "cpus_allocated", 0));
}

static void cell_ipc(Html *h, json_object *r) {
        if (isfinite(jnum(r, "ipc")))
                html_number(h, jnum(r, "ipc"), 2);
        else
                html_raw(h, "<span class=\"muted\">no counters</span>");
}

static void cell_pop(Html *h, json_object *r) {
        json_object *p = jget(r, "pop");

        if (!p) {
                html_raw(h, "<span class=\"muted\">no MPI ranks seen</span>");
                return;
        }
        html_number(h, jnum(p, "parallel_efficiency") * 100, 1);
        html_raw(h, "% <small>= load balance ");
        html_number(h, jnum(p, "load_balance") * 100, 1);
        html_raw(h, "% × communication ");
        html_number(h, jnum(p, "communication_efficiency") * 100, 1);
        html_rawf(h, "%%, %" PRId64 " ranks</small>", jint(p, "ranks", 0));
}

static void cell_findings(Html *h, json_object *r) {
        json_object *a = jget(r, "findings");
        size_t n = a ? json_object_array_length(a) : 0;

        if (n == 0) {
                html_raw(h, "<span class=\"muted\">none</span>");
                return;
        }
        html_raw(h, "<ul class=\"findings\">");
        for (size_t i = 0; i < n; i++) {
                json_object *f = json_object_array_get_idx(a, i);

                html_raw(h, "<li><span class=\"sev-");
                html_text(h, jstr(f, "severity") ?: "low");
                html_raw(h, "\">");
                html_text(h, jstr(f, "severity") ?: "low");
                html_raw(h, "</span> ");
                html_text(h, jstr(f, "message"));
                html_raw(h, "</li>");
        }
        html_raw(h, "</ul>");
}

static void runs_section(Html *h, const char *root, json_object *cmp) {
        json_object *a = jget(cmp, "a"), *b = jget(cmp, "b"), *d = jget(cmp, "difference");

        html_raw(h, "<table class=\"runs\"><thead><tr><th></th><th>A: job ");
        web_job_link(h, root, jstr(a, "job"), jstr(a, "cluster"), NULL);
        html_raw(h, "</th><th>B: job ");
        web_job_link(h, root, jstr(b, "job"), jstr(b, "cluster"), NULL);
        html_raw(h, "</th><th class=\"num\">B − A</th></tr></thead><tbody>");
        facts_row(h, "Name", a, b, cell_name, d, NULL, NULL);
        facts_row(h, "User", a, b, cell_user, d, NULL, NULL);
        facts_row(h, "Application", a, b, cell_app, d, NULL, NULL);
        facts_row(h, "Cluster / partition", a, b, cell_where, d, NULL, NULL);
        facts_row(h, "Started", a, b, cell_started, d, NULL, NULL);
        facts_row(h, "Elapsed", a, b, cell_elapsed, d, "elapsed_seconds", "elapsed_ratio");
        facts_row(h, "CPU time", a, b, cell_cpu, d, "cpu_seconds", "cpu_ratio");
        facts_row(h, "Nodes", a, b, cell_nodes, d, NULL, NULL);
        facts_row(h, "Cores", a, b, cell_cores, d, NULL, NULL);
        facts_row(h, "IPC", a, b, cell_ipc, d, NULL, NULL);
        facts_row(h, "MPI efficiency (POP)", a, b, cell_pop, d, NULL, NULL);
        facts_row(h, "Findings", a, b, cell_findings, d, NULL, NULL);
        html_raw(h, "</tbody></table>");
}

static void hidden(Html *h, Request *req, const char *key) {
        const char *v = request_arg(req, key);

        if (!v)
                return;
        html_rawf(h, "<input type=\"hidden\" name=\"%s\" value=\"", key);
        html_text(h, v);
        html_raw(h, "\">");
}

/* The form that chooses the two runs (a GET to this page). */
static void form(Html *h, Request *req) {
        html_raw(h, "<form class=\"filters\" method=\"get\" action=\"compare\">"
                    "<label>Job A<input name=\"a\" required value=\"");
        html_text(h, request_arg(req, "a") ?: "");
        html_raw(h, "\" placeholder=\"before\"></label><label>Job B<input name=\"b\" required value=\"");
        html_text(h, request_arg(req, "b") ?: "");
        html_raw(h, "\" placeholder=\"after\"></label>");
        hidden(h, req, "cluster");
        hidden(h, req, "cluster_a");
        html_raw(h, "<button type=\"submit\">Compare</button></form>");
}

/* Without B: the asker's recent jobs (of the application asked for), each
 * a link that compares it with A. */
static bool recent_jobs(Html *h, Server *s, Request *req, const char *root, Reply *reply) {
        _cleanup_(json_object_putp) json_object *list = NULL;
        const char *a = request_arg(req, "a"), *app = request_arg(req, "app");
        RequestArg args[] = { { "limit", STRINGIFY(RECENT_JOBS) }, { "app", app } };
        json_object *jobs;
        size_t n;

        if (!web_api(s, req, api_jobs, args, app ? 2 : 1, reply, &list))
                return false;
        jobs = jget(list, "jobs");
        n = jobs ? json_object_array_length(jobs) : 0;
        html_raw(h, "<h2>Recent jobs");
        if (app) {
                html_raw(h, " of ");
                html_text(h, app);
        }
        html_raw(h, "</h2>");
        if (n == 0) {
                html_raw(h, "<p class=\"note\">No jobs to show.</p>");
                return true;
        }
        html_raw(h, "<table class=\"jobs\"><thead><tr><th>Job</th><th>Name</th><th>Application</th><th>User</th>"
                    "<th>Started</th><th class=\"num\">Elapsed</th><th class=\"num\">CPU time</th><th></th>"
                    "</tr></thead><tbody>");
        for (size_t i = 0; i < n; i++) {
                json_object *j = json_object_array_get_idx(jobs, i);
                const char *cluster = jstr(j, "cluster");

                if (a && streq(jstr(j, "job") ?: "", a))
                        continue;
                html_raw(h, "<tr><td>");
                web_job_link(h, root, jstr(j, "job"), cluster, NULL);
                html_raw(h, "</td><td>");
                html_text(h, jstr(j, "name") ?: "");
                html_raw(h, "</td><td>");
                html_text(h, jstr(j, "app") ?: "–");
                html_raw(h, "</td><td>");
                html_text(h, jstr(j, "user") ?: "–");
                html_raw(h, "</td><td class=\"time\">");
                html_time(h, jnum(j, "first_seen"));
                html_raw(h, "</td><td class=\"num\">");
                html_duration(h, jnum(j, "elapsed_seconds"));
                html_raw(h, "</td><td class=\"num\">");
                web_cpu_time(h, jnum(j, "cpu_seconds"));
                html_raw(h, "</td><td>");
                if (a) {
                        html_rawf(h, "<a href=\"%scompare?a=", root);
                        html_url_part(h, a);
                        if (request_arg(req, "cluster_a")) {
                                html_raw(h, "&amp;cluster_a=");
                                html_url_part(h, request_arg(req, "cluster_a"));
                        }
                        html_raw(h, "&amp;b=");
                        html_url_part(h, jstr(j, "job"));
                        if (cluster) {
                                html_raw(h, "&amp;cluster_b=");
                                html_url_part(h, cluster);
                        }
                        html_raw(h, "\">compare with ");
                        html_text(h, a);
                        html_raw(h, "</a>");
                }
                html_raw(h, "</td></tr>");
        }
        html_raw(h, "</tbody></table>");
        return true;
}

static void choose_page(Server *s, Request *req, Reply *reply) {
        _cleanup_(html_done) Html h = {};
        const char *root = web_root_prefix(req);

        web_begin(&h, s, req, "Compare two runs");
        html_raw(&h, "<h1>Compare two runs</h1><p class=\"note\">Two jobs side by side: where each spent its "
                     "time, by kind, executable or library, phase and function, and which differences are more than "
                     "the samples' uncertainty.</p>");
        form(&h, req);
        if (!recent_jobs(&h, s, req, root, reply))
                return;
        web_end(&h, req);
        web_reply(reply, &h);
}

/* "compare?a=…&b=…" with the clusters asked for, a and b swapped or not. */
static void compare_link(Html *h, const char *root, const char *path, Request *req, bool swap,
                         const char *extra) {
        const char *a = swap ? "b" : "a", *b = swap ? "a" : "b";

        html_rawf(h, "<a href=\"%s%s?a=", root, path);
        html_url_part(h, request_arg(req, a));
        html_raw(h, "&amp;b=");
        html_url_part(h, request_arg(req, b));
        if (request_arg(req, "cluster")) {
                html_raw(h, "&amp;cluster=");
                html_url_part(h, request_arg(req, "cluster"));
        }
        if (request_arg(req, swap ? "cluster_b" : "cluster_a")) {
                html_raw(h, "&amp;cluster_a=");
                html_url_part(h, request_arg(req, swap ? "cluster_b" : "cluster_a"));
        }
        if (request_arg(req, swap ? "cluster_a" : "cluster_b")) {
                html_raw(h, "&amp;cluster_b=");
                html_url_part(h, request_arg(req, swap ? "cluster_a" : "cluster_b"));
        }
        html_raw(h, extra ?: "");
        html_raw(h, "\">");
}

static const char *const page_args[] = { "a", "b", "cluster", "cluster_a", "cluster_b", "app", NULL };
static const char *const api_keys[] = { "a", "b", "cluster", "cluster_a", "cluster_b" };

void web_compare(Server *s, Request *req, Reply *reply) {
        _cleanup_(json_object_putp) json_object *cmp = NULL;
        _cleanup_(html_done) Html h = {};
        const char *root = web_root_prefix(req);
        RequestArg args[ELEMENTSOF(api_keys)];
        json_object *a, *b;
        size_t n = 0;
        char title[200];

        if (!request_check_args(req, page_args, reply))
                return;
        if (!request_arg(req, "a") || !request_arg(req, "b")) {
                choose_page(s, req, reply);
                return;
        }
        for (size_t i = 0; i < ELEMENTSOF(api_keys); i++)
                if (request_arg(req, api_keys[i]))
                        args[n++] = (RequestArg) { api_keys[i], request_arg(req, api_keys[i]) };
        if (!web_api(s, req, api_compare, args, n, reply, &cmp))
                return;
        a = jget(cmp, "a");
        b = jget(cmp, "b");

        snprintf(title, sizeof(title), "Job %s vs job %s", jstr(a, "job") ?: "?", jstr(b, "job") ?: "?");
        web_begin(&h, s, req, title);
        html_raw(&h, "<h1>Job ");
        html_text(&h, jstr(a, "job"));
        html_raw(&h, " <small>vs</small> job ");
        html_text(&h, jstr(b, "job"));
        html_raw(&h, "</h1><p class=\"links\">");
        compare_link(&h, root, "api/v1/compare", req, false, NULL);
        html_raw(&h, "JSON</a>");
        compare_link(&h, root, "api/v1/compare", req, false, "&amp;format=csv");
        html_raw(&h, "CSV</a>");
        compare_link(&h, root, "compare", req, true, NULL);
        html_raw(&h, "Swap A and B</a></p>");
        form(&h, req);
        runs_section(&h, root, cmp);
        html_raw(&h, "<p class=\"note\">B − A is B's figure less A's; B / A is B's over A's. CPU time and shares "
                     "come from samples, so each has a 95% interval, and so does each difference: a difference "
                     "is <b>beyond uncertainty</b> when its interval leaves out zero (▲ more in B, ▼ less in B), "
                     "and <b>not distinguishable</b> (≈) when the samples cannot tell the two runs apart. "
                     "A share is of its own run's samples; the JSON and CSV have the difference of shares too. "
                     "Elapsed and total CPU time are measured, not estimated.</p>");
        for (size_t i = 0; i < ELEMENTSOF(dimensions); i++)
                rows_section(&h, cmp, i);
        web_end(&h, req);
        web_reply(reply, &h);
}
