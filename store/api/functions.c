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

/* The families of a request's functions, each function name and each
 * object matched once however often they are asked (the family= filter,
 * the answer, the sums per family). Out of memory a match is not kept:
 * the same answer, only slower. */
typedef struct FamilyOf {
        const LibFamilies *libs;
        Hashmap *by_name;       /* function name (owned) → its family, or no_family */
        Hashmap *by_object;     /* path (owned) → its library's family, or no_family */
} FamilyOf;

static const char no_family[] = "";

static void family_of_init(FamilyOf *fo, const LibFamilies *libs) {
        *fo = (FamilyOf) { libs, hashmap_new(&string_hash_ops), hashmap_new(&string_hash_ops) };
}

static void memo_free(Hashmap *h) {
        const void *key;
        size_t i = 0;

        while (h && hashmap_iterate(h, &i, NULL, &key))
                free((void *) key);
        hashmap_free(h);
}

static void family_of_done(FamilyOf *fo) {
        memo_free(fo->by_name);
        memo_free(fo->by_object);
        *fo = (FamilyOf) {};
}

static const char *library_family(const FamilyOf *fo, const char *path) {
        const LibFamily *lib = fo->libs ? lib_families_match(fo->libs, path) : NULL;

        return lib ? lib->family : NULL;
}

static const char *name_family(_unused_ const FamilyOf *fo, const char *name) {
        return function_family(name);
}

/* What match() says of key, from the memo h when it is there. */
static const char *memo(const FamilyOf *fo, Hashmap *h, const char *key,
                        const char *(*match)(const FamilyOf *, const char *)) {
        const char *f;
        char *k;

        if (!key)
                return NULL;
        f = h ? hashmap_get(h, key) : NULL;
        if (f)
                return f == no_family ? NULL : f;
        f = match(fo, key);
        if (h && (k = strdup(key)) && hashmap_put(h, k, (void *) (f ?: no_family)) < 0)
                free(k);
        return f;
}

