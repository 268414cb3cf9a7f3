/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lmk-store's batch parser as it was on json-c's DOM, until the streaming
 * parser (store/batch/batch-parse.c, store/batch/json-tree.c) replaced it. Kept only as
 * a referee: fuzz-ingest-differential feeds both the same input and wants
 * the same answer, and bench/store/parse-bench times both. Fix nothing
 * here that the store's parser does not also change. */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "batch-parse-jsonc.h"
#include "utf8.h"


/* Where in the batch we are, so errors can name the field without building a
 * path string for every one of 100,000 valid rows. */
typedef struct Where {
        const char *parent; /* "batch", "rows", ... or NULL at top level */
        long index;         /* element of the parent array, or -1 */
} Where;

#define TOP ((Where) { NULL, -1 })
#define IN(p) ((Where) { (p), -1 })
#define AT(p, i) ((Where) { (p), (long) (i) })

_printf_(5, 6)
static int fail(BatchError *err, int r, Where w, const char *key, const char *fmt, ...) {
        va_list ap;

        if (!w.parent)
                snprintf(err->field, sizeof(err->field), "%s", key);
        else if (w.index < 0)
                snprintf(err->field, sizeof(err->field), "%s%s%s", w.parent, key ? "." : "", key ?: "");
        else
                snprintf(err->field, sizeof(err->field), "%s[%ld]%s%s", w.parent, w.index, key ? "." : "", key ?: "");
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof(err->message), fmt, ap);
        va_end(ap);
        return r;
}

static int get_member(json_object *o, Where w, const char *key, bool required,
                      json_object **ret, bool *ret_present, BatchError *err) {
        json_object *v = NULL;

        if (!json_object_object_get_ex(o, key, &v)) {
                if (required)
                        return fail(err, -EINVAL, w, key, "missing");
                *ret_present = false;
                *ret = NULL;
                return 0;
        }
        *ret_present = true;
        *ret = v;
        return 0;
}

enum {
        OPTIONAL = 0,
        REQUIRED = 1 << 0,
        NULLABLE = 1 << 1,
        /* An identifier (node, job, user, ...): no control characters. Free
         * text (paths, phases, job names, comm) may hold them: JSON escapes
         * them on the way out, and lmkd cannot choose what processes call
         * themselves. */
        IDENT = 1 << 2,
};

/* A string of len bytes that the store can keep and serve back as valid
 * JSON text: strict UTF-8 (common/utf8.h), no NUL (C strings end there),
 * and for identifiers no control characters. */
static int check_text(const char *s, size_t len, unsigned flags, Where w, const char *key, BatchError *err) {
        long bad = utf8_find_invalid(s, len);

        if (bad >= 0)
                return fail(err, -EINVAL, w, key, "is not valid UTF-8 at byte %ld", bad);
        if (memchr(s, 0, len))
                return fail(err, -EINVAL, w, key, "must not contain NUL bytes (at byte %zu)",
                            (size_t) ((const char *) memchr(s, 0, len) - s));
        if ((flags & IDENT) && string_has_control(s, len)) {
                size_t i = 0;

                while (i < len && (unsigned char) s[i] >= 0x20 && s[i] != 0x7f)
                        i++;
                return fail(err, -EINVAL, w, key, "must not contain control characters (at byte %zu)", i);
        }
        return 0;
}

/* A string member of min..max bytes, checked by check_text(). Absent or null
 * gives NULL where the flags allow it. */
static int get_string(json_object *o, Where w, const char *key, unsigned flags,
                      size_t min, size_t max, const char **ret, BatchError *err) {
        json_object *v = NULL;
        bool present;
        const char *s;
        int r, len;

        r = get_member(o, w, key, flags & REQUIRED, &v, &present, err);
        if (r < 0)
                return r;
        if (!present) {
                *ret = NULL;
                return 0;
        }
        if (json_object_is_type(v, json_type_null)) {
                if (!(flags & NULLABLE))
                        return fail(err, -EINVAL, w, key, "must be a string, not null");
                *ret = NULL;
                return 0;
        }
        if (!json_object_is_type(v, json_type_string))
                return fail(err, -EINVAL, w, key, "must be a string");
        s = json_object_get_string(v);
        len = json_object_get_string_len(v);
        if ((size_t) len < min || (size_t) len > max)
                return fail(err, -EINVAL, w, key, "must be %zu to %zu bytes long, is %d", min, max, len);
        r = check_text(s, (size_t) len, flags, w, key, err);
        if (r < 0)
                return r;
        *ret = s;
        return 0;
}

/* An integer member in min..max; absent or null gives BATCH_NULL where the
 * flags allow it. Numbers with a fraction or exponent are not integers. */
static int get_int(json_object *o, Where w, const char *key, unsigned flags,
                   int64_t min, int64_t max, int64_t *ret, BatchError *err) {
        json_object *v = NULL;
        bool present;
        int64_t i;
        int r;

        r = get_member(o, w, key, flags & REQUIRED, &v, &present, err);
        if (r < 0)
                return r;
        if (!present || json_object_is_type(v, json_type_null)) {
                if (present && !(flags & NULLABLE))
                        return fail(err, -EINVAL, w, key, "must be an integer, not null");
                *ret = BATCH_NULL;
                return 0;
        }
        if (!json_object_is_type(v, json_type_int))
                return fail(err, -EINVAL, w, key, "must be an integer");
        /* json-c saturates out-of-range literals at INT64_MIN/INT64_MAX and
         * reads values above INT64_MAX as INT64_MAX: every max we pass is
         * below that, so both land outside the range. */
        i = json_object_get_int64(v);
        if (i < min || i > max)
                return fail(err, -EINVAL, w, key, "must be between %" PRId64 " and %" PRId64, min, max);
        *ret = i;
        return 0;
}

static int get_double(json_object *o, Where w, const char *key, unsigned flags,
                      double min, double max, double *ret, BatchError *err) {
        json_object *v = NULL;
        bool present;
        double d;
        int r;

        r = get_member(o, w, key, flags & REQUIRED, &v, &present, err);
        if (r < 0)
                return r;
        if (!present || ((flags & NULLABLE) && json_object_is_type(v, json_type_null))) {
                *ret = NAN;
                return 0;
        }
        if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
                return fail(err, -EINVAL, w, key, "must be a number");
        d = json_object_get_double(v);
        if (!isfinite(d) || d < min || d > max)
                return fail(err, -EINVAL, w, key, "must be a number between %g and %g", min, max);
        *ret = d;
        return 0;
}

