/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The application mix page, /site/apps (GET /api/v1/apps): time per
 * application, account, partition or (for admins) user over a range, the
 * top N and everything else, and the same week by week as stacked bars. */
#include <math.h>
#include <time.h>

#include "util.h"
#include "web/web.h"

#define PAGE_TOP_MAX 20
#define COLORS 10
/* the weekly chart, in viewBox units */
#define CHART_W 1000.0
#define CHART_H 220.0
#define CHART_LEFT 90.0
#define CHART_BOTTOM 24.0

static const char *group_name(json_object *g) {
        return jstr(g, "name") ?: "(unknown)";
}

static void swatch(Html *h, size_t i, bool other) {
        if (other)
                html_raw(h, "<svg class=\"swatch\" viewBox=\"0 0 10 10\" aria-hidden=\"true\"><rect class=\"mix-other\" "
                            "width=\"10\" height=\"10\"/></svg>");
        else
                html_rawf(h, "<svg class=\"swatch\" viewBox=\"0 0 10 10\" aria-hidden=\"true\"><rect class=\"mix-%zu\" "
                             "width=\"10\" height=\"10\"/></svg>", i % COLORS);
}

static void groups_table(Html *h, json_object *o, bool by_app) {
        json_object *a = jget(o, "groups"), *other = jget(o, "other");
        size_t n = a ? json_object_array_length(a) : 0;

        if (n == 0) {
                html_raw(h, "<p class=\"note\">No job time in this range.</p>");
                return;
        }
        html_rawf(h, "<table class=\"apps\"><thead><tr><th>%s</th>%s<th class=\"num\">Jobs</th>"
                     "<th class=\"num\">Share of job samples</th><th></th><th class=\"num\">CPU time</th>"
                     "<th class=\"num\">Samples</th></tr></thead><tbody>",
                  by_app ? "Application" : "Name", by_app ? "<th>Named by</th>" : "");
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(a, i);

                html_raw(h, "<tr><td>");
                swatch(h, i, false);
                html_raw(h, " ");
                /* an application links to how it scales across its runs */
                if (by_app && jstr(e, "name")) {
                        html_raw(h, "<a href=\"scaling?app=");
                        html_url_part(h, jstr(e, "name"));
                        html_raw(h, "\">");
                        html_text(h, group_name(e));
                        html_raw(h, "</a>");
                } else
                        html_text(h, group_name(e));
                html_raw(h, "</td>");
                if (by_app) {
                        html_raw(h, "<td>");
                        html_text(h, jstr(e, "kind"));
                        html_raw(h, "</td>");
                }
                html_rawf(h, "<td class=\"num\">%" PRId64 "</td>", jint(e, "runs", 0));
                web_share_cells(h, e, false);
                html_raw(h, "</tr>");
        }
        if (json_object_get_type(other) == json_type_object) {
                html_raw(h, "<tr class=\"other\"><td>");
                swatch(h, 0, true);
                html_rawf(h, " Everything else (%" PRId64 " more)</td>%s<td class=\"num\">%" PRId64 "</td>",
                          jint(other, "groups", 0), by_app ? "<td></td>" : "", jint(other, "runs", 0));
                web_share_cells(h, other, false);
                html_raw(h, "</tr>");
        }
        html_raw(h, "</tbody></table>");
}

/* One stacked bar per week: the shown groups bottom up in their order,
 * everything else on top. Each piece names itself on hover (<title>). */
