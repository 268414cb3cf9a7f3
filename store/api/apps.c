/* SPDX-License-Identifier: GPL-2.0-or-later */
/* GET /api/v1/apps: the site's application mix (docs/api.md). Time per
 * application, user, account or partition over whole UTC days, the top N
 * and "everything else", and the same groups week by week. An application
 * is a job's LMK_NOTES app= note, else the package that installed its top
 * executable, else that executable's file name, else (no executable of the
 * job had a sample) its command with the most samples. */
#include <errno.h>
#include <time.h>

#include "api/api.h"
#include "http/json-out.h"
#include "util.h"

#define DEFAULT_TOP 10
#define MAX_TOP 1000
#define DECIMALS 3
#define DAY 86400

static const char *const by_names[_APP_MIX_BY_MAX] = {
        [APP_MIX_BY_APP] = "app", [APP_MIX_BY_USER] = "user", [APP_MIX_BY_ACCOUNT] = "account",
        [APP_MIX_BY_PARTITION] = "partition",
};

typedef struct MixGroup {
        const char *name;       /* in the AppMixList; "" for unknown */
        const char *kind;       /* by app: note, package, executable or unknown; else NULL */
        int64_t samples, runs;
        double cpu_seconds;
        size_t rank;            /* its place in the answer; top: the "everything else" row */
} MixGroup;

/* What a key is counted as, grouped by `by`: by app, also what named it
 * (note, package, executable, command or unknown). */
static const char *key_name(const AppMixKey *k, AppMixBy by, const char **ret_kind) {
        *ret_kind = NULL;
        switch (by) {
        case APP_MIX_BY_USER:
                return k->user;
        case APP_MIX_BY_ACCOUNT:
                return k->account;
        case APP_MIX_BY_PARTITION:
                return k->partition;
        default:
                break;
        }
        if (k->from_note) {
                *ret_kind = "note";
                return k->app;
        }
        if (k->from_command) {
                *ret_kind = "command";
                return k->app;
        }
        if (k->package) {
                *ret_kind = "package";
                return k->package;
        }
        *ret_kind = *k->app ? "executable" : "unknown";
        return k->app;
}

/* The storage narrowed the keys to user, account and partition; the
 * application is a name worked out here (key_name), so it is matched here. */
static bool key_matches(const AppMixKey *k, const char *app) {
        const char *kind;

        return !app || streq(app, key_name(k, APP_MIX_BY_APP, &kind));
}

static int by_samples(const void *a, const void *b) {
        const MixGroup *x = *(const MixGroup *const *) a, *y = *(const MixGroup *const *) b;

        if (x->samples != y->samples)
                return CMP(y->samples, x->samples);
        if (x->cpu_seconds != y->cpu_seconds)
                return x->cpu_seconds < y->cpu_seconds ? 1 : -1;
        return strcmp(x->name, y->name);
}

