/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The site's functions: GET /api/v1/functions (ranked by core-hours, or
 * summed per family with group=family) and GET
 * /api/v1/objects/{object}/functions (one executable's or library's,
 * with its users and applications). Both only over the jobs the asker may
 * see. docs/api.md, docs/kernels.md. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "analysis/function-family.h"
#include "api/api.h"
#include "util.h"

#define DEFAULT_LIMIT 100
#define MAX_LIMIT 100000
#define IPC_DECIMALS 3
#define SUFFIX "/functions"

const CsvTable api_site_functions_csv = CSV_TABLE("functions", NULL, "lmk-site-functions.csv",
        { "family" }, { "function" }, { "object" }, { "kind" }, { "library" }, { "build_id" }, { "offset" },
        { "other" }, { "functions" }, { "samples" }, CSV_SHARE_COLUMNS, { "cpu_seconds" }, { "core_hours" },
        { "jobs" }, { "users" }, { "apps" }, { "cycles" }, { "instructions" }, { "ipc" });

static const char *const functions_args[] = { "since", "until", "app", "account", "user", "node_type", "family",
                                              "group", "limit", "object", NULL };

/* The function's family by its name, else its library's family. */
static const char *family_of(Server *s, const SiteFunction *x, const char **ret_library) {
        const LibFamily *lib = s->families ? lib_families_match(s->families, x->object) : NULL;
        const char *f = function_family(x->name);

        *ret_library = lib ? lib->family : NULL;
        return f ?: *ret_library;
}

static json_object *ipc(double instructions, double cycles) {
        if (isnan(instructions) || isnan(cycles) || cycles <= 0)
                return json_null();
        return json_number(instructions / cycles, IPC_DECIMALS);
}

static json_object *count_or_null(double v) {
        return isnan(v) ? json_null() : json_number(v, 0);
}

typedef struct FamilySum {
        const char *family;     /* NULL: none */
        int64_t functions, samples;
        double cpu_seconds, cycles, instructions;
} FamilySum;

static int family_by_samples(const void *a, const void *b) {
        const FamilySum *x = a, *y = b;

        if (x->samples != y->samples)
                return CMP(y->samples, x->samples);
        return strcmp(x->family ?: "", y->family ?: "");
}

static int add_sums(json_object *e, int64_t samples, int64_t total, double cpu_seconds, double cycles,
                    double instructions) {
        int r;

        if ((r = json_add(e, "samples", json_object_new_int64(samples))) < 0 ||
            (r = api_add_share(e, samples, total)) < 0 ||
            (r = json_add(e, "cpu_seconds", json_number(cpu_seconds, TIME_DECIMALS))) < 0 ||
            (r = json_add(e, "core_hours", json_number(cpu_seconds / 3600.0, 6))) < 0 ||
            (r = json_add(e, "cycles", count_or_null(cycles))) < 0 ||
            (r = json_add(e, "instructions", count_or_null(instructions))) < 0 ||
            (r = json_add(e, "ipc", ipc(instructions, cycles))) < 0)
                return r;
        return 0;
}

static int add_function(json_object *a, const SiteFunction *x, const char *family, const char *library,
                        int64_t total) {
        json_object *e = json_object_new_object(), *top;
        char buf[FUNCTION_TEXT_MAX];
        int r;

        if ((r = json_append(a, e)) < 0 ||
            (r = json_add(e, "family", json_string_or_null(family))) < 0 ||
            (r = json_add(e, "function", json_object_new_string(api_function_text(
                                             x->object, x->name, x->offset, x->other, buf, sizeof(buf))))) < 0 ||
            (r = json_add(e, "object", json_object_new_string(x->object))) < 0 ||
            (r = json_add(e, "kind", json_string_or_null(x->kind))) < 0 ||
            (r = json_add(e, "library", json_string_or_null(library))) < 0 ||
            (r = json_add(e, "build_id", json_string_or_null(x->build_id))) < 0 ||
            (r = json_add(e, "offset", json_int_or_null(x->offset))) < 0 ||
            (r = json_add(e, "other", json_object_new_boolean(x->other))) < 0 ||
            (r = json_add(e, "functions", json_object_new_int64(1))) < 0 ||
            (r = add_sums(e, x->samples, total, x->cpu_seconds, x->cycles, x->instructions)) < 0 ||
            (r = json_add(e, "jobs", json_object_new_int64(x->jobs))) < 0 ||
            (r = json_add(e, "users", json_object_new_int64(x->users))) < 0 ||
            (r = json_add(e, "apps", json_object_new_int64(x->apps))) < 0)
                return r;
        top = json_object_new_array();
        if ((r = json_add(e, "top_apps", top)) < 0)
                return r;
        for (size_t j = 0; j < FUNCTION_TOP_APPS && x->top_apps[j].name; j++) {
                json_object *t = json_object_new_object();

                if ((r = json_append(top, t)) < 0 ||
                    (r = json_add(t, "app", json_string_or_null(*x->top_apps[j].name ? x->top_apps[j].name : NULL))) < 0 ||
                    (r = json_add(t, "samples", json_int_or_null(x->top_apps[j].samples))) < 0)
                        return r;
        }
        return 0;
}

