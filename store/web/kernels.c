/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The site's kernels, /site/kernels: the functions the core-hours of the
 * jobs the reader may see went to, ranked, and per family (GET
 * /api/v1/functions); and a library's page, /site/library?object=PATH:
 * which of its functions are used, how much and by whom (the same with
 * object=). docs/kernels.md. */
#include "util.h"
#include "web/web.h"

#define KERNELS_TOP "50"

static void since_until(Html *h, const char *since, const char *until) {
        html_raw(h, "<label>Since<input name=\"since\" value=\"");
        html_text(h, since);
        html_raw(h, "\" placeholder=\"30d\"></label><label>Until<input name=\"until\" value=\"");
        html_text(h, until);
        html_raw(h, "\" placeholder=\"now\"></label>");
}

static void library_link(Html *h, const char *root, const char *object, const char *since, const char *until) {
        html_rawf(h, "<a class=\"path\" href=\"%ssite/library?object=", root);
        html_url_part(h, object);
        html_raw(h, "&amp;since=");
        html_url_part(h, since);
        html_raw(h, "&amp;until=");
        html_url_part(h, until);
        html_raw(h, "\">");
        html_text(h, object);
        html_raw(h, "</a>");
}

static void count_cell(Html *h, json_object *e, const char *key) {
        html_rawf(h, "<td class=\"num\">%" PRId64 "</td>", jint(e, key, 0));
}

void web_functions_table(Html *h, const char *root, json_object *l, bool with_object, const char *since,
                         const char *until) {
        json_object *a = jget(l, "functions");
        size_t n = a ? json_object_array_length(a) : 0;

        if (n == 0) {
                html_raw(h, "<p class=\"note\">No functions in this range: lmkd names them (functions in "
                            "lmkd.conf(5)); jobs you may not see are left out.</p>");
                return;
        }
        html_rawf(h, "<table class=\"functions\"><thead><tr><th>Family</th><th>Function</th>%s"
                     "<th class=\"num\">Share (95%%)</th><th></th><th class=\"num\">CPU time</th>"
                     "<th class=\"num\">Samples</th><th class=\"num\">IPC</th><th class=\"num\">Jobs</th>"
                     "<th class=\"num\">Users</th><th class=\"num\">Apps</th></tr></thead><tbody>",
                  with_object ? "<th>Object</th>" : "");
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(a, i);

                html_raw(h, "<tr><td>");
                html_text(h, jstr(e, "family") ?: "–");
                html_raw(h, "</td>");
                web_function_cell(h, e);
                if (with_object) {
                        html_raw(h, "<td>");
                        library_link(h, root, jstr(e, "object") ?: "", since, until);
                        html_raw(h, "</td>");
                }
                web_share_cells(h, e, true);
                count_cell(h, e, "jobs");
                count_cell(h, e, "users");
                count_cell(h, e, "apps");
                html_raw(h, "</tr>");
        }
        html_raw(h, "</tbody></table>");
        if (jbool(l, "truncated"))
                html_raw(h, "<p class=\"note\">The functions with the most samples; all of them in the JSON.</p>");
}

static void families_table(Html *h, json_object *l) {
        json_object *a = jget(l, "functions");
        size_t n = a ? json_object_array_length(a) : 0;

        html_raw(h, "<h2 id=\"families\">Per family</h2>");
        if (n == 0) {
                html_raw(h, "<p class=\"note\">No functions in this range.</p>");
                return;
        }
        html_raw(h, "<table class=\"families\"><thead><tr><th>Family</th><th class=\"num\">Functions</th>"
                    "<th class=\"num\">Share (95%)</th><th></th><th class=\"num\">CPU time</th>"
                    "<th class=\"num\">Samples</th><th class=\"num\">IPC</th></tr></thead><tbody>");
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(a, i);

                html_raw(h, "<tr><td>");
                html_text(h, jstr(e, "family") ?: "(none)");
                html_raw(h, "</td>");
                count_cell(h, e, "functions");
                web_share_cells(h, e, true);
                html_raw(h, "</tr>");
        }
        html_raw(h, "</tbody></table>");
}

static void range_note(Html *h, json_object *l) {
        html_raw(h, "<p class=\"note\">From ");
        html_time(h, jnum(l, "since"));
        html_raw(h, " to ");
        html_time(h, jnum(l, "until"));
        html_raw(h, " (whole days): ");
        web_cpu_time(h, jnum(l, "total_cpu_seconds"));
        html_rawf(h, " in %" PRId64 " samples of the jobs you may see; shares are of all of it.</p>",
                  jint(l, "total_samples", 0));
}

static const char *const kernels_args[] = { "since", "until", "family", "app", NULL };

