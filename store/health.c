/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The store's own health over HTTP, open to anyone: GET /metrics for
 * Prometheus (metrics/metrics.h, metrics/node-health.h) and GET /healthz
 * for a load balancer or systemd's checks. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "health.h"
#include "util.h"

static const char *const no_args[] = { NULL };

void health_metrics(Server *s, Request *req, Reply *reply) {
        StorageStats st = {};
        FILE *f;

        if (!request_check_args(req, no_args, reply))
                return;
        f = open_memstream(&reply->text, &reply->text_size);
        if (!f) {
                reply_oom(reply);
                return;
        }
        metrics_write(&s->metrics, s->storage->ops->stats(s->storage, &st) >= 0 ? (int64_t) st.db_bytes : -1, f);
        if (s->node_health)
                (void) node_health_write_metrics(s->node_health, f);
        if (fclose(f) != 0) {
                free(reply->text);
                reply->text = NULL;
                reply_oom(reply);
                return;
        }
        reply->status = MHD_HTTP_OK;
        reply->content_type = "text/plain; version=0.0.4; charset=utf-8";
}

/* 200 only when the store takes batches: its database answers a read, and
 * its disk took the last write tried (a full one refuses every batch while
 * reads still work). */
void health_check(Server *s, Request *req, Reply *reply) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        int64_t full_since = atomic_load(&s->metrics.disk_full_since);
        const char *status;
        int r;

        if (!request_check_args(req, no_args, reply))
                return;
        r = s->storage->ops->check(s->storage);
        status = r < 0 ? "database unavailable" : full_since != 0 ? "database disk full" : "ok";
        o = json_object_new_object();
        if (!o ||
            json_add(o, "status", json_object_new_string(status)) < 0 ||
            json_add(o, "version", json_object_new_string(PACKAGE_VERSION)) < 0 ||
            json_add(o, "storage", json_object_new_string(s->storage->ops->name)) < 0 ||
            (full_since != 0 && json_add(o, "disk_full_since", json_object_new_int64(full_since)) < 0)) {
                reply_oom(reply);
                return;
        }
        reply_json(reply, streq(status, "ok") ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE, TAKE_PTR(o));
        /* the episode was logged when it began */
        reply->quiet = full_since != 0 && r >= 0;
}
