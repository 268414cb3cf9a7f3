/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <json-c/json.h>
#include <string.h>

#include "batch-build.h"
#include "batch-fields.h"
#include "batch-format.h"
#include "interval-json.h"
#include "util.h"

static json_object *u64(uint64_t v) {
        return json_object_new_int64((int64_t) v);
}

int batch_build(const Interval *iv, const BatchInfo *info, void **ret_gz, size_t *ret_size) {
        const MonitorStats *st = &iv->stats;
        json_object *root, *o, *self;
        const char *text;
        size_t len;
        int r;

        root = json_object_new_object();
        json_object_object_add(root, BF_FORMAT, json_object_new_string(LMK_BATCH_FORMAT));
        json_object_object_add(root, BF_VERSION, json_object_new_int(LMK_BATCH_VERSION));

        o = json_object_new_object();
        json_object_object_add(o, BF_BATCH_NODE, json_object_new_string(info->node));
        json_object_object_add(o, BF_BATCH_BOOT_ID, json_object_new_string(info->boot_id));
        if (info->spool_id)
                json_object_object_add(o, BF_BATCH_SPOOL, json_object_new_string(info->spool_id));
        json_object_object_add(o, BF_BATCH_SEQ, u64(info->seq));
        json_object_object_add(root, BF_BATCH, o);

        o = json_object_new_object();
        json_object_object_add(o, BF_NODE_HOSTNAME, json_object_new_string(info->node));
        json_object_object_add(o, BF_NODE_CPUS, json_object_new_int((int) iv->cpus));
        json_object_object_add(o, BF_NODE_CLUSTER, info->cluster ? json_object_new_string(info->cluster) : NULL);
        if (info->software) {
                json_object *a = json_object_new_array();

                for (size_t i = 0; i < info->software->n; i++) {
                        const NodeFamily *f = &info->software->v[i];
                        json_object *e = json_object_new_object();

                        json_object_object_add(e, BF_FAMILY_PURPOSE, json_object_new_string(f->purpose));
                        json_object_object_add(e, BF_FAMILY_FAMILY, json_object_new_string(f->family));
                        json_object_array_add(a, e);
                }
                json_object_object_add(o, BF_NODE_INSTALLED, a);
        }
        if (info->node_type)
                json_object_object_add(o, BF_NODE_TYPE, node_type_json(info->node_type));
        json_object_object_add(root, BF_NODE, o);

        /* the inventory's report as it is: lmkd wrote it (inventory_to_json) */
        if (info->inventory) {
                o = json_tokener_parse(info->inventory);
                if (!o) {
                        json_object_put(root);
                        return -EBADMSG;
                }
                json_object_object_add(root, BF_INVENTORY, o);
        }

        o = json_object_new_object();
        json_object_object_add(o, BF_INTERVAL_START, json_object_new_double(iv->start));
        json_object_object_add(o, BF_INTERVAL_END, json_object_new_double(iv->end));
        json_object_object_add(root, BF_INTERVAL, o);

        o = json_object_new_object();
        json_object_object_add(o, BF_SAMPLING_EVENT, json_object_new_string(iv->event));
        json_object_object_add(o, BF_SAMPLING_FREQUENCY_HZ, json_object_new_double(iv->frequency_hz));
        json_object_object_add(o, BF_SAMPLING_SAMPLES_LOST, u64(st->samples_lost));
        json_object_object_add(root, BF_SAMPLING, o);

        r = interval_add_rows(iv, root);
        if (r < 0) {
                json_object_put(root);
                return r;
        }

        /* lmkd's own health travels with its data */
        self = interval_lmkd_stats(iv);
        if (info->spool) {
                json_object_object_add(self, "batches_spooled", u64(info->spool->spooled));
                json_object_object_add(self, "batches_sent", u64(info->spool->sent));
                json_object_object_add(self, "batches_rejected", u64(info->spool->rejected));
                json_object_object_add(self, "batches_dropped", u64(info->spool->dropped));
                json_object_object_add(self, "batches_queued", u64(info->spool->queued));
        }
        if (info->push)
                json_object_object_add(self, "push_failures", u64(info->push->failures));
        json_object_object_add(root, "lmkd", self);

        text = json_object_to_json_string_length(root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
        r = gzip_buffer(text, len, ret_gz, ret_size);
        json_object_put(root);
        return r;
}

int read_boot_id(char **ret) {
        return read_one_line("/proc/sys/kernel/random/boot_id", ret);
}
