/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "api/api.h"
#include "http/json-in.h"
#include "http/json-out.h"
#include "web/html.h"

/* The web pages (docs/web.md), one file per page, and what they share
 * (web.c): the frame, the error page, and the small pictures. Every figure
 * a page shows comes from the JSON the API answers for the same query
 * (web_api(); http/json-in.h reads it), so the two cannot disagree. Links
 * are relative, so the pages work behind a proxy at a sub-path. */

void web_root(Server *s, Request *req, Reply *reply);
void web_css(Server *s, Request *req, Reply *reply);
void web_login(Server *s, Request *req, Reply *reply);
/* POST /login: the browser's confirmation that it follows a login link for
 * someone else than who it is signed in as. */
void web_login_confirm(Server *s, Request *req, Reply *reply);
void web_logout(Server *s, Request *req, Reply *reply);
void web_jobs(Server *s, Request *req, Reply *reply);
void web_job(Server *s, Request *req, Reply *reply);
void web_site(Server *s, Request *req, Reply *reply);
void web_site_software(Server *s, Request *req, Reply *reply);
void web_site_scaling(Server *s, Request *req, Reply *reply);
void web_site_apps(Server *s, Request *req, Reply *reply);
/* Two runs side by side, or the form to choose them (compare.c). */
void web_compare(Server *s, Request *req, Reply *reply);
/* kernels.c: the site's functions, and a library's */
void web_site_kernels(Server *s, Request *req, Reply *reply);
void web_site_library(Server *s, Request *req, Reply *reply);
/* The functions of a GET /api/v1/functions answer l: family, name,
 * object (a link to its library page, unless with_object is false),
 * share cells, jobs, users, applications. */
void web_functions_table(Html *h, const char *root, json_object *l, bool with_object, const char *since,
                         const char *until);
/* A page route's Route.error_page: an error reply (JSON) as a page, with
 * the same status and message. */
void web_error_page(Server *s, Request *req, Reply *reply);

/* "./", "../", ... : from the request's path back to the store's root. */
const char *web_root_prefix(const Request *req);

void web_begin(Html *h, Server *s, const Request *req, const char *title);
/* The same for a page that goes on at once to refresh, a page of ours
 * (relative). */
void web_begin_refresh(Html *h, Server *s, const Request *req, const char *title, const char *refresh);
void web_end(Html *h, const Request *req);
/* Ends the page into reply (status 200); ENOMEM answered as such. */
void web_reply(Reply *reply, Html *h);

/* Runs an API handler for the page with the given query parameters (args
 * NULL: the page's own query). On
 * its success, its JSON in *ret (to put); else false with its error in
 * reply (web_error_page() makes it a page). */
bool web_api(Server *s, Request *req, Handler handler, const RequestArg *args, size_t n_args, Reply *reply,
             json_object **ret);

/* A share cell: "37.2%" and its 95% interval, or "~60% (n=12)" when
 * rough (docs/uncertainty.md), from an entry with share, share_ci95,
 * share_of_samples, share_reliable. */
void web_share(Html *h, json_object *e);
/* A small horizontal bar for a share in [0, 1], with its interval as a
 * whisker when given (NAN: none). */
void web_bar(Html *h, double share, double low, double high);
/* The cells of a share: the share and its interval, a bar, CPU time,
 * samples, and IPC when asked. */
void web_share_cells(Html *h, json_object *e, bool with_ipc);
/* A function's cell: its "function", or "(other functions)" in grey for
 * the rest of an object's. */
void web_function_cell(Html *h, json_object *e);
/* A link to a job's page, named by its id; fragment ("#findings") or NULL. */
void web_job_link(Html *h, const char *root, const char *job, const char *cluster, const char *fragment);
/* A number of CPU seconds as core-hours or seconds, whichever reads. */
void web_cpu_time(Html *h, double seconds);
