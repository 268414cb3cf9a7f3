/* SPDX-License-Identifier: GPL-2.0-or-later */
/* /site/scaling?app=APP: how an application scales across its runs, from
 * GET /api/v1/scaling with the page's query (docs/scaling.md): per group a
 * chart of time against cores with the fitted forms, the table per core
 * count, the fits, the prediction and the runs off the curve. */
#include <math.h>

#include "util.h"
#include "web/web.h"

#define CH_WIDTH 640.0
#define CH_HEIGHT 280.0
#define CH_LEFT 56.0
#define CH_BOTTOM 30.0
#define CH_TOP 10.0
#define CH_RIGHT 16.0
#define CH_CURVE_POINTS 64

typedef struct Chart {
        double lp0, lp1; /* log2 of the cores at the left and right edge */
        double tmax;     /* seconds at the top */
        double pmin, pmax; /* the curves' span: the runs and the prediction */
} Chart;

static double cx(const Chart *c, double p) {
        return CH_LEFT + (log2(p) - c->lp0) / (c->lp1 - c->lp0) * (CH_WIDTH - CH_LEFT - CH_RIGHT);
}

static double cy(const Chart *c, double t) {
        return CH_HEIGHT - CH_BOTTOM - t / c->tmax * (CH_HEIGHT - CH_BOTTOM - CH_TOP);
}

/* The fitted forms at p, as the API gives their coefficients. */
static double form_at(json_object *fit, const char *which, double p) {
        json_object *f = jget(fit, which);

        if (streq(which, "computation"))
                return jnum(f, "a") / p + jnum(f, "b");
        double c = jnum(f, "c4") + jnum(f, "c3") * log2(p) + jnum(f, "c1") * p + jnum(f, "c2") * p * p;
        return isfinite(c) ? MAX(c, 0.0) : NAN;
}

static void curve(Html *h, const Chart *c, json_object *fit, const char *cls) {
        html_rawf(h, "<polyline class=\"%s\" points=\"", cls);
        for (int i = 0; i <= CH_CURVE_POINTS; i++) {
                double p = c->pmin * exp2(log2(c->pmax / c->pmin) * i / CH_CURVE_POINTS);
                double t = streq(cls, "elapsed") ? form_at(fit, "computation", p) + form_at(fit, "communication", p)
                                                 : form_at(fit, cls, p);

                if (isfinite(t))
                        html_rawf(h, "%.1f,%.1f ", cx(c, p), cy(c, MIN(t, c->tmax)));
        }
        html_raw(h, "\"/>");
}

