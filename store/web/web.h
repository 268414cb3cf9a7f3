/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "web/html.h"
#include "http/json-out.h"
#include "http/server.h"

/* What the pages share (docs/web.md): the frame, reading the API's JSON,
 * and the small pictures. Every figure a page shows comes from the JSON the
 * API answers for the same query (web_api()), so the two cannot disagree.
 * Links are relative, so the pages work behind a proxy at a sub-path. */

/* "./", "../", ... : from the request's path back to the store's root. */
const char *web_root_prefix(const Request *req);

void web_begin(Html *h, Server *s, const Request *req, const char *title);
void web_end(Html *h, const Request *req);
/* Ends the page into reply (status 200); ENOMEM answered as such. */
void web_reply(Reply *reply, Html *h);

/* Runs an API handler for the page with the given query parameters (args
 * NULL: the page's own query). On
 * its success, its JSON in *ret (to put); else false with its error in
 * reply (web_error_page() makes it a page). */
bool web_api(Server *s, Request *req, void (*handler)(Server *, Request *, Reply *), const RequestArg *args,
             size_t n_args, Reply *reply, json_object **ret);

/* Reading the API's JSON: absent and null read as NULL, NAN, or dflt. */
json_object *jget(json_object *o, const char *key);
const char *jstr(json_object *o, const char *key);
double jnum(json_object *o, const char *key);
int64_t jint(json_object *o, const char *key, int64_t dflt);
bool jbool(json_object *o, const char *key);

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
/* A link to a job's page, named by its id; fragment ("#findings") or NULL. */
void web_job_link(Html *h, const char *root, const char *job, const char *cluster, const char *fragment);
/* A number of CPU seconds as core-hours or seconds, whichever reads. */
void web_cpu_time(Html *h, double seconds);