static int get_bool(json_object *o, Where w, const char *key, bool *ret, BatchError *err) {
        json_object *v = NULL;
        bool present;
        int r;

        r = get_member(o, w, key, false, &v, &present, err);
        if (r < 0)
                return r;
        if (!present || json_object_is_type(v, json_type_null)) {
                *ret = false;
                return 0;
        }
        if (!json_object_is_type(v, json_type_boolean))
                return fail(err, -EINVAL, w, key, "must be true or false");
        *ret = json_object_get_boolean(v);
        return 0;
}

static int get_object(json_object *o, Where w, const char *key, bool required,
                      json_object **ret, BatchError *err) {
        json_object *v = NULL;
        bool present;
        int r;

        r = get_member(o, w, key, required, &v, &present, err);
        if (r < 0)
                return r;
        if (present && !json_object_is_type(v, json_type_object))
                return fail(err, -EINVAL, w, key, "must be an object");
        *ret = present ? v : NULL;
        return 0;
}

static int get_array(json_object *o, const char *key, bool required, size_t max,
                     json_object **ret, size_t *ret_n, BatchError *err) {
        json_object *v = NULL;
        bool present;
        size_t n;
        int r;

        r = get_member(o, TOP, key, required, &v, &present, err);
        if (r < 0)
                return r;
        if (!present || json_object_is_type(v, json_type_null)) {
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        if (!json_object_is_type(v, json_type_array))
                return fail(err, -EINVAL, TOP, key, "must be an array");
        n = json_object_array_length(v);
        if (n > max)
                return fail(err, -E2BIG, TOP, key, "has %zu elements, at most %zu are allowed", n, max);
        *ret = v;
        *ret_n = n;
        return 0;
}

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



/* Adds v (BATCH_NULL: not reported) to a batch total; false when the total
 * would no longer fit. */
static bool add_sum(int64_t *sum, int64_t v) {
        if (v == BATCH_NULL)
                return true;
        return !__builtin_add_overflow(*sum, v, sum);
}

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

static int parse_installed(json_object *node, Batch *b, BatchError *err) {
        json_object *a;
        size_t n;

        if (!json_object_object_get_ex(node, "installed", &a) || json_object_is_type(a, json_type_null))
                return 0;
        if (!json_object_is_type(a, json_type_array))
                return fail(err, -EINVAL, IN("node"), "installed", "must be an array");
        n = json_object_array_length(a);
        if (n > BATCH_MAX_INSTALLED)
                return fail(err, -EINVAL, IN("node"), "installed", "has %zu elements, at most %u are allowed",
                            n, BATCH_MAX_INSTALLED);
        if (n == 0) {
                b->has_installed = true;
                return 0;
        }
        b->installed = calloc(n, sizeof(BatchFamily));
        if (!b->installed)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *o = json_object_array_get_idx(a, i);
                Where w = AT("node.installed", i);
                BatchFamily *f = &b->installed[i];
                int r;

                if (!json_object_is_type(o, json_type_object))
                        return fail(err, -EINVAL, w, NULL, "must be an object");
                if ((r = get_string(o, w, "purpose", REQUIRED | IDENT, 1, BATCH_MAX_FAMILY_NAME, &f->purpose, err)) < 0 ||
                    (r = get_string(o, w, "family", REQUIRED | IDENT, 1, BATCH_MAX_FAMILY_NAME, &f->family, err)) < 0)
                        return r;
                if (!family_name_ok(f->purpose))
                        return fail(err, -EINVAL, w, "purpose", "must be 1-%u characters of a-z 0-9 _ . + -",
                                    BATCH_MAX_FAMILY_NAME);
                if (!family_name_ok(f->family))
                        return fail(err, -EINVAL, w, "family", "must be 1-%u characters of a-z 0-9 _ . + -",
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

static int parse_gpus(json_object *t, BatchNodeType *nt, BatchError *err) {
        json_object *a;
        size_t n;
        int r;

        if (!json_object_object_get_ex(t, "gpus", &a) || json_object_is_type(a, json_type_null))
                return 0;
        if (!json_object_is_type(a, json_type_array))
                return fail(err, -EINVAL, IN("node.type"), "gpus", "must be an array");
        n = json_object_array_length(a);
        if (n > BATCH_MAX_GPU_MODELS)
                return fail(err, -EINVAL, IN("node.type"), "gpus", "has %zu elements, at most %u are allowed", n,
                            BATCH_MAX_GPU_MODELS);
        if (n == 0)
                return 0;
        nt->gpus = calloc(n, sizeof(BatchGpu));
        if (!nt->gpus)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *o = json_object_array_get_idx(a, i);
                Where w = AT("node.type.gpus", i);
                BatchGpu *g = &nt->gpus[i];

                if (!json_object_is_type(o, json_type_object))
                        return fail(err, -EINVAL, w, NULL, "must be an object");
                if ((r = get_string(o, w, "vendor", REQUIRED | IDENT, 1, 32, &g->vendor, err)) < 0 ||
                    (r = get_string(o, w, "vendor_id", REQUIRED | IDENT, 4, 4, &g->vendor_id, err)) < 0 ||
                    (r = get_string(o, w, "device_id", NULLABLE | IDENT, 4, 4, &g->device_id, err)) < 0 ||
                    (r = get_string(o, w, "name", NULLABLE | IDENT, 1, BATCH_MAX_NODE_TEXT, &g->name, err)) < 0 ||
                    (r = get_int(o, w, "count", REQUIRED, 1, 65536, &g->count, err)) < 0)
                        return r;
                if (!hex4(g->vendor_id))
                        return fail(err, -EINVAL, w, "vendor_id", "must be 4 lower-case hex digits");
                if (g->device_id && !hex4(g->device_id))
                        return fail(err, -EINVAL, w, "device_id", "must be 4 lower-case hex digits");
        }
        nt->n_gpus = n;
        return 0;
}

static int parse_node_type(json_object *node, Batch *b, BatchError *err) {
        json_object *t;
        BatchNodeType *nt;
        Where w = IN("node.type");
        int r;

        if ((r = get_object(node, IN("node"), "type", false, &t, err)) < 0 || !t)
                return r;
        nt = b->node_type = calloc(1, sizeof(BatchNodeType));
        if (!nt)
                return -ENOMEM;
        if ((r = get_string(t, w, "cpu_model", NULLABLE | IDENT, 1, BATCH_MAX_NODE_TEXT, &nt->cpu_model, err)) < 0 ||
            (r = get_int(t, w, "threads", NULLABLE, 1, 1 << 20, &nt->threads, err)) < 0 ||
            (r = get_int(t, w, "cores", NULLABLE, 1, nt->threads == BATCH_NULL ? 1 << 20 : nt->threads,
                         &nt->cores, err)) < 0 ||
            (r = get_int(t, w, "sockets", NULLABLE, 1, nt->cores == BATCH_NULL ? 1 << 20 : nt->cores,
                         &nt->sockets, err)) < 0 ||
            (r = get_int(t, w, "memory_bytes", NULLABLE, 1, (int64_t) BATCH_MAX_COUNTER, &nt->memory_bytes, err)) < 0 ||
            (r = get_int(t, w, "gpus_other", NULLABLE, 0, 1 << 20, &nt->gpus_other, err)) < 0 ||
            (r = get_string(t, w, "kernel", NULLABLE | IDENT, 1, 256, &nt->kernel, err)) < 0 ||
            (r = parse_gpus(t, nt, err)) < 0)
                return r;
        if (nt->gpus_other == BATCH_NULL)
                nt->gpus_other = 0;
        return 0;
}

static int parse_header(json_object *root, Batch *b, BatchError *err) {
        json_object *o;
        const char *format;
        int64_t version;
        int r;

        r = get_string(root, TOP, "format", REQUIRED, 0, 64, &format, err);
        if (r < 0)
                return r;
        if (!streq(format, LMK_BATCH_FORMAT))
                return fail(err, -EPROTONOSUPPORT, TOP, "format", "must be \"%s\"", LMK_BATCH_FORMAT);
        r = get_int(root, TOP, "version", REQUIRED, 0, INT32_MAX, &version, err);
        if (r < 0)
                return r;
        if (version != LMK_BATCH_VERSION)
                return fail(err, -EPROTONOSUPPORT, TOP, "version",
                            "version %" PRId64 " is not supported, this store knows version %d",
                            version, LMK_BATCH_VERSION);

        if ((r = get_object(root, TOP, "batch", true, &o, err)) < 0 ||
            (r = get_string(o, IN("batch"), "node", REQUIRED | IDENT, 1, MAX_NAME, &b->node, err)) < 0 ||
            (r = get_string(o, IN("batch"), "boot_id", REQUIRED | IDENT, 1, MAX_ID, &b->boot_id, err)) < 0 ||
            (r = get_string(o, IN("batch"), "spool", NULLABLE | IDENT, LMK_BATCH_SPOOL_ID_LEN, LMK_BATCH_SPOOL_ID_LEN,
                            &b->spool, err)) < 0 ||
            (r = get_int(o, IN("batch"), "seq", REQUIRED, 0, INT64_MAX - 1, &b->seq, err)) < 0)
                return r;
        for (const char *p = b->spool; p && *p; p++)
                if (!strchr("0123456789abcdef", *p))
                        return fail(err, -EINVAL, IN("batch"), "spool", "must be %u lower-case hex digits",
                                    LMK_BATCH_SPOOL_ID_LEN);

        if ((r = get_object(root, TOP, "node", true, &o, err)) < 0 ||
            (r = get_string(o, IN("node"), "hostname", NULLABLE | IDENT, 1, MAX_NAME, &b->hostname, err)) < 0 ||
            (r = get_int(o, IN("node"), "cpus", REQUIRED, 1, 1 << 20, &b->cpus, err)) < 0 ||
            (r = get_string(o, IN("node"), "cluster", NULLABLE | IDENT, 1, MAX_NAME, &b->cluster, err)) < 0 ||
            (r = parse_installed(o, b, err)) < 0 ||
            (r = parse_node_type(o, b, err)) < 0)
                return r;

        if ((r = get_object(root, TOP, "interval", true, &o, err)) < 0 ||
            (r = get_double(o, IN("interval"), "start", REQUIRED, TIME_MIN, TIME_MAX, &b->start, err)) < 0 ||
            (r = get_double(o, IN("interval"), "end", REQUIRED, TIME_MIN, TIME_MAX, &b->end, err)) < 0)
                return r;
        if (b->start > b->end)
                return fail(err, -EINVAL, IN("interval"), "end", "must not be before interval.start");
        if (b->end - b->start > BATCH_MAX_INTERVAL_S)
                return fail(err, -EINVAL, IN("interval"), "end",
                            "must be at most %g s after interval.start (lmkd pushes at least daily)",
                            BATCH_MAX_INTERVAL_S);

        if ((r = get_object(root, TOP, "sampling", true, &o, err)) < 0 ||
            (r = get_string(o, IN("sampling"), "event", REQUIRED | IDENT, 1, 64, &b->event, err)) < 0 ||
            (r = get_double(o, IN("sampling"), "frequency_hz", REQUIRED, BATCH_MIN_FREQUENCY_HZ,
                            BATCH_MAX_FREQUENCY_HZ, &b->frequency_hz, err)) < 0)
                return r;
        batch_limits(b, &b->limits);
        r = get_int(o, IN("sampling"), "samples_lost", OPTIONAL, 0, b->limits.samples, &b->samples_lost, err);
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


/* The index of a role, added to the batch's roles when new. */
static int role_slot(Batch *b, const char *role, Where w, const char *key, BatchError *err) {
        int i;

        if (!role_name_ok(role))
                return fail(err, -EINVAL, w, key, "event roles must be 1-%u characters of A-Z a-z 0-9 _ -",
                            BATCH_MAX_ROLE_NAME);
        i = batch_role_index(b, role);
        if (i >= 0)
                return i;
        if (b->n_roles == BATCH_MAX_ROLES)
                return fail(err, -EINVAL, w, key, "the batch names more than %u event roles", BATCH_MAX_ROLES);
        b->roles[b->n_roles] = role;
        return (int) b->n_roles++;
}

/* counters[]: which event fills which role. Optional; read before the
 * rows so that their events are checked against it. */
static int parse_counters(json_object *root, Batch *b, BatchError *err) {
        json_object *a;
        int r;

        r = get_array(root, "counters", false, BATCH_MAX_ROLES, &a, &b->n_counters, err);
        if (r < 0 || b->n_counters == 0)
                return r;
        b->counters = calloc(b->n_counters, sizeof(BatchCounter));
        if (!b->counters)
                return -ENOMEM;
        for (size_t i = 0; i < b->n_counters; i++) {
                json_object *o = json_object_array_get_idx(a, i);
                BatchCounter *c = &b->counters[i];
                Where w = AT("counters", i);

                if (!json_object_is_type(o, json_type_object))
                        return fail(err, -EINVAL, w, NULL, "must be an object");
                if ((r = get_string(o, w, "role", REQUIRED | IDENT, 1, BATCH_MAX_ROLE_NAME, &c->role, err)) < 0 ||
                    (r = get_string(o, w, "event", REQUIRED | IDENT, 1, 127, &c->event, err)) < 0 ||
                    (r = get_string(o, w, "source", NULLABLE | IDENT, 1, 16, &c->source, err)) < 0 ||
                    (r = get_bool(o, w, "available", &c->available, err)) < 0 ||
                    (r = get_string(o, w, "error", NULLABLE | IDENT, 1, 512, &c->error, err)) < 0)
                        return r;
                if (batch_role_index(b, c->role) >= 0)
                        return fail(err, -EINVAL, w, "role", "names the role %s a second time", c->role);
                r = role_slot(b, c->role, w, "role", err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static bool is_ipc_role(const char *role) {
        return streq(role, "cycles") || streq(role, "instructions");
}

/* "events": {role: count or null} beyond cycles and instructions, which
 * have fields of their own. With counters[], only their roles. */
static int parse_events(Batch *b, json_object *o, Where w, int64_t max, BatchEvents *pool, BatchEvents **ret,
                        BatchError *err) {
        json_object *e;
        BatchEvents *ev;

        if (!json_object_object_get_ex(o, "events", &e) || json_object_is_type(e, json_type_null)) {
                *ret = NULL;
                return 0;
        }
        if (!json_object_is_type(e, json_type_object))
                return fail(err, -EINVAL, w, "events", "must be an object");
        if (json_object_object_length(e) > (int) BATCH_MAX_ROLES)
                return fail(err, -EINVAL, w, "events", "has more than %u roles", BATCH_MAX_ROLES);
        ev = pool;
        for (size_t i = 0; i < BATCH_MAX_ROLES; i++)
                ev->count[i] = BATCH_NULL;
        json_object_object_foreach(e, key, val) {
                int64_t v;
                int k;

                if (is_ipc_role(key))
                        return fail(err, -EINVAL, w, "events", "%s has a field of its own, not an event", key);
                if (b->n_counters > 0 && batch_role_index(b, key) < 0)
                        return fail(err, -EINVAL, w, "events", "names a role that counters[] does not have");
                k = role_slot(b, key, w, "events", err);
                if (k < 0)
                        return k;
                if (json_object_is_type(val, json_type_null))
                        continue;
                if (!json_object_is_type(val, json_type_int))
                        return fail(err, -EINVAL, w, "events", "%s must be an integer or null", key);
                v = json_object_get_int64(val);
                if (v < 0 || v > max)
                        return fail(err, -EINVAL, w, "events", "%s must be between 0 and %" PRId64, key, max);
                ev->count[k] = v;
        }
        *ret = ev;
        return 0;
}

/* A row's "burst": its burst samples, their windows' length, and events
 * per second by role (cycles and instructions too); "ipc" is derived. */
static int parse_burst(Batch *b, json_object *o, Where w, BatchRow *row, BatchBurst *pool, BatchError *err) {
        static const double max_rate = BATCH_MAX_CYCLES_PER_CPU_SECOND * BATCH_MAX_EVENTS_PER_CYCLE;
        json_object *bo, *rates;
        BatchBurst *bu = pool;
        char parent[48];
        Where bw;
        int r;

        if ((r = get_object(o, w, "burst", false, &bo, err)) < 0 || !bo)
                return r;
        snprintf(parent, sizeof(parent), "%s[%ld].burst", w.parent, w.index);
        bw = IN(parent);
        if ((r = get_int(bo, bw, "samples", REQUIRED, 1, b->limits.burst_samples, &bu->samples, err)) < 0 ||
            (r = get_int(bo, bw, "window_ns", REQUIRED, 0, b->limits.cpu_time_ns, &bu->window_ns, err)) < 0 ||
            (r = get_object(bo, bw, "per_second", true, &rates, err)) < 0)
                return r;
        if (json_object_object_length(rates) > (int) BATCH_MAX_ROLES)
                return fail(err, -EINVAL, bw, "per_second", "has more than %u roles", BATCH_MAX_ROLES);
        for (size_t i = 0; i < BATCH_MAX_ROLES; i++)
                bu->per_second[i] = bu->counts[i] = NAN;
        json_object_object_foreach(rates, key, val) {
                double v;
                int k;

                if (b->n_counters > 0 && batch_role_index(b, key) < 0)
                        return fail(err, -EINVAL, bw, "per_second", "names a role that counters[] does not have");
                k = role_slot(b, key, bw, "per_second", err);
                if (k < 0)
                        return k;
                if (json_object_is_type(val, json_type_null))
                        continue;
                if (!json_object_is_type(val, json_type_double) && !json_object_is_type(val, json_type_int))
                        return fail(err, -EINVAL, bw, "per_second", "%s must be a number or null", key);
                v = json_object_get_double(val);
                if (!isfinite(v) || v < 0 || v > max_rate)
                        return fail(err, -EINVAL, bw, "per_second", "%s must be between 0 and %g", key, max_rate);
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

/* "energy": the node's energy in the interval, from RAPL (lmkd's
 * collectors/powercap.h): all zones, each zone, and the part while no job
 * ran there. Absent where the node has no energy counters. */
static int parse_energy(json_object *root, Batch *b, BatchError *err) {
        json_object *o, *a;
        BatchEnergy *e;
        double sum = 0;
        size_t n;
        int r;

        if (json_object_object_get_ex(root, "energy", &o) && json_object_is_type(o, json_type_null))
                return 0;
        if ((r = get_object(root, TOP, "energy", false, &o, err)) < 0 || !o)
                return r;
        e = b->energy = calloc(1, sizeof(BatchEnergy));
        if (!e)
                return -ENOMEM;
        if ((r = get_string(o, IN("energy"), "source", REQUIRED | IDENT, 1, 32, &e->source, err)) < 0 ||
            (r = get_double(o, IN("energy"), "joules", REQUIRED, 0, b->limits.joules, &e->joules, err)) < 0 ||
            (r = get_double(o, IN("energy"), "unattributed_joules", NULLABLE, 0, b->limits.joules,
                            &e->unattributed_joules, err)) < 0)
                return r;
        if (isnan(e->unattributed_joules))
                e->unattributed_joules = 0;
        if (!within_whole(e->unattributed_joules, e->joules))
                return fail(err, -EINVAL, IN("energy"), "unattributed_joules", "must not exceed energy.joules");
        if (!json_object_object_get_ex(o, "zones", &a) || json_object_is_type(a, json_type_null))
                return 0;
        if (!json_object_is_type(a, json_type_array))
                return fail(err, -EINVAL, IN("energy"), "zones", "must be an array");
        n = json_object_array_length(a);
        if (n > BATCH_MAX_ZONES)
                return fail(err, -EINVAL, IN("energy"), "zones", "has %zu elements, at most %u are allowed", n,
                            BATCH_MAX_ZONES);
        if (n == 0)
                return 0;
        e->zones = calloc(n, sizeof(BatchZone));
        if (!e->zones)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *z = json_object_array_get_idx(a, i);
                BatchZone *zone = &e->zones[i];
                Where w = AT("energy.zones", i);

                if (!json_object_is_type(z, json_type_object))
                        return fail(err, -EINVAL, w, NULL, "must be an object");
                if ((r = get_string(z, w, "zone", REQUIRED | IDENT, 1, 64, &zone->zone, err)) < 0 ||
                    (r = get_string(z, w, "kind", REQUIRED | IDENT, 1, 16, &zone->kind, err)) < 0 ||
                    (r = get_double(z, w, "joules", REQUIRED, 0, b->limits.joules, &zone->joules, err)) < 0)
                        return r;
                sum += zone->joules;
        }
        e->n_zones = n;
        if (!within_whole(sum, e->joules) || !within_whole(e->joules, sum))
                return fail(err, -EINVAL, IN("energy"), "joules", "must be the sum of energy.zones[].joules (%g)", sum);
        return 0;
}

static int parse_notes(json_object *o, Where w, BatchJob *j, BatchError *err) {
        size_t n = 0, bytes = 0;

        if (!o)
                return 0;
        if (json_object_object_length(o) > (int) BATCH_MAX_NOTES)
                return fail(err, -EINVAL, w, "notes", "has more than %u keys", BATCH_MAX_NOTES);
        j->notes = calloc(MAX(json_object_object_length(o), 1), sizeof(BatchNote));
        if (!j->notes)
                return -ENOMEM;
        json_object_object_foreach(o, key, val) {
                const char *s;
                int len, r;

                if (!json_object_is_type(val, json_type_string))
                        return fail(err, -EINVAL, w, "notes", "values must be strings");
                s = json_object_get_string(val);
                len = json_object_get_string_len(val);
                if (!*key)
                        return fail(err, -EINVAL, w, "notes", "keys must not be empty");
                r = check_text(key, strlen(key), IDENT, w, "notes", err);
                if (r < 0)
                        return r;
                r = check_text(s, (size_t) len, OPTIONAL, w, "notes", err);
                if (r < 0)
                        return r;
                bytes += strlen(key) + (size_t) len;
                if (bytes > BATCH_MAX_NOTES_BYTES)
                        return fail(err, -EINVAL, w, "notes", "holds more than %u bytes", BATCH_MAX_NOTES_BYTES);
                j->notes[n++] = (BatchNote) { key, s };
        }
        j->n_notes = n;
        return 0;
}

/* A member that is there and not null. */
static bool has_member(json_object *o, const char *key) {
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && !json_object_is_type(v, json_type_null);
}

static int parse_jobs(json_object *root, Batch *b, BatchError *err) {
        json_object *a;
        double energy = 0;
        int r;

        r = get_array(root, "jobs", false, BATCH_MAX_JOBS, &a, &b->n_jobs, err);
        if (r < 0 || b->n_jobs == 0)
                return r;
        b->jobs = calloc(b->n_jobs, sizeof(BatchJob));
        if (!b->jobs)
                return -ENOMEM;
        for (size_t i = 0; i < b->n_jobs; i++) {
                json_object *o = json_object_array_get_idx(a, i), *notes;
                BatchJob *j = &b->jobs[i];
                Where w = AT("jobs", i);

                if (!json_object_is_type(o, json_type_object))
                        return fail(err, -EINVAL, w, NULL, "must be an object");
                if ((r = get_string(o, w, "job", REQUIRED | IDENT, 1, MAX_ID, &j->job, err)) < 0 ||
                    (r = get_string(o, w, "cluster", NULLABLE | IDENT, 1, MAX_NAME, &j->cluster, err)) < 0 ||
                    (r = get_string(o, w, "user", NULLABLE | IDENT, 1, MAX_NAME, &j->user, err)) < 0 ||
                    (r = get_string(o, w, "account", NULLABLE | IDENT, 1, MAX_NAME, &j->account, err)) < 0 ||
                    (r = get_string(o, w, "partition", NULLABLE | IDENT, 1, MAX_NAME, &j->partition, err)) < 0 ||
                    (r = get_string(o, w, "name", NULLABLE, 0, MAX_NAME, &j->name, err)) < 0 ||
                    (r = get_int(o, w, "nodes", NULLABLE, 1, 1 << 24, &j->nodes, err)) < 0 ||
                    (r = get_int(o, w, "tasks", NULLABLE, 0, 1 << 30, &j->tasks, err)) < 0 ||
                    (r = get_int(o, w, "cpus_allocated", NULLABLE, 1, b->cpus, &j->cpus_allocated, err)) < 0 ||
                    (r = get_double(o, w, "first_seen", OPTIONAL, TIME_MIN, TIME_MAX, &j->first_seen, err)) < 0 ||
                    (r = get_double(o, w, "last_seen", OPTIONAL, TIME_MIN, TIME_MAX, &j->last_seen, err)) < 0 ||
                    (r = get_bool(o, w, "ended", &j->ended, err)) < 0 ||
                    (r = get_int(o, w, "cpu_time_ns", NULLABLE, 0, b->limits.cpu_time_ns, &j->cpu_time_ns, err)) < 0 ||
                    (r = get_int(o, w, "cycles", NULLABLE, 0, b->limits.cycles, &j->cycles, err)) < 0 ||
                    (r = get_int(o, w, "instructions", NULLABLE, 0, b->limits.instructions, &j->instructions, err)) < 0 ||
                    (r = get_double(o, w, "energy_joules", NULLABLE, 0, b->limits.joules, &j->energy_joules, err)) < 0 ||
                    (r = get_double(o, w, "energy_alone_joules", NULLABLE, 0, b->limits.joules,
                                    &j->energy_alone_joules, err)) < 0)
                        return r;
                if (has_member(o, "events") && !b->job_events &&
                    !(b->job_events = calloc(b->n_jobs, sizeof(BatchEvents))))
                        return -ENOMEM;
                r = parse_events(b, o, w, b->limits.events, b->job_events ? &b->job_events[i] : NULL, &j->events, err);
                if (r < 0)
                        return r;
                if (!isnan(j->energy_joules) && !b->energy)
                        return fail(err, -EINVAL, w, "energy_joules", "needs the node's energy (energy.joules)");
                if (!isnan(j->energy_alone_joules) &&
                    (isnan(j->energy_joules) || !within_whole(j->energy_alone_joules, j->energy_joules)))
                        return fail(err, -EINVAL, w, "energy_alone_joules", "must not exceed energy_joules");
                if (!isnan(j->energy_joules))
                        energy += j->energy_joules;

                /* notes may be null like the other optional members */
                if (json_object_object_get_ex(o, "notes", &notes) && json_object_is_type(notes, json_type_null))
                        notes = NULL;
                else if ((r = get_object(o, w, "notes", false, &notes, err)) < 0)
                        return r;
                r = parse_notes(notes, w, j, err);
                if (r < 0)
                        return r;
        }
        /* the jobs' energy is the node's, split */
        if (b->energy && !within_whole(energy, b->energy->joules))
                return fail(err, -EINVAL, TOP, "jobs", "hold %g J, more than the node's %g J (energy.joules)",
                            energy, b->energy->joules);
        return 0;
}

static int parse_rows(json_object *root, Batch *b, BatchError *err) {
        json_object *a;
        int r;

        r = get_array(root, "rows", true, BATCH_MAX_ROWS, &a, &b->n_rows, err);
        if (r < 0 || b->n_rows == 0)
                return r;
        b->rows = calloc(b->n_rows, sizeof(BatchRow));
        if (!b->rows)
                return -ENOMEM;
        for (size_t i = 0; i < b->n_rows; i++) {
                json_object *o = json_object_array_get_idx(a, i);
                BatchRow *row = &b->rows[i];
                Where w = AT("rows", i);
                const char *kind;
                int k;

                if (!json_object_is_type(o, json_type_object))
                        return fail(err, -EINVAL, w, NULL, "must be an object");
                if ((r = get_string(o, w, "job", NULLABLE | IDENT, 1, MAX_ID, &row->job, err)) < 0 ||
                    (r = get_string(o, w, "step", NULLABLE | IDENT, 1, MAX_ID, &row->step, err)) < 0 ||
                    (r = get_string(o, w, "user", NULLABLE | IDENT, 1, MAX_NAME, &row->user, err)) < 0 ||
                    (r = get_string(o, w, "comm", NULLABLE, 0, MAX_COMM, &row->comm, err)) < 0 ||
                    (r = get_string(o, w, "object", REQUIRED, 1, MAX_OBJECT, &row->object, err)) < 0 ||
                    (r = get_string(o, w, "kind", REQUIRED | IDENT, 1, 16, &kind, err)) < 0 ||
                    (r = get_string(o, w, "build_id", NULLABLE | IDENT, 0, MAX_BUILD_ID, &row->build_id, err)) < 0 ||
                    (r = get_string(o, w, "phase", NULLABLE, 0, MAX_PHASE, &row->phase, err)) < 0 ||
                    (r = get_int(o, w, "samples", REQUIRED, 0, b->limits.samples, &row->samples, err)) < 0 ||
                    (r = get_int(o, w, "cpu_time_ns", NULLABLE, 0, b->limits.cpu_time_ns, &row->cpu_time_ns, err)) < 0 ||
                    (r = get_int(o, w, "cycles", NULLABLE, 0, b->limits.cycles, &row->cycles, err)) < 0 ||
                    (r = get_int(o, w, "instructions", NULLABLE, 0, b->limits.instructions, &row->instructions, err)) < 0 ||
                    (r = get_int(o, w, "multiplexed_samples", NULLABLE, 0, row->samples, &row->multiplexed_samples,
                                 err)) < 0)
                        return r;
                if (row->multiplexed_samples == BATCH_NULL)
                        row->multiplexed_samples = 0;
                if (has_member(o, "events") && !b->row_events &&
                    !(b->row_events = calloc(b->n_rows, sizeof(BatchEvents))))
                        return -ENOMEM;
                if (has_member(o, "burst") && !b->row_bursts &&
                    !(b->row_bursts = calloc(b->n_rows, sizeof(BatchBurst))))
                        return -ENOMEM;
                if ((r = parse_events(b, o, w, b->limits.events, b->row_events ? &b->row_events[i] : NULL,
                                      &row->events, err)) < 0 ||
                    (r = parse_burst(b, o, w, row, b->row_bursts ? &b->row_bursts[i] : NULL, err)) < 0)
                        return r;
                for (size_t e = 0; row->events && e < BATCH_MAX_ROLES; e++)
                        if (!add_sum(&b->total_events[e], row->events->count[e]))
                                return fail(err, -EINVAL, w, "events", "the batch's %s add up to more than %" PRId64,
                                            b->roles[e], INT64_MAX);
                if (row->build_id && row->build_id[strspn(row->build_id, "0123456789abcdef")])
                        return fail(err, -EINVAL, w, "build_id", "must be lower-case hex");
                k = code_kind_from_string(kind);
                if (k < 0)
                        return fail(err, -EINVAL, w, "kind", "must be one of exe, lib, kernel, idle, anon, unknown");
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
                        return fail(err, -EINVAL, w, "samples", "the batch's samples add up to more than %" PRId64, INT64_MAX);
                if (!add_sum(&b->total_cpu_time_ns, row->cpu_time_ns))
                        return fail(err, -EINVAL, w, "cpu_time_ns", "the batch's cpu_time_ns add up to more than %" PRId64, INT64_MAX);
                if (!add_sum(&b->total_cycles, row->cycles))
                        return fail(err, -EINVAL, w, "cycles", "the batch's cycles add up to more than %" PRId64, INT64_MAX);
                if (!add_sum(&b->total_instructions, row->instructions))
                        return fail(err, -EINVAL, w, "instructions", "the batch's instructions add up to more than %" PRId64, INT64_MAX);
        }
        /* CPU seconds are derived (samples / frequency): bounded above, but
         * checked, since an Inf would turn every sum it joins into null. */
        b->total_cpu_seconds = (double) b->total_samples / b->frequency_hz;
        if (!isfinite(b->total_cpu_seconds))
                return fail(err, -EINVAL, IN("sampling"), "frequency_hz", "gives non-finite CPU seconds");
        return 0;
}

static int parse_markers(json_object *root, Batch *b, BatchError *err) {
        json_object *a;
        int r;

        r = get_array(root, "markers", false, BATCH_MAX_MARKERS, &a, &b->n_markers, err);
        if (r < 0 || b->n_markers == 0)
                return r;
        b->markers = calloc(b->n_markers, sizeof(BatchMarker));
        if (!b->markers)
                return -ENOMEM;
        for (size_t i = 0; i < b->n_markers; i++) {
                json_object *o = json_object_array_get_idx(a, i);
                BatchMarker *m = &b->markers[i];
                Where w = AT("markers", i);

                if (!json_object_is_type(o, json_type_object))
                        return fail(err, -EINVAL, w, NULL, "must be an object");
                if ((r = get_string(o, w, "job", NULLABLE | IDENT, 1, MAX_ID, &m->job, err)) < 0 ||
                    (r = get_string(o, w, "comm", NULLABLE, 0, MAX_COMM, &m->comm, err)) < 0 ||
                    (r = get_string(o, w, "phase", REQUIRED, 0, MAX_PHASE, &m->phase, err)) < 0 ||
                    (r = get_string(o, w, "state", REQUIRED | IDENT, 1, 32, &m->state, err)) < 0)
                        return r;
                m->comm = m->comm ?: "";
        }
        return 0;
}

/* ranks[]: optional, and only another view of samples the rows already
 * count: every sample of a rank is also in a row of its job, so the ranks'
 * samples cannot add up to more than the rows' samples of jobs. */
static int parse_ranks(json_object *root, Batch *b, BatchError *err) {
        int64_t sum = 0, job_samples = 0;
        json_object *a;
        int r;

        r = get_array(root, "ranks", false, BATCH_MAX_RANKS, &a, &b->n_ranks, err);
        if (r < 0 || b->n_ranks == 0)
                return r;
        b->ranks = calloc(b->n_ranks, sizeof(BatchRank));
        if (!b->ranks)
                return -ENOMEM;
        for (size_t i = 0; i < b->n_ranks; i++) {
                json_object *o = json_object_array_get_idx(a, i);
                BatchRank *k = &b->ranks[i];
                Where w = AT("ranks", i);

                if (!json_object_is_type(o, json_type_object))
                        return fail(err, -EINVAL, w, NULL, "must be an object");
                if ((r = get_string(o, w, "job", REQUIRED | IDENT, 1, MAX_ID, &k->job, err)) < 0 ||
                    (r = get_string(o, w, "step", NULLABLE | IDENT, 1, MAX_ID, &k->step, err)) < 0 ||
                    (r = get_int(o, w, "rank", REQUIRED, 0, BATCH_MAX_RANK, &k->rank, err)) < 0 ||
                    (r = get_string(o, w, "phase", NULLABLE, 0, MAX_PHASE, &k->phase, err)) < 0 ||
                    (r = get_int(o, w, "samples", REQUIRED, 0, b->limits.samples, &k->samples, err)) < 0 ||
                    (r = get_int(o, w, "comm_samples", REQUIRED, 0, k->samples, &k->comm_samples, err)) < 0 ||
                    (r = get_double(o, w, "first", REQUIRED, TIME_MIN, TIME_MAX, &k->first, err)) < 0 ||
                    (r = get_double(o, w, "last", REQUIRED, TIME_MIN, TIME_MAX, &k->last, err)) < 0)
                        return r;
                if (k->last < k->first)
                        return fail(err, -EINVAL, w, "last", "must not be before first");
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
                return fail(err, -EINVAL, TOP, "ranks",
                            "holds %" PRId64 " samples, more than the %" PRId64 " samples of jobs in rows",
                            sum, job_samples);
        return 0;
}

static void inventory_free(BatchInventory *inv) {
        if (!inv)
                return;
        for (size_t i = 0; i < inv->n_packages && inv->packages; i++)
                free(inv->packages[i].files);
        free(inv->packages);
        free(inv);
}

Batch *batch_free_jsonc(Batch *b) {
        if (!b)
                return NULL;
        inventory_free(b->inventory);
        for (size_t i = 0; i < b->n_jobs && b->jobs; i++)
                free(b->jobs[i].notes);
        free(b->jobs);
        free(b->rows);
        free(b->row_events);
        free(b->job_events);
        free(b->row_bursts);
        free(b->counters);
        if (b->node_type)
                free(b->node_type->gpus);
        free(b->node_type);
        if (b->energy)
                free(b->energy->zones);
        free(b->energy);
        free(b->markers);
        free(b->installed);
        free(b->ranks);
        json_object_put(b->memory);
        free(b);
        return NULL;
}


static int parse_package(json_object *o, Where w, BatchPackage *p, size_t *files_left, BatchError *err) {
        json_object *a;
        size_t n;
        int r;

        if (!json_object_is_type(o, json_type_object))
                return fail(err, -EINVAL, w, NULL, "must be an object");
        if ((r = get_string(o, w, "manager", REQUIRED | IDENT, 1, 16, &p->manager, err)) < 0 ||
            (r = get_string(o, w, "name", REQUIRED | IDENT, 1, 256, &p->name, err)) < 0 ||
            (r = get_string(o, w, "version", REQUIRED | IDENT, 0, 256, &p->version, err)) < 0 ||
            (r = get_string(o, w, "arch", NULLABLE | IDENT, 1, 64, &p->arch, err)) < 0 ||
            (r = get_string(o, w, "hash", NULLABLE | IDENT, 1, 128, &p->hash, err)) < 0 ||
            (r = get_string(o, w, "prefix", NULLABLE, 1, BATCH_MAX_PATH, &p->prefix, err)) < 0 ||
            (r = get_int(o, w, "size", REQUIRED, 0, (int64_t) BATCH_MAX_COUNTER, &p->size, err)) < 0)
                return r;
        if (!batch_package_manager_is_known(p->manager))
                return fail(err, -EINVAL, w, "manager", "must be one of " BATCH_PACKAGE_MANAGERS);
        if (p->prefix && p->prefix[0] != '/')
                return fail(err, -EINVAL, w, "prefix", "must be an absolute path");
        if (!json_object_object_get_ex(o, "files", &a) || !json_object_is_type(a, json_type_array))
                return fail(err, -EINVAL, w, "files", "must be an array of paths");
        n = json_object_array_length(a);
        if (n > BATCH_MAX_PACKAGE_FILES || n > *files_left)
                return fail(err, -E2BIG, w, "files", "too many files: at most %u a package, %u in all",
                            BATCH_MAX_PACKAGE_FILES, BATCH_MAX_INVENTORY_FILES);
        *files_left -= n;
        p->files = calloc(n ?: 1, sizeof(char *));
        if (!p->files)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *f = json_object_array_get_idx(a, i);
                const char *s;
                int len;

                if (!json_object_is_type(f, json_type_string))
                        return fail(err, -EINVAL, w, "files", "element %zu must be a string", i);
                s = json_object_get_string(f);
                len = json_object_get_string_len(f);
                if (len < 2 || (size_t) len > BATCH_MAX_PATH || s[0] != '/')
                        return fail(err, -EINVAL, w, "files", "element %zu must be an absolute path of at most %u bytes",
                                    i, BATCH_MAX_PATH);
                r = check_text(s, (size_t) len, 0, w, "files", err);
                if (r < 0)
                        return r;
                p->files[i] = s;
        }
        p->n_files = n;
        return 0;
}

/* "inventory": the node's software (docs/inventory.md); absent in most batches. */
static int parse_inventory(json_object *root, Batch *b, BatchError *err) {
        json_object *o, *a;
        const char *format;
        int64_t version;
        size_t n, files_left = BATCH_MAX_INVENTORY_FILES;
        BatchInventory *inv;
        int r;

        if (!json_object_object_get_ex(root, "inventory", &o) || json_object_is_type(o, json_type_null))
                return 0;
        if (!json_object_is_type(o, json_type_object))
                return fail(err, -EINVAL, TOP, "inventory", "must be an object");
        if ((r = get_string(o, IN("inventory"), "format", REQUIRED, 0, 64, &format, err)) < 0 ||
            (r = get_int(o, IN("inventory"), "version", REQUIRED, 0, INT32_MAX, &version, err)) < 0)
                return r;
        if (!streq(format, "lmk-inventory") || version != 1)
                return fail(err, -EPROTONOSUPPORT, IN("inventory"), "format",
                            "must be lmk-inventory version 1");
        inv = b->inventory = calloc(1, sizeof(BatchInventory));
        if (!inv)
                return -ENOMEM;
        r = get_string(o, IN("inventory"), "digest", REQUIRED | IDENT, 64, 64, &inv->digest, err);
        if (r < 0)
                return r;
        for (const char *p = inv->digest; *p; p++)
                if (!strchr("0123456789abcdef", *p))
                        return fail(err, -EINVAL, IN("inventory"), "digest", "must be 64 lower-case hex digits");
        if (!json_object_object_get_ex(o, "packages", &a) || !json_object_is_type(a, json_type_array))
                return fail(err, -EINVAL, IN("inventory"), "packages", "must be an array");
        n = json_object_array_length(a);
        if (n > BATCH_MAX_PACKAGES)
                return fail(err, -E2BIG, IN("inventory"), "packages", "has %zu packages, at most %u are allowed",
                            n, BATCH_MAX_PACKAGES);
        inv->packages = calloc(n ?: 1, sizeof(BatchPackage));
        if (!inv->packages)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                r = parse_package(json_object_array_get_idx(a, i), AT("inventory.packages", i), &inv->packages[i],
                                  &files_left, err);
                inv->n_packages = i + 1; /* so that batch_free() frees its files */
                if (r < 0)
                        return r;
        }
        inv->n_files = BATCH_MAX_INVENTORY_FILES - files_left;
        return 0;
}

static int parse_json(const char *data, size_t size, json_object **ret, BatchError *err) {
        json_tokener *tok;
        json_object *root;
        enum json_tokener_error e;
        size_t end;

        if (size > INT32_MAX)
                return fail(err, -EBADMSG, TOP, "", "body too large to parse");
        tok = json_tokener_new_ex(BATCH_JSON_DEPTH);
        if (!tok)
                return -ENOMEM;
        /* json-c's own UTF-8 check is lax (it passes overlong forms and
         * surrogates) and names no field: every string the store uses goes
         * through check_text() instead; strings it ignores are not kept. */
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
        root = json_tokener_parse_ex(tok, data, (int) size);
        e = json_tokener_get_error(tok);
        end = json_tokener_get_parse_end(tok);
        json_tokener_free(tok);

        if (!root || e != json_tokener_success) {
                json_object_put(root);
                if (e == json_tokener_continue)
                        return fail(err, -EBADMSG, TOP, "", "invalid JSON: unexpected end of input");
                return fail(err, -EBADMSG, TOP, "", "invalid JSON at byte %zu: %s", end, json_tokener_error_desc(e));
        }
        /* Only whitespace may follow the batch. */
        for (size_t i = end; i < size; i++)
                if (!strchr(" \t\r\n", data[i])) {
                        json_object_put(root);
                        return fail(err, -EBADMSG, TOP, "", "invalid JSON: trailing data at byte %zu", i);
                }
        *ret = root;
        return 0;
}

int batch_parse_jsonc(const char *data, size_t size, Batch **ret, BatchError *err) {
        _cleanup_(batch_free_jsoncp) Batch *b = NULL;
        json_object *root = NULL;
        int r;

        *err = (BatchError) {};
        r = parse_json(data, size, &root, err);
        if (r < 0)
                return r;

        b = calloc(1, sizeof(Batch));
        if (!b) {
                json_object_put(root);
                return -ENOMEM;
        }
        b->memory = root;
        batch_digest(data, size, b->digest);
        if (!json_object_is_type(root, json_type_object))
                return fail(err, -EINVAL, TOP, "", "a batch must be a JSON object");

        if ((r = parse_header(root, b, err)) < 0 ||
            (r = parse_counters(root, b, err)) < 0 ||
            (r = parse_energy(root, b, err)) < 0 ||
            (r = parse_jobs(root, b, err)) < 0 ||
            (r = parse_rows(root, b, err)) < 0 ||
            (r = parse_markers(root, b, err)) < 0 ||
            (r = parse_ranks(root, b, err)) < 0 ||
            (r = parse_inventory(root, b, err)) < 0)
                return r;

        *ret = TAKE_PTR(b);
        return 0;
}
