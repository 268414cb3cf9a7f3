/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Site answers: GET /api/v1/packages (installed software and its use, the
 * unused among it) and GET /api/v1/families (time per library family and
 * purpose). Both are aggregates over the whole site: no job, no user. */
#include <errno.h>
#include <time.h>

#include "api/api.h"
#include "http/json-out.h"
#include "util.h"

#define DEFAULT_LIMIT 100
#define MAX_LIMIT 100000
#define DECIMALS 3

static const char *const packages_args[] = { "since", "until", "unused", "manager", "limit", "cluster", "partition",
                                             "account", NULL };

const CsvTable api_packages_csv = CSV_TABLE("packages", NULL, "lmk-packages.csv",
        { "manager" }, { "name" }, { "version" }, { "arch" }, { "prefix" }, { "size_bytes" }, { "nodes" },
        { "files_sampled" }, { "samples" }, CSV_SHARE_COLUMNS, { "cpu_seconds" }, { "last_seen" });

static int by_use(const void *a, const void *b) {
        const PackageUse *x = a, *y = b;

        if (x->samples != y->samples)
                return CMP(y->samples, x->samples);
        if (x->size != y->size)
                return CMP(y->size, x->size);
        return strcmp(x->name, y->name);
}

void api_packages(Server *s, Request *req, Reply *reply) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        int64_t now = (int64_t) time(NULL);
        PackageFilter f = { .until = now };
        const char *unused = request_arg(req, "unused"), *manager = request_arg(req, "manager");
        unsigned limit = DEFAULT_LIMIT;
        PackageList l = {};
        json_object *a;
        size_t shown = 0;
        int r;

        if (!request_check_args(req, packages_args, reply) ||
            !api_scope(s, req, &f.scope, reply) ||
            !arg_time(req, "since", "30d", now, &f.since, reply) ||
            !arg_time(req, "until", NULL, now, &f.until, reply) ||
            !arg_uint(req, "limit", 1, MAX_LIMIT, &limit, reply))
                return;
        if (unused && !streq(unused, "true") && !streq(unused, "false")) {
                reply_error(reply, MHD_HTTP_BAD_REQUEST, "unused", "unused=%s: expected true or false", unused);
                return;
        }
        if (manager && !batch_package_manager_is_known(manager)) {
                reply_error(reply, MHD_HTTP_BAD_REQUEST, "manager", "manager=%s: expected one of " BATCH_PACKAGE_MANAGERS,
                            manager);
                return;
        }
        f.unused = unused && streq(unused, "true");
        r = s->storage->ops->list_packages(s->storage, &f, &l);
        if (r < 0) {
                reply_storage_error(reply, r);
                return;
        }
        if (l.n > 1)
                qsort(l.items, l.n, sizeof(PackageUse), by_use);

        o = json_object_new_object();
        a = json_object_new_array();
        r = !o || !a ? -ENOMEM : 0;
        if (r >= 0 && ((r = json_add(o, "since", json_object_new_int64(l.since))) < 0 ||
                       (r = json_add(o, "until", json_object_new_int64(l.until))) < 0 ||
                       (r = json_add(o, "grain", json_object_new_string(api_grain_name(l.grain)))) < 0 ||
                       (r = json_add(o, "unused", json_object_new_boolean(f.unused))) < 0 ||
                       (r = json_add(o, "total_samples", json_object_new_int64(l.total_samples))) < 0))
                json_object_put(TAKE_PTR(a));
        if (r >= 0)
                r = json_add(o, "packages", a);
        for (size_t i = 0; r >= 0 && i < l.n && shown < limit; i++) {
                const PackageUse *p = &l.items[i];
                json_object *e;

                if (manager && !streq(manager, p->manager))
                        continue;
                shown++;
                e = json_object_new_object();
                if ((r = json_append(a, e)) < 0 ||
                    (r = json_add(e, "manager", json_object_new_string(p->manager))) < 0 ||
                    (r = json_add(e, "name", json_object_new_string(p->name))) < 0 ||
                    (r = json_add(e, "version", json_object_new_string(p->version))) < 0 ||
                    (r = json_add(e, "arch", json_string_or_null(*p->arch ? p->arch : NULL))) < 0 ||
                    (r = json_add(e, "prefix", json_string_or_null(*p->prefix ? p->prefix : NULL))) < 0 ||
                    (r = json_add(e, "size_bytes", json_object_new_int64(p->size))) < 0 ||
                    (r = json_add(e, "nodes", json_object_new_int64(p->nodes))) < 0 ||
                    (r = json_add(e, "files_sampled", json_object_new_int64(p->files))) < 0 ||
                    (r = json_add(e, "samples", json_object_new_int64(p->samples))) < 0 ||
                    (r = api_add_share(e, p->samples, l.total_samples)) < 0 ||
                    (r = json_add(e, "cpu_seconds", json_number(p->cpu_seconds, DECIMALS))) < 0 ||
                    (r = json_add(e, "last_seen", p->last_seen >= 0 ? json_object_new_int64(p->last_seen) :
                                                                      json_null())) < 0)
                        break;
        }
        package_list_free(&l);
        if (r < 0) {
                reply_oom(reply);
                return;
        }
        reply_json(reply, MHD_HTTP_OK, TAKE_PTR(o));
}