static void weekly_chart(Html *h, json_object *o) {
        json_object *weeks = jget(o, "weeks"), *groups = jget(o, "groups");
        size_t n = weeks ? json_object_array_length(weeks) : 0;
        double top = 0, slot, bar;

        for (size_t w = 0; w < n; w++)
                top = MAX(top, jnum(json_object_array_get_idx(weeks, w), "cpu_seconds"));
        html_raw(h, "<h2 id=\"weeks\">Week by week</h2>");
        if (n == 0 || !(top > 0)) {
                html_raw(h, "<p class=\"note\">No job time in these weeks.</p>");
                return;
        }
        slot = (CHART_W - CHART_LEFT) / (double) n;
        bar = MIN(slot * 0.75, 80.0);
        html_rawf(h, "<svg class=\"weeks\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"Core-hours per week\">",
                  CHART_W, CHART_H);
        html_rawf(h, "<line class=\"axis\" x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\"/>", CHART_LEFT,
                  CHART_H - CHART_BOTTOM, CHART_W, CHART_H - CHART_BOTTOM);
        html_rawf(h, "<text x=\"%.0f\" y=\"12\" text-anchor=\"end\">", CHART_LEFT - 6);
        web_cpu_time(h, top);
        html_rawf(h, "</text><text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">0</text>", CHART_LEFT - 6,
                  CHART_H - CHART_BOTTOM);
        for (size_t w = 0; w < n; w++) {
                json_object *x = json_object_array_get_idx(weeks, w), *g = jget(x, "groups");
                size_t k = g ? json_object_array_length(g) : 0;
                double y = CHART_H - CHART_BOTTOM, scale = (CHART_H - CHART_BOTTOM - 4) / top;
                double xpos = CHART_LEFT + slot * (double) w + (slot - bar) / 2;
                time_t start = (time_t) jint(x, "start", 0);
                struct tm tm;
                char day[16];

                for (size_t i = 0; i <= k; i++) {
                        double v = i < k ? json_object_get_double(json_object_array_get_idx(g, i)) : jnum(x, "other");
                        double height = isfinite(v) ? v * scale : 0;

                        if (!(height > 0))
                                continue;
                        y -= height;
                        if (i < k)
                                html_rawf(h, "<rect class=\"mix-%zu\" ", i % COLORS);
                        else
                                html_raw(h, "<rect class=\"mix-other\" ");
                        html_rawf(h, "x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"><title>", xpos, y, bar,
                                  height);
                        html_text(h, i < k ? group_name(json_object_array_get_idx(groups, i)) : "everything else");
                        html_raw(h, ": ");
                        web_cpu_time(h, v);
                        html_raw(h, "</title></rect>");
                }
                /* the week's Monday, month-day */
                gmtime_r(&start, &tm);
                strftime(day, sizeof(day), "%m-%d", &tm);
                html_rawf(h, "<text x=\"%.2f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>", xpos + bar / 2,
                          CHART_H - 6, day);
        }
        html_raw(h, "</svg>");
}

/* The weekly figures as a table too, for reading and copying. */
static void weekly_table(Html *h, json_object *o) {
        json_object *weeks = jget(o, "weeks"), *groups = jget(o, "groups");
        size_t n = weeks ? json_object_array_length(weeks) : 0, k = groups ? json_object_array_length(groups) : 0;
        bool other = json_object_get_type(jget(o, "other")) == json_type_object;

        if (n == 0)
                return;
        html_raw(h, "<details><summary>Core-hours per week, as a table</summary><table class=\"weeks\"><thead><tr>"
                    "<th>Week of</th><th class=\"num\">All</th>");
        for (size_t i = 0; i < k; i++) {
                html_raw(h, "<th class=\"num\">");
                html_text(h, group_name(json_object_array_get_idx(groups, i)));
                html_raw(h, "</th>");
        }
        html_raw(h, other ? "<th class=\"num\">Everything else</th></tr></thead><tbody>" : "</tr></thead><tbody>");
        for (size_t w = 0; w < n; w++) {
                json_object *x = json_object_array_get_idx(weeks, w), *g = jget(x, "groups");

                html_raw(h, "<tr><td class=\"time\">");
                html_time(h, jnum(x, "start"));
                html_raw(h, "</td><td class=\"num\">");
                html_number(h, jnum(x, "cpu_seconds") / 3600, 2);
                html_raw(h, "</td>");
                for (size_t i = 0; i < k; i++) {
                        html_raw(h, "<td class=\"num\">");
                        html_number(h, json_object_get_double(json_object_array_get_idx(g, i)) / 3600, 2);
                        html_raw(h, "</td>");
                }
                if (other) {
                        html_raw(h, "<td class=\"num\">");
                        html_number(h, jnum(x, "other") / 3600, 2);
                        html_raw(h, "</td>");
                }
                html_raw(h, "</tr>");
        }
        html_raw(h, "</tbody></table></details>");
}

