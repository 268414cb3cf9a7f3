/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <json-c/json.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/findings-cache.h"
#include "analysis/findings.h"
#include "auth/auth.h"
#include "db/storage.h"
#include "http/csv-out.h"
#include "http/http.h"
#include "http/json-out.h"
#include "metrics/metrics.h"
#include "metrics/node-health.h"
#include "symbols/debuginfod.h"

/* The JSON API (docs/api.md), one file per resource: what its handlers
 * share. A handler reads its query (args.c), asks the storage, and
 * answers a Reply (http/http.h); shares and ratios are computed here, from
 * the sums the storage returns. */

/* The store's state, which every handler answers from: set up and torn
 * down by the program (store/server.c), handed to handlers by http/. */
struct Server {
        HttpServer *http;
        Auth auth;
        Storage *storage;
        Metrics metrics;
        NodeHealth *node_health;
        size_t max_inflated;    /* an ingest body's bytes after decompression */
        Symbols *symbols;       /* names by build-id from debuginfod; NULL: none */

        /* the findings' rules and the library families they use; SIGHUP
         * swaps both under the write lock */
        pthread_rwlock_t findings_lock;
        FindingsConfig *findings;
        LibFamilies *families;
        FindingsCache *findings_cache; /* the site list's, cleared with the rules */
};

#define TIME_DECIMALS 3

/* The handlers, each in the file of its resource (/api/v1/jobs: jobs.c). */
void api_ingest(Server *s, Request *req, Reply *reply);
void api_jobs(Server *s, Request *req, Reply *reply);
void api_job(Server *s, Request *req, Reply *reply);
/* GET /api/v1/jobs/{id}/functions (job-functions.c) */
void api_job_functions(Server *s, Request *req, Reply *reply);
/* GET /api/v1/jobs/{id}/profile and GET /api/v1/profile, for pprof or as
 * folded stacks (profile.c) */
void api_job_profile(Server *s, Request *req, Reply *reply);
void api_profile(Server *s, Request *req, Reply *reply);
void api_objects(Server *s, Request *req, Reply *reply);
/* The site's functions (functions.c): GET /api/v1/functions and
 * /api/v1/objects/{object}/functions. */
void api_site_functions(Server *s, Request *req, Reply *reply);
void api_object_functions(Server *s, Request *req, Reply *reply);
/* Not routed: for the kernels page (web/kernels.c), the answer of GET
 * /api/v1/functions and, under "families", its group=family answer
 * without family= and limit=, from one read of the storage. */
void api_site_kernels(Server *s, Request *req, Reply *reply);
void api_nodes(Server *s, Request *req, Reply *reply);
void api_findings(Server *s, Request *req, Reply *reply);
/* Site answers (site.c): installed software and its use, library families. */
void api_packages(Server *s, Request *req, Reply *reply);
void api_families(Server *s, Request *req, Reply *reply);
/* Scaling across runs of one application (scaling.c, docs/scaling.md). */
void api_scaling(Server *s, Request *req, Reply *reply);
/* The application mix (apps.c). */
void api_apps(Server *s, Request *req, Reply *reply);
/* POST /api/v1/sessions: a login ticket for a browser (sessions.c,
 * auth/session.h). */
void api_sessions(Server *s, Request *req, Reply *reply);
/* Two runs side by side (compare.c), and its rows as CSV. */
void api_compare(Server *s, Request *req, Reply *reply);
extern const CsvTable api_compare_csv;

/* Sees every answer of the ingest route: counts the batches not taken
 * (metrics.h). */
void api_ingest_replied(Server *s, const Reply *reply);

/* The columns of the list answers as CSV (?format=csv), beside their handlers. */
extern const CsvTable api_jobs_csv, api_objects_csv, api_nodes_csv, api_findings_csv, api_packages_csv,
        api_families_csv, api_scaling_csv, api_apps_csv, api_job_functions_csv, api_site_functions_csv;

/* Query parameters (args.c): a time (Unix seconds, "now" or an age;
 * fallback when absent, NULL: leave *ret), an integer in [min, max], a
 * word of a closed list (from_string() < 0 for any other, expected says
 * which). false when the reply holds a 400. */
