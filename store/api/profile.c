/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Functions as profiles for the tools people already use: pprof's
 * profile.proto (GET /api/v1/jobs/{id}/profile, the default) and the
 * folded stacks that FlameGraph and speedscope read (?format=folded); the
 * same for the jobs of a range (GET /api/v1/profile). docs/profiles.md. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api.h"
#include "http/pprof-out.h"
#include "util.h"

#define PROFILE_SUFFIX "/profile"
#define PROFILE_DEFAULT_LIMIT 10000
/* The jobs a range's profile sums, the most recently seen: each job's
 * function rows are read and summed (about 0.7 s for 20,000 jobs of 50
 * functions on SQLite here), so a range of a whole site's jobs would hold a
 * reader for minutes. */
#define PROFILE_MAX_JOBS 10000

typedef enum ProfileFormat {
        FORMAT_PPROF,
        FORMAT_FOLDED,
} ProfileFormat;

static int format_from_string(const char *s) {
        return streq(s, "pprof") ? FORMAT_PPROF : streq(s, "folded") ? FORMAT_FOLDED : -EINVAL;
}

/* seconds in a unit of per_second, rounded; 0 where not known */
static int64_t scaled(double seconds, double per_second) {
        double v = seconds * per_second;

        return isfinite(v) && v > 0 && v < 9e18 ? llround(v) : 0;
}

static int64_t to_ns(double seconds) {
        return scaled(seconds, 1e9);
}

/* A frame of a folded line: ';' separates frames and the count follows the
 * last space, so a ';' in a name becomes U+FF1B (a fullwidth ';', which
 * reads the same) and control characters, which an object's path may
 * hold, '?'. Spaces stay. */
static void put_frame(FILE *f, const char *s) {
        for (; *s; s++)
                if (*s == ';')
                        fputs("\xef\xbc\x9b", f);
                else
                        fputc((unsigned char) *s < 0x20 || *s == 0x7f ? '?' : *s, f);
}

/* "object;function samples" per function, the object by its file name. */
static int folded(const FunctionList *l, char **ret, size_t *ret_size) {
        FILE *f = open_memstream(ret, ret_size);

        if (!f)
                return -ENOMEM;
        for (size_t i = 0; i < l->n; i++) {
                const FunctionShare *x = &l->items[i];
                const char *file = strrchr(x->object, '/');
                char buf[FUNCTION_TEXT_MAX];

                put_frame(f, file && file[1] ? file + 1 : x->object);
                fputc(';', f);
                put_frame(f, api_function_text(x->object, x->name, x->offset, x->other, buf, sizeof(buf)));
                fprintf(f, " %" PRId64 "\n", x->samples);
        }
        if (fclose(f) != 0) {
                free(*ret);
                *ret = NULL;
                return -ENOMEM;
        }
        return 0;
}

/* The functions as pprof's samples, each with its phase as a label. CPU
 * time in nanoseconds, as pprof's own CPU profiles have it, unless their
 * sum would not fit in its 64 bits (2.5 million core-hours: a site's
 * range may hold more), then in milliseconds. */
static int pprof(const FunctionList *l, int64_t time_ns, int64_t duration_ns, const char *const *comments,
                 char **ret, size_t *ret_size) {
        _cleanup_free_ PprofEntry *e = calloc(MAX(l->n, 1u), sizeof(PprofEntry));
        PprofProfile p = { e, l->n, time_ns, duration_ns, "nanoseconds", 0, comments };
        double seconds = 0, per_second = 1e9;
        int64_t samples = 0, cpu = 0;

        if (!e)
                return -ENOMEM;
        for (size_t i = 0; i < l->n; i++)
                seconds += l->items[i].cpu_seconds;
        if (seconds * per_second >= 9e18) {
                p.cpu_unit = "milliseconds";
                per_second = 1e3;
        }
        for (size_t i = 0; i < l->n; i++) {
                const FunctionShare *x = &l->items[i];
                /* unnamed (NULL): an address pprof may name from the binary */
                const char *name = x->name ?: x->other || x->offset == STORAGE_NULL ? "(other functions)" : NULL;

                e[i] = (PprofEntry) {
                        .object = x->object,
                        .build_id = x->build_id,
                        .function = name,
                        .offset = x->offset == STORAGE_NULL ? 0 : (uint64_t) x->offset,
                        .phase = x->phase,
                        .samples = x->samples,
                        .cpu = scaled(x->cpu_seconds, per_second),
                };
                samples += x->samples;
                cpu += e[i].cpu;
        }
        /* the mean sampling period (cpu_seconds = samples / each batch's rate) */
        p.period = samples > 0 ? cpu / samples : 0;
        return pprof_write(&p, ret, ret_size);
}

/* The answer, saved by a browser as lmk-NAME.pb.gz or lmk-NAME.folded,
 * NAME of the characters a file name may hold anywhere. */