static int64_t sat_add(int64_t a, int64_t b) {
        int64_t r;

        return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

/* The Monday (UTC) a day is in: the epoch was a Thursday. */
static int64_t week_of(int64_t day) {
        int64_t d = day / DAY;

        return (d - ((d % 7 + 7 + 3) % 7)) * DAY;
}

static int add_figures(json_object *e, int64_t samples, int64_t total_samples, double cpu_seconds, int64_t runs) {
        int r;

        if ((r = json_add(e, "samples", json_object_new_int64(samples))) < 0 ||
            (r = api_add_share(e, samples, total_samples)) < 0 ||
            (r = json_add(e, "cpu_seconds", json_number(cpu_seconds, DECIMALS))) < 0 ||
            (r = json_add(e, "core_hours", json_number(cpu_seconds / 3600, DECIMALS))) < 0 ||
            (r = json_add(e, "runs", json_object_new_int64(runs))) < 0)
                return r;
        return 0;
}

typedef struct MixAnswer {
        MixGroup *groups;       /* one per distinct name */
        MixGroup **order;       /* by samples */
        size_t n;
        size_t *group_of_key;   /* SIZE_MAX: filtered out */
        int64_t total_samples, total_runs;
        double total_cpu_seconds;
} MixAnswer;

static void mix_answer_free(MixAnswer *m) {
        free(m->groups);
        free(m->order);
        free(m->group_of_key);
}

static int mix_group(const AppMixList *l, AppMixBy by, const char *app, MixAnswer *m) {
        _cleanup_(hashmap_freep) Hashmap *by_name = hashmap_new(&string_hash_ops);
        int r;

        m->groups = calloc(l->n_keys + 1, sizeof(MixGroup));
        m->order = calloc(l->n_keys + 1, sizeof(MixGroup *));
        m->group_of_key = calloc(l->n_keys + 1, sizeof(size_t));
        if (!by_name || !m->groups || !m->order || !m->group_of_key)
                return -ENOMEM;
        for (size_t i = 0; i < l->n_keys; i++) {
                const AppMixKey *k = &l->keys[i];
                const char *kind, *name = key_name(k, by, &kind);
                uintptr_t g;

                m->group_of_key[i] = SIZE_MAX;
                if (!key_matches(k, app))
                        continue;
                g = (uintptr_t) hashmap_get(by_name, name);
                if (g == 0) {
                        m->groups[m->n] = (MixGroup) { .name = name, .kind = kind };
                        g = ++m->n;
                        if ((r = hashmap_put(by_name, name, (void *) g)) < 0)
                                return r;
                } else if (kind && m->groups[g - 1].kind && !streq(kind, m->groups[g - 1].kind))
                        m->groups[g - 1].kind = "mixed";
                m->group_of_key[i] = g - 1;
        }
        for (size_t i = 0; i < l->n_days; i++) {
                const AppMixDay *d = &l->days[i];
                MixGroup *g;

                if (m->group_of_key[d->key] == SIZE_MAX)
                        continue;
                g = &m->groups[m->group_of_key[d->key]];
                g->samples = sat_add(g->samples, d->samples);
                g->runs = sat_add(g->runs, d->runs);
                g->cpu_seconds += d->cpu_seconds;
                m->total_samples = sat_add(m->total_samples, d->samples);
                m->total_runs = sat_add(m->total_runs, d->runs);
                m->total_cpu_seconds += d->cpu_seconds;
        }
        for (size_t i = 0; i < m->n; i++)
                m->order[i] = &m->groups[i];
        if (m->n > 1)
                qsort(m->order, m->n, sizeof(MixGroup *), by_samples);
        for (size_t i = 0; i < m->n; i++)
                m->order[i]->rank = i;
        return 0;
}

/* The weeks of the range: per week, each shown group's CPU time and the
 * rest's, in the order of "groups". */
static int add_weeks(json_object *o, const AppMixList *l, const MixAnswer *m, size_t shown) {
        size_t n_weeks = 0;
        int64_t first = week_of(l->since);
        double *cpu;
        int64_t *samples;
        json_object *a;
        int r;

        if (l->until > l->since)
                n_weeks = (size_t) ((week_of(l->until - 1) - first) / (7 * DAY) + 1);
        cpu = calloc(n_weeks * (shown + 1) + 1, sizeof(double));
        samples = calloc(n_weeks + 1, sizeof(int64_t));
        if (!cpu || !samples) {
                free(cpu);
                free(samples);
                return -ENOMEM;
        }
        for (size_t i = 0; i < l->n_days; i++) {
                const AppMixDay *d = &l->days[i];
                size_t g = m->group_of_key[d->key], w;

                if (g == SIZE_MAX || d->day < l->since || d->day >= l->until)
                        continue;
                w = (size_t) ((week_of(d->day) - first) / (7 * DAY));
                cpu[w * (shown + 1) + MIN(m->groups[g].rank, shown)] += d->cpu_seconds;
                samples[w] = sat_add(samples[w], d->samples);
        }
        a = json_object_new_array();
        r = a ? json_add(o, "weeks", a) : -ENOMEM;
        for (size_t w = 0; r >= 0 && w < n_weeks; w++) {
                json_object *e = json_object_new_object(), *g = json_object_new_array();
                double total = 0;

                for (size_t k = 0; k <= shown; k++)
                        total += cpu[w * (shown + 1) + k];
                if ((r = json_append(a, e)) < 0 ||
                    (r = json_add(e, "start", json_object_new_int64(first + (int64_t) w * 7 * DAY))) < 0 ||
                    (r = json_add(e, "samples", json_object_new_int64(samples[w]))) < 0 ||
                    (r = json_add(e, "cpu_seconds", json_number(total, DECIMALS))) < 0 ||
                    (r = json_add(e, "groups", g)) < 0)
                        break;
                for (size_t k = 0; r >= 0 && k < shown; k++)
                        r = json_append(g, json_number(cpu[w * (shown + 1) + k], DECIMALS));
                if (r >= 0)
                        r = json_add(e, "other", json_number(cpu[w * (shown + 1) + shown], DECIMALS));
        }
        free(cpu);
        free(samples);
        return r;
}

static const char *const apps_args[] = { "since", "until", "by", "top", "user", "account", "partition", "app", NULL };

/* The top groups; "other" and the weeks are in the JSON answer only. */
const CsvTable api_apps_csv = CSV_TABLE("groups", NULL, "lmk-apps.csv",
        { "name" }, { "kind" }, { "samples" }, CSV_SHARE_COLUMNS, { "cpu_seconds" }, { "core_hours" },
        { "runs" });

void api_apps(Server *s, Request *req, Reply *reply) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        int64_t now = (int64_t) time(NULL), since = 0, until = now;
        const char *by_arg = request_arg(req, "by"), *user;
        AppMixBy by = APP_MIX_BY_APP;
        unsigned top = DEFAULT_TOP;
        AppMixList l = {};
        MixAnswer m = {};
        json_object *a, *other;
        int64_t other_samples = 0, other_runs = 0;
        double other_cpu = 0;
        size_t shown;
        int r;

        if (!request_check_args(req, apps_args, reply) ||
            !arg_time(req, "since", "30d", now, &since, reply) ||
            !arg_time(req, "until", NULL, now, &until, reply) ||
            !arg_uint(req, "top", 1, MAX_TOP, &top, reply))
                return;
        if (by_arg) {
                for (by = 0; by < _APP_MIX_BY_MAX; by++)
                        if (streq(by_arg, by_names[by]))
                                break;
                if (by == _APP_MIX_BY_MAX) {
                        reply_error(reply, MHD_HTTP_BAD_REQUEST, "by",
                                    "by=%s: expected app, user, account or partition", by_arg);
                        return;
                }
        }
        /* Site views show applications, accounts and partitions to people;
         * other people's names and use only to admins. */
        user = request_arg(req, "user");
        if (!req->identity->admin &&
            (by == APP_MIX_BY_USER || (user && (!req->identity->user || !streq(user, req->identity->user))))) {
                auth_denied(&s->auth, req, "not-yours");
                reply_error(reply, MHD_HTTP_FORBIDDEN, by == APP_MIX_BY_USER ? "by" : "user",
                            "time per user is for admins: a person may ask only for their own (user=%s)",
                            req->identity->user ?: "?");
                return;
        }
        /* the applications of one account: its leads' (and admins') */
        if (!api_account_allowed(s, req, request_arg(req, "account"), reply))
                return;
        if (until < since) {
                reply_error(reply, MHD_HTTP_BAD_REQUEST, "until", "until is before since");
                return;
        }
        r = s->storage->ops->list_app_mix(s->storage, &(AppMixFilter) {
                .since = since, .until = until, .by = by, .user = user, .account = request_arg(req, "account"),
                .partition = request_arg(req, "partition"), .app = request_arg(req, "app") }, &l);
        if (r < 0) {
                reply_storage_error(reply, r);
                return;
        }
        r = mix_group(&l, by, request_arg(req, "app"), &m);
        shown = MIN(m.n, (size_t) top);

        o = json_object_new_object();
        a = json_object_new_array();
        if (r >= 0)
                r = !o || !a ? -ENOMEM : 0;
        if (r >= 0 && ((r = json_add(o, "since", json_object_new_int64(l.since))) < 0 ||
                       (r = json_add(o, "until", json_object_new_int64(l.until))) < 0 ||
                       (r = json_add(o, "grain", json_object_new_string("day"))) < 0 ||
                       (r = json_add(o, "by", json_object_new_string(by_names[by]))) < 0 ||
                       (r = json_add(o, "top", json_object_new_int64(top))) < 0 ||
                       (r = json_add(o, "total_samples", json_object_new_int64(m.total_samples))) < 0 ||
                       (r = json_add(o, "total_cpu_seconds", json_number(m.total_cpu_seconds, DECIMALS))) < 0 ||
                       (r = json_add(o, "total_core_hours", json_number(m.total_cpu_seconds / 3600, DECIMALS))) < 0 ||
                       (r = json_add(o, "total_runs", json_object_new_int64(m.total_runs))) < 0))
                json_object_put(TAKE_PTR(a));
        if (r >= 0)
                r = json_add(o, "groups", a);
        for (size_t i = 0; r >= 0 && i < m.n; i++) {
                const MixGroup *g = m.order[i];
                json_object *e;

                if (i >= shown) {
                        other_samples = sat_add(other_samples, g->samples);
                        other_runs = sat_add(other_runs, g->runs);
                        other_cpu += g->cpu_seconds;
                        continue;
                }
                e = json_object_new_object();
                if ((r = json_append(a, e)) < 0 ||
                    (r = json_add(e, "name", json_string_or_null(*g->name ? g->name : NULL))) < 0 ||
                    (g->kind && (r = json_add(e, "kind", json_object_new_string(g->kind))) < 0) ||
                    (r = add_figures(e, g->samples, m.total_samples, g->cpu_seconds, g->runs)) < 0)
                        break;
        }
        /* everything else: null when the top holds every group */
        if (r >= 0 && m.n > shown) {
                other = json_object_new_object();
                if ((r = json_add(o, "other", other)) >= 0 &&
                    (r = json_add(other, "groups", json_object_new_int64((int64_t) (m.n - shown)))) >= 0)
                        r = add_figures(other, other_samples, m.total_samples, other_cpu, other_runs);
        } else if (r >= 0)
                r = json_add(o, "other", json_null());
        if (r >= 0)
                r = add_weeks(o, &l, &m, shown);
        mix_answer_free(&m);
        app_mix_list_free(&l);
        if (r < 0) {
                reply_oom(reply);
                return;
        }
        reply_json(reply, MHD_HTTP_OK, TAKE_PTR(o));
}
