/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <pwd.h>
#include <string.h>

#include "batch-fields.h"
#include "hashmap.h"
#include "interval-json.h"
#include "liblmk-state.h"
#include "json-text.h"
#include "log.h"
#include "utf8.h"
#include "util.h"

static Hashmap *user_cache;

const char *user_name(uint32_t uid) {
        struct passwd pw, *res = NULL;
        char buf[4096], *name;

        if (!user_cache && !(user_cache = hashmap_new(&uint64_hash_ops)))
                return "?";
        name = hashmap_get(user_cache, INT_TO_KEY(uid));
        if (name)
                return name;
        if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) == 0 && res)
                name = strdup(res->pw_name);
        else if (asprintf(&name, "%" PRIu32, uid) < 0)
                name = NULL;
        if (!name || hashmap_put(user_cache, INT_TO_KEY(uid), name) < 0) {
                free(name);
                return "?";
        }
        return name;
}

const char *counter_error_text(int error) {
        switch (-error) {
        case ENOENT:
        case EOPNOTSUPP:
        case ENODEV:
                return "perf_event_open: the CPU's PMU does not count this event here "
                       "(no hardware counters, e.g. in a virtual machine)";
        case EACCES:
        case EPERM:
                return "perf_event_open: permission denied (lmkd needs CAP_PERFMON)";
        case EBUSY:
                return "perf_event_open: the counter is in use by another tool";
        case EINVAL:
                return "perf_event_open: this PMU rejects the event's encoding";
        default:
                return strerror(-error);
        }
}

void json_member(int *r, json_object *o, const char *key, json_object *v) {
        if (*r >= 0 && v && json_object_object_add(o, key, v) == 0)
                return;
        json_object_put(v);
        if (*r >= 0)
                *r = -ENOMEM;
}

void json_member_or_null(int *r, json_object *o, const char *key, bool present, json_object *v) {
        if (present)
                json_member(r, o, key, v);
        else if (*r >= 0 && json_object_object_add(o, key, NULL) < 0)
                *r = -ENOMEM;
}

void json_element(int *r, json_object *a, json_object *v) {
        if (*r >= 0 && v && json_object_array_add(a, v) == 0)
                return;
        json_object_put(v);
        if (*r >= 0)
                *r = -ENOMEM;
}

json_object *json_built(json_object *o, int r) {
        if (r >= 0)
                return o;
        json_object_put(o);
        return NULL;
}

/* s as a string, where there is one: NULL is null */
static void add_text_or_null(int *r, json_object *o, const char *key, const char *s) {
        json_member_or_null(r, o, key, s, s ? json_text_new(s) : NULL);
}

/* the same, "" null too */
static void add_nonempty_or_null(int *r, json_object *o, const char *key, const char *s) {
        json_member_or_null(r, o, key, s && *s, s && *s ? json_text_new(s) : NULL);
}

static void add_count_or_null(int *r, json_object *o, const char *key, bool valid, double v) {
        json_member_or_null(r, o, key, valid, valid ? json_object_new_int64((int64_t) llround(v)) : NULL);
}

/* Adds cycles, instructions, ipc (with_ipc) and "events" for the extra
 * counters, scaled. */
static void add_counts(int *r, json_object *o, const Interval *iv, const uint64_t *counts, const bool *valid,
                       double scale, bool with_ipc) {
        const EventSpec *ev = iv->events;
        size_t n = iv->n_events;
        json_object *extra = NULL;
        int ci = -1, ii = -1, re = 0;

        for (size_t i = 0; i < n; i++) {
                if (streq(ev[i].role, BF_ROLE_CYCLES))
                        ci = (int) i;
                else if (streq(ev[i].role, BF_ROLE_INSTRUCTIONS))
                        ii = (int) i;
                else {
                        if (!extra && !(extra = json_object_new_object()))
                                re = -ENOMEM;
                        add_count_or_null(&re, extra, ev[i].role, valid[i], (double) counts[i] * scale);
                }
        }
        add_count_or_null(r, o, BF_CYCLES, ci >= 0 && valid[ci], ci >= 0 ? (double) counts[ci] * scale : 0);
        add_count_or_null(r, o, BF_INSTRUCTIONS, ii >= 0 && valid[ii], ii >= 0 ? (double) counts[ii] * scale : 0);
        if (ci >= 0 && ii >= 0 && valid[ci] && valid[ii] && counts[ci] > 0 && with_ipc)
                json_member(r, o, "ipc", json_object_new_double((double) counts[ii] / (double) counts[ci]));
        else if (with_ipc)
                json_member_or_null(r, o, "ipc", false, NULL);
        if (extra || re < 0)
                json_member(r, o, BF_EVENTS, json_built(extra, re));
}

