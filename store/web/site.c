/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The site page, /site: where the machine's time goes over a range
 * (GET /api/v1/objects, by executable and by library), the nodes and their
 * last push (GET /api/v1/nodes), and the jobs that stand out
 * (GET /api/v1/findings; a person sees only their own there). */
#include <math.h>

#include "util.h"
#include "web/web.h"

#define SITE_TOP 25
/* a node silent for longer has probably stopped pushing */
#define NODE_STALE_SECONDS 600
/* silent nodes listed above the full list */
#define NODE_STALE_SHOWN 50

/* A table of shares of all samples: the name columns (keys of each entry,
 * NULL-terminated, with their headings), then share, bar, CPU time and
 * samples. */
static void shares_table(Html *h, json_object *a, const char *cls, const char *const *keys,
                         const char *const *heads, const char *empty) {
        size_t n = a ? json_object_array_length(a) : 0;

        if (n == 0) {
                html_rawf(h, "<p class=\"note\">%s</p>", empty);
                return;
        }
        html_rawf(h, "<table class=\"%s\"><thead><tr>", cls);
        for (size_t k = 0; heads[k]; k++)
                html_rawf(h, "<th>%s</th>", heads[k]);
        html_raw(h, "<th class=\"num\">Share of all samples</th><th></th><th class=\"num\">CPU time</th>"
                    "<th class=\"num\">Samples</th></tr></thead><tbody>");
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(a, i);

                html_raw(h, "<tr>");
                for (size_t k = 0; keys[k]; k++) {
                        html_raw(h, streq(keys[k], "object") ? "<td class=\"path\">" : "<td>");
                        html_text(h, jstr(e, keys[k]));
                        html_raw(h, "</td>");
                }
                web_share_cells(h, e, false);
                html_raw(h, "</tr>");
        }
        html_raw(h, "</tbody></table>");
}

static void objects_table(Html *h, json_object *l, const char *title, const char *empty) {
        html_rawf(h, "<h2>%s</h2>", title);
        shares_table(h, jget(l, "objects"), "objects", (const char *const[]) { "object", NULL },
                     (const char *const[]) { "Object", NULL }, empty);
}

static void nodes_rows(Html *h, json_object *a, bool stale_only);

static void nodes_table(Html *h, json_object *l) {
        json_object *a = jget(l, "nodes");
        size_t n = a ? json_object_array_length(a) : 0, stale = 0;

        for (size_t i = 0; i < n; i++)
                stale += jint(json_object_array_get_idx(a, i), "last_push_age_seconds", 0) > NODE_STALE_SECONDS;
        html_rawf(h, "<h2 id=\"nodes\">Nodes</h2><p class=\"note\">%zu node%s", n, n == 1 ? "" : "s");
        if (stale > 0)
                html_rawf(h, ", <span class=\"sev-high\">%zu silent for more than %d minutes</span>", stale,
                          NODE_STALE_SECONDS / 60);
        html_raw(h, ".</p>");
        /* the silent ones in sight, every node a click away (no script: <details>) */
        if (stale > 0)
                nodes_rows(h, a, true);
        if (stale > NODE_STALE_SHOWN)
                html_rawf(h, "<p class=\"note\">The first %d silent nodes by name; all of them below.</p>",
                          NODE_STALE_SHOWN);
        html_rawf(h, "<details%s><summary>%s %zu node%s</summary>", n <= 50 && stale == 0 ? " open" : "",
                  n == 1 ? "The" : "All", n, n == 1 ? "" : "s");
        nodes_rows(h, a, false);
        html_raw(h, "</details>");
}

