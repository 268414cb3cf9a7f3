/* SPDX-License-Identifier: GPL-2.0-or-later */
/* GET /api/v1/nodes: the nodes that pushed, and how long ago. */
#include <errno.h>
#include <time.h>

#include "api/api.h"
#include "api/measured.h"
#include "util.h"

static const char *const no_args[] = { NULL };

const CsvTable api_nodes_csv = CSV_TABLE("nodes", NULL, "lmk-nodes.csv",
        { "node" }, { "hostname" }, { "cluster" }, { "cpus" }, { "boot_id" }, { "last_seq" }, { "batches" },
        { "samples" }, { "samples_lost" }, { "first_seen" }, { "last_seen" }, { "last_push" },
        { "last_push_age_seconds" }, { "node_type_id", "node_type.id" }, { "node_type_name", "node_type.name" },
        { "node_type_cpu_model", "node_type.cpu_model" }, { "node_type_sockets", "node_type.sockets" },
        { "node_type_cores", "node_type.cores" }, { "node_type_threads", "node_type.threads" },
        { "node_type_memory_gib", "node_type.memory_gib" }, { "node_type_gpus", "node_type.gpus" },
        { "kernel" }, { "memory_bytes" });

void api_nodes(Server *s, Request *req, Reply *reply) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        json_object *a;
        int64_t now = (int64_t) time(NULL);
        NodeList l = {};
        int r;

        if (!request_check_args(req, no_args, reply))
                return;
        r = s->storage->ops->list_nodes(s->storage, &l);
        if (r < 0) {
                reply_storage_error(reply, r);
                return;
        }
        o = json_object_new_object();
        a = json_object_new_array();
        if (o)
                r = json_add(o, "nodes", a);
        else {
                json_object_put(a);
                r = -ENOMEM;
        }
        for (size_t i = 0; r >= 0 && i < l.n; i++) {
                const NodeInfo *n = &l.items[i];
                json_object *e = json_object_new_object();
                /* A batch's key (node, boot id, spool, seq) is for admins:
                 * whoever holds a node token and knows it could push the
                 * node's next batch first. */
                bool keys = req->identity->admin;
                int64_t age;

                /* measured on this store's monotonic clock where it took
                 * the node's pushes (node-health.h): a step of the wall
                 * clock makes no node younger or older */
                if (!s->node_health || node_health_age(s->node_health, n->name, &age) < 0)
                        age = MAX(now - n->last_push, INT64_C(0));

                if ((r = json_append(a, e)) < 0 ||
                    (r = json_add(e, "node", json_object_new_string(n->name))) < 0 ||
                    (r = json_add(e, "hostname", json_string_or_null(n->hostname))) < 0 ||
                    (r = json_add(e, "cluster", json_string_or_null(n->cluster))) < 0 ||
                    (r = json_add(e, "cpus", json_object_new_int64(n->cpus))) < 0 ||
                    (r = json_add(e, "boot_id", json_string_or_null(keys ? n->boot_id : NULL))) < 0 ||
                    (r = json_add(e, "last_seq", keys ? json_object_new_int64(n->last_seq) : json_null())) < 0 ||
                    (r = json_add(e, "batches", json_object_new_int64(n->batches))) < 0 ||
                    (r = json_add(e, "samples", json_object_new_int64(n->samples))) < 0 ||
                    (r = json_add(e, "samples_lost", json_object_new_int64(n->samples_lost))) < 0 ||
                    (r = json_add(e, "first_seen", json_number(n->first_seen, TIME_DECIMALS))) < 0 ||
                    (r = json_add(e, "last_seen", json_number(n->last_seen, TIME_DECIMALS))) < 0 ||
                    (r = json_add(e, "last_push", json_object_new_int64(n->last_push))) < 0 ||
                    (r = json_add(e, "last_push_age_seconds", json_object_new_int64(age))) < 0 ||
                    (r = json_add(e, "node_type", api_node_type_json(&n->type))) < 0 ||
                    (r = json_add(e, "kernel", json_string_or_null(n->kernel))) < 0 ||
                    (r = json_add(e, "memory_bytes", n->memory_bytes > 0 ? json_object_new_int64(n->memory_bytes)
                                                                         : json_null())) < 0)
                        break;
        }
        node_list_free(&l);
        if (r < 0) {
                reply_oom(reply);
                return;
        }
        reply_json(reply, MHD_HTTP_OK, TAKE_PTR(o));
}