/* Adds cpu_time_ns, cycles, instructions, ipc and "events" for the extra
 * counters. For sampled rows, times are samples x period and counts are the
 * windows' rates scaled to that time; for exact totals, scale is 1. */
static void add_counters(int *r, json_object *o, const Interval *iv, double cpu_time_ns, bool have_time,
                         const uint64_t *counts, const bool *valid, double scale) {
        add_count_or_null(r, o, BF_CPU_TIME_NS, have_time, cpu_time_ns);
        add_counts(r, o, iv, counts, valid, scale, true);
}

/* Rates at the row's code location from its burst samples: events per
 * second of each counter, and IPC. */
static json_object *burst_json(const Interval *iv, const HistRow *row) {
        json_object *o = json_object_new_object(), *rates = json_object_new_object();
        const EventSpec *ev = iv->events;
        double secs = (double) row->burst_ns / 1e9;
        int ci = -1, ii = -1, r = o ? 0 : -ENOMEM, rr = rates ? 0 : -ENOMEM;

        json_member(&r, o, BF_BURST_SAMPLES, json_object_new_int64((int64_t) row->burst_samples));
        json_member(&r, o, BF_BURST_WINDOW_NS, json_object_new_int64((int64_t) row->burst_ns));
        for (size_t i = 0; i < iv->n_events; i++) {
                bool valid = row->burst_counted[i] > 0 && secs > 0;

                json_member_or_null(&rr, rates, ev[i].role, valid,
                                    valid ? json_object_new_double((double) row->burst_counts[i] / secs) : NULL);
                if (streq(ev[i].role, BF_ROLE_CYCLES) && valid)
                        ci = (int) i;
                if (streq(ev[i].role, BF_ROLE_INSTRUCTIONS) && valid)
                        ii = (int) i;
        }
        json_member(&r, o, BF_BURST_PER_SECOND, json_built(rates, rr));
        if (ci >= 0 && ii >= 0 && row->burst_counts[ci] > 0)
                json_member(&r, o, "ipc",
                            json_object_new_double((double) row->burst_counts[ii] / (double) row->burst_counts[ci]));
        else
                json_member_or_null(&r, o, "ipc", false, NULL);
        return json_built(o, r);
}

static json_object *row_json(const Interval *iv, const HistRow *row) {
        json_object *o = json_object_new_object();
        const Object *obj = row->key.obj;
        char hex[2 * BUILD_ID_MAX + 1] = "";
        double time_ns = (double) row->samples * 1e9 / iv->frequency_hz;
        bool valid[LMK_MAX_COUNTERS];
        int r = o ? 0 : -ENOMEM;

        add_text_or_null(&r, o, BF_ROW_JOB, row->key.job);
        add_text_or_null(&r, o, BF_ROW_STEP, row->key.step);
        json_member(&r, o, BF_ROW_USER, json_text_new(user_name(row->key.uid)));
        json_member(&r, o, "uid", json_object_new_int64(row->key.uid));
        json_member(&r, o, BF_ROW_COMM, json_text_new(row->key.comm));
        json_member(&r, o, BF_ROW_OBJECT, json_text_new(obj->path));
        json_member(&r, o, BF_ROW_KIND, json_text_new(code_kind_to_string(row->key.kind)));
        if (obj->build_id_size > 0)
                buildid_to_hex(obj->build_id, obj->build_id_size, hex);
        add_nonempty_or_null(&r, o, BF_ROW_BUILD_ID, hex);
        json_member(&r, o, BF_ROW_PHASE, json_text_new(row->key.phase));
        json_member(&r, o, BF_ROW_SAMPLES, json_object_new_int64((int64_t) row->samples));
        for (unsigned i = 0; i < LMK_MAX_COUNTERS; i++)
                valid[i] = row->counted[i] > 0;
        add_counters(&r, o, iv, time_ns, true, row->counts, valid,
                     row->window_ns > 0 ? time_ns / (double) row->window_ns : 0.0);
        if (row->multiplexed > 0)
                json_member(&r, o, BF_ROW_MULTIPLEXED_SAMPLES, json_object_new_int64((int64_t) row->multiplexed));
        if (row->burst_samples > 0)
                json_member(&r, o, BF_ROW_BURST, burst_json(iv, row));
        return json_built(o, r);
}

