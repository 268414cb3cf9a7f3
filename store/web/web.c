/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The pages' frame, their error page, running the API for a page, and
 * what every page uses to draw a share. */
#include <math.h>

#include "util.h"
#include "web/web.h"

const char *web_root_prefix(const Request *req) {
        static const char *const prefixes[] = { "./", "../", "../../", "../../../" };
        size_t slashes = 0;

        for (const char *p = req->url ?: "/"; *p; p++)
                slashes += *p == '/';
        return prefixes[MIN(slashes > 0 ? slashes - 1 : 0, ELEMENTSOF(prefixes) - 1)];
}

void web_begin_refresh(Html *h, Server *s, const Request *req, const char *title, const char *refresh) {
        const char *root = web_root_prefix(req);

        html_raw(h, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                    "<meta name=\"referrer\" content=\"no-referrer\">");
        if (refresh) {
                html_raw(h, "<meta http-equiv=\"refresh\" content=\"0; url=");
                html_text(h, refresh);
                html_raw(h, "\">");
        }
        html_raw(h, "<title>");
        html_text(h, title);
        html_raw(h, " · lmk</title><link rel=\"icon\" href=\"data:,\"><link rel=\"stylesheet\" href=\"");
        html_raw(h, root);
        html_raw(h, "static/lmk.css\"></head>\n<body><header><a class=\"brand\" href=\"");
        html_raw(h, root);
        html_raw(h, "jobs\">lmk</a>");
        if (req->identity->admin || req->identity->user) {
                html_rawf(h, "<nav><a href=\"%sjobs\">%s</a>", root, req->identity->admin ? "Jobs" : "My jobs");
                if (!auth_site_view_closed(&s->auth, req))
                        html_rawf(h, "<a href=\"%ssite\">Site</a>", root);
                html_raw(h, "</nav><span class=\"who\">");
                html_text(h, req->identity->user ?: "admin token");
                if (req->identity->admin)
                        html_raw(h, " <span class=\"tag\">admin</span>");
                html_rawf(h, " · <a href=\"%slogout\">Sign out</a></span>", root);
        }
        html_raw(h, "</header>\n<main>");
}

void web_begin(Html *h, Server *s, const Request *req, const char *title) {
        web_begin_refresh(h, s, req, title, NULL);
}

void web_end(Html *h, const Request *req) {
        html_raw(h, "</main>\n<footer>lmk " PACKAGE_VERSION " · times in UTC · shares are of samples, "
                    "with their 95% intervals</footer></body></html>\n");
}

void web_reply(Reply *reply, Html *h) {
        size_t n;
        char *b = html_finish(h, &n);

        if (!b) {
                reply_oom(reply);
                return;
        }
        reply_done(reply);
        reply->status = MHD_HTTP_OK;
        reply->text = b;
        reply->text_size = n;
        reply->content_type = "text/html; charset=utf-8";
}

bool web_api(Server *s, Request *req, Handler handler, const RequestArg *args, size_t n_args, Reply *reply,
             json_object **ret) {
        Request sub = *req;
        Reply r = {};

        /* NULL: the page's own query, as it came */
        if (args) {
                sub.args = args;
                sub.n_args = n_args;
        }
        handler(s, &sub, &r);
        if (r.status != MHD_HTTP_OK || !r.json) {
                reply_done(reply);
                *reply = r;
                if (!reply->json && !reply->text)
                        reply_oom(reply);
                return false;
        }
        *ret = TAKE_PTR(r.json);
        reply_done(&r);
        return true;
}

void web_share(Html *h, json_object *e) {
        json_object *ci = jget(e, "share_ci95");
        double share = jnum(e, "share");

        if (!jbool(e, "share_reliable")) {
                html_raw(h, "<span class=\"rough\" title=\"too few samples for more than a rough figure\">~");
                html_number(h, share * 100, 0);
                html_rawf(h, "%% <small>(n=%" PRId64 ")</small></span>", jint(e, "share_of_samples", 0));
                return;
        }
        html_number(h, share * 100, 1);
        html_raw(h, "%");
        if (ci && json_object_array_length(ci) == 2) {
                html_raw(h, " <small>");
                html_number(h, json_object_get_double(json_object_array_get_idx(ci, 0)) * 100, 1);
                html_raw(h, "–");
                html_number(h, json_object_get_double(json_object_array_get_idx(ci, 1)) * 100, 1);
                html_raw(h, "</small>");
        }
}

