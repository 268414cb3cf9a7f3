/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The job list, /jobs: GET /api/v1/jobs with the same query, as a table
 * with a filter form, sortable columns and pages. A person sees their own
 * jobs and their accounts'; an admin every job. */
#include <math.h>

#include "util.h"
#include "web/web.h"

#define PAGE_DEFAULT_LIMIT 50

typedef struct QueryCopy {
        Html *h;
        const char *const *skip;
        bool first;
} QueryCopy;

static enum MHD_Result copy_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
        QueryCopy *q = cls;

        for (const char *const *p = q->skip; *p; p++)
                if (streq(*p, key))
                        return MHD_YES;
        if (!value || !*value)
                return MHD_YES;
        html_raw(q->h, q->first ? "?" : "&amp;");
        html_url_part(q->h, key);
        html_raw(q->h, "=");
        html_url_part(q->h, value);
        q->first = false;
        return MHD_YES;
}

/* "jobs?the=query&amp;without=skip" then more parameters with "&amp;" (or
 * "?" when none was written: *first tells). */
static bool query_link(Html *h, Request *req, const char *const *skip) {
        QueryCopy q = { .h = h, .skip = skip, .first = true };

        html_raw(h, "jobs");
        MHD_get_connection_values(req->connection, MHD_GET_ARGUMENT_KIND, copy_arg, &q);
        return q.first;
}

/* A column the API sorts by (sort=), marked when the list is sorted so. */
static void sort_head(Html *h, Request *req, json_object *list, const char *key, const char *label, bool num) {
        static const char *const skip[] = { "sort", "order", "offset", NULL };
        const char *sort = jstr(list, "sort"), *order = jstr(list, "order");
        bool sorted = sort && streq(sort, key), desc = !order || streq(order, "desc");
        bool first;

        html_rawf(h, "<th%s><a class=\"%s\" href=\"", num ? " class=\"num\"" : "", sorted ? "sorted" : "");
        first = query_link(h, req, skip);
        html_rawf(h, "%ssort=%s&amp;order=%s\">%s%s</a></th>", first ? "?" : "&amp;", key,
                  sorted && desc ? "asc" : "desc", label, !sorted ? "" : desc ? " ▼" : " ▲");
}

static void filter_input(Html *h, Request *req, const char *key, const char *label, const char *placeholder) {
        html_rawf(h, "<label>%s<input name=\"%s\" value=\"", label, key);
        html_text(h, request_arg(req, key) ?: "");
        html_raw(h, "\" placeholder=\"");
        html_text(h, placeholder);
        html_raw(h, "\"></label>");
}

static void filters(Html *h, Request *req) {
        const char *state = request_arg(req, "state") ?: "";

        html_raw(h, "<form class=\"filters\" method=\"get\" action=\"jobs\">");
        filter_input(h, req, "user", "User", "any");
        filter_input(h, req, "account", "Account", "any");
        filter_input(h, req, "partition", "Partition", "any");
        filter_input(h, req, "app", "Application", "any");
        filter_input(h, req, "node_type", "Node type", "any");
        html_raw(h, "<label>State<select name=\"state\">");
        html_rawf(h, "<option value=\"\"%s>any</option>", !*state ? " selected" : "");
        html_rawf(h, "<option value=\"running\"%s>running</option>", streq(state, "running") ? " selected" : "");
        html_rawf(h, "<option value=\"ended\"%s>ended</option>", streq(state, "ended") ? " selected" : "");
        html_raw(h, "</select></label>");
        filter_input(h, req, "since", "Seen since", "7d, 24h or Unix time");
        filter_input(h, req, "until", "Until", "now");
        if (request_arg(req, "sort")) {
                html_raw(h, "<input type=\"hidden\" name=\"sort\" value=\"");
                html_text(h, request_arg(req, "sort"));
                html_raw(h, "\">");
        }
        if (request_arg(req, "order")) {
                html_raw(h, "<input type=\"hidden\" name=\"order\" value=\"");
                html_text(h, request_arg(req, "order"));
                html_raw(h, "\">");
        }
        html_raw(h, "<button type=\"submit\">Show</button></form>");
}