static void nodes_rows(Html *h, json_object *a, bool stale_only) {
        size_t n = a ? json_object_array_length(a) : 0, shown = 0;

        html_raw(h, "<table class=\"nodes\"><thead><tr><th>Node</th><th>Cluster</th><th class=\"num\">CPUs</th>"
                    "<th class=\"num\">Last push</th><th class=\"num\">Batches</th><th class=\"num\">Samples</th>"
                    "<th class=\"num\">Lost</th></tr></thead><tbody>");
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(a, i);
                int64_t age = jint(e, "last_push_age_seconds", 0);

                if (stale_only && (age <= NODE_STALE_SECONDS || shown++ >= NODE_STALE_SHOWN))
                        continue;

                html_raw(h, "<tr><td>");
                html_text(h, jstr(e, "node"));
                html_raw(h, "</td><td>");
                html_text(h, jstr(e, "cluster") ?: "–");
                html_rawf(h, "</td><td class=\"num\">%" PRId64 "</td><td class=\"num%s\">", jint(e, "cpus", 0),
                          age > NODE_STALE_SECONDS ? " sev-high" : "");
                html_duration(h, (double) MAX(age, (int64_t) 0));
                html_rawf(h, " ago</td><td class=\"num\">%" PRId64 "</td><td class=\"num\">%" PRId64
                             "</td><td class=\"num\">%" PRId64 "</td></tr>",
                          jint(e, "batches", 0), jint(e, "samples", 0), jint(e, "samples_lost", 0));
        }
        html_raw(h, "</tbody></table>");
}

static void findings_table(Html *h, const char *root, json_object *l, bool admin) {
        json_object *a = jget(l, "findings");
        size_t n = a ? json_object_array_length(a) : 0;

        html_rawf(h, "<h2 id=\"findings\">%s</h2>", admin ? "Jobs that stand out" : "Your jobs that stand out");
        if (n == 0) {
                html_raw(h, "<p class=\"note\">No findings in this range.</p>");
                return;
        }
        html_raw(h, "<table class=\"findings\"><thead><tr><th>Job</th><th>User</th><th>Severity</th>"
                    "<th class=\"num\">Core-hours</th><th>Finding</th></tr></thead><tbody>");
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(a, i);
                const char *sev = jstr(e, "severity") ?: "low", *cluster = jstr(e, "cluster");

                html_raw(h, "<tr><td>");
                web_job_link(h, root, jstr(e, "job"), cluster, "#findings");
                html_raw(h, "</td><td>");
                html_text(h, jstr(e, "user") ?: "–");
                html_raw(h, "</td><td><span class=\"sev-");
                html_text(h, sev);
                html_raw(h, "\">");
                html_text(h, sev);
                html_raw(h, "</span></td><td class=\"num\">");
                html_number(h, jnum(e, "core_hours"), 2);
                html_raw(h, "</td><td>");
                html_text(h, jstr(e, "message"));
                html_raw(h, "</td></tr>");
        }
        html_raw(h, "</tbody></table>");
        if (jbool(l, "truncated"))
                html_raw(h, "<p class=\"note\">Only the most recent jobs of the range were looked at.</p>");
}

static const char *const page_args[] = { "since", "until", NULL };

