/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <math.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch-fields.h"
#include "batch/arena.h"
#include "batch/batch-inventory.h"
#include "batch/batch-parse.h"
#include "batch/field-reader.h"
#include "batch/json-tree.h"

/* The batch is parsed into a JSON tree first (json-tree.h), all of it, and
 * checked after: a text that is not JSON is refused as such whatever else
 * is wrong with it, and the checks run in the fixed order below, so the
 * field an error names does not depend on the order of the keys. Members
 * are read with field-reader.h; the software inventory, a document of its
 * own inside the batch, in batch-inventory.c. */

/* Times are Unix seconds: anything before 2000 or after 2200 is a broken
 * clock or a unit mix-up (milliseconds), not data. */
#define TIME_MIN 946684800.0
#define TIME_MAX 7258118400.0
#define MAX_NAME 255
#define MAX_ID 64
#define MAX_COMM 15
#define MAX_OBJECT 4096
#define MAX_PHASE 1024
#define MAX_BUILD_ID 40

/* What one node can produce in one interval, with a factor of 2 for clock
 * skew between the sampling timer and the interval boundaries and for
 * samples that arrive late: far below where a sum of 100,000 rows could
 * wrap, yet never below what a real node reports. A zero-length interval
 * counts as one second. */
static int64_t per_interval(double cpus, double per_cpu_second, double seconds) {
        double v = ceil(2.0 * cpus * per_cpu_second * MAX(seconds, 1.0));

        return v >= (double) BATCH_MAX_COUNTER ? (int64_t) BATCH_MAX_COUNTER : (int64_t) v;
}

void batch_limits(const Batch *b, BatchLimits *ret) {
        double cpus = (double) b->cpus, seconds = b->end - b->start;

        *ret = (BatchLimits) {
                .samples = per_interval(cpus, b->frequency_hz, seconds),
                .cpu_time_ns = per_interval(cpus, 1e9, seconds),
                .cycles = per_interval(cpus, BATCH_MAX_CYCLES_PER_CPU_SECOND, seconds),
                .instructions = per_interval(cpus, BATCH_MAX_CYCLES_PER_CPU_SECOND * BATCH_MAX_IPC, seconds),
                .events = per_interval(cpus, BATCH_MAX_CYCLES_PER_CPU_SECOND * BATCH_MAX_EVENTS_PER_CYCLE, seconds),
                .burst_samples = per_interval(cpus, b->frequency_hz * BATCH_MAX_BURSTS_PER_SAMPLE, seconds),
                .joules = 2.0 * BATCH_MAX_NODE_WATTS * MAX(seconds, 1.0),
        };
}

/* Adds v (BATCH_NULL: not reported) to a batch total; false when the total
 * would no longer fit. */
static bool add_sum(int64_t *sum, int64_t v) {
        if (v == BATCH_NULL)
                return true;
        return !__builtin_add_overflow(*sum, v, sum);
}

/* The top level and the objects of the header, their members in the order
 * lmkd writes them (daemon/batch-build.c, daemon/interval-json.c). */
enum { TOP_FORMAT, TOP_VERSION, TOP_BATCH, TOP_NODE, TOP_INVENTORY, TOP_INTERVAL, TOP_SAMPLING, TOP_ROWS,
       TOP_COUNTERS, TOP_MARKERS, TOP_JOBS, TOP_ENERGY, TOP_RANKS, TOP_FUNCTIONS };
static const char *const top_fields[] = {
        [TOP_FORMAT] = BF_FORMAT, [TOP_VERSION] = BF_VERSION, [TOP_BATCH] = BF_BATCH, [TOP_NODE] = BF_NODE,
        [TOP_INVENTORY] = BF_INVENTORY, [TOP_INTERVAL] = BF_INTERVAL, [TOP_SAMPLING] = BF_SAMPLING,
        [TOP_ROWS] = BF_ROWS, [TOP_COUNTERS] = BF_COUNTERS, [TOP_MARKERS] = BF_MARKERS, [TOP_JOBS] = BF_JOBS,
        [TOP_ENERGY] = BF_ENERGY, [TOP_RANKS] = BF_RANKS, [TOP_FUNCTIONS] = BF_FUNCTIONS,
};

enum { BATCH_NODE, BATCH_BOOT_ID, BATCH_SPOOL, BATCH_SEQ };
static const char *const batch_fields[] = {
        [BATCH_NODE] = BF_BATCH_NODE, [BATCH_BOOT_ID] = BF_BATCH_BOOT_ID, [BATCH_SPOOL] = BF_BATCH_SPOOL,
        [BATCH_SEQ] = BF_BATCH_SEQ,
};

enum { NODE_HOSTNAME, NODE_CPUS, NODE_CLUSTER, NODE_INSTALLED, NODE_TYPE };
static const char *const node_fields[] = {
        [NODE_HOSTNAME] = BF_NODE_HOSTNAME, [NODE_CPUS] = BF_NODE_CPUS, [NODE_CLUSTER] = BF_NODE_CLUSTER,
        [NODE_INSTALLED] = BF_NODE_INSTALLED, [NODE_TYPE] = BF_NODE_TYPE,
};

enum { INTERVAL_START, INTERVAL_END };
static const char *const interval_fields[] = {
        [INTERVAL_START] = BF_INTERVAL_START, [INTERVAL_END] = BF_INTERVAL_END,
};

enum { SAMPLING_EVENT, SAMPLING_FREQUENCY_HZ, SAMPLING_SAMPLES_LOST };
static const char *const sampling_fields[] = {
        [SAMPLING_EVENT] = BF_SAMPLING_EVENT, [SAMPLING_FREQUENCY_HZ] = BF_SAMPLING_FREQUENCY_HZ,
        [SAMPLING_SAMPLES_LOST] = BF_SAMPLING_SAMPLES_LOST,
};

/* node.installed: the library families lmkd found on the node
 * (daemon/node-software.h), as short identifiers. */
static bool family_name_ok(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n > BATCH_MAX_FAMILY_NAME)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!strchr("abcdefghijklmnopqrstuvwxyz0123456789_.+-", s[i]))
                        return false;
        return true;
}

enum { FAMILY_PURPOSE, FAMILY_FAMILY };
static const char *const family_fields[] = {
        [FAMILY_PURPOSE] = BF_FAMILY_PURPOSE, [FAMILY_FAMILY] = BF_FAMILY_FAMILY,
};

static int parse_installed(const Fields *node, Arena *arena, Batch *b, BatchError *err) {
        const JsonValue *a = node->v[NODE_INSTALLED];
        size_t n;

        if (!a || json_is_type(a, JSON_NULL))
                return 0;
        if (!json_is_type(a, JSON_ARRAY))
                return field_fail(err, -EINVAL, IN(BF_NODE), BF_NODE_INSTALLED, "must be an array");
        n = a->n;
        if (n > BATCH_MAX_INSTALLED)
                return field_fail(err, -EINVAL, IN(BF_NODE), BF_NODE_INSTALLED,
                                  "has %zu elements, at most %u are allowed",
                                  n, BATCH_MAX_INSTALLED);
        if (n == 0) {
                b->has_installed = true;
                return 0;
        }
        b->installed = arena_calloc(arena, n, sizeof(BatchFamily));
        if (!b->installed)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const JsonValue *o = &a->elements[i];
                Where w = AT(BF_NODE "." BF_NODE_INSTALLED, i);
                BatchFamily *f = &b->installed[i];
                Fields of;
                int r;

                if (!json_is_type(o, JSON_OBJECT))
                        return field_fail(err, -EINVAL, w, NULL, "must be an object");
                BIND(o, family_fields, &of);
                if ((r = field_string(&of, FAMILY_PURPOSE, w, REQUIRED | IDENT, 1, BATCH_MAX_FAMILY_NAME, &f->purpose,
                                      err)) < 0 ||
                    (r = field_string(&of, FAMILY_FAMILY, w, REQUIRED | IDENT, 1, BATCH_MAX_FAMILY_NAME, &f->family,
                                      err)) < 0)
                        return r;
                if (!family_name_ok(f->purpose))
                        return field_fail(err, -EINVAL, w, BF_FAMILY_PURPOSE,
                                          "must be 1-%u characters of a-z 0-9 _ . + -",
                                          BATCH_MAX_FAMILY_NAME);
                if (!family_name_ok(f->family))
                        return field_fail(err, -EINVAL, w, BF_FAMILY_FAMILY,
                                          "must be 1-%u characters of a-z 0-9 _ . + -",
                                          BATCH_MAX_FAMILY_NAME);
        }
        b->n_installed = n;
        b->has_installed = true;
        return 0;
}

/* node.type: what kind of node it is (collectors/node-type.h). */
static bool hex4(const char *s) {
        return strlen(s) == 4 && strspn(s, "0123456789abcdef") == 4;
}

enum { GPU_VENDOR, GPU_VENDOR_ID, GPU_DEVICE_ID, GPU_NAME, GPU_COUNT };
static const char *const gpu_fields[] = {
        [GPU_VENDOR] = BF_GPU_VENDOR, [GPU_VENDOR_ID] = BF_GPU_VENDOR_ID, [GPU_DEVICE_ID] = BF_GPU_DEVICE_ID,
        [GPU_NAME] = BF_GPU_NAME, [GPU_COUNT] = BF_GPU_COUNT,
};

enum { TYPE_CPU_MODEL, TYPE_SOCKETS, TYPE_CORES, TYPE_THREADS, TYPE_MEMORY_BYTES, TYPE_GPUS, TYPE_GPUS_OTHER,
       TYPE_KERNEL };