static void text_input(Html *h, const char *label, const char *name, const char *value, const char *placeholder) {
        html_rawf(h, "<label>%s<input name=\"%s\" value=\"", label, name);
        html_text(h, value ?: "");
        html_rawf(h, "\" placeholder=\"%s\"></label>", placeholder);
}

static const char *const page_args[] = { "since", "until", "by", "top", "account", "partition", "app", "user", NULL };

void web_site_apps(Server *s, Request *req, Reply *reply) {
        static const char *const bys[] = { "app", "account", "partition", "user", NULL };
        _cleanup_(json_object_putp) json_object *o = NULL;
        _cleanup_(html_done) Html h = {};
        const char *root = web_root_prefix(req);
        const char *since = request_arg(req, "since") ?: "30d", *until = request_arg(req, "until") ?: "now";
        const char *by = request_arg(req, "by") ?: "app", *top = request_arg(req, "top") ?: "10";
        RequestArg args[8];
        size_t n = 0;
        unsigned shown;

        if (!request_check_args(req, page_args, reply))
                return;
        /* the chart has room for this many colours and bars */
        if (sscanf(top, "%u", &shown) == 1 && shown > PAGE_TOP_MAX)
                top = STRINGIFY(PAGE_TOP_MAX);
        args[n++] = (RequestArg) { "since", since };
        args[n++] = (RequestArg) { "until", until };
        args[n++] = (RequestArg) { "by", by };
        args[n++] = (RequestArg) { "top", top };
        for (const char *const *k = (const char *const[]) { "account", "partition", "app", "user", NULL }; *k; k++)
                if (request_arg(req, *k))
                        args[n++] = (RequestArg) { *k, request_arg(req, *k) };
        if (!web_api(s, req, api_apps, args, n, reply, &o))
                return;

        web_begin(&h, s, req, "Application mix");
        html_raw(&h, "<h1>Application mix</h1><form class=\"filters\" method=\"get\" action=\"apps\"><label>By<select "
                     "name=\"by\">");
        for (size_t i = 0; bys[i]; i++) {
                if (streq(bys[i], "user") && !req->identity->admin)
                        continue;
                html_rawf(&h, "<option value=\"%s\"%s>%s</option>", bys[i], streq(by, bys[i]) ? " selected" : "",
                          streq(bys[i], "app") ? "application" : bys[i]);
        }
        html_raw(&h, "</select></label>");
        text_input(&h, "Top", "top", top, "10");
        text_input(&h, "Since", "since", since, "30d");
        text_input(&h, "Until", "until", until, "now");
        text_input(&h, "Account", "account", request_arg(req, "account"), "any");
        text_input(&h, "Partition", "partition", request_arg(req, "partition"), "any");
        text_input(&h, "Application", "app", request_arg(req, "app"), "any");
        if (req->identity->admin)
                text_input(&h, "User", "user", request_arg(req, "user"), "any");
        html_raw(&h, "<button type=\"submit\">Show</button></form><p class=\"note\">From ");
        html_time(&h, jnum(o, "since"));
        html_raw(&h, " to ");
        html_time(&h, jnum(o, "until"));
        html_raw(&h, " (whole days, UTC): ");
        web_cpu_time(&h, jnum(o, "total_cpu_seconds"));
        html_rawf(&h, " of job time in %" PRId64 " samples; %" PRId64 " job%s started. An application is a job's "
                      "<code>app=</code> note, else the package that installed its top executable, else that "
                      "executable's name, else (no sample in an executable) its command.</p>",
                  jint(o, "total_samples", 0), jint(o, "total_runs", 0), jint(o, "total_runs", 0) == 1 ? "" : "s");
        groups_table(&h, o, streq(by, "app"));
        weekly_chart(&h, o);
        weekly_table(&h, o);
        html_rawf(&h, "<p class=\"links\"><a href=\"%ssite\">Site</a><a href=\"%sapi/v1/apps?since=", root, root);
        html_url_part(&h, since);
        html_raw(&h, "&amp;until=");
        html_url_part(&h, until);
        html_raw(&h, "&amp;by=");
        html_url_part(&h, by);
        html_raw(&h, "&amp;top=");
        html_url_part(&h, top);
        html_raw(&h, "\">JSON</a></p>");
        web_end(&h, req);
        web_reply(reply, &h);
}