/* functions[] name their rows[] entry by index (batch version 3): rows[]
 * of executables and libraries in the order of (job, step, object's path,
 * phase, build-id), each with its index in rows[], searched per function. */
typedef struct RowRef {
        const HistRow *row;
        size_t index;
} RowRef;

static int row_group_cmp(const char *job, const char *step, const Object *obj, const char *phase, const HistRow *row) {
        int c;

        if ((c = strcmp_null(job, row->key.job)) || (c = strcmp_null(step, row->key.step)) ||
            (c = strcmp(obj->path, row->key.obj->path)))
                return c;
        return strcmp(phase, row->key.phase);
}

static int row_ref_cmp(const void *a, const void *b) {
        const RowRef *x = a, *y = b;
        const HistKey *k = &x->row->key;
        int c;

        if ((c = row_group_cmp(k->job, k->step, k->obj, k->phase, y->row)) ||
            (c = object_build_id_cmp(k->obj, y->row->key.obj)))
                return c;
        return CMP(x->index, y->index);
}

/* For bsearch(): a function's rows, of its build unless it names none. */
static int row_ref_find(const void *key, const void *elem) {
        const FunctionRow *f = key;
        const HistRow *row = ((const RowRef *) elem)->row;
        int c = row_group_cmp(f->job, f->step, f->obj, f->phase, row);

        return c || !f->build_id ? c : object_build_id_cmp(f->obj, row->key.obj);
}

static RowRef *row_refs(HistRow *const *rows, size_t n, size_t *ret_n) {
        RowRef *v = malloc(MAX(n, (size_t) 1) * sizeof(*v));
        size_t k = 0;

        if (!v)
                return NULL;
        for (size_t i = 0; i < n; i++)
                if (rows[i]->key.kind == CODE_EXE || rows[i]->key.kind == CODE_LIB)
                        v[k++] = (RowRef) { rows[i], i };
        qsort(v, k, sizeof(*v), row_ref_cmp);
        *ret_n = k;
        return v;
}

/* functions[]: one function of one (job, step, object, phase), named by
 * the index of one of its rows (of its build, unless build_id is null: an
 * "other" over several builds of the path), its counters as its rows'
 * (sampled: the windows' rates scaled to its time). */
