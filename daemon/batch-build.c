/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <json-c/json.h>
#include <json-c/printbuf.h>
#include <string.h>

#include "batch-build.h"
#include "batch-fields.h"
#include "batch-format.h"
#include "interval-json.h"
#include "util.h"

static json_object *u64(uint64_t v) {
        return json_object_new_int64((int64_t) v);
}

static json_object *batch_key_json(const BatchInfo *info) {
        json_object *o = json_object_new_object();
        int r = o ? 0 : -ENOMEM;

        json_member(&r, o, BF_BATCH_NODE, json_object_new_string(info->node));
        json_member(&r, o, BF_BATCH_BOOT_ID, json_object_new_string(info->boot_id));
        if (info->spool_id)
                json_member(&r, o, BF_BATCH_SPOOL, json_object_new_string(info->spool_id));
        json_member(&r, o, BF_BATCH_SEQ, u64(info->seq));
        return json_built(o, r);
}

static json_object *family_json(const NodeFamily *f) {
        json_object *o = json_object_new_object();
        int r = o ? 0 : -ENOMEM;

        json_member(&r, o, BF_FAMILY_PURPOSE, json_object_new_string(f->purpose));
        json_member(&r, o, BF_FAMILY_FAMILY, json_object_new_string(f->family));
        return json_built(o, r);
}

static json_object *node_json(const Interval *iv, const BatchInfo *info) {
        json_object *o = json_object_new_object();
        int r = o ? 0 : -ENOMEM;

        json_member(&r, o, BF_NODE_HOSTNAME, json_object_new_string(info->node));
        json_member(&r, o, BF_NODE_CPUS, json_object_new_int((int) iv->cpus));
        json_member_or_null(&r, o, BF_NODE_CLUSTER, info->cluster,
                            info->cluster ? json_object_new_string(info->cluster) : NULL);
        if (info->software)
                json_member(&r, o, BF_NODE_INSTALLED,
                            JSON_ARRAY_OF(i, info->software->n, family_json(&info->software->v[i])));
        if (info->node_type)
                json_member(&r, o, BF_NODE_TYPE, node_type_json(info->node_type));
        return json_built(o, r);
}

static json_object *interval_json(const Interval *iv) {
        json_object *o = json_object_new_object();
        int r = o ? 0 : -ENOMEM;

        json_member(&r, o, BF_INTERVAL_START, json_object_new_double(iv->start));
        json_member(&r, o, BF_INTERVAL_END, json_object_new_double(iv->end));
        return json_built(o, r);
}

static json_object *sampling_json(const Interval *iv) {
        json_object *o = json_object_new_object();
        int r = o ? 0 : -ENOMEM;

        json_member(&r, o, BF_SAMPLING_EVENT, json_object_new_string(iv->event));
        json_member(&r, o, BF_SAMPLING_FREQUENCY_HZ, json_object_new_double(iv->frequency_hz));
        json_member(&r, o, BF_SAMPLING_SAMPLES_LOST, u64(iv->stats.samples_lost));
        json_member(&r, o, BF_SAMPLING_PMU_RELEASED, json_object_new_boolean(iv->pmu_released));
        return json_built(o, r);
}

static int verbatim_to_string(json_object *o, struct printbuf *pb, int level, int flags) {
        const char *text = json_object_get_userdata(o);

        return printbuf_memappend(pb, text, (int) strlen(text));
}

/* A value written as the JSON text it is given, which lives until it is
 * written: the inventory's report, as lmkd wrote it (inventory_to_json(),
 * json-c's text in the batch's style). Not parsed again: that cost a second
 * copy of a report of megabytes, and json-c 0.16's parser, out of memory,
 * passes a NULL name on and crashes. */
static json_object *verbatim_json(const char *text) {
        json_object *o = json_object_new_object();

        if (o)
                json_object_set_serializer(o, verbatim_to_string, (void *) text, NULL);
        return o;
}

/* lmkd's own health travels with its data */
static json_object *lmkd_json(const Interval *iv, const BatchInfo *info) {
        json_object *self = interval_lmkd_stats(iv);
        int r = self ? 0 : -ENOMEM;

        if (info->spool) {
                json_member(&r, self, "batches_spooled", u64(info->spool->spooled));
                json_member(&r, self, "batches_sent", u64(info->spool->sent));
                json_member(&r, self, "batches_rejected", u64(info->spool->rejected));
                json_member(&r, self, "batches_dropped", u64(info->spool->dropped));
                json_member(&r, self, "batches_queued", u64(info->spool->queued));
        }
        if (info->push)
                json_member(&r, self, "push_failures", u64(info->push->failures));
        return json_built(self, r);
}

int batch_json(const Interval *iv, const BatchInfo *info, json_object **ret) {
        json_object *root = json_object_new_object();
        int r = root ? 0 : -ENOMEM;

        json_member(&r, root, BF_FORMAT, json_object_new_string(LMK_BATCH_FORMAT));
        json_member(&r, root, BF_VERSION, json_object_new_int(LMK_BATCH_VERSION));
        json_member(&r, root, BF_BATCH, batch_key_json(info));
        json_member(&r, root, BF_NODE, node_json(iv, info));
        if (info->inventory)
                json_member(&r, root, BF_INVENTORY, verbatim_json(info->inventory));
        json_member(&r, root, BF_INTERVAL, interval_json(iv));
        json_member(&r, root, BF_SAMPLING, sampling_json(iv));
        if (r >= 0)
                r = interval_add_rows(iv, root);
        json_member(&r, root, "lmkd", lmkd_json(iv, info));
        if (r < 0) {
                json_object_put(root);
                return r;
        }
        *ret = root;
        return 0;
}

int batch_build(const Interval *iv, const BatchInfo *info, void **ret_gz, size_t *ret_size) {
        json_object *root;
        const char *text;
        size_t len;
        int r;

        r = batch_json(iv, info, &root);
        if (r < 0)
                return r;
        text = json_object_to_json_string_length(root, BATCH_JSON_FLAGS, &len);
        r = text ? gzip_buffer(text, len, ret_gz, ret_size) : -ENOMEM;
        json_object_put(root);
        return r;
}

int read_boot_id(char **ret) {
        return read_one_line("/proc/sys/kernel/random/boot_id", ret);
}
