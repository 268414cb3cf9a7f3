/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The job a request names, and the answer when there is none to give:
 * what every route of one job (GET /api/v1/jobs/{id}, its functions and
 * profile, compare's a= and b=) answers alike, someone else's job as one
 * that does not exist. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "util.h"

bool api_job_id_valid(const char *id) {
        return strlen(id) <= API_JOB_ID_MAX && !strchr(id, '/');
}

void api_job_lookup_failed(Server *s, Request *req, int r, const char *field, const char *id, Reply *reply) {
        if (r == -ENOENT || r == -EACCES) {
                /* counted for people whether or not the job exists:
                 * /metrics, open to all, must not tell either */
                if (!req->identity->admin)
                        auth_denied(&s->auth, req, "not-yours");
                reply_error(reply, MHD_HTTP_NOT_FOUND, field, "no such job: %.*s", API_JOB_ID_MAX, id);
        } else if (r == -ENOTUNIQ && field)
                reply_error(reply, MHD_HTTP_CONFLICT, field,
                            "job %s exists on several clusters, name one with ?cluster= or ?cluster_%s=", id, field);
        else if (r == -ENOTUNIQ)
                reply_error(reply, MHD_HTTP_CONFLICT, "cluster",
                            "job %s exists on several clusters, name one with ?cluster=", id);
        else
                reply_storage_error(reply, r);
}

char *api_job_path_id(Server *s, Request *req, const char *suffix, Reply *reply) {
        size_t n = strlen(req->path_arg);
        char *id;

        /* the route's path is /api/v1/jobs/ID/SUFFIX (routes.c) */
        id = strndup(req->path_arg, n - MIN(n, strlen(suffix)));
        if (!id) {
                reply_oom(reply);
                return NULL;
        }
        if (!api_job_id_valid(id)) {
                api_job_lookup_failed(s, req, -ENOENT, NULL, id, reply);
                free(id);
                return NULL;
        }
        return id;
}