static json_object *function_json(const Interval *iv, const RowRef *ref, const FunctionRow *f) {
        json_object *o = json_object_new_object();
        double time_ns = (double) f->samples * 1e9 / iv->frequency_hz;
        bool valid[LMK_MAX_COUNTERS];
        int r = o ? 0 : -ENOMEM;

        json_member(&r, o, BF_FUNCTION_ROW, json_object_new_int64((int64_t) ref->index));
        if (!f->build_id && ref->row->key.obj->build_id_size > 0)
                json_member_or_null(&r, o, BF_FUNCTION_BUILD_ID, false, NULL);
        switch (f->kind) {
        case FUNCTION_NAMED:
                json_member(&r, o, BF_FUNCTION_FUNCTION, json_text_new(f->name));
                break;
        case FUNCTION_UNNAMED:
                json_member(&r, o, BF_FUNCTION_OFFSET, json_object_new_int64((int64_t) f->offset));
                if (f->entry)
                        json_member(&r, o, BF_FUNCTION_ENTRY, json_object_new_boolean(true));
                break;
        case FUNCTION_OTHER:
                json_member(&r, o, BF_FUNCTION_OTHER, json_object_new_boolean(true));
                break;
        }
        json_member(&r, o, BF_FUNCTION_SAMPLES, json_object_new_int64((int64_t) f->samples));
        for (unsigned i = 0; i < LMK_MAX_COUNTERS; i++)
                valid[i] = f->counted & (UINT32_C(1) << i);
        add_counts(&r, o, iv, f->counts, valid, f->window_ns > 0 ? time_ns / (double) f->window_ns : 0.0, false);
        return json_built(o, r);
}

/* The functions come from rows[] (functions.c builds them per group of
 * rows): one without a row would be a bug, left out rather than the
 * batch. */
static json_object *functions_json(const Interval *iv, HistRow *const *rows, size_t n_rows) {
        _cleanup_free_ RowRef *refs = NULL;
        json_object *arr = json_object_new_array_ext(iv->functions ? (int) iv->functions->n : 0);
        int r = arr ? 0 : -ENOMEM;
        size_t n_refs;

        refs = row_refs(rows, n_rows, &n_refs);
        if (!refs)
                return json_built(arr, -ENOMEM);
        for (size_t i = 0; iv->functions && i < iv->functions->n && r >= 0; i++) {
                const FunctionRow *f = &iv->functions->v[i];
                const RowRef *ref = bsearch(f, refs, n_refs, sizeof(*refs), row_ref_find);

                if (ref)
                        json_element(&r, arr, function_json(iv, ref, f));
                else
                        log_error("Bug: function of %s in no row; left out", f->obj->path);
        }
        return json_built(arr, r);
}

/* Whether the exact totals hold counter role i whole: from the threads'
 * own fields, or from the switch program. */
static bool exact_count(const Interval *iv, unsigned i) {
        return i < iv->n_events && iv->counters[i].available &&
               (iv->switch_program || (iv->thread_counted & (UINT32_C(1) << i)));
}

/* totals[]: lmkd's own (its reports, the tests); no store reads them */
static json_object *total_json(const Interval *iv, const TotalRow *t) {
        json_object *o = json_object_new_object();
        bool valid[LMK_MAX_COUNTERS];
        int r = o ? 0 : -ENOMEM;

        for (unsigned i = 0; i < LMK_MAX_COUNTERS; i++)
                valid[i] = exact_count(iv, i);
        add_text_or_null(&r, o, "job", t->key.job);
        add_text_or_null(&r, o, "step", t->key.step);
        json_member(&r, o, "user", json_text_new(user_name(t->key.uid)));
        json_member(&r, o, "uid", json_object_new_int64(t->key.uid));
        json_member(&r, o, "comm", json_text_new(t->key.comm));
        add_counters(&r, o, iv, (double) t->cpu_time_ns, true, t->counts, valid, 1.0);
        json_member(&r, o, "switches", json_object_new_int64((int64_t) t->switches));
        return json_built(o, r);
}

static json_object *counter_json(const Interval *iv, size_t i) {
        const CounterState *cs = &iv->counters[i];
        const EventSpec *ev = &iv->events[i];
        json_object *o = json_object_new_object();
        int r = o ? 0 : -ENOMEM;

        json_member(&r, o, BF_COUNTER_ROLE, json_text_new(ev->role));
        json_member(&r, o, BF_COUNTER_EVENT, json_text_new(ev->name));
        add_text_or_null(&r, o, BF_COUNTER_SOURCE, ev->source);
        json_member(&r, o, BF_COUNTER_AVAILABLE, json_object_new_boolean(cs->available));
        if (!cs->available) {
                json_member(&r, o, BF_COUNTER_ERROR,
                            json_text_new(ev->detail[0] ? ev->detail : counter_error_text(cs->error)));
                return json_built(o, r);
        }
        json_member(&r, o, "total", json_object_new_int64((int64_t) cs->total));
        json_member(&r, o, "in_windows", json_object_new_int64((int64_t) iv->window_counts[i]));
        json_member(&r, o, "in_gaps", json_object_new_int64((int64_t) iv->gap_counts[i]));
        json_member(&r, o, "running_fraction",
                    json_object_new_double(cs->enabled_ns ? (double) cs->running_ns / (double) cs->enabled_ns : 0.0));
        return json_built(o, r);
}