typedef struct FamilyUse {
        const char *purpose, *family; /* in the families table, under findings_lock */
        int64_t samples;
        double cpu_seconds;
        size_t objects;
} FamilyUse;

static int by_samples(const void *a, const void *b) {
        const FamilyUse *x = a, *y = b;

        if (x->samples != y->samples)
                return CMP(y->samples, x->samples);
        return strcmp(x->family, y->family);
}

static const char *const families_args[] = { "since", "until", "purpose", "cluster", "partition", "account", NULL };

const CsvTable api_families_csv = CSV_TABLE("families", NULL, "lmk-families.csv",
        { "purpose" }, { "family" }, { "objects" }, { "samples" }, CSV_SHARE_COLUMNS, { "cpu_seconds" },
        { "core_hours" });

/* Time per library family over a range: every object the range sampled,
 * classified by the families table (common/lib-families.h, the site's
 * --families first); objects of no family are left out of the list but in
 * the total, so that a share is of all samples. */
void api_families(Server *s, Request *req, Reply *reply) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        int64_t now = (int64_t) time(NULL);
        ObjectFilter f = { .until = now, .kind = -1, .limit = UINT32_MAX };
        const char *purpose = request_arg(req, "purpose");
        FamilyUse *u = NULL;
        size_t n = 0;
        ObjectList l = {};
        json_object *a;
        int r;

        if (!request_check_args(req, families_args, reply) ||
            !api_scope(s, req, &f.scope, reply) ||
            !arg_time(req, "since", "7d", now, &f.since, reply) ||
            !arg_time(req, "until", NULL, now, &f.until, reply))
                return;
        r = s->storage->ops->list_objects(s->storage, &f, &l);
        if (r < 0) {
                reply_storage_error(reply, r);
                return;
        }
        pthread_rwlock_rdlock(&s->findings_lock);
        u = calloc(s->families ? s->families->n + 1 : 1, sizeof(FamilyUse));
        for (size_t i = 0; u && i < l.objects.n; i++) {
                const LibFamily *fam = s->families ? lib_families_match(s->families, l.objects.items[i].name) : NULL;
                size_t k;

                if (!fam || (purpose && !streq(purpose, fam->purpose)))
                        continue;
                for (k = 0; k < n; k++)
                        if (streq(u[k].purpose, fam->purpose) && streq(u[k].family, fam->family))
                                break;
                if (k == n)
                        u[n++] = (FamilyUse) { .purpose = fam->purpose, .family = fam->family };
                u[k].samples += l.objects.items[i].samples;
                u[k].cpu_seconds += l.objects.items[i].cpu_seconds;
                u[k].objects++;
        }
        if (n > 1)
                qsort(u, n, sizeof(FamilyUse), by_samples);
        o = json_object_new_object();
        a = json_object_new_array();
        r = !u || !o || !a ? -ENOMEM : 0;
        if (r >= 0 && ((r = json_add(o, "since", json_object_new_int64(l.since))) < 0 ||
                       (r = json_add(o, "until", json_object_new_int64(l.until))) < 0 ||
                       (r = json_add(o, "grain", json_object_new_string(api_grain_name(l.grain)))) < 0 ||
                       (r = json_add(o, "total_samples", json_object_new_int64(l.total_samples))) < 0 ||
                       (r = json_add(o, "total_cpu_seconds", json_number(l.total_cpu_seconds, DECIMALS))) < 0))
                json_object_put(TAKE_PTR(a));
        if (r >= 0)
                r = json_add(o, "families", a);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                json_object *e = json_object_new_object();

                if ((r = json_append(a, e)) < 0 ||
                    (r = json_add(e, "purpose", json_object_new_string(u[i].purpose))) < 0 ||
                    (r = json_add(e, "family", json_object_new_string(u[i].family))) < 0 ||
                    (r = json_add(e, "objects", json_object_new_int64((int64_t) u[i].objects))) < 0 ||
                    (r = json_add(e, "samples", json_object_new_int64(u[i].samples))) < 0 ||
                    (r = api_add_share(e, u[i].samples, l.total_samples)) < 0 ||
                    (r = json_add(e, "cpu_seconds", json_number(u[i].cpu_seconds, DECIMALS))) < 0 ||
                    (r = json_add(e, "core_hours", json_number(u[i].cpu_seconds / 3600, DECIMALS))) < 0)
                        break;
        }
        pthread_rwlock_unlock(&s->findings_lock);
        free(u);
        object_list_free(&l);
        if (r < 0) {
                reply_oom(reply);
                return;
        }
        reply_json(reply, MHD_HTTP_OK, TAKE_PTR(o));
}