static void pager(Html *h, Request *req, json_object *list, size_t shown) {
        static const char *const skip[] = { "offset", NULL };
        int64_t offset = jint(list, "offset", 0), limit = jint(list, "limit", PAGE_DEFAULT_LIMIT);
        int64_t total = jint(list, "total", -1);
        bool first;

        html_raw(h, "<p class=\"pager\">");
        if (shown == 0)
                html_raw(h, "<span>No jobs match.</span>");
        else {
                html_rawf(h, "<span>Jobs %" PRId64 "–%" PRId64, offset + 1, offset + (int64_t) shown);
                if (total >= 0)
                        html_rawf(h, " of %s%" PRId64, jbool(list, "total_exact") ? "" : "at least ", total);
                html_raw(h, "</span>");
        }
        if (offset > 0) {
                html_raw(h, "<a href=\"");
                first = query_link(h, req, skip);
                html_rawf(h, "%soffset=%" PRId64 "\">← Newer</a>", first ? "?" : "&amp;", MAX(offset - limit, (int64_t) 0));
        }
        if (jbool(list, "more")) {
                html_raw(h, "<a href=\"");
                first = query_link(h, req, skip);
                html_rawf(h, "%soffset=%" PRId64 "\">Older →</a>", first ? "?" : "&amp;", offset + limit);
        }
        html_raw(h, "</p>");
}

static void job_row(Html *h, const char *root, json_object *j) {
        const char *cluster = jstr(j, "cluster");

        html_raw(h, "<tr><td>");
        web_job_link(h, root, jstr(j, "job"), cluster, NULL);
        html_raw(h, "</td><td>");
        html_text(h, jstr(j, "name") ?: "");
        html_raw(h, "</td><td>");
        html_text(h, jstr(j, "app") ?: "–");
        html_raw(h, "</td><td>");
        html_text(h, jstr(j, "user") ?: "–");
        html_raw(h, "</td><td>");
        html_text(h, jstr(j, "account") ?: "–");
        html_raw(h, "</td><td>");
        html_text(h, jstr(j, "partition") ?: "–");
        html_raw(h, "</td><td>");
        html_raw(h, jbool(j, "ended") ? "ended" : "<span class=\"state-running\">running</span>");
        html_rawf(h, "</td><td class=\"num\">%" PRId64 "</td><td class=\"num\">", jint(j, "nodes_seen", 0));
        html_duration(h, jnum(j, "elapsed_seconds"));
        html_raw(h, "</td><td class=\"num\">");
        web_cpu_time(h, jnum(j, "cpu_seconds"));
        html_raw(h, "</td><td class=\"time\">");
        html_time(h, jnum(j, "first_seen"));
        html_raw(h, "</td><td class=\"time\">");
        html_time(h, jnum(j, "last_seen"));
        html_raw(h, "</td></tr>");
}

void web_jobs(Server *s, Request *req, Reply *reply) {
        _cleanup_(json_object_putp) json_object *list = NULL;
        _cleanup_(html_done) Html h = {};
        const char *root = web_root_prefix(req), *user = request_arg(req, "user");
        const char *account = request_arg(req, "account");
        json_object *jobs;
        size_t n;

        /* the page's query is the API's: the same filters, checked alike */
        if (!web_api(s, req, api_jobs, NULL, 0, reply, &list))
                return;
        jobs = jget(list, "jobs");
        n = jobs ? json_object_array_length(jobs) : 0;

        web_begin(&h, s, req, "Jobs");
        if (user && !(req->identity->user && streq(user, req->identity->user))) {
                html_raw(&h, "<h1>Jobs of ");
                html_text(&h, user);
                html_raw(&h, "</h1>");
        } else if (account) {
                html_raw(&h, "<h1>Jobs of account ");
                html_text(&h, account);
                html_raw(&h, "</h1>");
        } else
                html_raw(&h, req->identity->admin ? "<h1>Jobs</h1>" : "<h1>My jobs</h1>");
        if (!req->identity->admin)
                html_raw(&h, "<p class=\"note\">Your own jobs and those of the accounts you lead.</p>");
        filters(&h, req);
        html_raw(&h, "<table class=\"jobs\"><thead><tr><th>Job</th><th>Name</th><th>Application</th><th>User</th>"
                     "<th>Account</th><th>Partition</th><th>State</th><th class=\"num\">Nodes</th>"
                     "<th class=\"num\">Elapsed</th>");
        sort_head(&h, req, list, "cpu_seconds", "CPU time", true);
        sort_head(&h, req, list, "first_seen", "Started", false);
        sort_head(&h, req, list, "last_seen", "Last seen", false);
        html_raw(&h, "</tr></thead><tbody>");
        for (size_t i = 0; i < n; i++)
                job_row(&h, root, json_object_array_get_idx(jobs, i));
        html_raw(&h, "</tbody></table>");
        pager(&h, req, list, n);
        html_raw(&h, "<p class=\"links\"><a href=\"");
        html_raw(&h, root);
        html_raw(&h, "api/v1/");
        (void) query_link(&h, req, (const char *const[]) { NULL });
        html_raw(&h, "\">JSON of this list</a></p>");
        web_end(&h, req);
        web_reply(reply, &h);
}