static const char *const type_fields[] = {
        [TYPE_CPU_MODEL] = BF_TYPE_CPU_MODEL, [TYPE_SOCKETS] = BF_TYPE_SOCKETS, [TYPE_CORES] = BF_TYPE_CORES,
        [TYPE_THREADS] = BF_TYPE_THREADS, [TYPE_MEMORY_BYTES] = BF_TYPE_MEMORY_BYTES, [TYPE_GPUS] = BF_TYPE_GPUS,
        [TYPE_GPUS_OTHER] = BF_TYPE_GPUS_OTHER, [TYPE_KERNEL] = BF_TYPE_KERNEL,
};

static int parse_gpus(const Fields *t, Arena *arena, BatchNodeType *nt, BatchError *err) {
        const JsonValue *a = t->v[TYPE_GPUS];
        size_t n;
        int r;

        if (!a || json_is_type(a, JSON_NULL))
                return 0;
        if (!json_is_type(a, JSON_ARRAY))
                return field_fail(err, -EINVAL, IN(BF_NODE "." BF_NODE_TYPE), BF_TYPE_GPUS, "must be an array");
        n = a->n;
        if (n > BATCH_MAX_GPU_MODELS)
                return field_fail(err, -EINVAL, IN(BF_NODE "." BF_NODE_TYPE), BF_TYPE_GPUS,
                                  "has %zu elements, at most %u are allowed", n,
                                  BATCH_MAX_GPU_MODELS);
        if (n == 0)
                return 0;
        nt->gpus = arena_calloc(arena, n, sizeof(BatchGpu));
        if (!nt->gpus)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const JsonValue *o = &a->elements[i];
                Where w = AT(BF_NODE "." BF_NODE_TYPE "." BF_TYPE_GPUS, i);
                BatchGpu *g = &nt->gpus[i];
                Fields f;

                if (!json_is_type(o, JSON_OBJECT))
                        return field_fail(err, -EINVAL, w, NULL, "must be an object");
                BIND(o, gpu_fields, &f);
                if ((r = field_string(&f, GPU_VENDOR, w, REQUIRED | IDENT, 1, 32, &g->vendor, err)) < 0 ||
                    (r = field_string(&f, GPU_VENDOR_ID, w, REQUIRED | IDENT, 4, 4, &g->vendor_id, err)) < 0 ||
                    (r = field_string(&f, GPU_DEVICE_ID, w, NULLABLE | IDENT, 4, 4, &g->device_id, err)) < 0 ||
                    (r = field_string(&f, GPU_NAME, w, NULLABLE | IDENT, 1, BATCH_MAX_NODE_TEXT, &g->name, err)) < 0 ||
                    (r = field_int(&f, GPU_COUNT, w, REQUIRED, 1, 65536, &g->count, err)) < 0)
                        return r;
                if (!hex4(g->vendor_id))
                        return field_fail(err, -EINVAL, w, BF_GPU_VENDOR_ID, "must be 4 lower-case hex digits");
                if (g->device_id && !hex4(g->device_id))
                        return field_fail(err, -EINVAL, w, BF_GPU_DEVICE_ID, "must be 4 lower-case hex digits");
        }
        nt->n_gpus = n;
        return 0;
}

static int parse_node_type(const Fields *node, Arena *arena, Batch *b, BatchError *err) {
        const JsonValue *t;
        BatchNodeType *nt;
        Where w = IN(BF_NODE "." BF_NODE_TYPE);
        Fields f;
        int r;

        if ((r = field_object(node, NODE_TYPE, IN(BF_NODE), false, &t, err)) < 0 || !t)
                return r;
        nt = b->node_type = arena_calloc(arena, 1, sizeof(BatchNodeType));
        if (!nt)
                return -ENOMEM;
        BIND(t, type_fields, &f);
        if ((r = field_string(&f, TYPE_CPU_MODEL, w, NULLABLE | IDENT, 1, BATCH_MAX_NODE_TEXT, &nt->cpu_model,
                              err)) < 0 ||
            (r = field_int(&f, TYPE_THREADS, w, NULLABLE, 1, 1 << 20, &nt->threads, err)) < 0 ||
            (r = field_int(&f, TYPE_CORES, w, NULLABLE, 1, nt->threads == BATCH_NULL ? 1 << 20 : nt->threads,
                           &nt->cores, err)) < 0 ||
            (r = field_int(&f, TYPE_SOCKETS, w, NULLABLE, 1, nt->cores == BATCH_NULL ? 1 << 20 : nt->cores,
                           &nt->sockets, err)) < 0 ||
            (r = field_int(&f, TYPE_MEMORY_BYTES, w, NULLABLE, 1, (int64_t) BATCH_MAX_COUNTER, &nt->memory_bytes,
                           err)) < 0 ||
            (r = field_int(&f, TYPE_GPUS_OTHER, w, NULLABLE, 0, 1 << 20, &nt->gpus_other, err)) < 0 ||
            (r = field_string(&f, TYPE_KERNEL, w, NULLABLE | IDENT, 1, 256, &nt->kernel, err)) < 0 ||
            (r = parse_gpus(&f, arena, nt, err)) < 0)
                return r;
        if (nt->gpus_other == BATCH_NULL)
                nt->gpus_other = 0;
        return 0;
}

static int parse_header(const Fields *top, Arena *arena, Batch *b, BatchError *err) {
        const JsonValue *o;
        const char *format;
        int64_t version;
        Fields f;
        int r;

        r = field_string(top, TOP_FORMAT, TOP, REQUIRED, 0, 64, &format, err);
        if (r < 0)
                return r;
        if (!streq(format, LMK_BATCH_FORMAT))
                return field_fail(err, -EPROTONOSUPPORT, TOP, BF_FORMAT, "must be \"%s\"", LMK_BATCH_FORMAT);
        r = field_int(top, TOP_VERSION, TOP, REQUIRED, 0, INT32_MAX, &version, err);
        if (r < 0)
                return r;
        if (version < BATCH_VERSION_MIN || version > LMK_BATCH_VERSION)
                return field_fail(err, -EPROTONOSUPPORT, TOP, BF_VERSION,
                                  "version %" PRId64 " is not supported, this store knows versions %d to %d",
                                  version, BATCH_VERSION_MIN, LMK_BATCH_VERSION);
        b->version = version;

        if ((r = field_object(top, TOP_BATCH, TOP, true, &o, err)) < 0)
                return r;
        BIND(o, batch_fields, &f);
        if ((r = field_string(&f, BATCH_NODE, IN(BF_BATCH), REQUIRED | IDENT, 1, MAX_NAME, &b->node, err)) < 0 ||
            (r = field_string(&f, BATCH_BOOT_ID, IN(BF_BATCH), REQUIRED | IDENT, 1, MAX_ID, &b->boot_id, err)) < 0 ||
            (r = field_string(&f, BATCH_SPOOL, IN(BF_BATCH), NULLABLE | IDENT, LMK_BATCH_SPOOL_ID_LEN,
                              LMK_BATCH_SPOOL_ID_LEN, &b->spool, err)) < 0 ||
            (r = field_int(&f, BATCH_SEQ, IN(BF_BATCH), REQUIRED, 0, INT64_MAX - 1, &b->seq, err)) < 0)
                return r;
        /* part of the batch's key (docs/batch-format.md): one spelling only */
        if (b->spool && strspn(b->spool, "0123456789abcdef") != LMK_BATCH_SPOOL_ID_LEN)
                return field_fail(err, -EINVAL, IN(BF_BATCH), BF_BATCH_SPOOL, "must be %u lower-case hex digits",
                                  LMK_BATCH_SPOOL_ID_LEN);

        if ((r = field_object(top, TOP_NODE, TOP, true, &o, err)) < 0)
                return r;
        BIND(o, node_fields, &f);
        if ((r = field_string(&f, NODE_HOSTNAME, IN(BF_NODE), NULLABLE | IDENT, 1, MAX_NAME, &b->hostname, err)) < 0 ||
            (r = field_int(&f, NODE_CPUS, IN(BF_NODE), REQUIRED, 1, 1 << 20, &b->cpus, err)) < 0 ||
            (r = field_string(&f, NODE_CLUSTER, IN(BF_NODE), NULLABLE | IDENT, 1, MAX_NAME, &b->cluster, err)) < 0 ||
            (r = parse_installed(&f, arena, b, err)) < 0 ||
            (r = parse_node_type(&f, arena, b, err)) < 0)
                return r;

        if ((r = field_object(top, TOP_INTERVAL, TOP, true, &o, err)) < 0)
                return r;
        BIND(o, interval_fields, &f);
        if ((r = field_double(&f, INTERVAL_START, IN(BF_INTERVAL), REQUIRED, TIME_MIN, TIME_MAX, &b->start, err)) < 0 ||
            (r = field_double(&f, INTERVAL_END, IN(BF_INTERVAL), REQUIRED, TIME_MIN, TIME_MAX, &b->end, err)) < 0)
                return r;
        if (b->start > b->end)
                return field_fail(err, -EINVAL, IN(BF_INTERVAL), BF_INTERVAL_END, "must not be before interval.start");
        if (b->end - b->start > BATCH_MAX_INTERVAL_S)
                return field_fail(err, -EINVAL, IN(BF_INTERVAL), BF_INTERVAL_END,
                                  "must be at most %g s after interval.start (lmkd pushes at least daily)",
                                  BATCH_MAX_INTERVAL_S);

        if ((r = field_object(top, TOP_SAMPLING, TOP, true, &o, err)) < 0)
                return r;
        BIND(o, sampling_fields, &f);
        if ((r = field_string(&f, SAMPLING_EVENT, IN(BF_SAMPLING), REQUIRED | IDENT, 1, 64, &b->event, err)) < 0 ||
            (r = field_double(&f, SAMPLING_FREQUENCY_HZ, IN(BF_SAMPLING), REQUIRED, BATCH_MIN_FREQUENCY_HZ,
                              BATCH_MAX_FREQUENCY_HZ, &b->frequency_hz, err)) < 0)
                return r;
        batch_limits(b, &b->limits);
        r = field_int(&f, SAMPLING_SAMPLES_LOST, IN(BF_SAMPLING), OPTIONAL, 0, b->limits.samples, &b->samples_lost,
                      err);
        if (r < 0)
                return r;
        if (b->samples_lost == BATCH_NULL)
                b->samples_lost = 0;
        return 0;
}