void web_site_kernels(Server *s, Request *req, Reply *reply) {
        _cleanup_(json_object_putp) json_object *list = NULL;
        _cleanup_(html_done) Html h = {};
        json_object *fams;
        const char *root = web_root_prefix(req);
        const char *since = request_arg(req, "since") ?: "30d", *until = request_arg(req, "until") ?: "now";
        const char *family = request_arg(req, "family"), *app = request_arg(req, "app");
        RequestArg args[5];
        size_t n = 0;

        if (!request_check_args(req, kernels_args, reply))
                return;
        if (family && !*family)
                family = NULL;
        if (app && !*app)
                app = NULL;
        /* the ranking with both filters; the families (of the same read)
         * with the application's */
        args[n++] = (RequestArg) { "since", since };
        args[n++] = (RequestArg) { "until", until };
        if (app)
                args[n++] = (RequestArg) { "app", app };
        args[n++] = (RequestArg) { "limit", KERNELS_TOP };
        if (family)
                args[n++] = (RequestArg) { "family", family };
        if (!web_api(s, req, api_site_kernels, args, n, reply, &list))
                return;
        fams = jget(list, "families");
        web_begin(&h, s, req, "Kernels");
        html_raw(&h, "<h1>Kernels</h1><form class=\"filters\" method=\"get\" action=\"kernels\">");
        since_until(&h, since, until);
        html_raw(&h, "<label>Family<input name=\"family\" value=\"");
        html_text(&h, family ?: "");
        html_raw(&h, "\" placeholder=\"blas-level3\"></label><label>Application<input name=\"app\" value=\"");
        html_text(&h, app ?: "");
        html_raw(&h, "\" placeholder=\"any\"></label><button type=\"submit\">Show</button></form>");
        range_note(&h, list);
        families_table(&h, fams);
        html_raw(&h, "<h2 id=\"functions\">Functions</h2>");
        web_functions_table(&h, root, list, true, since, until);
        html_rawf(&h, "<p class=\"links\"><a href=\"%ssite\">Site</a><a href=\"%sapi/v1/functions?since=", root, root);
        html_url_part(&h, since);
        html_raw(&h, "&amp;until=");
        html_url_part(&h, until);
        html_raw(&h, "\">JSON</a> (<code>lmk top --functions</code>, <code>lmk kernels</code>)</p>");
        web_end(&h, req);
        web_reply(reply, &h);
}

static void uses_table(Html *h, json_object *l, const char *key, const char *name_key, const char *title) {
        json_object *a = jget(l, key);
        size_t n = a ? json_object_array_length(a) : 0;

        html_rawf(h, "<h2 id=\"%s\">%s</h2>", key, title);
        if (n == 0) {
                html_raw(h, "<p class=\"note\">None in this range.</p>");
                return;
        }
        html_raw(h, "<table class=\"uses\"><thead><tr><th>Name</th><th class=\"num\">Share (95%)</th><th></th>"
                    "<th class=\"num\">CPU time</th><th class=\"num\">Samples</th></tr></thead><tbody>");
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(a, i);

                html_raw(h, "<tr><td>");
                html_text(h, jstr(e, name_key) ?: "–");
                html_raw(h, "</td>");
                web_share_cells(h, e, false);
                html_raw(h, "</tr>");
        }
        html_raw(h, "</tbody></table>");
}

static const char *const library_args[] = { "object", "since", "until", NULL };

void web_site_library(Server *s, Request *req, Reply *reply) {
        _cleanup_(json_object_putp) json_object *list = NULL;
        _cleanup_(html_done) Html h = {};
        const char *root = web_root_prefix(req);
        const char *since = request_arg(req, "since") ?: "30d", *until = request_arg(req, "until") ?: "now";
        const char *object = request_arg(req, "object");

        if (!request_check_args(req, library_args, reply))
                return;
        if (!object || !*object) {
                reply_error(reply, MHD_HTTP_BAD_REQUEST, "object", "object= names the executable or library");
                return;
        }
        if (!web_api(s, req, api_site_functions,
                     (const RequestArg[]) { { "since", since }, { "until", until }, { "object", object },
                                            { "limit", "500" } },
                     4, reply, &list))
                return;
        web_begin(&h, s, req, "Library");
        html_raw(&h, "<h1 class=\"path\">");
        html_text(&h, object);
        html_raw(&h, "</h1><form class=\"filters\" method=\"get\" action=\"library\"><input type=\"hidden\" "
                     "name=\"object\" value=\"");
        html_text(&h, object);
        html_raw(&h, "\">");
        since_until(&h, since, until);
        html_raw(&h, "<button type=\"submit\">Show</button></form>");
        range_note(&h, list);
        html_raw(&h, "<h2 id=\"functions\">Its functions in use</h2>");
        web_functions_table(&h, root, list, false, since, until);
        uses_table(&h, list, "users", "user", "Its users");
        uses_table(&h, list, "apps", "app", "The applications that use it");
        html_rawf(&h, "<p class=\"links\"><a href=\"%ssite/kernels?since=", root);
        html_url_part(&h, since);
        html_rawf(&h, "\">Kernels</a><a href=\"%sapi/v1/functions?object=", root);
        html_url_part(&h, object);
        html_raw(&h, "&amp;since=");
        html_url_part(&h, since);
        html_raw(&h, "\">JSON</a></p>");
        web_end(&h, req);
        web_reply(reply, &h);
}
