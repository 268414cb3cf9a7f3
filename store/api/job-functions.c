/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A job's functions: in its summary (GET /api/v1/jobs/{id}, job.c), and
 * all of them, over the job or per phase, as a list (GET
 * /api/v1/jobs/{id}/functions, JSON or CSV). docs/api.md. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "util.h"

#define IPC_DECIMALS 3
#define FUNCTIONS_DEFAULT_LIMIT 1000
#define FUNCTIONS_SUFFIX "/functions"

/* ?format=csv: a row per function, as api_add_functions() writes it. */
const CsvTable api_job_functions_csv = CSV_TABLE("functions", NULL, "lmk-functions.csv",
        { "object" }, { "kind" }, { "build_id" }, { "function" }, { "named_by" }, { "offset" }, { "entry" },
        { "other" },
        { "phase" }, { "samples" }, CSV_SHARE_COLUMNS, { "cpu_seconds" }, { "cycles" }, { "instructions" },
        { "ipc" });

const char *api_function_text(const char *object, const char *name, int64_t offset, bool other, char *buf,
                              size_t size) {
        const char *file;

        if (name)
                return name;
        if (other || offset == STORAGE_NULL || !object)
                return "(other functions)";
        file = strrchr(object, '/');
        snprintf(buf, size, "%s+0x%" PRIx64, file && file[1] ? file + 1 : object, (uint64_t) offset);
        return buf;
}

/* Who named it: lmkd from the file's own symbols, the store by build-id
 * since (function_names), or nobody (unnamed, other). */
static json_object *named_by(const FunctionShare *x) {
        if (!x->name)
                return json_null();
        return json_object_new_string(x->offset == STORAGE_NULL ? "lmkd" : "store");
}

int api_add_functions(json_object *o, const char *key, const FunctionList *l, int64_t job_samples) {
        json_object *a = json_object_new_array();
        int r;

        r = json_add(o, key, a);
        for (size_t i = 0; r >= 0 && i < l->n; i++) {
                const FunctionShare *x = &l->items[i];
                /* per phase, a share of the phase's samples */
                int64_t total = x->phase ? x->phase_samples : job_samples;
                json_object *e = json_object_new_object();
                char buf[FUNCTION_TEXT_MAX];

                if ((r = json_append(a, e)) < 0 ||
                    (r = json_add(e, "object", json_object_new_string(x->object))) < 0 ||
                    (r = json_add(e, "kind", json_string_or_null(x->kind))) < 0 ||
                    (r = json_add(e, "build_id", json_string_or_null(x->build_id))) < 0 ||
                    (r = json_add(e, "function", json_object_new_string(api_function_text(x->object, x->name, x->offset, x->other, buf, sizeof(buf))))) < 0 ||
                    (r = json_add(e, "named_by", named_by(x))) < 0 ||
                    (r = json_add(e, "offset", json_int_or_null(x->offset))) < 0 ||
                    (r = json_add(e, "entry", json_object_new_boolean(x->entry))) < 0 ||
                    (r = json_add(e, "other", json_object_new_boolean(x->other))) < 0 ||
                    (r = json_add(e, "phase", json_string_or_null(x->phase))) < 0 ||
                    (r = json_add(e, "samples", json_object_new_int64(x->samples))) < 0 ||
                    (r = api_add_share(e, x->samples, total)) < 0 ||
                    (r = json_add(e, "cpu_seconds", json_number(x->cpu_seconds, TIME_DECIMALS))) < 0 ||
                    (r = json_add(e, "cycles", json_int_or_null(x->cycles))) < 0 ||
                    (r = json_add(e, "instructions", json_int_or_null(x->instructions))) < 0 ||
                    (r = json_add(e, "ipc", json_ratio(x->instructions, x->cycles, IPC_DECIMALS))) < 0)
                        return r;
        }
        return r;
}

static int by_from_string(const char *s) {
        return streq(s, "function") ? 0 : streq(s, "phase") ? 1 : -EINVAL;
}

static const char *const functions_args[] = { "cluster", "by", "limit", NULL };

void api_job_functions(Server *s, Request *req, Reply *reply) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        _cleanup_free_ char *id = NULL;
        JobViewer viewer = api_job_viewer(req);
        unsigned limit = FUNCTIONS_DEFAULT_LIMIT;
        StoredJob info = {};
        FunctionList l = {};
        int by = 0, r;

        if (!request_check_args(req, functions_args, reply) ||
            !arg_word(req, "by", by_from_string, "function or phase", &by, reply) ||
            !arg_uint(req, "limit", 1, JOB_FUNCTIONS_MAX, &limit, reply))
                return;
        id = api_job_path_id(s, req, FUNCTIONS_SUFFIX, reply);
        if (!id)
                return;
        r = s->storage->ops->get_job_functions(s->storage, id, request_arg(req, "cluster"), &viewer, by == 1,
                                               limit, &info, &l);
        if (r < 0) {
                api_job_lookup_failed(s, req, r, NULL, id, reply);
                return;
        }
        o = json_object_new_object();
        if (!o ||
            api_add_job_info(o, &info) < 0 ||
            json_add(o, "by", json_object_new_string(by == 1 ? "phase" : "function")) < 0 ||
            api_add_functions(o, "functions", &l, info.samples) < 0 ||
            json_add(o, "truncated", json_object_new_boolean(l.truncated)) < 0) {
                stored_job_free(&info);
                function_list_free(&l);
                reply_oom(reply);
                return;
        }
        stored_job_free(&info);
        function_list_free(&l);
        reply_json(reply, MHD_HTTP_OK, TAKE_PTR(o));
}