/* Roles name counters in reports, the store and its pages: a short
 * identifier as lmkd's -e takes it (collectors/events.h). */
static bool role_name_ok(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n > BATCH_MAX_ROLE_NAME)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", s[i]))
                        return false;
        return true;
}

int batch_role_index(const Batch *b, const char *role) {
        for (size_t i = 0; i < b->n_roles; i++)
                if (streq(b->roles[i], role))
                        return (int) i;
        return -1;
}

/* The index of a role, added to the batch's roles when new. */
static int role_slot(Batch *b, const char *role, Where w, const char *key, BatchError *err) {
        int i;

        if (!role_name_ok(role))
                return field_fail(err, -EINVAL, w, key, "event roles must be 1-%u characters of A-Z a-z 0-9 _ -",
                                  BATCH_MAX_ROLE_NAME);
        i = batch_role_index(b, role);
        if (i >= 0)
                return i;
        if (b->n_roles == BATCH_MAX_ROLES)
                return field_fail(err, -EINVAL, w, key, "the batch names more than %u event roles", BATCH_MAX_ROLES);
        b->roles[b->n_roles] = role;
        return (int) b->n_roles++;
}

enum { COUNTER_ROLE, COUNTER_EVENT, COUNTER_SOURCE, COUNTER_AVAILABLE, COUNTER_ERROR };
static const char *const counter_fields[] = {
        [COUNTER_ROLE] = BF_COUNTER_ROLE, [COUNTER_EVENT] = BF_COUNTER_EVENT, [COUNTER_SOURCE] = BF_COUNTER_SOURCE,
        [COUNTER_AVAILABLE] = BF_COUNTER_AVAILABLE, [COUNTER_ERROR] = BF_COUNTER_ERROR,
};

/* counters[]: which event fills which role. Optional; read before the
 * rows so that their events are checked against it. */