static int add_uses(json_object *o, const char *key, const char *name_key, const FunctionUse *v, size_t n,
                    int64_t total) {
        json_object *a = json_object_new_array();
        int r = json_add(o, key, a);

        for (size_t i = 0; r >= 0 && i < n; i++) {
                json_object *e = json_object_new_object();

                if ((r = json_append(a, e)) < 0 ||
                    (r = json_add(e, name_key, json_string_or_null(*v[i].name ? v[i].name : NULL))) < 0 ||
                    (r = json_add(e, "samples", json_object_new_int64(v[i].samples))) < 0 ||
                    (r = api_add_share(e, v[i].samples, total)) < 0 ||
                    (r = json_add(e, "cpu_seconds", json_number(v[i].cpu_seconds, TIME_DECIMALS))) < 0 ||
                    (r = json_add(e, "core_hours", json_number(v[i].cpu_seconds / 3600.0, 6))) < 0)
                        return r;
        }
        return r;
}

typedef struct WantFamily {
        Server *s;
        const char *family;
} WantFamily;

static bool want_family(const SiteFunction *x, void *userdata) {
        const WantFamily *w = userdata;
        const char *library, *fam = family_of(w->s, x, &library);

        return fam && streq(fam, w->family);
}

static int group_from_string(const char *s) {
        return streq(s, "function") ? 0 : streq(s, "family") ? 1 : -EINVAL;
}