void web_site(Server *s, Request *req, Reply *reply) {
        _cleanup_(json_object_putp) json_object *exes = NULL, *libs = NULL, *nodes = NULL, *findings = NULL,
                                                *kernels = NULL;
        _cleanup_(html_done) Html h = {};
        const char *root = web_root_prefix(req);
        const char *since = request_arg(req, "since") ?: "7d", *until = request_arg(req, "until") ?: "now";
        char top[16];

        if (!request_check_args(req, page_args, reply))
                return;
        snprintf(top, sizeof(top), "%d", SITE_TOP);
        if (!web_api(s, req, api_objects, (const RequestArg[]) { { "since", since }, { "until", until },
                                                                 { "kind", "exe" }, { "limit", top } },
                     4, reply, &exes) ||
            !web_api(s, req, api_objects, (const RequestArg[]) { { "since", since }, { "until", until },
                                                                 { "kind", "lib" }, { "limit", top } },
                     4, reply, &libs) ||
            !web_api(s, req, api_site_functions, (const RequestArg[]) { { "since", since }, { "until", until },
                                                                        { "limit", "10" } },
                     3, reply, &kernels) ||
            !web_api(s, req, api_nodes, (const RequestArg[]) { { NULL, NULL } }, 0, reply, &nodes) ||
            !web_api(s, req, api_findings, (const RequestArg[]) { { "since", since }, { "until", until },
                                                                  { "limit", top } },
                     3, reply, &findings))
                return;

        web_begin(&h, s, req, "Site");
        html_raw(&h, "<h1>Site</h1><form class=\"filters\" method=\"get\" action=\"site\">"
                     "<label>Since<input name=\"since\" value=\"");
        html_text(&h, since);
        html_raw(&h, "\" placeholder=\"7d\"></label><label>Until<input name=\"until\" value=\"");
        html_text(&h, until);
        html_raw(&h, "\" placeholder=\"now\"></label><button type=\"submit\">Show</button></form>"
                     "<p class=\"note\">From ");
        html_time(&h, jnum(exes, "since"));
        html_raw(&h, " to ");
        html_time(&h, jnum(exes, "until"));
        html_raw(&h, " (whole hours): ");
        web_cpu_time(&h, jnum(exes, "total_cpu_seconds"));
        html_rawf(&h, " sampled in %" PRId64 " samples, jobs and system together.</p>", jint(exes, "total_samples", 0));
        objects_table(&h, exes, "Executables", "No executables sampled in this range.");
        objects_table(&h, libs, "Libraries", "No libraries sampled in this range.");
        html_rawf(&h, "<h2 id=\"kernels\">Kernels</h2><p class=\"note\">The functions with the most of the "
                      "time of the jobs you may see (whole days; shares of all their samples). All of them, per "
                      "family and by application: <a href=\"%ssite/kernels?since=", root);
        html_url_part(&h, since);
        html_raw(&h, "&amp;until=");
        html_url_part(&h, until);
        html_raw(&h, "\">Kernels</a>.</p>");
        web_functions_table(&h, root, kernels, true, since, until);
        findings_table(&h, root, findings, req->identity->admin);
        nodes_table(&h, nodes);
        html_rawf(&h, "<p class=\"links\"><a href=\"%ssite/software?since=", root);
        html_url_part(&h, since);
        html_raw(&h, "&amp;until=");
        html_url_part(&h, until);
        html_rawf(&h, "\">Library families and installed software</a><a href=\"%ssite/apps?since=", root);
        html_url_part(&h, since);
        html_raw(&h, "&amp;until=");
        html_url_part(&h, until);
        html_rawf(&h, "\">Application mix</a><a href=\"%ssite/kernels?since=", root);
        html_url_part(&h, since);
        html_raw(&h, "&amp;until=");
        html_url_part(&h, until);
        html_rawf(&h, "\">Kernels</a><a href=\"%sapi/v1/objects?since=", root);
        html_url_part(&h, since);
        html_raw(&h, "&amp;until=");
        html_url_part(&h, until);
        html_rawf(&h, "\">JSON: objects</a><a href=\"%sapi/v1/nodes\">JSON: nodes</a></p>", root);
        html_raw(&h, "<form class=\"filters\" method=\"get\" action=\"site/scaling\"><label>Scaling of an "
                     "application across its runs<input name=\"app\" placeholder=\"app= note or executable\" "
                     "required></label><button type=\"submit\">Show</button></form>");
        web_end(&h, req);
        web_reply(reply, &h);
}

static void families_table(Html *h, json_object *l) {
        html_raw(h, "<h2 id=\"families\">Time per library family</h2>");
        shares_table(h, jget(l, "families"), "families", (const char *const[]) { "purpose", "family", NULL },
                     (const char *const[]) { "Purpose", "Family", NULL },
                     "No samples in a known library family in this range.");
}

static void size_cell(Html *h, int64_t n) {
        html_raw(h, "<td class=\"num\">");
        if (n >= (INT64_C(1) << 30))
                html_rawf(h, "%.1f GiB", (double) n / (double) (INT64_C(1) << 30));
        else
                html_rawf(h, "%.1f MiB", (double) n / (double) (1 << 20));
        html_raw(h, "</td>");
}