static void chart(Html *h, json_object *g) {
        json_object *runs = jget(g, "runs"), *fit = jget(g, "fit"), *pr = jget(g, "prediction");
        size_t n = runs ? json_object_array_length(runs) : 0;
        double pmin = INFINITY, pmax = 0, tmax = 0;
        Chart c;

        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(runs, i);
                double p = (double) jint(e, "p", 1);

                pmin = MIN(pmin, p);
                pmax = MAX(pmax, p);
                tmax = MAX(tmax, jnum(e, "elapsed_seconds"));
        }
        if (pr) {
                pmax = MAX(pmax, (double) jint(pr, "p", 1));
                pmin = MIN(pmin, (double) jint(pr, "p", 1));
                if (isfinite(jnum(pr, "high_seconds")))
                        tmax = MAX(tmax, jnum(pr, "high_seconds"));
        }
        if (n == 0 || !(tmax > 0) || !isfinite(tmax))
                return;
        c = (Chart) { log2(pmin) - 0.25, log2(MAX(pmax, pmin * 2)) + 0.25, tmax * 1.1, pmin, MAX(pmax, pmin * 2) };
        html_rawf(h, "<svg class=\"scaling\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
                     "aria-label=\"elapsed, computation and communication time against cores\">",
                  CH_WIDTH, CH_HEIGHT);
        html_rawf(h, "<line class=\"axis\" x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\"/>", CH_LEFT,
                  CH_WIDTH - CH_RIGHT, CH_HEIGHT - CH_BOTTOM, CH_HEIGHT - CH_BOTTOM);
        html_rawf(h, "<line class=\"axis\" x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\"/>", CH_LEFT, CH_LEFT,
                  CH_TOP, CH_HEIGHT - CH_BOTTOM);
        for (double p = exp2(ceil(c.lp0)); p <= exp2(c.lp1); p *= 2)
                html_rawf(h, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.0f</text>", cx(&c, p),
                          CH_HEIGHT - 12, p);
        html_rawf(h, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">", CH_LEFT - 4, cy(&c, tmax) + 4);
        html_number(h, tmax, 1);
        html_rawf(h, " s</text><text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">0</text>", CH_LEFT - 4,
                  CH_HEIGHT - CH_BOTTOM);
        html_rawf(h, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">cores (log scale)</text>", CH_WIDTH - CH_RIGHT,
                  CH_HEIGHT - 1);
        if (fit) {
                curve(h, &c, fit, "computation");
                curve(h, &c, fit, "communication");
                curve(h, &c, fit, "elapsed");
        }
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(runs, i);

                html_rawf(h, "<circle class=\"run%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\"><title>job ",
                          jbool(e, "off_curve") ? " off" : "", cx(&c, (double) jint(e, "p", 1)),
                          cy(&c, jnum(e, "elapsed_seconds")));
                html_text(h, jstr(e, "job"));
                html_rawf(h, ": %" PRId64 " cores, ", jint(e, "p", 0));
                html_number(h, jnum(e, "elapsed_seconds"), 3);
                html_raw(h, " s</title></circle>");
        }
        if (pr && isfinite(jnum(pr, "elapsed_seconds"))) {
                double x = cx(&c, (double) jint(pr, "p", 1));

                if (isfinite(jnum(pr, "low_seconds")))
                        html_rawf(h, "<line class=\"interval\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", x, x,
                                  cy(&c, jnum(pr, "low_seconds")), cy(&c, jnum(pr, "high_seconds")));
                html_rawf(h, "<rect class=\"predicted\" x=\"%.1f\" y=\"%.1f\" width=\"8\" height=\"8\"><title>predicted: ",
                          x - 4, cy(&c, jnum(pr, "elapsed_seconds")) - 4);
                html_number(h, jnum(pr, "elapsed_seconds"), 3);
                html_raw(h, " s</title></rect>");
        }
        html_raw(h, "</svg><p class=\"note\">Dots: runs (red: off the curve); lines: the fitted elapsed time "
                    "(dark), computation and communication (light, dashed); square: the prediction with its "
                    "95% interval.</p>");
}

static void core_table(Html *h, json_object *g) {
        json_object *a = jget(g, "core_counts");
        size_t n = a ? json_object_array_length(a) : 0;

        html_raw(h, "<table class=\"scaling\"><thead><tr><th class=\"num\">Cores</th><th class=\"num\">Runs</th>"
                    "<th class=\"num\">Elapsed (s)</th><th class=\"num\">Computation (s)</th>"
                    "<th class=\"num\">Communication (s)</th><th class=\"num\">Speedup</th>"
                    "<th class=\"num\">Efficiency</th><th class=\"num\">Wall (s)</th><th class=\"num\">Samples</th>"
                    "</tr></thead><tbody>");
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(a, i);
                static const char *const keys[] = { "elapsed_seconds", "computation_seconds", "communication_seconds",
                                                    "speedup", "efficiency", "wall_seconds" };

                html_rawf(h, "<tr><td class=\"num\">%" PRId64 "</td><td class=\"num\">%" PRId64 "</td>",
                          jint(e, "p", 0), jint(e, "runs", 0));
                for (size_t k = 0; k < ELEMENTSOF(keys); k++) {
                        html_raw(h, "<td class=\"num\">");
                        html_number(h, jnum(e, keys[k]), 3);
                        html_raw(h, "</td>");
                }
                html_rawf(h, "<td class=\"num\">%" PRId64 "</td></tr>", jint(e, "samples", 0));
        }
        html_raw(h, "</tbody></table>");
}