static int parse_counters(const Fields *top, Arena *arena, Batch *b, BatchError *err) {
        const JsonValue *a;
        int r;

        r = field_array(top, TOP_COUNTERS, TOP, false, BATCH_MAX_ROLES, &a, &b->n_counters, err);
        if (r < 0 || b->n_counters == 0)
                return r;
        b->counters = arena_calloc(arena, b->n_counters, sizeof(BatchCounter));
        if (!b->counters)
                return -ENOMEM;
        for (size_t i = 0; i < b->n_counters; i++) {
                const JsonValue *o = &a->elements[i];
                BatchCounter *c = &b->counters[i];
                Where w = AT(BF_COUNTERS, i);
                Fields f;

                if (!json_is_type(o, JSON_OBJECT))
                        return field_fail(err, -EINVAL, w, NULL, "must be an object");
                BIND(o, counter_fields, &f);
                if ((r = field_string(&f, COUNTER_ROLE, w, REQUIRED | IDENT, 1, BATCH_MAX_ROLE_NAME, &c->role,
                                      err)) < 0 ||
                    (r = field_string(&f, COUNTER_EVENT, w, REQUIRED | IDENT, 1, 127, &c->event, err)) < 0 ||
                    (r = field_string(&f, COUNTER_SOURCE, w, NULLABLE | IDENT, 1, 16, &c->source, err)) < 0 ||
                    (r = field_bool(&f, COUNTER_AVAILABLE, w, &c->available, err)) < 0 ||
                    (r = field_string(&f, COUNTER_ERROR, w, NULLABLE | IDENT, 1, 512, &c->error, err)) < 0)
                        return r;
                if (batch_role_index(b, c->role) >= 0)
                        return field_fail(err, -EINVAL, w, BF_COUNTER_ROLE, "names the role %s a second time", c->role);
                r = role_slot(b, c->role, w, BF_COUNTER_ROLE, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static bool is_ipc_role(const char *role) {
        return streq(role, BF_ROLE_CYCLES) || streq(role, BF_ROLE_INSTRUCTIONS);
}

/* "events": {role: count or null} beyond cycles and instructions, which
 * have fields of their own. With counters[], only their roles. */
static int parse_events(Batch *b, const JsonValue *e, Where w, int64_t max, BatchEvents *pool, BatchEvents **ret,
                        BatchError *err) {
        JsonMember m[BATCH_MAX_ROLES];
        BatchEvents *ev;
        size_t n;

        if (!e || json_is_type(e, JSON_NULL)) {
                *ret = NULL;
                return 0;
        }
        if (!json_is_type(e, JSON_OBJECT))
                return field_fail(err, -EINVAL, w, BF_EVENTS, "must be an object");
        n = json_object_unique(e, m, BATCH_MAX_ROLES);
        if (n > BATCH_MAX_ROLES)
                return field_fail(err, -EINVAL, w, BF_EVENTS, "has more than %u roles", BATCH_MAX_ROLES);
        ev = pool;
        for (size_t i = 0; i < BATCH_MAX_ROLES; i++)
                ev->count[i] = BATCH_NULL;
        for (size_t i = 0; i < n; i++) {
                const char *key = m[i].key;
                const JsonValue *val = &m[i].value;
                int64_t v;
                int k;

                if (is_ipc_role(key))
                        return field_fail(err, -EINVAL, w, BF_EVENTS, "%s has a field of its own, not an event", key);
                if (b->n_counters > 0 && batch_role_index(b, key) < 0)
                        return field_fail(err, -EINVAL, w, BF_EVENTS, "names a role that counters[] does not have");
                k = role_slot(b, key, w, BF_EVENTS, err);
                if (k < 0)
                        return k;
                if (json_is_type(val, JSON_NULL))
                        continue;
                if (!json_is_type(val, JSON_INT))
                        return field_fail(err, -EINVAL, w, BF_EVENTS, "%s must be an integer or null", key);
                v = val->integer;
                if (v < 0 || v > max)
                        return field_fail(err, -EINVAL, w, BF_EVENTS, "%s must be between 0 and %" PRId64, key, max);
                ev->count[k] = v;
        }
        *ret = ev;
        return 0;
}

enum { BURST_SAMPLES, BURST_WINDOW_NS, BURST_PER_SECOND };
static const char *const burst_fields[] = {
        [BURST_SAMPLES] = BF_BURST_SAMPLES, [BURST_WINDOW_NS] = BF_BURST_WINDOW_NS,
        [BURST_PER_SECOND] = BF_BURST_PER_SECOND,
};

/* A row's "burst": its burst samples, their windows' length, and events
 * per second by role (cycles and instructions too); "ipc" is derived. */
static int parse_burst(Batch *b, const Fields *row_fields, unsigned i, Where w, BatchRow *row, BatchBurst *pool,
                       BatchError *err) {
        static const double max_rate = BATCH_MAX_CYCLES_PER_CPU_SECOND * BATCH_MAX_EVENTS_PER_CYCLE;
        const JsonValue *bo, *rates;
        JsonMember m[BATCH_MAX_ROLES];
        BatchBurst *bu = pool;
        char parent[48];
        Fields f;
        size_t n;
        Where bw;
        int r;

        if ((r = field_object(row_fields, i, w, false, &bo, err)) < 0 || !bo)
                return r;
        snprintf(parent, sizeof(parent), "%s[%ld]." BF_ROW_BURST, w.parent, w.index);
        bw = IN(parent);
        BIND(bo, burst_fields, &f);
        if ((r = field_int(&f, BURST_SAMPLES, bw, REQUIRED, 1, b->limits.burst_samples, &bu->samples, err)) < 0 ||
            (r = field_int(&f, BURST_WINDOW_NS, bw, REQUIRED, 0, b->limits.cpu_time_ns, &bu->window_ns, err)) < 0 ||
            (r = field_object(&f, BURST_PER_SECOND, bw, true, &rates, err)) < 0)
                return r;
        n = json_object_unique(rates, m, BATCH_MAX_ROLES);
        if (n > BATCH_MAX_ROLES)
                return field_fail(err, -EINVAL, bw, BF_BURST_PER_SECOND, "has more than %u roles", BATCH_MAX_ROLES);
        for (size_t k = 0; k < BATCH_MAX_ROLES; k++)
                bu->per_second[k] = bu->counts[k] = NAN;
        for (size_t j = 0; j < n; j++) {
                const char *key = m[j].key;
                const JsonValue *val = &m[j].value;
                double v;
                int k;

                if (b->n_counters > 0 && batch_role_index(b, key) < 0)
                        return field_fail(err, -EINVAL, bw, BF_BURST_PER_SECOND,
                                          "names a role that counters[] does not have");
                k = role_slot(b, key, bw, BF_BURST_PER_SECOND, err);
                if (k < 0)
                        return k;
                if (json_is_type(val, JSON_NULL))
                        continue;
                if (!json_is_type(val, JSON_DOUBLE) && !json_is_type(val, JSON_INT))
                        return field_fail(err, -EINVAL, bw, BF_BURST_PER_SECOND, "%s must be a number or null", key);
                v = json_number(val);
                if (!isfinite(v) || v < 0 || v > max_rate)
                        return field_fail(err, -EINVAL, bw, BF_BURST_PER_SECOND, "%s must be between 0 and %g", key,
                                          max_rate);
                bu->per_second[k] = v;
                bu->counts[k] = v * (double) bu->window_ns / 1e9;
        }
        row->burst = bu;
        return 0;
}

/* Floating sums written by one program and read back by another agree
 * to about this much: a part may exceed its whole by so little. */
static bool within_whole(double part, double whole) {
        return part <= whole * (1 + 1e-9) + 1e-6;
}

enum { ENERGY_SOURCE, ENERGY_JOULES, ENERGY_UNATTRIBUTED_JOULES, ENERGY_ZONES };
static const char *const energy_fields[] = {
        [ENERGY_SOURCE] = BF_ENERGY_SOURCE, [ENERGY_JOULES] = BF_ENERGY_JOULES,
        [ENERGY_UNATTRIBUTED_JOULES] = BF_ENERGY_UNATTRIBUTED_JOULES, [ENERGY_ZONES] = BF_ENERGY_ZONES,
};

enum { ZONE_ZONE, ZONE_KIND, ZONE_JOULES };
static const char *const zone_fields[] = {
        [ZONE_ZONE] = BF_ZONE_ZONE, [ZONE_KIND] = BF_ZONE_KIND, [ZONE_JOULES] = BF_ZONE_JOULES,
};

/* "energy": the node's energy in the interval, from RAPL (lmkd's
 * collectors/powercap.h): all zones, each zone, and the part while no job
 * ran there. Absent where the node has no energy counters. */
static int parse_energy(const Fields *top, Arena *arena, Batch *b, BatchError *err) {
        const JsonValue *o, *a;
        BatchEnergy *e;
        double sum = 0;
        Fields f;
        size_t n;
        int r;

        if (top->v[TOP_ENERGY] && json_is_type(top->v[TOP_ENERGY], JSON_NULL))
                return 0;
        if ((r = field_object(top, TOP_ENERGY, TOP, false, &o, err)) < 0 || !o)
                return r;
        e = b->energy = arena_calloc(arena, 1, sizeof(BatchEnergy));
        if (!e)
                return -ENOMEM;
        BIND(o, energy_fields, &f);
        if ((r = field_string(&f, ENERGY_SOURCE, IN(BF_ENERGY), REQUIRED | IDENT, 1, 32, &e->source, err)) < 0 ||
            (r = field_double(&f, ENERGY_JOULES, IN(BF_ENERGY), REQUIRED, 0, b->limits.joules, &e->joules, err)) < 0 ||
            (r = field_double(&f, ENERGY_UNATTRIBUTED_JOULES, IN(BF_ENERGY), NULLABLE, 0, b->limits.joules,
                              &e->unattributed_joules, err)) < 0)
                return r;
        if (isnan(e->unattributed_joules))
                e->unattributed_joules = 0;
        if (!within_whole(e->unattributed_joules, e->joules))
                return field_fail(err, -EINVAL, IN(BF_ENERGY), BF_ENERGY_UNATTRIBUTED_JOULES,
                                  "must not exceed energy.joules");
        a = f.v[ENERGY_ZONES];
        if (!a || json_is_type(a, JSON_NULL))
                return 0;
        if (!json_is_type(a, JSON_ARRAY))
                return field_fail(err, -EINVAL, IN(BF_ENERGY), BF_ENERGY_ZONES, "must be an array");
        n = a->n;
        if (n > BATCH_MAX_ZONES)
                return field_fail(err, -EINVAL, IN(BF_ENERGY), BF_ENERGY_ZONES,
                                  "has %zu elements, at most %u are allowed", n,
                                  BATCH_MAX_ZONES);
        if (n == 0)
                return 0;
        e->zones = arena_calloc(arena, n, sizeof(BatchZone));
        if (!e->zones)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const JsonValue *z = &a->elements[i];
                BatchZone *zone = &e->zones[i];
                Where w = AT(BF_ENERGY "." BF_ENERGY_ZONES, i);
                Fields zf;

                if (!json_is_type(z, JSON_OBJECT))
                        return field_fail(err, -EINVAL, w, NULL, "must be an object");
                BIND(z, zone_fields, &zf);
                if ((r = field_string(&zf, ZONE_ZONE, w, REQUIRED | IDENT, 1, 64, &zone->zone, err)) < 0 ||
                    (r = field_string(&zf, ZONE_KIND, w, REQUIRED | IDENT, 1, 16, &zone->kind, err)) < 0 ||
                    (r = field_double(&zf, ZONE_JOULES, w, REQUIRED, 0, b->limits.joules, &zone->joules, err)) < 0)
                        return r;
                sum += zone->joules;
        }
        e->n_zones = n;
        if (!within_whole(sum, e->joules) || !within_whole(e->joules, sum))
                return field_fail(err, -EINVAL, IN(BF_ENERGY), BF_ENERGY_JOULES,
                                  "must be the sum of energy.zones[].joules (%g)", sum);
        return 0;
}

static int parse_notes(const JsonValue *o, Arena *arena, Where w, BatchJob *j, BatchError *err) {
        JsonMember m[BATCH_MAX_NOTES];
        size_t n, bytes = 0;

        if (!o)
                return 0;
        n = json_object_unique(o, m, BATCH_MAX_NOTES);
        if (n > BATCH_MAX_NOTES)
                return field_fail(err, -EINVAL, w, BF_JOB_NOTES, "has more than %u keys", BATCH_MAX_NOTES);
        j->notes = arena_calloc(arena, MAX(n, (size_t) 1), sizeof(BatchNote));
        if (!j->notes)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const char *key = m[i].key;
                const JsonValue *val = &m[i].value;
                int r;

                if (!json_is_type(val, JSON_STRING))
                        return field_fail(err, -EINVAL, w, BF_JOB_NOTES, "values must be strings");
                if (!*key)
                        return field_fail(err, -EINVAL, w, BF_JOB_NOTES, "keys must not be empty");
                r = field_check_text(key, strlen(key), IDENT, w, BF_JOB_NOTES, err);
                if (r < 0)
                        return r;
                r = field_check_text(val->string, val->n, OPTIONAL, w, BF_JOB_NOTES, err);
                if (r < 0)
                        return r;
                bytes += strlen(key) + val->n;
                if (bytes > BATCH_MAX_NOTES_BYTES)
                        return field_fail(err, -EINVAL, w, BF_JOB_NOTES, "holds more than %u bytes",
                                          BATCH_MAX_NOTES_BYTES);
                j->notes[i] = (BatchNote) { key, val->string };
        }
        j->n_notes = n;
        return 0;
}

enum { JOB_JOB, JOB_USER, JOB_ACCOUNT, JOB_PARTITION, JOB_NAME, JOB_NODES, JOB_TASKS, JOB_CPUS_ALLOCATED,
       JOB_CLUSTER, JOB_NOTES, JOB_FIRST_SEEN, JOB_LAST_SEEN, JOB_ENDED, JOB_CPU_TIME_NS, JOB_CYCLES,
       JOB_INSTRUCTIONS, JOB_EVENTS, JOB_ENERGY_JOULES, JOB_ENERGY_ALONE_JOULES, JOB_OPTED_OUT, JOB_SAMPLES,
       JOB_COUNTERS_RELEASED };
static const char *const job_fields[] = {
        [JOB_JOB] = BF_JOB_JOB, [JOB_USER] = BF_JOB_USER, [JOB_ACCOUNT] = BF_JOB_ACCOUNT,
        [JOB_PARTITION] = BF_JOB_PARTITION, [JOB_NAME] = BF_JOB_NAME, [JOB_NODES] = BF_JOB_NODES,
        [JOB_TASKS] = BF_JOB_TASKS, [JOB_CPUS_ALLOCATED] = BF_JOB_CPUS_ALLOCATED, [JOB_CLUSTER] = BF_JOB_CLUSTER,
        [JOB_NOTES] = BF_JOB_NOTES, [JOB_FIRST_SEEN] = BF_JOB_FIRST_SEEN, [JOB_LAST_SEEN] = BF_JOB_LAST_SEEN,
        [JOB_ENDED] = BF_JOB_ENDED, [JOB_CPU_TIME_NS] = BF_CPU_TIME_NS, [JOB_CYCLES] = BF_CYCLES,
        [JOB_INSTRUCTIONS] = BF_INSTRUCTIONS, [JOB_EVENTS] = BF_EVENTS, [JOB_ENERGY_JOULES] = BF_JOB_ENERGY_JOULES,
        [JOB_ENERGY_ALONE_JOULES] = BF_JOB_ENERGY_ALONE_JOULES, [JOB_OPTED_OUT] = BF_JOB_OPTED_OUT,
        [JOB_SAMPLES] = BF_JOB_SAMPLES, [JOB_COUNTERS_RELEASED] = BF_JOB_COUNTERS_RELEASED,
};

static int parse_jobs(const Fields *top, Arena *arena, Batch *b, BatchError *err) {
        const JsonValue *a;
        double energy = 0;
        int r;

        r = field_array(top, TOP_JOBS, TOP, false, BATCH_MAX_JOBS, &a, &b->n_jobs, err);
        if (r < 0 || b->n_jobs == 0)
                return r;
        b->jobs = arena_calloc(arena, b->n_jobs, sizeof(BatchJob));
        if (!b->jobs)
                return -ENOMEM;
        for (size_t i = 0; i < b->n_jobs; i++) {
                const JsonValue *o = &a->elements[i], *notes;
                BatchJob *j = &b->jobs[i];
                Where w = AT(BF_JOBS, i);
                Fields f;

                if (!json_is_type(o, JSON_OBJECT))
                        return field_fail(err, -EINVAL, w, NULL, "must be an object");
                BIND(o, job_fields, &f);
                if ((r = field_string(&f, JOB_JOB, w, REQUIRED | IDENT, 1, MAX_ID, &j->job, err)) < 0 ||
                    (r = field_string(&f, JOB_CLUSTER, w, NULLABLE | IDENT, 1, MAX_NAME, &j->cluster, err)) < 0 ||
                    (r = field_string(&f, JOB_USER, w, NULLABLE | IDENT, 1, MAX_NAME, &j->user, err)) < 0 ||
                    (r = field_string(&f, JOB_ACCOUNT, w, NULLABLE | IDENT, 1, MAX_NAME, &j->account, err)) < 0 ||
                    (r = field_string(&f, JOB_PARTITION, w, NULLABLE | IDENT, 1, MAX_NAME, &j->partition, err)) < 0 ||
                    (r = field_string(&f, JOB_NAME, w, NULLABLE, 0, MAX_NAME, &j->name, err)) < 0 ||
                    (r = field_int(&f, JOB_NODES, w, NULLABLE, 1, 1 << 24, &j->nodes, err)) < 0 ||
                    (r = field_int(&f, JOB_TASKS, w, NULLABLE, 0, 1 << 30, &j->tasks, err)) < 0 ||
                    (r = field_int(&f, JOB_CPUS_ALLOCATED, w, NULLABLE, 1, b->cpus, &j->cpus_allocated, err)) < 0 ||
                    (r = field_double(&f, JOB_FIRST_SEEN, w, OPTIONAL, TIME_MIN, TIME_MAX, &j->first_seen, err)) < 0 ||
                    (r = field_double(&f, JOB_LAST_SEEN, w, OPTIONAL, TIME_MIN, TIME_MAX, &j->last_seen, err)) < 0 ||
                    (r = field_bool(&f, JOB_ENDED, w, &j->ended, err)) < 0 ||
                    (r = field_int(&f, JOB_CPU_TIME_NS, w, NULLABLE, 0, b->limits.cpu_time_ns, &j->cpu_time_ns,
                                   err)) < 0 ||
                    (r = field_int(&f, JOB_CYCLES, w, NULLABLE, 0, b->limits.cycles, &j->cycles, err)) < 0 ||
                    (r = field_int(&f, JOB_INSTRUCTIONS, w, NULLABLE, 0, b->limits.instructions, &j->instructions,
                                   err)) < 0 ||
                    (r = field_double(&f, JOB_ENERGY_JOULES, w, NULLABLE, 0, b->limits.joules, &j->energy_joules,
                                      err)) < 0 ||
                    (r = field_double(&f, JOB_ENERGY_ALONE_JOULES, w, NULLABLE, 0, b->limits.joules,
                                      &j->energy_alone_joules, err)) < 0 ||
                    (r = field_bool(&f, JOB_OPTED_OUT, w, &j->opted_out, err)) < 0 ||
                    (r = field_bool(&f, JOB_COUNTERS_RELEASED, w, &j->counters_released, err)) < 0 ||
                    (r = field_int(&f, JOB_SAMPLES, w, NULLABLE, 0, b->limits.samples, &j->samples, err)) < 0)
                        return r;
                if (j->samples == BATCH_NULL)
                        j->samples = 0;
                /* an opted-out job's samples are its only figure: they come
                 * here, not in rows, and nothing but its CPU time with them */
                if (field_has(&f, JOB_SAMPLES) && !j->opted_out)
                        return field_fail(err, -EINVAL, w, BF_JOB_SAMPLES, "only for an opted-out job (opted_out)");
                if (j->opted_out && (field_has(&f, JOB_EVENTS) || j->cycles != BATCH_NULL ||
                                     j->instructions != BATCH_NULL))
                        return field_fail(err, -EINVAL, w, BF_JOB_OPTED_OUT,
                                          "an opted-out job has no counters (cycles, instructions, events)");
                if (field_has(&f, JOB_EVENTS) && !b->job_events &&
                    !(b->job_events = arena_calloc(arena, b->n_jobs, sizeof(BatchEvents))))
                        return -ENOMEM;
                r = parse_events(b, f.v[JOB_EVENTS], w, b->limits.events, b->job_events ? &b->job_events[i] : NULL,
                                 &j->events, err);
                if (r < 0)
                        return r;
                if (!isnan(j->energy_joules) && !b->energy)
                        return field_fail(err, -EINVAL, w, BF_JOB_ENERGY_JOULES,
                                          "needs the node's energy (energy.joules)");
                if (!isnan(j->energy_alone_joules) &&
                    (isnan(j->energy_joules) || !within_whole(j->energy_alone_joules, j->energy_joules)))
                        return field_fail(err, -EINVAL, w, BF_JOB_ENERGY_ALONE_JOULES, "must not exceed energy_joules");
                if (!isnan(j->energy_joules))
                        energy += j->energy_joules;

                /* notes may be null like the other optional members */
                if (f.v[JOB_NOTES] && json_is_type(f.v[JOB_NOTES], JSON_NULL))
                        notes = NULL;
                else if ((r = field_object(&f, JOB_NOTES, w, false, &notes, err)) < 0)
                        return r;
                r = parse_notes(notes, arena, w, j, err);
                if (r < 0)
                        return r;
        }
        /* the jobs' energy is the node's, split */
        if (b->energy && !within_whole(energy, b->energy->joules))
                return field_fail(err, -EINVAL, TOP, BF_JOBS, "hold %g J, more than the node's %g J (energy.joules)",
                                  energy, b->energy->joules);
        return 0;
}

enum { ROW_JOB, ROW_STEP, ROW_USER, ROW_COMM, ROW_OBJECT, ROW_KIND, ROW_BUILD_ID, ROW_PHASE, ROW_SAMPLES,
       ROW_CPU_TIME_NS, ROW_CYCLES, ROW_INSTRUCTIONS, ROW_EVENTS, ROW_MULTIPLEXED_SAMPLES, ROW_BURST };
static const char *const row_fields[] = {
        [ROW_JOB] = BF_ROW_JOB, [ROW_STEP] = BF_ROW_STEP, [ROW_USER] = BF_ROW_USER, [ROW_COMM] = BF_ROW_COMM,
        [ROW_OBJECT] = BF_ROW_OBJECT, [ROW_KIND] = BF_ROW_KIND, [ROW_BUILD_ID] = BF_ROW_BUILD_ID,
        [ROW_PHASE] = BF_ROW_PHASE, [ROW_SAMPLES] = BF_ROW_SAMPLES, [ROW_CPU_TIME_NS] = BF_CPU_TIME_NS,
        [ROW_CYCLES] = BF_CYCLES, [ROW_INSTRUCTIONS] = BF_INSTRUCTIONS, [ROW_EVENTS] = BF_EVENTS,
        [ROW_MULTIPLEXED_SAMPLES] = BF_ROW_MULTIPLEXED_SAMPLES, [ROW_BURST] = BF_ROW_BURST,
};

static int parse_rows(const Fields *top, Arena *arena, Batch *b, BatchError *err) {
        const JsonValue *a;
        int r;

        r = field_array(top, TOP_ROWS, TOP, true, BATCH_MAX_ROWS, &a, &b->n_rows, err);
        if (r < 0 || b->n_rows == 0)
                return r;
        b->rows = arena_calloc(arena, b->n_rows, sizeof(BatchRow));
        if (!b->rows)
                return -ENOMEM;
        for (size_t i = 0; i < b->n_rows; i++) {
                const JsonValue *o = &a->elements[i];
                BatchRow *row = &b->rows[i];
                Where w = AT(BF_ROWS, i);
                const char *kind;
                Fields f;
                int k;

                if (!json_is_type(o, JSON_OBJECT))
                        return field_fail(err, -EINVAL, w, NULL, "must be an object");
                BIND(o, row_fields, &f);
                if ((r = field_string(&f, ROW_JOB, w, NULLABLE | IDENT, 1, MAX_ID, &row->job, err)) < 0 ||
                    (r = field_string(&f, ROW_STEP, w, NULLABLE | IDENT, 1, MAX_ID, &row->step, err)) < 0 ||
                    (r = field_string(&f, ROW_USER, w, NULLABLE | IDENT, 1, MAX_NAME, &row->user, err)) < 0 ||
                    (r = field_string(&f, ROW_COMM, w, NULLABLE, 0, MAX_COMM, &row->comm, err)) < 0 ||
                    (r = field_string(&f, ROW_OBJECT, w, REQUIRED, 1, MAX_OBJECT, &row->object, err)) < 0 ||
                    (r = field_string(&f, ROW_KIND, w, REQUIRED | IDENT, 1, 16, &kind, err)) < 0 ||
                    (r = field_string(&f, ROW_BUILD_ID, w, NULLABLE | IDENT, 0, MAX_BUILD_ID, &row->build_id,
                                      err)) < 0 ||
                    (r = field_string(&f, ROW_PHASE, w, NULLABLE, 0, MAX_PHASE, &row->phase, err)) < 0 ||
                    (r = field_int(&f, ROW_SAMPLES, w, REQUIRED, 0, b->limits.samples, &row->samples, err)) < 0 ||
                    (r = field_int(&f, ROW_CPU_TIME_NS, w, NULLABLE, 0, b->limits.cpu_time_ns, &row->cpu_time_ns,
                                   err)) < 0 ||
                    (r = field_int(&f, ROW_CYCLES, w, NULLABLE, 0, b->limits.cycles, &row->cycles, err)) < 0 ||
                    (r = field_int(&f, ROW_INSTRUCTIONS, w, NULLABLE, 0, b->limits.instructions, &row->instructions,
                                   err)) < 0 ||
                    (r = field_int(&f, ROW_MULTIPLEXED_SAMPLES, w, NULLABLE, 0, row->samples, &row->multiplexed_samples,
                                   err)) < 0)
                        return r;
                if (row->multiplexed_samples == BATCH_NULL)
                        row->multiplexed_samples = 0;
                if (field_has(&f, ROW_EVENTS) && !b->row_events &&
                    !(b->row_events = arena_calloc(arena, b->n_rows, sizeof(BatchEvents))))
                        return -ENOMEM;
                if (field_has(&f, ROW_BURST) && !b->row_bursts &&
                    !(b->row_bursts = arena_calloc(arena, b->n_rows, sizeof(BatchBurst))))
                        return -ENOMEM;
                if ((r = parse_events(b, f.v[ROW_EVENTS], w, b->limits.events, b->row_events ? &b->row_events[i] : NULL,
                                      &row->events, err)) < 0 ||
                    (r = parse_burst(b, &f, ROW_BURST, w, row, b->row_bursts ? &b->row_bursts[i] : NULL, err)) < 0)
                        return r;
                for (size_t e = 0; row->events && e < BATCH_MAX_ROLES; e++)
                        if (!add_sum(&b->total_events[e], row->events->count[e]))
                                return field_fail(err, -EINVAL, w, BF_EVENTS,
                                                  "the batch's %s add up to more than %" PRId64,
                                                  b->roles[e], INT64_MAX);
                if (row->build_id && row->build_id[strspn(row->build_id, "0123456789abcdef")])
                        return field_fail(err, -EINVAL, w, BF_ROW_BUILD_ID, "must be lower-case hex");
                k = code_kind_from_string(kind);
                if (k < 0)
                        return field_fail(err, -EINVAL, w, BF_ROW_KIND,
                                          "must be one of exe, lib, kernel, idle, anon, unknown");
                row->kind = k;
                row->step = row->step ?: "";
                row->user = row->user ?: "";
                row->comm = row->comm ?: "";
                row->build_id = row->build_id ?: "";
                row->phase = row->phase ?: "";
                /* 10^5 rows of up to 2^53 can wrap an int64. Every sum the
                 * store keeps of this batch (per job, object, phase, hour) is
                 * a part of these totals, so once they fit, so do those. */
                if (!add_sum(&b->total_samples, row->samples))
                        return field_fail(err, -EINVAL, w, BF_ROW_SAMPLES,
                                          "the batch's samples add up to more than %" PRId64, INT64_MAX);
                if (!add_sum(&b->total_cpu_time_ns, row->cpu_time_ns))
                        return field_fail(err, -EINVAL, w, BF_CPU_TIME_NS,
                                          "the batch's cpu_time_ns add up to more than %" PRId64, INT64_MAX);
                if (!add_sum(&b->total_cycles, row->cycles))
                        return field_fail(err, -EINVAL, w, BF_CYCLES, "the batch's cycles add up to more than %" PRId64,
                                          INT64_MAX);
                if (!add_sum(&b->total_instructions, row->instructions))
                        return field_fail(err, -EINVAL, w, BF_INSTRUCTIONS,
                                          "the batch's instructions add up to more than %" PRId64, INT64_MAX);
        }
        /* CPU seconds are derived (samples / frequency): bounded above, but
         * checked, since an Inf would turn every sum it joins into null. */
        b->total_cpu_seconds = (double) b->total_samples / b->frequency_hz;
        if (!isfinite(b->total_cpu_seconds))
                return field_fail(err, -EINVAL, IN(BF_SAMPLING), BF_SAMPLING_FREQUENCY_HZ,
                                  "gives non-finite CPU seconds");
        return 0;
}

enum { MARKER_JOB, MARKER_COMM, MARKER_PHASE, MARKER_STATE };
static const char *const marker_fields[] = {
        [MARKER_JOB] = BF_MARKER_JOB, [MARKER_COMM] = BF_MARKER_COMM, [MARKER_PHASE] = BF_MARKER_PHASE,
        [MARKER_STATE] = BF_MARKER_STATE,
};

static int parse_markers(const Fields *top, Arena *arena, Batch *b, BatchError *err) {
        const JsonValue *a;
        int r;

        r = field_array(top, TOP_MARKERS, TOP, false, BATCH_MAX_MARKERS, &a, &b->n_markers, err);
        if (r < 0 || b->n_markers == 0)
                return r;
        b->markers = arena_calloc(arena, b->n_markers, sizeof(BatchMarker));
        if (!b->markers)
                return -ENOMEM;
        for (size_t i = 0; i < b->n_markers; i++) {
                const JsonValue *o = &a->elements[i];
                BatchMarker *m = &b->markers[i];
                Where w = AT(BF_MARKERS, i);
                Fields f;

                if (!json_is_type(o, JSON_OBJECT))
                        return field_fail(err, -EINVAL, w, NULL, "must be an object");
                BIND(o, marker_fields, &f);
                if ((r = field_string(&f, MARKER_JOB, w, NULLABLE | IDENT, 1, MAX_ID, &m->job, err)) < 0 ||
                    (r = field_string(&f, MARKER_COMM, w, NULLABLE, 0, MAX_COMM, &m->comm, err)) < 0 ||
                    (r = field_string(&f, MARKER_PHASE, w, REQUIRED, 0, MAX_PHASE, &m->phase, err)) < 0 ||
                    (r = field_string(&f, MARKER_STATE, w, REQUIRED | IDENT, 1, 32, &m->state, err)) < 0)
                        return r;
                m->comm = m->comm ?: "";
        }
        return 0;
}

enum { RANK_JOB, RANK_STEP, RANK_RANK, RANK_PHASE, RANK_SAMPLES, RANK_COMM_SAMPLES, RANK_FIRST, RANK_LAST };
static const char *const rank_fields[] = {
        [RANK_JOB] = BF_RANK_JOB, [RANK_STEP] = BF_RANK_STEP, [RANK_RANK] = BF_RANK_RANK, [RANK_PHASE] = BF_RANK_PHASE,
        [RANK_SAMPLES] = BF_RANK_SAMPLES, [RANK_COMM_SAMPLES] = BF_RANK_COMM_SAMPLES, [RANK_FIRST] = BF_RANK_FIRST,
        [RANK_LAST] = BF_RANK_LAST,
};

/* ranks[]: optional, and only another view of samples the rows already
 * count: every sample of a rank is also in a row of its job, so the ranks'
 * samples cannot add up to more than the rows' samples of jobs. */
static int parse_ranks(const Fields *top, Arena *arena, Batch *b, BatchError *err) {
        int64_t sum = 0, job_samples = 0;
        const JsonValue *a;
        int r;

        r = field_array(top, TOP_RANKS, TOP, false, BATCH_MAX_RANKS, &a, &b->n_ranks, err);
        if (r < 0 || b->n_ranks == 0)
                return r;
        b->ranks = arena_calloc(arena, b->n_ranks, sizeof(BatchRank));
        if (!b->ranks)
                return -ENOMEM;
        for (size_t i = 0; i < b->n_ranks; i++) {
                const JsonValue *o = &a->elements[i];
                BatchRank *k = &b->ranks[i];
                Where w = AT(BF_RANKS, i);
                Fields f;

                if (!json_is_type(o, JSON_OBJECT))
                        return field_fail(err, -EINVAL, w, NULL, "must be an object");
                BIND(o, rank_fields, &f);
                if ((r = field_string(&f, RANK_JOB, w, REQUIRED | IDENT, 1, MAX_ID, &k->job, err)) < 0 ||
                    (r = field_string(&f, RANK_STEP, w, NULLABLE | IDENT, 1, MAX_ID, &k->step, err)) < 0 ||
                    (r = field_int(&f, RANK_RANK, w, REQUIRED, 0, BATCH_MAX_RANK, &k->rank, err)) < 0 ||
                    (r = field_string(&f, RANK_PHASE, w, NULLABLE, 0, MAX_PHASE, &k->phase, err)) < 0 ||
                    (r = field_int(&f, RANK_SAMPLES, w, REQUIRED, 0, b->limits.samples, &k->samples, err)) < 0 ||
                    (r = field_int(&f, RANK_COMM_SAMPLES, w, REQUIRED, 0, k->samples, &k->comm_samples, err)) < 0 ||
                    (r = field_double(&f, RANK_FIRST, w, REQUIRED, TIME_MIN, TIME_MAX, &k->first, err)) < 0 ||
                    (r = field_double(&f, RANK_LAST, w, REQUIRED, TIME_MIN, TIME_MAX, &k->last, err)) < 0)
                        return r;
                if (k->last < k->first)
                        return field_fail(err, -EINVAL, w, BF_RANK_LAST, "must not be before first");
                k->step = k->step ?: "";
                k->phase = k->phase ?: "";
                /* each ≤ limits.samples ≤ 2^53 and at most 65,536 of them: no wrap */
                sum += k->samples;
        }
        /* Samples of ranks are samples of rows: more of them is a made-up batch. */
        for (size_t i = 0; i < b->n_rows; i++)
                if (b->rows[i].job)
                        job_samples += b->rows[i].samples;
        if (sum > job_samples)
                return field_fail(err, -EINVAL, TOP, BF_RANKS,
                                  "holds %" PRId64 " samples, more than the %" PRId64 " samples of jobs in rows",
                                  sum, job_samples);
        return 0;
}

/* rows[] sorted by (job, step, object, phase, build_id) and then by
 * index: what functions[] are looked up in, by bsearch(), which no choice
 * of strings slows down as it would a hash of them. */
typedef struct RowKey {
        const char *job, *step, *object, *phase, *build_id;
        size_t row;
} RowKey;

/* A (job, step, object, phase) of rows[], which functions[] break down:
 * its rows in the sorted keys, their samples, and its functions' so far. */
typedef struct RowGroup {
        RowKey key;             /* its first key; .row: its first row */
        size_t first, n;        /* in the sorted keys */
        int64_t samples, function_samples;
} RowGroup;

/* By (job, step, object, phase) alone. */
static int group_compare(const RowKey *x, const RowKey *y) {
        int c;

        if ((c = strcmp_null(x->job, y->job)) != 0 || (c = strcmp(x->step, y->step)) != 0 ||
            (c = strcmp(x->object, y->object)) != 0)
                return c;
        return strcmp(x->phase, y->phase);
}

static int row_key_compare(const void *p, const void *q) {
        const RowKey *x = p, *y = q;
        int c = group_compare(x, y);

        if (c != 0 || (c = strcmp(x->build_id, y->build_id)) != 0)
                return c;
        return CMP(x->row, y->row);
}

/* For bsearch(): the group of a key. */
static int row_group_find(const void *key, const void *group) {
        return group_compare(key, &((const RowGroup *) group)->key);
}

/* For bsearch() in a group's keys: one of a build-id. */
static int row_build_find(const void *key, const void *row) {
        return strcmp(((const RowKey *) key)->build_id, ((const RowKey *) row)->build_id);
}

static int row_groups(Arena *arena, const Batch *b, RowKey **ret_keys, RowGroup **ret, size_t *ret_n) {
        RowGroup *g;
        RowKey *k;
        size_t n = 0;

        k = arena_calloc(arena, MAX(b->n_rows, (size_t) 1), sizeof(RowKey));
        g = arena_calloc(arena, MAX(b->n_rows, (size_t) 1), sizeof(RowGroup));
        if (!k || !g)
                return -ENOMEM;
        for (size_t i = 0; i < b->n_rows; i++) {
                const BatchRow *row = &b->rows[i];

                k[i] = (RowKey) { row->job, row->step, row->object, row->phase, row->build_id, i };
        }
        qsort(k, b->n_rows, sizeof(RowKey), row_key_compare);
        for (size_t i = 0; i < b->n_rows; i++) {
                if (n == 0 || group_compare(&k[i], &g[n - 1].key) != 0)
                        g[n++] = (RowGroup) { .key = k[i], .first = i };
                g[n - 1].n++;
                g[n - 1].key.row = MIN(g[n - 1].key.row, k[i].row);
                /* the rows' samples fit an int64 together (parse_rows()) */
                g[n - 1].samples += b->rows[k[i].row].samples;
        }
        *ret_keys = k;
        *ret = g;
        *ret_n = n;
        return 0;
}

enum { FUNC_ROW, FUNC_JOB, FUNC_STEP, FUNC_OBJECT, FUNC_BUILD_ID, FUNC_PHASE, FUNC_FUNCTION, FUNC_OFFSET,
       FUNC_ENTRY, FUNC_OTHER, FUNC_SAMPLES, FUNC_CYCLES, FUNC_INSTRUCTIONS, FUNC_EVENTS };
static const char *const function_fields[] = {
        [FUNC_ROW] = BF_FUNCTION_ROW, [FUNC_JOB] = BF_FUNCTION_JOB, [FUNC_STEP] = BF_FUNCTION_STEP, [FUNC_OBJECT] = BF_FUNCTION_OBJECT,
        [FUNC_BUILD_ID] = BF_FUNCTION_BUILD_ID, [FUNC_PHASE] = BF_FUNCTION_PHASE,
        [FUNC_FUNCTION] = BF_FUNCTION_FUNCTION, [FUNC_OFFSET] = BF_FUNCTION_OFFSET, [FUNC_ENTRY] = BF_FUNCTION_ENTRY, [FUNC_OTHER] = BF_FUNCTION_OTHER,
        [FUNC_SAMPLES] = BF_FUNCTION_SAMPLES, [FUNC_CYCLES] = BF_CYCLES, [FUNC_INSTRUCTIONS] = BF_INSTRUCTIONS,
        [FUNC_EVENTS] = BF_EVENTS,
};

/* Exactly one of a name, a file offset (unnamed: then the build-id that
 * names it later) and other. An offset is a 4 KiB page's, or with entry
 * the exact start of a function (lmkd found it in the unwind table). */
static int check_function_kind(const BatchFunction *fn, Where w, BatchError *err) {
        if (fn->entry && fn->offset == BATCH_NULL)
                return field_fail(err, -EINVAL, w, BF_FUNCTION_ENTRY, "needs an offset");
        if (fn->function && (fn->offset != BATCH_NULL || fn->other))
                return field_fail(err, -EINVAL, w, fn->other ? BF_FUNCTION_OTHER : BF_FUNCTION_OFFSET,
                                  "must be %s with a function's name", fn->other ? "false" : "null");
        if (fn->offset != BATCH_NULL && fn->other)
                return field_fail(err, -EINVAL, w, BF_FUNCTION_OFFSET, "must be null in other functions");
        if (!fn->function && fn->offset == BATCH_NULL && !fn->other)
                return field_fail(err, -EINVAL, w, BF_FUNCTION_FUNCTION, "needs a name, an offset or other: true");
        if (fn->offset != BATCH_NULL && !fn->entry && fn->offset % BATCH_FUNCTION_PAGE != 0)
                return field_fail(err, -EINVAL, w, BF_FUNCTION_OFFSET,
                                  "must be a multiple of %d unless entry is true", BATCH_FUNCTION_PAGE);
        if (fn->offset != BATCH_NULL && !*fn->build_id)
                return field_fail(err, -EINVAL, w, BF_FUNCTION_BUILD_ID,
                                  "is needed with an offset: it names the function later");
        return 0;
}

/* Version 2: an entry names its (job, step, object, phase) and build as
 * rows[] do. */
static int function_row_v2(const Fields *f, Where w, BatchFunction *fn, BatchError *err) {
        int r;

        if (field_has(f, FUNC_ROW))
                return field_fail(err, -EINVAL, w, BF_FUNCTION_ROW, "is version 3's: this batch is version 2");
        if ((r = field_string(f, FUNC_JOB, w, NULLABLE | IDENT, 1, MAX_ID, &fn->job, err)) < 0 ||
            (r = field_string(f, FUNC_STEP, w, NULLABLE | IDENT, 1, MAX_ID, &fn->step, err)) < 0 ||
            (r = field_string(f, FUNC_OBJECT, w, REQUIRED, 1, MAX_OBJECT, &fn->object, err)) < 0 ||
            (r = field_string(f, FUNC_BUILD_ID, w, NULLABLE | IDENT, 0, MAX_BUILD_ID, &fn->build_id, err)) < 0 ||
            (r = field_string(f, FUNC_PHASE, w, NULLABLE, 0, MAX_PHASE, &fn->phase, err)) < 0)
                return r;
        return 0;
}

/* Version 3: an entry names a rows[] entry by index, whose (job, step,
 * object, phase) and build it takes, instead of repeating the five
 * strings (two thirds of a version 2 entry's bytes). The strings may not
 * be given as well: one way to say it. A build_id null is "no build", an
 * "other" entry over several builds of the path; absent, the row's. */
static int function_row_v3(const Batch *b, const Fields *f, Where w, BatchFunction *fn, BatchError *err) {
        static const unsigned given_by_row[] = { FUNC_JOB, FUNC_STEP, FUNC_OBJECT, FUNC_PHASE };
        const BatchRow *row;
        int64_t i;
        int r;

        if (b->n_rows == 0)
                return field_fail(err, -EINVAL, w, BF_FUNCTION_ROW, "names a row, and rows[] is empty");
        r = field_int(f, FUNC_ROW, w, REQUIRED, 0, (int64_t) b->n_rows - 1, &i, err);
        if (r < 0)
                return r;
        for (size_t k = 0; k < ELEMENTSOF(given_by_row); k++)
                if (f->v[given_by_row[k]])
                        return field_fail(err, -EINVAL, w, f->names[given_by_row[k]],
                                          "is given by row in version 3: leave it out");
        if (f->v[FUNC_BUILD_ID] && !json_is_type(f->v[FUNC_BUILD_ID], JSON_NULL))
                return field_fail(err, -EINVAL, w, BF_FUNCTION_BUILD_ID,
                                  "must be null or absent in version 3 (absent: the row's)");
        row = &b->rows[i];
        fn->job = row->job;
        fn->step = row->step;
        fn->object = row->object;
        fn->phase = row->phase;
        fn->build_id = f->v[FUNC_BUILD_ID] ? "" : row->build_id;
        return 0;
}

/* functions[] (versions 2 and 3): what the rows' samples of each (job, step,
 * object, phase) ran, function by function. Each breaks down samples of
 * rows[], so its key must be in rows[] (with its build_id, when it names
 * one), of an executable or a library, and the functions of a key may not
 * hold more samples than its rows. Their counters are checked like the
 * rows'. */
static bool same_job(const char *a, const char *b) {
        return a && b && streq(a, b);
}

/* A job whose user opted out (sbatch --lmk=off) has nothing but its CPU
 * time and samples: a row, marker, rank or function of it would store
 * what the user asked lmk not to keep. */
static int check_opted_out(const Batch *b, BatchError *err) {
        for (size_t i = 0; i < b->n_jobs; i++) {
                const char *job = b->jobs[i].job;

                if (!b->jobs[i].opted_out)
                        continue;
                for (size_t k = 0; k < b->n_rows; k++)
                        if (same_job(b->rows[k].job, job))
                                return field_fail(err, -EINVAL, AT(BF_ROWS, k), "job",
                                                  "is job %s, which opted out (jobs[%zu].opted_out)", job, i);
                for (size_t k = 0; k < b->n_markers; k++)
                        if (same_job(b->markers[k].job, job))
                                return field_fail(err, -EINVAL, AT(BF_MARKERS, k), "job",
                                                  "is job %s, which opted out (jobs[%zu].opted_out)", job, i);
                for (size_t k = 0; k < b->n_ranks; k++)
                        if (same_job(b->ranks[k].job, job))
                                return field_fail(err, -EINVAL, AT(BF_RANKS, k), "job",
                                                  "is job %s, which opted out (jobs[%zu].opted_out)", job, i);
                for (size_t k = 0; k < b->n_functions; k++)
                        if (same_job(b->functions[k].job, job))
                                return field_fail(err, -EINVAL, AT(BF_FUNCTIONS, k), "job",
                                                  "is job %s, which opted out (jobs[%zu].opted_out)", job, i);
        }
        return 0;
}

static int parse_functions(const Fields *top, Arena *arena, Batch *b, BatchError *err) {
        RowGroup *groups = NULL, *g = NULL;
        RowKey *keys = NULL;
        size_t n_groups = 0;
        const JsonValue *a;
        int r;

        /* a version 1 batch knows no functions[]: an unknown member */
        if (b->version < 2)
                return 0;
        r = field_array(top, TOP_FUNCTIONS, TOP, false, BATCH_MAX_FUNCTIONS, &a, &b->n_functions, err);
        if (r < 0 || b->n_functions == 0)
                return r;
        b->functions = arena_calloc(arena, b->n_functions, sizeof(BatchFunction));
        if (!b->functions)
                return -ENOMEM;
        r = row_groups(arena, b, &keys, &groups, &n_groups);
        if (r < 0)
                return r;
        for (size_t i = 0; i < b->n_functions; i++) {
                const JsonValue *o = &a->elements[i];
                BatchFunction *fn = &b->functions[i];
                Where w = AT(BF_FUNCTIONS, i);
                const RowKey *row;
                RowKey key;
                Fields f;

                if (!json_is_type(o, JSON_OBJECT))
                        return field_fail(err, -EINVAL, w, NULL, "must be an object");
                BIND(o, function_fields, &f);
                r = b->version >= 3 ? function_row_v3(b, &f, w, fn, err) : function_row_v2(&f, w, fn, err);
                if (r < 0)
                        return r;
                if ((r = field_string(&f, FUNC_FUNCTION, w, NULLABLE | IDENT, 1, BATCH_MAX_FUNCTION_NAME,
                                      &fn->function, err)) < 0 ||
                    (r = field_int(&f, FUNC_OFFSET, w, NULLABLE, 0, (int64_t) BATCH_MAX_COUNTER, &fn->offset,
                                   err)) < 0 ||
                    (r = field_bool(&f, FUNC_ENTRY, w, &fn->entry, err)) < 0 ||
                    (r = field_bool(&f, FUNC_OTHER, w, &fn->other, err)) < 0 ||
                    (r = field_int(&f, FUNC_SAMPLES, w, REQUIRED, 0, b->limits.samples, &fn->samples, err)) < 0 ||
                    (r = field_int(&f, FUNC_CYCLES, w, NULLABLE, 0, b->limits.cycles, &fn->cycles, err)) < 0 ||
                    (r = field_int(&f, FUNC_INSTRUCTIONS, w, NULLABLE, 0, b->limits.instructions,
                                   &fn->instructions, err)) < 0)
                        return r;
                if (field_has(&f, FUNC_EVENTS) && !b->function_events &&
                    !(b->function_events = arena_calloc(arena, b->n_functions, sizeof(BatchEvents))))
                        return -ENOMEM;
                r = parse_events(b, f.v[FUNC_EVENTS], w, b->limits.events,
                                 b->function_events ? &b->function_events[i] : NULL, &fn->events, err);
                if (r < 0)
                        return r;
                fn->step = fn->step ?: "";
                fn->build_id = fn->build_id ?: "";
                fn->phase = fn->phase ?: "";
                if (fn->build_id[strspn(fn->build_id, "0123456789abcdef")])
                        return field_fail(err, -EINVAL, w, BF_FUNCTION_BUILD_ID, "must be lower-case hex");
                r = check_function_kind(fn, w, err);
                if (r < 0)
                        return r;

                /* its rows: of its (job, step, object, phase), and of its
                 * build where it names one (an "other" entry over several
                 * builds of a path names none) */
                key = (RowKey) { fn->job, fn->step, fn->object, fn->phase, fn->build_id };
                /* lmkd writes a group's functions one after the other */
                if (!g || group_compare(&key, &g->key) != 0)
                        g = bsearch(&key, groups, n_groups, sizeof(RowGroup), row_group_find);
                if (!g)
                        return field_fail(err, -EINVAL, w, NULL,
                                          "no rows[] entry has its job, step, object and phase");
                row = *fn->build_id ? bsearch(&key, keys + g->first, g->n, sizeof(RowKey), row_build_find) : NULL;
                if (*fn->build_id && !row)
                        return field_fail(err, -EINVAL, w, BF_FUNCTION_BUILD_ID,
                                          "is not the build_id of a rows[] entry of its job, step, object and phase");
                /* bsearch() finds one of the build's rows; the first is the one sorted first */
                while (row && row > keys + g->first && !strcmp(row[-1].build_id, fn->build_id))
                        row--;
                fn->row = row ? row->row : g->key.row;
                fn->kind = b->rows[fn->row].kind;
                if (fn->kind != CODE_EXE && fn->kind != CODE_LIB)
                        return field_fail(err, -EINVAL, w, BF_FUNCTION_OBJECT,
                                          "is of kind %s: only executables and libraries have functions",
                                          code_kind_to_string(fn->kind));
                if (__builtin_add_overflow(g->function_samples, fn->samples, &g->function_samples) ||
                    g->function_samples > g->samples)
                        return field_fail(err, -EINVAL, w, BF_FUNCTION_SAMPLES,
                                          "its functions hold more samples than the %" PRId64
                                          " of their rows", g->samples);
                if (!add_sum(&b->total_function_cycles, fn->cycles))
                        return field_fail(err, -EINVAL, w, BF_CYCLES,
                                          "the batch's functions' cycles add up to more than %" PRId64, INT64_MAX);
                if (!add_sum(&b->total_function_instructions, fn->instructions))
                        return field_fail(err, -EINVAL, w, BF_INSTRUCTIONS,
                                          "the batch's functions' instructions add up to more than %" PRId64,
                                          INT64_MAX);
                for (size_t e = 0; fn->events && e < BATCH_MAX_ROLES; e++)
                        if (!add_sum(&b->total_function_events[e], fn->events->count[e]))
                                return field_fail(err, -EINVAL, w, BF_EVENTS,
                                                  "the batch's functions' %s add up to more than %" PRId64,
                                                  b->roles[e], INT64_MAX);
        }
        return 0;
}

Batch *batch_free(Batch *b) {
        /* b and everything it points to are in its arena */
        if (b)
                arena_free(b->memory);
        return NULL;
}

void batch_digest(const char *data, size_t size, uint8_t ret[static BATCH_DIGEST_SIZE]) {
        struct sha256_ctx ctx;

        sha256_init(&ctx);
        sha256_update(&ctx, size, (const uint8_t *) data);
        sha256_digest(&ctx, BATCH_DIGEST_SIZE, ret);
}

int batch_parse(const char *data, size_t size, Batch **ret, BatchError *err) {
        _cleanup_(arena_freep) Arena *arena = NULL;
        const JsonValue *root;
        JsonError jerr;
        Fields top;
        Batch *b;
        int r;

        *err = (BatchError) {};
        if (size > INT32_MAX)
                return field_fail(err, -EBADMSG, TOP, "", "body too large to parse");
        /* The text, its tree and the Batch fit in about three times the
         * text's size; larger batches take a few more blocks. */
        arena = arena_new(size / 2 * 7 + 16384);
        if (!arena)
                return -ENOMEM;
        r = json_parse(arena, data, size, BATCH_JSON_DEPTH, &root, &jerr);
        if (r == -EBADMSG) {
                if (jerr.offset == SIZE_MAX)
                        return field_fail(err, -EBADMSG, TOP, "", "invalid JSON: %s", jerr.reason);
                return field_fail(err, -EBADMSG, TOP, "", "invalid JSON at byte %zu: %s", jerr.offset, jerr.reason);
        }
        if (r < 0)
                return r;
        /* json-c gave no object for null and the store took that for a
         * failure */
        if (json_is_type(root, JSON_NULL))
                return field_fail(err, -EBADMSG, TOP, "", "invalid JSON: the text is null, not a batch");

        b = arena_calloc(arena, 1, sizeof(Batch));
        if (!b)
                return -ENOMEM;
        batch_digest(data, size, b->digest);
        if (!json_is_type(root, JSON_OBJECT))
                return field_fail(err, -EINVAL, TOP, "", "a batch must be a JSON object");
        BIND(root, top_fields, &top);

        if ((r = parse_header(&top, arena, b, err)) < 0 ||
            (r = parse_counters(&top, arena, b, err)) < 0 ||
            (r = parse_energy(&top, arena, b, err)) < 0 ||
            (r = parse_jobs(&top, arena, b, err)) < 0 ||
            (r = parse_rows(&top, arena, b, err)) < 0 ||
            (r = parse_markers(&top, arena, b, err)) < 0 ||
            (r = parse_ranks(&top, arena, b, err)) < 0 ||
            (r = parse_functions(&top, arena, b, err)) < 0 ||
            (r = batch_parse_inventory(top.v[TOP_INVENTORY], arena, b, err)) < 0 ||
            (r = check_opted_out(b, err)) < 0)
                return r;

        b->memory = TAKE_PTR(arena);
        *ret = b;
        return 0;
}