static void packages_table(Html *h, json_object *l, bool unused) {
        json_object *a = jget(l, "packages");
        size_t n = a ? json_object_array_length(a) : 0;

        html_raw(h, unused ? "<h2 id=\"unused\">Installed, and no sample in this range</h2>" :
                             "<h2 id=\"packages\">Time per installed package</h2>");
        if (n == 0) {
                html_raw(h, unused ? "<p class=\"note\">Every installed package had samples.</p>" :
                                     "<p class=\"note\">No inventory yet: lmkd reports what is installed "
                                     "([inventory] in lmkd.conf(5)).</p>");
                return;
        }
        html_rawf(h, "<table class=\"%s\"><thead><tr><th>Package</th><th>Version</th><th>Manager</th>%s"
                     "<th class=\"num\">Size</th><th class=\"num\">Nodes</th><th>Last used</th></tr></thead><tbody>",
                  unused ? "unused" : "packages",
                  unused ? "" : "<th class=\"num\">Share of all samples</th><th></th><th class=\"num\">CPU time</th>"
                                "<th class=\"num\">Samples</th>");
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(a, i);

                /* the unused ones have their own table */
                if (!unused && jint(e, "samples", 0) == 0)
                        continue;
                html_raw(h, "<tr><td>");
                html_text(h, jstr(e, "name"));
                html_raw(h, "</td><td>");
                html_text(h, jstr(e, "version"));
                html_raw(h, "</td><td>");
                html_text(h, jstr(e, "manager"));
                html_raw(h, "</td>");
                if (!unused)
                        web_share_cells(h, e, false);
                size_cell(h, jint(e, "size_bytes", 0));
                html_rawf(h, "<td class=\"num\">%" PRId64 "</td><td class=\"time\">", jint(e, "nodes", 0));
                if (jint(e, "last_seen", -1) >= 0)
                        html_time(h, jnum(e, "last_seen"));
                else
                        html_raw(h, "never");
                html_raw(h, "</td></tr>");
        }
        html_raw(h, "</tbody></table>");
}

/* /site/software: time per library family and per installed package, and
 * what is installed but unused (GET /api/v1/families, /api/v1/packages). */
void web_site_software(Server *s, Request *req, Reply *reply) {
        _cleanup_(json_object_putp) json_object *families = NULL, *used = NULL, *unused = NULL;
        _cleanup_(html_done) Html h = {};
        const char *root = web_root_prefix(req);
        const char *since = request_arg(req, "since") ?: "30d", *until = request_arg(req, "until") ?: "now";

        if (!request_check_args(req, page_args, reply))
                return;
        if (!web_api(s, req, api_families, (const RequestArg[]) { { "since", since }, { "until", until } }, 2, reply,
                     &families) ||
            !web_api(s, req, api_packages, (const RequestArg[]) { { "since", since }, { "until", until },
                                                                  { "limit", "25" } }, 3, reply, &used) ||
            !web_api(s, req, api_packages, (const RequestArg[]) { { "since", since }, { "until", until },
                                                                  { "unused", "true" }, { "limit", "50" } },
                     4, reply, &unused))
                return;
        web_begin(&h, s, req, "Software");
        html_raw(&h, "<h1>Software</h1><form class=\"filters\" method=\"get\" action=\"software\">"
                     "<label>Since<input name=\"since\" value=\"");
        html_text(&h, since);
        html_raw(&h, "\" placeholder=\"30d\"></label><label>Until<input name=\"until\" value=\"");
        html_text(&h, until);
        html_raw(&h, "\" placeholder=\"now\"></label><button type=\"submit\">Show</button></form><p class=\"note\">From ");
        html_time(&h, jnum(used, "since"));
        html_raw(&h, " to ");
        html_time(&h, jnum(used, "until"));
        html_rawf(&h, ": %" PRId64 " samples. A package's time is that of its executables and libraries.</p>",
                  jint(used, "total_samples", 0));
        families_table(&h, families);
        packages_table(&h, used, false);
        packages_table(&h, unused, true);
        html_rawf(&h, "<p class=\"links\"><a href=\"%ssite\">Site</a><a href=\"%sapi/v1/families?since=", root, root);
        html_url_part(&h, since);
        html_rawf(&h, "\">JSON: families</a><a href=\"%sapi/v1/packages?unused=true&amp;since=", root);
        html_url_part(&h, since);
        html_raw(&h, "\">JSON: unused</a></p>");
        web_end(&h, req);
        web_reply(reply, &h);
}