static void fit_section(Html *h, const char *root, json_object *g) {
        json_object *fit = jget(g, "fit"), *comp = jget(fit, "computation"), *comm = jget(fit, "communication");
        json_object *pr = jget(g, "prediction"), *runs = jget(g, "runs"), *loo = jget(fit, "leave_one_out");
        size_t off = 0;

        if (!fit) {
                html_raw(h, "<p class=\"note\">No fit: these runs do not determine the forms.</p>");
                return;
        }
        html_raw(h, "<dl class=\"fit\"><dt>Computation</dt><dd>T(p) = a/p + b, a = ");
        html_number(h, jnum(comp, "a"), 3);
        html_raw(h, " s, b = ");
        html_number(h, jnum(comp, "b"), 3);
        html_raw(h, " s</dd><dt>Communication</dt><dd>C(p) = ");
        html_text(h, jstr(comm, "form"));
        html_rawf(h, ": c1 = %.6g, c2 = %.6g, c3 = %.6g, c4 = %.6g</dd><dt>Leave one core count out</dt><dd>",
                  jnum(comm, "c1"), jnum(comm, "c2"), jnum(comm, "c3"), jnum(comm, "c4"));
        if (isfinite(jnum(fit, "leave_one_out_error"))) {
                html_number(h, 100 * jnum(fit, "leave_one_out_error"), 1);
                html_raw(h, "% root mean square error of elapsed time");
        } else
                html_raw(h, "needs three core counts or more");
        html_raw(h, "</dd>");
        if (pr) {
                html_rawf(h, "<dt>Predicted at %" PRId64 " cores</dt><dd>", jint(pr, "p", 0));
                html_number(h, jnum(pr, "elapsed_seconds"), 3);
                html_raw(h, " s (95% interval ");
                html_number(h, jnum(pr, "low_seconds"), 3);
                html_raw(h, "–");
                html_number(h, jnum(pr, "high_seconds"), 3);
                html_raw(h, " s): computation ");
                html_number(h, jnum(pr, "computation_seconds"), 3);
                html_raw(h, " s, communication ");
                html_number(h, jnum(pr, "communication_seconds"), 3);
                html_raw(h, " s</dd>");
        }
        html_raw(h, "</dl>");
        if (loo && json_object_array_length(loo) > 0) {
                html_raw(h, "<details><summary>Each core count predicted from the others</summary>"
                            "<table class=\"loo\"><thead><tr><th class=\"num\">Cores</th>"
                            "<th class=\"num\">Measured (s)</th><th class=\"num\">Predicted (s)</th>"
                            "<th class=\"num\">Error</th></tr></thead><tbody>");
                for (size_t i = 0; i < json_object_array_length(loo); i++) {
                        json_object *e = json_object_array_get_idx(loo, i);

                        html_rawf(h, "<tr><td class=\"num\">%" PRId64 "</td><td class=\"num\">", jint(e, "p", 0));
                        html_number(h, jnum(e, "measured_elapsed_seconds"), 3);
                        html_raw(h, "</td><td class=\"num\">");
                        html_number(h, jnum(e, "predicted_elapsed_seconds"), 3);
                        html_raw(h, "</td><td class=\"num\">");
                        html_number(h, 100 * jnum(e, "error"), 1);
                        html_raw(h, "%</td></tr>");
                }
                html_raw(h, "</tbody></table></details>");
        }
        for (size_t i = 0; runs && i < json_object_array_length(runs); i++) {
                json_object *e = json_object_array_get_idx(runs, i);

                if (!jbool(e, "off_curve"))
                        continue;
                if (off++ == 0)
                        html_raw(h, "<p>Runs off the curve: ");
                else
                        html_raw(h, ", ");
                web_job_link(h, root, jstr(e, "job"), jstr(e, "cluster"), NULL);
                html_rawf(h, " (%" PRId64 " cores, ", jint(e, "p", 0));
                html_number(h, jnum(e, "elapsed_seconds"), 3);
                html_raw(h, " s, the fit says ");
                html_number(h, jnum(e, "fit_elapsed_seconds"), 3);
                html_raw(h, jbool(e, "in_fit") ? " s)" : " s, left out of the fit)");
        }
        if (off > 0)
                html_raw(h, "</p>");
}