/* a job's count, null where not known (JOB_UNSET, or 0) */
static void add_job_count(int *r, json_object *o, const char *key, uint32_t v) {
        bool known = v != JOB_UNSET && v != 0;

        json_member_or_null(r, o, key, known, known ? json_object_new_int64(v) : NULL);
}

static json_object *job_json(const Interval *iv, const Job *j, TotalRow **totals, size_t nt) {
        uint64_t cpu = 0, counts[LMK_MAX_COUNTERS] = {};
        bool valid[LMK_MAX_COUNTERS];
        json_object *o, *notes;
        int r, rn;

        /* exact totals: the sum of the job's (step, user, command) totals */
        for (size_t k = 0; k < nt; k++)
                if (totals[k]->key.job && streq(totals[k]->key.job, j->display)) {
                        cpu += totals[k]->cpu_time_ns;
                        for (unsigned c = 0; c < LMK_MAX_COUNTERS; c++)
                                counts[c] += totals[k]->counts[c];
                }
        for (unsigned c = 0; c < LMK_MAX_COUNTERS; c++)
                valid[c] = exact_count(iv, c);
        /* the job's cgroup counted it whole, its processes outside
         * the switch program's view too: that count wins, where
         * the threads do not keep the figure themselves */
        if (j->counted)
                for (unsigned c = 0; c < LMK_MAX_COUNTERS; c++) {
                        if (iv->thread_counted & (UINT32_C(1) << c))
                                continue;
                        valid[c] = c < iv->n_events && (j->counted_valid & (UINT32_C(1) << c));
                        counts[c] = j->counts[c];
                }
        o = json_object_new_object();
        r = o ? 0 : -ENOMEM;
        json_member(&r, o, BF_JOB_JOB, json_text_new(j->display));
        add_nonempty_or_null(&r, o, BF_JOB_USER, j->info.user[0] ? j->info.user :
                                                  j->info.uid != JOB_UNSET ? user_name(j->info.uid) : NULL);
        json_member_or_null(&r, o, "uid", j->info.uid != JOB_UNSET,
                            j->info.uid != JOB_UNSET ? json_object_new_int64(j->info.uid) : NULL);
        add_nonempty_or_null(&r, o, BF_JOB_ACCOUNT, j->info.account);
        add_nonempty_or_null(&r, o, BF_JOB_PARTITION, j->info.partition);
        add_nonempty_or_null(&r, o, BF_JOB_NAME, j->info.name);
        add_job_count(&r, o, BF_JOB_NODES, j->info.nodes);
        add_job_count(&r, o, BF_JOB_TASKS, j->info.tasks);
        add_job_count(&r, o, BF_JOB_CPUS_ALLOCATED, job_cpus_allocated(j));
        add_nonempty_or_null(&r, o, BF_JOB_CLUSTER, j->info.cluster);
        notes = json_object_new_object();
        rn = notes ? 0 : -ENOMEM;
        /* an opted-out job's notes describe its run: they stay here */
        for (size_t k = 0; k < j->info.notes.n && !job_opted_out(j); k++)
                json_member(&rn, notes, job_notes_key(&j->info.notes, k),
                            json_text_new(job_notes_value(&j->info.notes, k)));
        json_member(&r, o, BF_JOB_NOTES, json_built(notes, rn));
        json_member(&r, o, BF_JOB_FIRST_SEEN, json_object_new_double(j->first_seen));
        json_member(&r, o, BF_JOB_LAST_SEEN, json_object_new_double(j->last_seen));
        json_member(&r, o, BF_JOB_ENDED, json_object_new_boolean(j->ended));
        if (job_opted_out(j))
                /* its CPU time only: no counter says what its code did */
                add_count_or_null(&r, o, BF_CPU_TIME_NS, true, (double) cpu);
        else
                add_counters(&r, o, iv, (double) cpu, true, counts, valid, 1.0);
        if (job_opted_out(j)) {
                json_member(&r, o, BF_JOB_OPTED_OUT, json_object_new_boolean(true));
                json_member(&r, o, BF_JOB_SAMPLES, json_object_new_int64((int64_t) j->private_samples));
        }
        if (job_counters_released(j))
                json_member(&r, o, BF_JOB_COUNTERS_RELEASED, json_object_new_boolean(true));
        if (iv->energy && !iv->energy_since_start) {
                json_member(&r, o, BF_JOB_ENERGY_JOULES, json_object_new_double(j->energy_joules));
                json_member(&r, o, BF_JOB_ENERGY_ALONE_JOULES, json_object_new_double(j->energy_alone_joules));
        }
        return json_built(o, r);
}

