/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The site page, /site: where the machine's time goes over a range
 * (GET /api/v1/objects, by executable and by library), the nodes and their
 * last push (GET /api/v1/nodes), and the jobs that stand out
 * (GET /api/v1/findings; a person sees only their own there). */
#include <math.h>

#include "web.h"
#include "util.h"

#define SITE_TOP 25
/* a node silent for longer has probably stopped pushing */
#define NODE_STALE_SECONDS 600
/* silent nodes listed above the full list */
#define NODE_STALE_SHOWN 50

static void objects_table(Html *h, json_object *l, const char *title, const char *what) {
        json_object *a = jget(l, "objects");
        size_t n = a ? json_object_array_length(a) : 0;

        html_rawf(h, "<h2>%s</h2>", title);
        if (n == 0) {
                html_rawf(h, "<p class=\"note\">No %s sampled in this range.</p>", what);
                return;
        }
        html_raw(h, "<table class=\"objects\"><thead><tr><th>Object</th><th class=\"num\">Share of all samples</th>"
                    "<th></th><th class=\"num\">CPU time</th><th class=\"num\">Samples</th></tr></thead><tbody>");
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(a, i);

                html_raw(h, "<tr><td class=\"path\">");
                html_text(h, jstr(e, "object"));
                html_raw(h, "</td>");
                web_share_cells(h, e, false);
                html_raw(h, "</tr>");
        }
        html_raw(h, "</tbody></table>");
}

static void nodes_rows(Html *h, json_object *a, bool stale_only);

static void nodes_table(Html *h, json_object *l) {
        json_object *a = jget(l, "nodes");
        size_t n = a ? json_object_array_length(a) : 0, stale = 0;

        for (size_t i = 0; i < n; i++)
                stale += jint(json_object_array_get_idx(a, i), "last_push_age_seconds", 0) > NODE_STALE_SECONDS;
        html_rawf(h, "<h2 id=\"nodes\">Nodes</h2><p class=\"note\">%zu nodes", n);
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
        html_rawf(h, "<details%s><summary>All %zu nodes</summary>", n <= 50 && stale == 0 ? " open" : "", n);
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
        _cleanup_(json_object_putp) json_object *exes = NULL, *libs = NULL, *nodes = NULL, *findings = NULL;
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
        objects_table(&h, exes, "Executables (the application mix)", "executables");
        objects_table(&h, libs, "Libraries", "libraries");
        findings_table(&h, root, findings, req->identity.admin);
        nodes_table(&h, nodes);
        html_rawf(&h, "<p class=\"links\"><a href=\"%sapi/v1/objects?since=", root);
        html_url_part(&h, since);
        html_raw(&h, "&amp;until=");
        html_url_part(&h, until);
        html_rawf(&h, "\">JSON: objects</a><a href=\"%sapi/v1/nodes\">JSON: nodes</a></p>", root);
        web_end(&h, req);
        web_reply(reply, &h);
}