static void group_section(Html *h, const char *root, json_object *g) {
        html_raw(h, "<h2>");
        html_text(h, jstr(g, "app"));
        html_raw(h, ", size ");
        html_text(h, jstr(g, "size") ?: "–");
        html_raw(h, "</h2><p class=\"note\">");
        html_text(h, jstr(g, "executable") ?: "–");
        html_raw(h, " on ");
        html_text(h, jstr(g, "cluster") ?: "–");
        html_raw(h, ", node type ");
        html_text(h, jstr(g, "node_type"));
        if (!streq(jstr(g, "node_type_source") ?: "", "node_type"))
                html_raw(h, " (partition/CPUs per node: its nodes told no type)");
        html_rawf(h, "; %" PRId64 " runs.</p>", jint(g, "run_count", 0));
        chart(h, g);
        core_table(h, g);
        fit_section(h, root, g);
}

static const char *const page_args[] = { "app", "size", "predict", "since", "until", NULL };

void web_site_scaling(Server *s, Request *req, Reply *reply) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        _cleanup_(html_done) Html h = {};
        const char *root = web_root_prefix(req);
        const char *app = request_arg(req, "app"), *size = request_arg(req, "size");
        const char *predict = request_arg(req, "predict"), *since = request_arg(req, "since") ?: "365d";
        json_object *groups;

        if (!request_check_args(req, page_args, reply) || !web_api(s, req, api_scaling, NULL, 0, reply, &o))
                return;
        groups = jget(o, "groups");
        web_begin(&h, s, req, "Scaling");
        html_raw(&h, "<h1>Scaling of ");
        html_text(&h, app);
        html_raw(&h, "</h1><form class=\"filters\" method=\"get\" action=\"scaling\"><label>Application<input name=\"app\" "
                     "value=\"");
        html_text(&h, app);
        html_raw(&h, "\"></label><label>Size<input name=\"size\" value=\"");
        html_text(&h, size ?: "");
        html_raw(&h, "\"></label><label>Predict at<input name=\"predict\" value=\"");
        html_text(&h, predict ?: "");
        html_raw(&h, "\" placeholder=\"cores\"></label><label>Since<input name=\"since\" value=\"");
        html_text(&h, since);
        html_raw(&h, "\"></label><button type=\"submit\">Show</button></form>");
        html_rawf(&h, "<p class=\"note\">%" PRId64 " ended runs with MPI ranks", jint(o, "runs", 0));
        if (jint(o, "runs_without_ranks", 0) > 0)
                html_rawf(&h, " (%" PRId64 " more without ranks left out)", jint(o, "runs_without_ranks", 0));
        if (jint(o, "runs_mixed_node_types", 0) > 0)
                html_rawf(&h, " (%" PRId64 " more on nodes of several types left out)",
                          jint(o, "runs_mixed_node_types", 0));
        html_raw(&h, ". Times are the busiest rank's sampled seconds, elapsed = computation + communication "
                     "(lmk's docs/scaling.md).</p>");
        if (!groups || json_object_array_length(groups) == 0)
                html_raw(&h, "<p class=\"note\">No runs of this application in this time.</p>");
        for (size_t i = 0; groups && i < json_object_array_length(groups); i++)
                group_section(&h, root, json_object_array_get_idx(groups, i));
        if (jbool(o, "truncated"))
                html_raw(&h, "<p class=\"note\">Only the most recent runs were looked at.</p>");
        html_rawf(&h, "<p class=\"links\"><a href=\"%ssite\">Site</a><a href=\"%sapi/v1/scaling?app=", root, root);
        html_url_part(&h, app);
        html_raw(&h, "\">JSON: scaling</a></p>");
        web_end(&h, req);
        web_reply(reply, &h);
}