/* "energy": the node's, per zone and together (docs/batch-format.md). */
static json_object *energy_json(const Interval *iv) {
        json_object *o = json_object_new_object(), *zones = json_object_new_array();
        int r = o ? 0 : -ENOMEM, rz = zones ? 0 : -ENOMEM;
        double sum = 0;

        for (size_t i = 0; i < iv->energy->n; i++) {
                const PowercapZone *z = &iv->energy->zones[i];
                double joules = iv->energy_since_start ? z->joules_total : z->joules;
                json_object *e = json_object_new_object();
                int re = e ? 0 : -ENOMEM;

                json_member(&re, e, BF_ZONE_ZONE, json_object_new_string(z->name));
                json_member(&re, e, BF_ZONE_KIND, json_object_new_string(z->kind));
                json_member(&re, e, BF_ZONE_JOULES, json_object_new_double(joules));
                json_element(&rz, zones, json_built(e, re));
                sum += joules;
        }
        json_member(&r, o, BF_ENERGY_SOURCE, json_object_new_string("powercap"));
        json_member(&r, o, BF_ENERGY_JOULES, json_object_new_double(sum));
        json_member(&r, o, BF_ENERGY_UNATTRIBUTED_JOULES, json_object_new_double(iv->energy_unattributed_joules));
        json_member(&r, o, BF_ENERGY_ZONES, json_built(zones, rz));
        return json_built(o, r);
}

static json_object *marker_json(const MarkerOff *x) {
        json_object *o = json_object_new_object();
        int r = o ? 0 : -ENOMEM;

        add_nonempty_or_null(&r, o, BF_MARKER_JOB, x->job);
        json_member(&r, o, BF_MARKER_COMM, json_text_new(x->comm));
        json_member(&r, o, BF_MARKER_PHASE, json_text_new(x->name));
        json_member(&r, o, BF_MARKER_STATE, json_text_new(marker_off_reason(x->reason)));
        return json_built(o, r);
}

/* Per-rank figures: (job, step, rank, phase) with samples, those in
 * communication libraries, and the times of the first and last sample. */
static json_object *rank_json(const RankRow *k) {
        json_object *o = json_object_new_object();
        int r = o ? 0 : -ENOMEM;

        json_member(&r, o, BF_RANK_JOB, json_text_new(k->key.job));
        add_text_or_null(&r, o, BF_RANK_STEP, k->key.step);
        json_member(&r, o, BF_RANK_RANK, json_object_new_int64(k->key.rank));
        json_member(&r, o, BF_RANK_PHASE, json_text_new(k->key.phase));
        json_member(&r, o, BF_RANK_SAMPLES, json_object_new_int64((int64_t) k->samples));
        json_member(&r, o, BF_RANK_COMM_SAMPLES, json_object_new_int64((int64_t) k->comm_samples));
        json_member(&r, o, BF_RANK_FIRST, json_object_new_double(k->first));
        json_member(&r, o, BF_RANK_LAST, json_object_new_double(k->last));
        return json_built(o, r);
}