/* The function's family by its name, else its library's family. */
static const char *family_of(FamilyOf *fo, const SiteFunction *x, const char **ret_library) {
        const char *f = memo(fo, fo->by_name, x->name, name_family);

        *ret_library = memo(fo, fo->by_object, x->object, library_family);
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

/* Functions summed per family, in the order their families first came. */
typedef struct FamilySums {
        FamilySum *v;
        size_t n, alloc;
        Hashmap *index;         /* family (not owned) → its place in v + 1 */
        size_t none;            /* the place + 1 of the functions of no family; 0: none yet */
        int error;
} FamilySums;

static void family_sums_done(FamilySums *fs) {
        free(fs->v);
        hashmap_free(fs->index);
        *fs = (FamilySums) {};
}

static void family_sums_add(FamilySums *fs, const char *fam, const SiteFunction *x) {
        size_t k;
        FamilySum *e;

        if (fs->error < 0)
                return;
        if (fam && !fs->index && !(fs->index = hashmap_new(&string_hash_ops))) {
                fs->error = -ENOMEM;
                return;
        }
        k = fam ? (size_t) (uintptr_t) hashmap_get(fs->index, fam) : fs->none;
        if (k == 0) {
                if (fs->n == fs->alloc) {
                        size_t alloc = MAX(fs->alloc * 2, (size_t) 16);
                        FamilySum *v = reallocarray(fs->v, alloc, sizeof(FamilySum));

                        if (!v) {
                                fs->error = -ENOMEM;
                                return;
                        }
                        fs->v = v;
                        fs->alloc = alloc;
                }
                fs->v[fs->n++] = (FamilySum) { .family = fam, .cycles = NAN, .instructions = NAN };
                k = fs->n;
                if (!fam)
                        fs->none = k;
                else {
                        int r = hashmap_put(fs->index, fam, (void *) (uintptr_t) k);

                        if (r < 0) {
                                fs->error = r;
                                return;
                        }
                }
        }
        e = &fs->v[k - 1];
        e->functions++;
        e->samples = __builtin_add_overflow(e->samples, x->samples, &e->samples) ? INT64_MAX : e->samples;
        e->cpu_seconds += x->cpu_seconds;
        if (!isnan(x->cycles))
                e->cycles = isnan(e->cycles) ? x->cycles : e->cycles + x->cycles;
        if (!isnan(x->instructions))
                e->instructions = isnan(e->instructions) ? x->instructions : e->instructions + x->instructions;
}

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

/* What a request of the site's functions works with, beside the storage. */
typedef struct Ranking {
        FamilyOf families;
        const char *family;     /* family=: only its functions; NULL: all */
        FamilySums all;         /* of every function of the range, family= or not */
} Ranking;

static bool want_family(const SiteFunction *x, void *userdata) {
        Ranking *k = userdata;
        const char *library, *fam = family_of(&k->families, x, &library);

        return fam && streq(fam, k->family);
}

static void sum_every_family(const SiteFunction *x, void *userdata) {
        Ranking *k = userdata;
        const char *library;

        family_sums_add(&k->all, family_of(&k->families, x, &library), x);
}

static int group_from_string(const char *s) {
        return streq(s, "function") ? 0 : streq(s, "family") ? 1 : -EINVAL;
}

/* An answer's head: the range and its totals, and the list it holds. */
static int add_head(json_object *o, const SiteFunctionList *l, bool per_family, const char *object) {
        int r;

        if ((r = json_add(o, "since", json_object_new_int64(l->since))) < 0 ||
            (r = json_add(o, "until", json_object_new_int64(l->until))) < 0 ||
            (r = json_add(o, "grain", json_object_new_string("day"))) < 0 ||
            (r = json_add(o, "group", json_object_new_string(per_family ? "family" : "function"))) < 0 ||
            (r = json_add(o, "object", json_string_or_null(object))) < 0 ||
            (r = json_add(o, "total_samples", json_object_new_int64(l->total_samples))) < 0 ||
            (r = json_add(o, "total_cpu_seconds", json_number(l->total_cpu_seconds, TIME_DECIMALS))) < 0 ||
            (r = json_add(o, "total_core_hours", json_number(l->total_cpu_seconds / 3600.0, 6))) < 0)
                return r;
        return 0;
}

/* The families as the list of an answer (group=family): the most samples
 * first, at most limit. */
static int add_families(json_object *o, FamilySums *fs, int64_t total, unsigned limit) {
        json_object *a = json_object_new_array();
        int r = json_add(o, "functions", a);

        if (r >= 0 && fs->n > 1)
                qsort(fs->v, fs->n, sizeof(FamilySum), family_by_samples);
        for (size_t k = 0; r >= 0 && k < fs->n && k < limit; k++) {
                json_object *e = json_object_new_object();

                if ((r = json_append(a, e)) < 0 ||
                    (r = json_add(e, "family", json_string_or_null(fs->v[k].family))) < 0 ||
                    (r = json_add(e, "function", json_null())) < 0 ||
                    (r = json_add(e, "object", json_null())) < 0 ||
                    (r = json_add(e, "functions", json_object_new_int64(fs->v[k].functions))) < 0)
                        break;
                r = add_sums(e, fs->v[k].samples, total, fs->v[k].cpu_seconds, fs->v[k].cycles,
                             fs->v[k].instructions);
        }
        if (r >= 0)
                r = json_add(o, "truncated", json_object_new_boolean(fs->n > limit));
        return r;
}

/* The answer of GET /api/v1/functions and /api/v1/objects/{object}/functions
 * (object: from the path) into *ret; with_families, and under "families"
 * the answer with group=family, without family= and limit=, from the same
 * read (the kernels page's two tables). -ENOMEM: the reply holds nothing;
 * other errors: it holds the answer. */
static int answer(Server *s, Request *req, Reply *reply, const char *object, bool with_families, json_object **ret) {
        _cleanup_(json_object_putp) json_object *o = NULL, *fo = NULL;
        int64_t now = (int64_t) time(NULL);
        JobViewer viewer = api_job_viewer(req);
        FunctionFilter f = {
                .until = now, .app = request_arg(req, "app"), .account = request_arg(req, "account"),
                .user = request_arg(req, "user"), .node_type = request_arg(req, "node_type"),
                .object = object ?: request_arg(req, "object"), .viewer = &viewer,
        };
        unsigned limit = DEFAULT_LIMIT;
        SiteFunctionList l = {};
        Ranking k = { .family = request_arg(req, "family") };
        FamilySums listed = {};
        int group = 0, r;

        if (!request_check_args(req, functions_args, reply) ||
            !arg_time(req, "since", "30d", now, &f.since, reply) ||
            !arg_time(req, "until", NULL, now, &f.until, reply) ||
            !arg_word(req, "group", group_from_string, "function or family", &group, reply) ||
            !arg_uint(req, "limit", 1, MAX_LIMIT, &limit, reply) ||
            !api_account_allowed(s, req, f.account, reply))
                return -EINVAL;
        if (f.since >= f.until) {
                reply_error(reply, MHD_HTTP_BAD_REQUEST, "since", "since must be before until");
                return -EINVAL;
        }
        if (k.family)
                f.want = want_family;
        if (with_families)
                f.each = sum_every_family;
        f.userdata = &k;
        /* per family: every function, not counted */
        f.limit = group ? SIZE_MAX : limit;
        f.no_counts = group;
        /* the families table (SIGHUP swaps it) is read while filtering
         * and answering: held from here to the reply */
        pthread_rwlock_rdlock(&s->findings_lock);
        family_of_init(&k.families, s->families);
        r = s->storage->ops->list_site_functions(s->storage, &f, &l);
        if (r == -ENOENT && f.node_type)
                reply_error(reply, MHD_HTTP_BAD_REQUEST, "node_type", "no such node type: %s", f.node_type);
        else if (r < 0)
                reply_storage_error(reply, r);
        if (r < 0)
                goto finish;

        o = json_object_new_object();
        r = o ? add_head(o, &l, group, f.object) : -ENOMEM;
        if (r >= 0 && group == 0) {
                json_object *a = json_object_new_array();

                r = json_add(o, "functions", a);
                for (size_t i = 0; r >= 0 && i < l.n; i++) {
                        const char *library, *fam = family_of(&k.families, &l.items[i], &library);

                        r = add_function(a, &l.items[i], fam, library, l.total_samples);
                }
                if (r >= 0)
                        r = json_add(o, "truncated", json_object_new_boolean(l.more));
        } else if (r >= 0) {
                for (size_t i = 0; i < l.n; i++) {
                        const char *library;

                        family_sums_add(&listed, family_of(&k.families, &l.items[i], &library), &l.items[i]);
                }
                r = listed.error < 0 ? listed.error : add_families(o, &listed, l.total_samples, limit);
        }
        if (r >= 0 && f.object && (r = add_uses(o, "users", "user", l.users, l.n_users, l.total_samples)) >= 0)
                r = add_uses(o, "apps", "app", l.apps, l.n_apps, l.total_samples);
        if (r >= 0 && with_families) {
                fo = json_object_new_object();
                r = !fo ? -ENOMEM : k.all.error < 0 ? k.all.error : add_head(fo, &l, true, f.object);
                if (r >= 0)
                        r = add_families(fo, &k.all, l.total_samples, DEFAULT_LIMIT);
                if (r >= 0)
                        r = json_add(o, "families", TAKE_PTR(fo));
        }
        if (r < 0)
                reply_oom(reply);
        else
                *ret = TAKE_PTR(o);
finish:
        family_of_done(&k.families);
        pthread_rwlock_unlock(&s->findings_lock);
        family_sums_done(&listed);
        family_sums_done(&k.all);
        site_function_list_free(&l);
        return r;
}

static void reply_answer(Server *s, Request *req, Reply *reply, const char *object, bool with_families) {
        json_object *o;

        if (answer(s, req, reply, object, with_families, &o) >= 0)
                reply_json(reply, MHD_HTTP_OK, o);
}

void api_site_functions(Server *s, Request *req, Reply *reply) {
        reply_answer(s, req, reply, NULL, false);
}

void api_site_kernels(Server *s, Request *req, Reply *reply) {
        reply_answer(s, req, reply, NULL, true);
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
        reply_answer(s, req, reply, object, false);
}