bool arg_time(Request *req, const char *key, const char *fallback, int64_t now, int64_t *ret, Reply *reply);
bool arg_uint(Request *req, const char *key, unsigned min, unsigned max, unsigned *ret, Reply *reply);
bool arg_word(Request *req, const char *key, int (*from_string)(const char *), const char *expected, int *ret,
              Reply *reply);
/* A job filter of the request's user, cluster, account, partition, app,
 * name and node_type arguments (pointing into req), the rest zero. */
JobFilter api_job_filter(Request *req);
/* Narrows a job filter to what the request's identity may see (the filter
 * then points into req). */
void api_viewer(const Request *req, JobFilter *f);
/* The same for one job: a person who is no admin, with no name (which
 * lmk-store never lets through), sees no job rather than every one. */
JobViewer api_job_viewer(const Request *req);
/* The cluster, partition and account a site answer is narrowed to
 * (query parameters; pointers into req). false when the reply holds a 403:
 * a person may narrow to an account only when they lead it
 * (api_account_allowed()). */
bool api_scope(Server *s, Request *req, JobScope *ret, Reply *reply);
bool api_account_allowed(Server *s, Request *req, const char *account, Reply *reply);

/* -ENOSPC is a full disk: 507 with this Retry-After (lmkd backs off by
 * itself too). */
#define DISK_FULL_RETRY_AFTER_S 60
/* A storage error as the client may learn it (storage-error.c): the
 * database's own words go to the log only. */
void reply_storage_error(Reply *r, int error);

/* "share" of part in total and what it rests on (share.c,
 * docs/uncertainty.md). */
int api_add_share(json_object *e, int64_t part, int64_t total);
/* Its columns in a CSV answer. */
#define CSV_SHARE_COLUMNS                                                                       \
        { "share" }, { "share_ci95_low", "share_ci95[0]" }, { "share_ci95_high", "share_ci95[1]" }, \
        { "share_of_samples" }, { "share_reliable" }
/* "day", "hour", or "jobs" for a scope's prorated jobs (ObjectList.grain). */
const char *api_grain_name(int64_t grain);

/* A job's row in the list, which heads its own answer too (jobs.c). */
int api_add_job_info(json_object *o, const StoredJob *j);
/* A job's functions as the list key of o (job-functions.c): each with
 * its share of job_samples, or per phase of its phase's samples. */
int api_add_functions(json_object *o, const char *key, const FunctionList *l, int64_t job_samples);
/* What a function is called in an answer: its name, "(other functions)",
 * or, unnamed, its object's file name and the offset of its first byte or page in the
 * file ("libopenblas.so.0+0x21000"), as perf shows such an address; in
 * buf when made up (job-functions.c). */
#define FUNCTION_TEXT_MAX 4200
const char *api_function_text(const char *object, const char *name, int64_t offset, bool other, char *buf,
                              size_t size);
/* The job a request names (job-lookup.c). The routes
 * /api/v1/jobs/ID/SUFFIX: the job id of the path, or NULL with the answer
 * in reply. */
char *api_job_path_id(Server *s, Request *req, const char *suffix, Reply *reply);
/* A job id worth asking the storage about: no longer than any job id, no
 * '/'; any other is answered as a job that does not exist. */
#define API_JOB_ID_MAX 64
bool api_job_id_valid(const char *id);
/* The answer to a failed lookup of job id, as GET /api/v1/jobs/{id}
 * answers it: someone else's job as one that does not exist (-ENOENT,
 * -EACCES: 404), an id on several clusters (-ENOTUNIQ: 409), else a
 * storage error. field: the query parameter that named the job
 * (compare's a= and b=; its cluster_FIELD= then named too), NULL for the
 * path. */
void api_job_lookup_failed(Server *s, Request *req, int r, const char *field, const char *id, Reply *reply);
/* Adds "findings" to a job's summary (findings.c). */
int api_job_findings(Server *s, const JobSummary *js, json_object *o);