static json_object *jobs_json(const Interval *iv, TotalRow **totals, size_t nt) {
        json_object *arr = json_object_new_array();
        int r = arr ? 0 : -ENOMEM;
        Job *j;
        size_t i;

        HASHMAP_FOREACH(j, iv->jobs->jobs, i)
                if (j->seen)
                        json_element(&r, arr, job_json(iv, j, totals, nt));
        return json_built(arr, r);
}

int interval_add_rows(const Interval *iv, json_object *root) {
        Histogram *h = iv->hist;
        _cleanup_free_ HistRow **rows = histogram_sorted(h);
        _cleanup_free_ TotalRow **totals = NULL;
        _cleanup_free_ RankRow **ranks = NULL;
        size_t n = histogram_rows(h), nt, nr;
        int r = 0;

        totals = histogram_sorted_totals(h, &nt);
        ranks = histogram_sorted_ranks(h, &nr);
        if (!rows || !totals || !ranks)
                return -ENOMEM;
        json_member(&r, root, BF_ROWS, JSON_ARRAY_OF(i, n, row_json(iv, rows[i])));
        json_member(&r, root, "totals", JSON_ARRAY_OF(i, nt, total_json(iv, totals[i])));
        json_member(&r, root, BF_COUNTERS, JSON_ARRAY_OF(i, iv->n_events, counter_json(iv, i)));
        json_member(&r, root, BF_MARKERS, JSON_ARRAY_OF(i, iv->n_markers_off, marker_json(&iv->markers_off[i])));
        json_member(&r, root, BF_JOBS, jobs_json(iv, totals, nt));
        /* only where the node has energy counters: the field is optional */
        if (iv->energy)
                json_member(&r, root, BF_ENERGY, energy_json(iv));
        /* only where there are ranks: the field is optional (batch-format.md) */
        if (nr > 0)
                json_member(&r, root, BF_RANKS, JSON_ARRAY_OF(i, nr, rank_json(ranks[i])));
        json_member(&r, root, BF_FUNCTIONS, functions_json(iv, rows, n));
        return r;
}

static void add_positive_or_null(int *r, json_object *o, const char *key, uint64_t v) {
        json_member_or_null(r, o, key, v > 0, v > 0 ? json_object_new_int64((int64_t) v) : NULL);
}

static json_object *gpu_json(const NodeGpu *g) {
        json_object *o = json_object_new_object();
        int r = o ? 0 : -ENOMEM;
        char hex[8];

        json_member(&r, o, BF_GPU_VENDOR, json_object_new_string(g->vendor));
        snprintf(hex, sizeof(hex), "%04x", g->vendor_id);
        json_member(&r, o, BF_GPU_VENDOR_ID, json_object_new_string(hex));
        snprintf(hex, sizeof(hex), "%04x", g->device_id);
        json_member_or_null(&r, o, BF_GPU_DEVICE_ID, g->device_id, g->device_id ? json_object_new_string(hex) : NULL);
        add_nonempty_or_null(&r, o, BF_GPU_NAME, g->name);
        json_member(&r, o, BF_GPU_COUNT, json_object_new_int64(g->count));
        return json_built(o, r);
}

json_object *node_type_json(const NodeType *t) {
        json_object *o = json_object_new_object();
        int r = o ? 0 : -ENOMEM;

        add_nonempty_or_null(&r, o, BF_TYPE_CPU_MODEL, t->cpu_model);
        add_positive_or_null(&r, o, BF_TYPE_SOCKETS, t->sockets);
        add_positive_or_null(&r, o, BF_TYPE_CORES, t->cores);
        add_positive_or_null(&r, o, BF_TYPE_THREADS, t->threads);
        add_positive_or_null(&r, o, BF_TYPE_MEMORY_BYTES, t->memory_bytes);
        json_member(&r, o, BF_TYPE_GPUS, JSON_ARRAY_OF(i, t->n_gpus, gpu_json(&t->gpus[i])));
        json_member(&r, o, BF_TYPE_GPUS_OTHER, json_object_new_int64(t->n_gpus_other));
        add_nonempty_or_null(&r, o, BF_TYPE_KERNEL, t->kernel);
        return json_built(o, r);
}