static void reply_profile(ProfileFormat format, const char *name, const FunctionList *l, int64_t time_ns,
                          int64_t duration_ns, const char *const *comments, Reply *reply) {
        _cleanup_free_ char *file = NULL;
        char *body = NULL;
        size_t size = 0;
        int r;

        r = format == FORMAT_FOLDED ? folded(l, &body, &size)
                                    : pprof(l, time_ns, duration_ns, comments, &body, &size);
        if (r < 0) {
                reply_error(reply, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "failed to write the profile: %s",
                            strerror(-r));
                return;
        }
        file = strdup(name);
        /* a job id may hold what a header or a file name must not (a quote, a slash) */
        for (char *c = file; c && *c; c++)
                if (!isalnum((unsigned char) *c) && !strchr("._+-", *c))
                        *c = '_';
        if (!file ||
            asprintf(&reply->disposition, "attachment; filename=\"lmk-%s.%s\"",
                     file, format == FORMAT_FOLDED ? "folded" : "pb.gz") < 0) {
                reply->disposition = NULL;
                free(body);
                reply_oom(reply);
                return;
        }
        reply->status = MHD_HTTP_OK;
        reply->text = body;
        reply->text_size = size;
        reply->content_type = format == FORMAT_FOLDED ? "text/plain; charset=utf-8" : "application/octet-stream";
        reply->content_disposition = reply->disposition;
}

static const char *const job_profile_args[] = { "cluster", "format", NULL };

void api_job_profile(Server *s, Request *req, Reply *reply) {
        _cleanup_free_ char *id = NULL, *head = NULL, *cover = NULL, *name = NULL;
        JobViewer viewer = api_job_viewer(req);
        int format = FORMAT_PPROF, r;
        int64_t in_functions = 0;
        StoredJob info = {};
        FunctionList l = {};

        if (!request_check_args(req, job_profile_args, reply) ||
            !arg_word(req, "format", format_from_string, "pprof or folded", &format, reply))
                return;
        id = api_job_path_id(s, req, PROFILE_SUFFIX, reply);
        if (!id)
                return;
        /* pprof gets the phases as labels; a flame graph sums over them */
        r = s->storage->ops->get_job_functions(s->storage, id, request_arg(req, "cluster"), &viewer,
                                               format == FORMAT_PPROF, JOB_FUNCTIONS_MAX, &info, &l);
        if (r < 0) {
                api_job_lookup_failed(s, req, r, NULL, id, reply);
                return;
        }
        for (size_t i = 0; i < l.n; i++)
                in_functions += l.items[i].samples;
        if (asprintf(&head, "lmk job %s%s%s, user %s", info.job, *info.cluster ? " on " : "", info.cluster,
                     info.user ?: "unknown") < 0 ||
            asprintf(&cover, "%" PRId64 " of the job's %" PRId64 " samples are in functions%s", in_functions,
                     info.samples, l.truncated ? " (the 100000 with the most samples)" : "") < 0 ||
            asprintf(&name, "job-%s", info.job) < 0)
                reply_oom(reply);
        else {
                const char *comments[] = { head, cover, NULL };

                reply_profile(format, name, &l, to_ns(info.first_seen), to_ns(info.last_seen - info.first_seen),
                              comments, reply);
        }
        stored_job_free(&info);
        function_list_free(&l);
}

static const char *const profile_args[] = { "since", "until", "user", "cluster", "account", "partition", "app",
                                            "name", "node_type", "state", "limit", "format", NULL };

void api_profile(Server *s, Request *req, Reply *reply) {
        _cleanup_free_ char *head = NULL;
        int64_t now = (int64_t) time(NULL);
        JobFilter f = api_job_filter(req);
        unsigned limit = PROFILE_DEFAULT_LIMIT;
        int format = FORMAT_PPROF, state = JOB_STATE_ANY, r;
        SiteProfile p = {};

        f.sort = JOB_SORT_LAST_SEEN;
        f.limit = PROFILE_MAX_JOBS;
        if (!request_check_args(req, profile_args, reply) ||
            !arg_time(req, "since", "7d", now, &f.since, reply) ||
            !arg_time(req, "until", "now", now, &f.until, reply) ||
            !arg_word(req, "state", job_state_from_string, "running or ended", &state, reply) ||
            !arg_word(req, "format", format_from_string, "pprof or folded", &format, reply) ||
            !arg_uint(req, "limit", 1, JOB_FUNCTIONS_MAX, &limit, reply))
                return;
        if (f.since > f.until) {
                reply_error(reply, MHD_HTTP_BAD_REQUEST, "since", "since is after until");
                return;
        }
        f.state = state;
        /* a person's own jobs and their accounts', as the job list */
        api_viewer(req, &f);
        r = s->storage->ops->get_profile(s->storage, &f, format == FORMAT_PPROF, limit, &p);
        if (r < 0) {
                reply_storage_error(reply, r);
                return;
        }
        if (asprintf(&head, "lmk: the functions of %s%" PRIu64 " jobs seen from %" PRId64 " to %" PRId64 "%s%s",
                     p.jobs_truncated ? "the last seen " : "", p.jobs, f.since, f.until,
                     p.functions.truncated ? ", the functions with the most samples" : "",
                     req->identity->admin ? "" : ", those you may see") < 0)
                reply_oom(reply);
        else {
                const char *comments[] = { head, NULL };

                reply_profile(format, "profile", &p.functions, to_ns((double) f.since),
                              to_ns((double) (f.until - f.since)), comments, reply);
        }
        site_profile_free(&p);
}
