/* SPDX-License-Identifier: GPL-2.0-or-later */
/* GET /api/v1/objects: what the machine's time went into, site-wide or
 * narrowed to a cluster, partition or account. */
#include <errno.h>
#include <time.h>

#include "api/api.h"
#include "util.h"

#define DEFAULT_LIMIT 100
#define MAX_LIMIT 1000
#define OBJECTS_DEFAULT_SINCE "7d"

static const char *const objects_args[] = { "since", "until", "kind", "limit", "cluster", "partition", "account",
                                            NULL };

const CsvTable api_objects_csv = CSV_TABLE("objects", NULL, "lmk-objects.csv",
        { "object" }, { "kind" }, { "samples" }, CSV_SHARE_COLUMNS, { "cpu_seconds" });

void api_objects(Server *s, Request *req, Reply *reply) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        json_object *a;
        int64_t now = (int64_t) time(NULL);
        ObjectFilter f = { .until = now, .kind = -1, .limit = DEFAULT_LIMIT };
        const char *kind = request_arg(req, "kind");
        ObjectList l = {};
        int r;

        if (!request_check_args(req, objects_args, reply) ||
            !api_scope(s, req, &f.scope, reply) ||
            !arg_time(req, "since", OBJECTS_DEFAULT_SINCE, now, &f.since, reply) ||
            !arg_time(req, "until", NULL, now, &f.until, reply) ||
            !arg_uint(req, "limit", 1, MAX_LIMIT, &f.limit, reply))
                return;
        if (kind && (f.kind = code_kind_from_string(kind)) < 0) {
                reply_error(reply, MHD_HTTP_BAD_REQUEST, "kind",
                            "kind=%s: expected exe, lib, kernel, idle, anon or unknown", kind);
                return;
        }

        r = s->storage->ops->list_objects(s->storage, &f, &l);
        if (r < 0) {
                reply_storage_error(reply, r);
                return;
        }
        o = json_object_new_object();
        a = json_object_new_array();
        if (!o || !a ||
            json_add(o, "since", json_object_new_int64(l.since)) < 0 ||
            json_add(o, "until", json_object_new_int64(l.until)) < 0 ||
            json_add(o, "grain", json_object_new_string(api_grain_name(l.grain))) < 0 ||
            json_add(o, "kind", json_string_or_null(kind)) < 0 ||
            json_add(o, "total_samples", json_object_new_int64(l.total_samples)) < 0 ||
            json_add(o, "total_cpu_seconds", json_number(l.total_cpu_seconds, TIME_DECIMALS)) < 0) {
                json_object_put(a);
                r = -ENOMEM;
        } else
                r = json_add(o, "objects", a);
        for (size_t i = 0; r >= 0 && i < l.objects.n; i++) {
                const Share *x = &l.objects.items[i];
                json_object *e = json_object_new_object();

                if ((r = json_append(a, e)) < 0 ||
                    (r = json_add(e, "object", json_object_new_string(x->name))) < 0 ||
                    (r = json_add(e, "kind", json_object_new_string(x->kind))) < 0 ||
                    (r = json_add(e, "samples", json_object_new_int64(x->samples))) < 0 ||
                    (r = api_add_share(e, x->samples, l.total_samples)) < 0 ||
                    (r = json_add(e, "cpu_seconds", json_number(x->cpu_seconds, TIME_DECIMALS))) < 0)
                        break;
        }
        object_list_free(&l);
        if (r < 0) {
                reply_oom(reply);
                return;
        }
        reply_json(reply, MHD_HTTP_OK, TAKE_PTR(o));
}