static void answer(Server *s, Request *req, Reply *reply, const char *object) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        int64_t now = (int64_t) time(NULL);
        JobViewer viewer = api_job_viewer(req);
        FunctionFilter f = {
                .until = now, .app = request_arg(req, "app"), .account = request_arg(req, "account"),
                .user = request_arg(req, "user"), .node_type = request_arg(req, "node_type"),
                .object = object ?: request_arg(req, "object"), .viewer = &viewer,
        };
        const char *family = request_arg(req, "family");
        unsigned limit = DEFAULT_LIMIT;
        SiteFunctionList l = {};
        WantFamily wf = { s, NULL };
        FamilySum *fams = NULL;
        size_t n_fams = 0;
        json_object *a;
        int group = 0, r;

        if (!request_check_args(req, functions_args, reply) ||
            !arg_time(req, "since", "30d", now, &f.since, reply) ||
            !arg_time(req, "until", NULL, now, &f.until, reply) ||
            !arg_word(req, "group", group_from_string, "function or family", &group, reply) ||
            !arg_uint(req, "limit", 1, MAX_LIMIT, &limit, reply) ||
            !api_account_allowed(s, req, f.account, reply))
                return;
        if (f.since >= f.until) {
                reply_error(reply, MHD_HTTP_BAD_REQUEST, "since", "since must be before until");
                return;
        }
        if (family) {
                wf.family = family;
                f.want = want_family;
                f.userdata = &wf;
        }
        /* per family: every function, not counted */
        f.limit = group ? SIZE_MAX : limit;
        f.no_counts = group;
        /* the families table (SIGHUP swaps it) is read while filtering
         * and answering: held from here to the reply */
        pthread_rwlock_rdlock(&s->findings_lock);
        r = s->storage->ops->list_site_functions(s->storage, &f, &l);
        if (r == -ENOENT && f.node_type) {
                pthread_rwlock_unlock(&s->findings_lock);
                reply_error(reply, MHD_HTTP_BAD_REQUEST, "node_type", "no such node type: %s", f.node_type);
                return;
        }
        if (r < 0) {
                pthread_rwlock_unlock(&s->findings_lock);
                reply_storage_error(reply, r);
                return;
        }

        o = json_object_new_object();
        a = json_object_new_array();
        r = !o || !a ? -ENOMEM : 0;
        if (r >= 0 && ((r = json_add(o, "since", json_object_new_int64(l.since))) < 0 ||
                       (r = json_add(o, "until", json_object_new_int64(l.until))) < 0 ||
                       (r = json_add(o, "grain", json_object_new_string("day"))) < 0 ||
                       (r = json_add(o, "group", json_object_new_string(group ? "family" : "function"))) < 0 ||
                       (r = json_add(o, "object", json_string_or_null(f.object))) < 0 ||
                       (r = json_add(o, "total_samples", json_object_new_int64(l.total_samples))) < 0 ||
                       (r = json_add(o, "total_cpu_seconds", json_number(l.total_cpu_seconds, TIME_DECIMALS))) < 0 ||
                       (r = json_add(o, "total_core_hours", json_number(l.total_cpu_seconds / 3600.0, 6))) < 0))
                json_object_put(TAKE_PTR(a));
        if (r >= 0)
                r = json_add(o, "functions", a);
        if (r >= 0 && group == 1 && !(fams = calloc(MAX(l.n, (size_t) 1), sizeof(FamilySum))))
                r = -ENOMEM;
        for (size_t i = 0; r >= 0 && i < l.n; i++) {
                const SiteFunction *x = &l.items[i];
                const char *library, *fam = family_of(s, x, &library);
                size_t k;

                if (group == 0) {
                        r = add_function(a, x, fam, library, l.total_samples);
                        continue;
                }
                for (k = 0; k < n_fams; k++)
                        if (fams[k].family == fam || (fams[k].family && fam && streq(fams[k].family, fam)))
                                break;
                if (k == n_fams)
                        fams[n_fams++] = (FamilySum) { .family = fam, .cycles = NAN, .instructions = NAN };
                fams[k].functions++;
                fams[k].samples = __builtin_add_overflow(fams[k].samples, x->samples, &fams[k].samples)
                                          ? INT64_MAX : fams[k].samples;
                fams[k].cpu_seconds += x->cpu_seconds;
                if (!isnan(x->cycles))
                        fams[k].cycles = isnan(fams[k].cycles) ? x->cycles : fams[k].cycles + x->cycles;
                if (!isnan(x->instructions))
                        fams[k].instructions = isnan(fams[k].instructions) ? x->instructions
                                                                           : fams[k].instructions + x->instructions;
        }
        if (n_fams > 1)
                qsort(fams, n_fams, sizeof(FamilySum), family_by_samples);
        for (size_t k = 0; r >= 0 && k < n_fams && k < limit; k++) {
                json_object *e = json_object_new_object();

                if ((r = json_append(a, e)) < 0 ||
                    (r = json_add(e, "family", json_string_or_null(fams[k].family))) < 0 ||
                    (r = json_add(e, "function", json_null())) < 0 ||
                    (r = json_add(e, "object", json_null())) < 0 ||
                    (r = json_add(e, "functions", json_object_new_int64(fams[k].functions))) < 0)
                        break;
                r = add_sums(e, fams[k].samples, l.total_samples, fams[k].cpu_seconds, fams[k].cycles,
                             fams[k].instructions);
        }
        if (r >= 0)
                r = json_add(o, "truncated", json_object_new_boolean(group ? n_fams > limit : l.more));
        if (r >= 0 && f.object && (r = add_uses(o, "users", "user", l.users, l.n_users, l.total_samples)) >= 0)
                r = add_uses(o, "apps", "app", l.apps, l.n_apps, l.total_samples);
        pthread_rwlock_unlock(&s->findings_lock);
        free(fams);
        site_function_list_free(&l);
        if (r < 0) {
                reply_oom(reply);
                return;
        }
        reply_json(reply, MHD_HTTP_OK, TAKE_PTR(o));
}

void api_site_functions(Server *s, Request *req, Reply *reply) {
        answer(s, req, reply, NULL);
}

void api_object_functions(Server *s, Request *req, Reply *reply) {
        _cleanup_free_ char *object = NULL;
        size_t n = strlen(req->path_arg);

        /* the route's path is /api/v1/objects/OBJECT/functions (routes.c) */
        object = strndup(req->path_arg, n - MIN(n, strlen(SUFFIX)));
        if (!object) {
                reply_oom(reply);
                return;
        }
        if (!*object || strlen(object) > 4096) {
                reply_error(reply, MHD_HTTP_NOT_FOUND, NULL, "no such object");
                return;
        }
        answer(s, req, reply, object);
}