void web_bar(Html *h, double share, double low, double high) {
        if (!isfinite(share))
                share = 0;
        share = MIN(MAX(share, 0.0), 1.0);
        html_raw(h, "<svg class=\"bar\" viewBox=\"0 0 100 10\" preserveAspectRatio=\"none\" aria-hidden=\"true\">"
                    "<rect class=\"track\" width=\"100\" height=\"10\"/><rect class=\"fill\" height=\"10\" width=\"");
        html_number(h, share * 100, 2);
        html_raw(h, "\"/>");
        if (isfinite(low) && isfinite(high) && high > low)
                html_rawf(h, "<line class=\"ci\" x1=\"%.2f\" x2=\"%.2f\" y1=\"5\" y2=\"5\"/>",
                          MAX(low, 0.0) * 100, MIN(high, 1.0) * 100);
        html_raw(h, "</svg>");
}

void web_function_cell(Html *h, json_object *e) {
        html_raw(h, "<td class=\"function\">");
        if (jbool(e, "other"))
                html_raw(h, "<span class=\"muted\">(other functions)</span>");
        else
                html_text(h, jstr(e, "function"));
        html_raw(h, "</td>");
}

void web_share_cells(Html *h, json_object *e, bool with_ipc) {
        json_object *ci = jget(e, "share_ci95");
        double low = NAN, high = NAN;

        if (ci && json_object_array_length(ci) == 2) {
                low = json_object_get_double(json_object_array_get_idx(ci, 0));
                high = json_object_get_double(json_object_array_get_idx(ci, 1));
        }
        html_raw(h, "<td class=\"num\">");
        web_share(h, e);
        html_raw(h, "</td><td>");
        web_bar(h, jnum(e, "share"), low, high);
        html_raw(h, "</td><td class=\"num\">");
        web_cpu_time(h, jnum(e, "cpu_seconds"));
        html_rawf(h, "</td><td class=\"num\">%" PRId64 "</td>", jint(e, "samples", 0));
        if (with_ipc) {
                html_raw(h, "<td class=\"num\">");
                html_number(h, jnum(e, "ipc"), 2);
                html_raw(h, "</td>");
        }
}

void web_job_link(Html *h, const char *root, const char *job, const char *cluster, const char *fragment) {
        html_raw(h, "<a href=\"");
        html_raw(h, root);
        html_raw(h, "jobs/");
        html_url_part(h, job);
        if (cluster) {
                html_raw(h, "?cluster=");
                html_url_part(h, cluster);
        }
        html_raw(h, fragment ?: "");
        html_raw(h, "\">");
        html_text(h, job);
        html_raw(h, "</a>");
}

void web_cpu_time(Html *h, double s) {
        if (!isfinite(s))
                html_raw(h, "–");
        else if (s >= 3600)
                html_rawf(h, "%.1f core-h", s / 3600);
        else if (s >= 60)
                html_rawf(h, "%.1f core-min", s / 60);
        else
                html_rawf(h, "%.1f core-s", s);
}

/* A page's error: the API's message in the frame, with the same status. */
void web_error_page(Server *s, Request *req, Reply *reply) {
        const char *msg = jstr(reply->json, "error") ?: "error";
        unsigned status = reply->status;
        bool unauthorized = status == MHD_HTTP_UNAUTHORIZED;
        _cleanup_(html_done) Html h = {};
        size_t n;
        char *b;

        if (!req->identity)
                return; /* out of memory before anyone was asked: the JSON error goes out */
        web_begin(&h, s, req, unauthorized ? "Sign in" : "Not available");
        html_rawf(&h, "<h1>%s</h1><p class=\"error\">", unauthorized ? "Sign in" :
                  status == MHD_HTTP_NOT_FOUND ? "Not found" : "Not available");
        html_text(&h, msg);
        html_raw(&h, "</p>");
        if (unauthorized)
                html_raw(&h, "<p>On a login node of the cluster, run</p><pre>lmk web</pre>"
                             "<p>and open the link it prints: it signs you in as the user who ran it, "
                             "the way Slurm knows you (MUNGE).</p>");
        web_end(&h, req);
        b = html_finish(&h, &n);
        if (!b)
                return; /* the JSON error goes out instead */
        json_object_put(TAKE_PTR(reply->json));
        free(reply->text);
        reply->text = b;
        reply->text_size = n;
        reply->content_type = "text/html; charset=utf-8";
        reply->status = status;
}