/* How naming went: files read and not, samples named, left for the
 * store, in "other", and the time it took. */
static json_object *functions_stats_json(const Interval *iv) {
        const FunctionStats *st = &iv->functions->stats;
        json_object *o = json_object_new_object();
        int r = o ? 0 : -ENOMEM;

        json_member(&r, o, "files", json_object_new_int64((int64_t) st->files));
        json_member(&r, o, "files_unopened", json_object_new_int64((int64_t) st->files_unopened));
        json_member(&r, o, "files_other_build", json_object_new_int64((int64_t) st->files_other_build));
        json_member(&r, o, "files_unread", json_object_new_int64((int64_t) st->files_unread));
        json_member(&r, o, "samples_named", json_object_new_int64((int64_t) st->samples_named));
        json_member(&r, o, "samples_unnamed", json_object_new_int64((int64_t) st->samples_unnamed));
        json_member(&r, o, "samples_entry", json_object_new_int64((int64_t) st->samples_entry));
        json_member(&r, o, "samples_other", json_object_new_int64((int64_t) st->samples_other));
        json_member(&r, o, "samples_dropped", json_object_new_int64((int64_t) st->samples_dropped));
        json_member(&r, o, "offsets_overflowed",
                    json_object_new_int64((int64_t) histogram_offsets_overflowed(iv->hist)));
        json_member(&r, o, "naming_ms", json_object_new_double((double) st->ns / 1e6));
        json_member(&r, o, "naming_cpu_ms", json_object_new_double((double) st->cpu_ns / 1e6));
        return json_built(o, r);
}

json_object *interval_lmkd_stats(const Interval *iv) {
        const MonitorStats *st = &iv->stats;
        const ProcessTableStats *ps = &iv->procs;
        json_object *self = json_object_new_object();
        int r = self ? 0 : -ENOMEM;

        json_member(&r, self, "proc_scans", json_object_new_int64((int64_t) ps->scans));
        json_member(&r, self, "proc_rescans", json_object_new_int64((int64_t) st->rescans));
        json_member(&r, self, "bad_map_lines", json_object_new_int64((int64_t) ps->bad_map_lines));
        json_member(&r, self, "forks", json_object_new_int64((int64_t) ps->forks));
        json_member(&r, self, "execs", json_object_new_int64((int64_t) ps->execs));
        json_member(&r, self, "exits", json_object_new_int64((int64_t) ps->exits));
        json_member(&r, self, "mmaps", json_object_new_int64((int64_t) ps->mmaps));
        json_member(&r, self, "records_lost", json_object_new_int64((int64_t) st->sideband_lost));
        json_member(&r, self, "phase_faults", json_object_new_int64((int64_t) st->phase_faults));
        json_member(&r, self, "burst_samples", json_object_new_int64((int64_t) st->burst_samples));
        json_member(&r, self, "job_notices", json_object_new_int64((int64_t) iv->jobs->notices));
        json_member(&r, self, "job_notices_refused", json_object_new_int64((int64_t) iv->jobs->bad_notices));
        json_member(&r, self, "job_opt_outs_refused", json_object_new_int64((int64_t) iv->jobs->opt_outs_refused));
        json_member(&r, self, "regions_learned", json_object_new_int64((int64_t) st->regions));
        json_member(&r, self, "rows_overflowed", json_object_new_int64((int64_t) histogram_overflowed(iv->hist)));
        json_member(&r, self, "rank_samples_overflowed",
                    json_object_new_int64((int64_t) histogram_ranks_overflowed(iv->hist)));
        if (iv->functions)
                json_member(&r, self, "functions", functions_stats_json(iv));
        return json_built(self, r);
}
