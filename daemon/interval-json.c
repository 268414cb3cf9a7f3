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

static json_object *str_or_null(const char *s) {
        return s ? json_text_new(s) : NULL;
}

static json_object *u64_or_null(bool valid, double v) {
        return valid ? json_object_new_int64((int64_t) llround(v)) : NULL;
}

/* Adds cpu_time_ns, cycles, instructions, ipc and "events" for the extra
 * counters. For sampled rows, times are samples x period and counts are the
 * windows' rates scaled to that time; for exact totals, scale is 1. */
static void add_counters(json_object *o, const Interval *iv, double cpu_time_ns, bool have_time, const uint64_t *counts,
                         const bool *valid, double scale) {
        const EventSpec *ev = iv->events;
        size_t n = iv->n_events;
        json_object *extra = NULL;
        int ci = -1, ii = -1;

        json_object_object_add(o, BF_CPU_TIME_NS, u64_or_null(have_time, cpu_time_ns));
        for (size_t i = 0; i < n; i++) {
                if (streq(ev[i].role, BF_ROLE_CYCLES))
                        ci = (int) i;
                else if (streq(ev[i].role, BF_ROLE_INSTRUCTIONS))
                        ii = (int) i;
                else {
                        if (!extra)
                                extra = json_object_new_object();
                        json_object_object_add(extra, ev[i].role, u64_or_null(valid[i], (double) counts[i] * scale));
                }
        }
        json_object_object_add(o, BF_CYCLES, u64_or_null(ci >= 0 && valid[ci], ci >= 0 ? (double) counts[ci] * scale : 0));
        json_object_object_add(o, BF_INSTRUCTIONS,
                               u64_or_null(ii >= 0 && valid[ii], ii >= 0 ? (double) counts[ii] * scale : 0));
        if (ci >= 0 && ii >= 0 && valid[ci] && valid[ii] && counts[ci] > 0)
                json_object_object_add(o, "ipc", json_object_new_double((double) counts[ii] / (double) counts[ci]));
        else
                json_object_object_add(o, "ipc", NULL);
        if (extra)
                json_object_object_add(o, BF_EVENTS, extra);
}

/* Rates at the row's code location from its burst samples: events per
 * second of each counter, and IPC. */
static json_object *burst_json(const Interval *iv, const HistRow *row) {
        json_object *o = json_object_new_object(), *rates = json_object_new_object();
        const EventSpec *ev;
        double secs = (double) row->burst_ns / 1e9;
        int ci = -1, ii = -1;
        size_t n;

        ev = iv->events;
        n = iv->n_events;
        json_object_object_add(o, BF_BURST_SAMPLES, json_object_new_int64((int64_t) row->burst_samples));
        json_object_object_add(o, BF_BURST_WINDOW_NS, json_object_new_int64((int64_t) row->burst_ns));
        for (size_t i = 0; i < n; i++) {
                bool valid = row->burst_counted[i] > 0 && secs > 0;

                json_object_object_add(rates, ev[i].role,
                                       valid ? json_object_new_double((double) row->burst_counts[i] / secs) : NULL);
                if (streq(ev[i].role, BF_ROLE_CYCLES) && valid)
                        ci = (int) i;
                if (streq(ev[i].role, BF_ROLE_INSTRUCTIONS) && valid)
                        ii = (int) i;
        }
        json_object_object_add(o, BF_BURST_PER_SECOND, rates);
        json_object_object_add(o, "ipc", ci >= 0 && ii >= 0 && row->burst_counts[ci] > 0
                                                 ? json_object_new_double((double) row->burst_counts[ii] /
                                                                          (double) row->burst_counts[ci])
                                                 : NULL);
        return o;
}

static json_object *row_json(const Interval *iv, const HistRow *row) {
        json_object *o = json_object_new_object();
        const Object *obj = row->key.obj;
        char hex[2 * BUILD_ID_MAX + 1];
        double time_ns = (double) row->samples * 1e9 / iv->frequency_hz;
        bool valid[LMK_MAX_COUNTERS];

        json_object_object_add(o, BF_ROW_JOB, str_or_null(row->key.job));
        json_object_object_add(o, BF_ROW_STEP, str_or_null(row->key.step));
        json_object_object_add(o, BF_ROW_USER, json_text_new(user_name(row->key.uid)));
        json_object_object_add(o, "uid", json_object_new_int64(row->key.uid));
        json_object_object_add(o, BF_ROW_COMM, json_text_new(row->key.comm));
        json_object_object_add(o, BF_ROW_OBJECT, json_text_new(obj->path));
        json_object_object_add(o, BF_ROW_KIND, json_text_new(code_kind_to_string(row->key.kind)));
        if (obj->build_id_size > 0) {
                buildid_to_hex(obj->build_id, obj->build_id_size, hex);
                json_object_object_add(o, BF_ROW_BUILD_ID, json_text_new(hex));
        } else
                json_object_object_add(o, BF_ROW_BUILD_ID, NULL);
        json_object_object_add(o, BF_ROW_PHASE, json_text_new(row->key.phase));
        json_object_object_add(o, BF_ROW_SAMPLES, json_object_new_int64((int64_t) row->samples));
        for (unsigned i = 0; i < LMK_MAX_COUNTERS; i++)
                valid[i] = row->counted[i] > 0;
        add_counters(o, iv, time_ns, true, row->counts, valid,
                     row->window_ns > 0 ? time_ns / (double) row->window_ns : 0.0);
        if (row->multiplexed > 0)
                json_object_object_add(o, BF_ROW_MULTIPLEXED_SAMPLES, json_object_new_int64((int64_t) row->multiplexed));
        if (row->burst_samples > 0)
                json_object_object_add(o, BF_ROW_BURST, burst_json(iv, row));
        return o;
}

/* Whether the exact totals hold counter role i whole: from the threads'
 * own fields, or from the switch program. */
static bool exact_count(const Interval *iv, unsigned i) {
        return i < iv->n_events && iv->counters[i].available &&
               (iv->switch_program || (iv->thread_counted & (UINT32_C(1) << i)));
}

static json_object *total_json(const Interval *iv, const TotalRow *t) {
        json_object *o = json_object_new_object();
        bool valid[LMK_MAX_COUNTERS];

        for (unsigned i = 0; i < LMK_MAX_COUNTERS; i++)
                valid[i] = exact_count(iv, i);
        json_object_object_add(o, "job", str_or_null(t->key.job));
        json_object_object_add(o, "step", str_or_null(t->key.step));
        json_object_object_add(o, "user", json_text_new(user_name(t->key.uid)));
        json_object_object_add(o, "uid", json_object_new_int64(t->key.uid));
        json_object_object_add(o, "comm", json_text_new(t->key.comm));
        add_counters(o, iv, (double) t->cpu_time_ns, true, t->counts, valid, 1.0);
        json_object_object_add(o, "switches", json_object_new_int64((int64_t) t->switches));
        return o;
}

static json_object *counters_json(const Interval *iv) {
        json_object *arr = json_object_new_array();
        const CounterState *cs = iv->counters;
        const EventSpec *ev = iv->events;
        size_t n = iv->n_events;

        for (size_t i = 0; i < n; i++) {
                json_object *o = json_object_new_object();

                json_object_object_add(o, BF_COUNTER_ROLE, json_text_new(ev[i].role));
                json_object_object_add(o, BF_COUNTER_EVENT, json_text_new(ev[i].name));
                json_object_object_add(o, BF_COUNTER_SOURCE, str_or_null(ev[i].source));
                json_object_object_add(o, BF_COUNTER_AVAILABLE, json_object_new_boolean(cs[i].available));
                if (!cs[i].available) {
                        json_object_object_add(o, BF_COUNTER_ERROR, json_text_new(
                                ev[i].detail[0] ? ev[i].detail : counter_error_text(cs[i].error)));
                        json_object_array_add(arr, o);
                        continue;
                }
                json_object_object_add(o, "total", json_object_new_int64((int64_t) cs[i].total));
                json_object_object_add(o, "in_windows", json_object_new_int64((int64_t) iv->window_counts[i]));
                json_object_object_add(o, "in_gaps", json_object_new_int64((int64_t) iv->gap_counts[i]));
                json_object_object_add(o, "running_fraction",
                                       json_object_new_double(cs[i].enabled_ns ? (double) cs[i].running_ns /
                                                                                         (double) cs[i].enabled_ns : 0.0));
                json_object_array_add(arr, o);
        }
        return arr;
}

static json_object *text_or_null(const char *s) {
        return s && *s ? json_text_new(s) : NULL;
}

static json_object *count_or_null(uint32_t v) {
        return v == JOB_UNSET || v == 0 ? NULL : json_object_new_int64(v);
}

static json_object *jobs_json(const Interval *iv, TotalRow **totals, size_t nt) {
        const JobTable *t = iv->jobs;
        json_object *arr = json_object_new_array();
        size_t n = iv->n_events;
        Job *j;
        size_t i;

        HASHMAP_FOREACH(j, t->jobs, i) {
                json_object *o, *notes;
                uint64_t cpu = 0, counts[LMK_MAX_COUNTERS] = {};
                bool valid[LMK_MAX_COUNTERS];

                if (!j->seen)
                        continue;
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
                                valid[c] = c < n && (j->counted_valid & (UINT32_C(1) << c));
                                counts[c] = j->counts[c];
                        }
                o = json_object_new_object();
                json_object_object_add(o, BF_JOB_JOB, json_text_new(j->display));
                json_object_object_add(o, BF_JOB_USER, text_or_null(j->info.user[0] ? j->info.user :
                                                               j->info.uid != JOB_UNSET ? user_name(j->info.uid) : NULL));
                json_object_object_add(o, "uid", j->info.uid == JOB_UNSET ? NULL : json_object_new_int64(j->info.uid));
                json_object_object_add(o, BF_JOB_ACCOUNT, text_or_null(j->info.account));
                json_object_object_add(o, BF_JOB_PARTITION, text_or_null(j->info.partition));
                json_object_object_add(o, BF_JOB_NAME, text_or_null(j->info.name));
                json_object_object_add(o, BF_JOB_NODES, count_or_null(j->info.nodes));
                json_object_object_add(o, BF_JOB_TASKS, count_or_null(j->info.tasks));
                json_object_object_add(o, BF_JOB_CPUS_ALLOCATED, count_or_null(job_cpus_allocated(j)));
                json_object_object_add(o, BF_JOB_CLUSTER, text_or_null(j->info.cluster));
                notes = json_object_new_object();
                for (size_t k = 0; k < j->info.notes.n; k++)
                        json_object_object_add(notes, job_notes_key(&j->info.notes, k),
                                               json_text_new(job_notes_value(&j->info.notes, k)));
                json_object_object_add(o, BF_JOB_NOTES, notes);
                json_object_object_add(o, BF_JOB_FIRST_SEEN, json_object_new_double(j->first_seen));
                json_object_object_add(o, BF_JOB_LAST_SEEN, json_object_new_double(j->last_seen));
                json_object_object_add(o, BF_JOB_ENDED, json_object_new_boolean(j->ended));
                add_counters(o, iv, (double) cpu, true, counts, valid, 1.0);
                if (iv->energy && !iv->energy_since_start) {
                        json_object_object_add(o, BF_JOB_ENERGY_JOULES, json_object_new_double(j->energy_joules));
                        json_object_object_add(o, BF_JOB_ENERGY_ALONE_JOULES,
                                               json_object_new_double(j->energy_alone_joules));
                }
                json_object_array_add(arr, o);
        }
        return arr;
}

/* "energy": the node's, per zone and together (docs/batch-format.md). */
static json_object *energy_json(const Interval *iv) {
        json_object *o = json_object_new_object(), *zones = json_object_new_array();
        double sum = 0;

        for (size_t i = 0; i < iv->energy->n; i++) {
                const PowercapZone *z = &iv->energy->zones[i];
                double joules = iv->energy_since_start ? z->joules_total : z->joules;
                json_object *e = json_object_new_object();

                json_object_object_add(e, BF_ZONE_ZONE, json_object_new_string(z->name));
                json_object_object_add(e, BF_ZONE_KIND, json_object_new_string(z->kind));
                json_object_object_add(e, BF_ZONE_JOULES, json_object_new_double(joules));
                json_object_array_add(zones, e);
                sum += joules;
        }
        json_object_object_add(o, BF_ENERGY_SOURCE, json_object_new_string("powercap"));
        json_object_object_add(o, BF_ENERGY_JOULES, json_object_new_double(sum));
        json_object_object_add(o, BF_ENERGY_UNATTRIBUTED_JOULES, json_object_new_double(iv->energy_unattributed_joules));
        json_object_object_add(o, BF_ENERGY_ZONES, zones);
        return o;
}

static json_object *markers_json(const Interval *iv) {
        json_object *arr = json_object_new_array();

        for (size_t i = 0; i < iv->n_markers_off; i++) {
                const MarkerOff *x = &iv->markers_off[i];
                json_object *o = json_object_new_object();

                json_object_object_add(o, BF_MARKER_JOB, x->job[0] ? json_text_new(x->job) : NULL);
                json_object_object_add(o, BF_MARKER_COMM, json_text_new(x->comm));
                json_object_object_add(o, BF_MARKER_PHASE, json_text_new(x->name));
                json_object_object_add(o, BF_MARKER_STATE, json_text_new(marker_off_reason(x->reason)));
                json_object_array_add(arr, o);
        }
        return arr;
}

/* Per-rank figures: (job, step, rank, phase) with samples, those in
 * communication libraries, and the times of the first and last sample. */
static json_object *ranks_json(RankRow **ranks, size_t n) {
        json_object *arr = json_object_new_array_ext((int) n);

        for (size_t i = 0; i < n; i++) {
                const RankRow *r = ranks[i];
                json_object *o = json_object_new_object();

                json_object_object_add(o, BF_RANK_JOB, json_text_new(r->key.job));
                json_object_object_add(o, BF_RANK_STEP, str_or_null(r->key.step));
                json_object_object_add(o, BF_RANK_RANK, json_object_new_int64(r->key.rank));
                json_object_object_add(o, BF_RANK_PHASE, json_text_new(r->key.phase));
                json_object_object_add(o, BF_RANK_SAMPLES, json_object_new_int64((int64_t) r->samples));
                json_object_object_add(o, BF_RANK_COMM_SAMPLES, json_object_new_int64((int64_t) r->comm_samples));
                json_object_object_add(o, BF_RANK_FIRST, json_object_new_double(r->first));
                json_object_object_add(o, BF_RANK_LAST, json_object_new_double(r->last));
                json_object_array_add(arr, o);
        }
        return arr;
}

int interval_add_rows(const Interval *iv, json_object *root) {
        Histogram *h = iv->hist;
        _cleanup_free_ HistRow **rows = histogram_sorted(h);
        _cleanup_free_ TotalRow **totals = NULL;
        _cleanup_free_ RankRow **ranks = NULL;
        size_t n = histogram_rows(h), nt, nr;
        json_object *arr;

        totals = histogram_sorted_totals(h, &nt);
        ranks = histogram_sorted_ranks(h, &nr);
        if (!rows || !totals || !ranks)
                return -ENOMEM;
        arr = json_object_new_array_ext((int) n);
        for (size_t i = 0; i < n; i++)
                json_object_array_add(arr, row_json(iv, rows[i]));
        json_object_object_add(root, BF_ROWS, arr);
        arr = json_object_new_array_ext((int) nt);
        for (size_t i = 0; i < nt; i++)
                json_object_array_add(arr, total_json(iv, totals[i]));
        json_object_object_add(root, "totals", arr);
        json_object_object_add(root, BF_COUNTERS, counters_json(iv));
        json_object_object_add(root, BF_MARKERS, markers_json(iv));
        json_object_object_add(root, BF_JOBS, jobs_json(iv, totals, nt));
        /* only where the node has energy counters: the field is optional */
        if (iv->energy)
                json_object_object_add(root, BF_ENERGY, energy_json(iv));
        /* only where there are ranks: the field is optional (batch-format.md) */
        if (nr > 0)
                json_object_object_add(root, BF_RANKS, ranks_json(ranks, nr));
        return 0;
}

static json_object *positive_or_null(uint64_t v) {
        return v > 0 ? json_object_new_int64((int64_t) v) : NULL;
}

json_object *node_type_json(const NodeType *t) {
        json_object *o = json_object_new_object(), *gpus = json_object_new_array();
        char hex[8];

        json_object_object_add(o, BF_TYPE_CPU_MODEL, text_or_null(t->cpu_model));
        json_object_object_add(o, BF_TYPE_SOCKETS, positive_or_null(t->sockets));
        json_object_object_add(o, BF_TYPE_CORES, positive_or_null(t->cores));
        json_object_object_add(o, BF_TYPE_THREADS, positive_or_null(t->threads));
        json_object_object_add(o, BF_TYPE_MEMORY_BYTES, positive_or_null(t->memory_bytes));
        for (size_t i = 0; i < t->n_gpus; i++) {
                const NodeGpu *g = &t->gpus[i];
                json_object *e = json_object_new_object();

                json_object_object_add(e, BF_GPU_VENDOR, json_object_new_string(g->vendor));
                snprintf(hex, sizeof(hex), "%04x", g->vendor_id);
                json_object_object_add(e, BF_GPU_VENDOR_ID, json_object_new_string(hex));
                snprintf(hex, sizeof(hex), "%04x", g->device_id);
                json_object_object_add(e, BF_GPU_DEVICE_ID, g->device_id ? json_object_new_string(hex) : NULL);
                json_object_object_add(e, BF_GPU_NAME, text_or_null(g->name));
                json_object_object_add(e, BF_GPU_COUNT, json_object_new_int64(g->count));
                json_object_array_add(gpus, e);
        }
        json_object_object_add(o, BF_TYPE_GPUS, gpus);
        json_object_object_add(o, BF_TYPE_GPUS_OTHER, json_object_new_int64(t->n_gpus_other));
        json_object_object_add(o, BF_TYPE_KERNEL, text_or_null(t->kernel));
        return o;
}

json_object *interval_lmkd_stats(const Interval *iv) {
        const MonitorStats *st = &iv->stats;
        const ProcessTableStats *ps = &iv->procs;
        json_object *self = json_object_new_object();

        json_object_object_add(self, "proc_scans", json_object_new_int64((int64_t) ps->scans));
        json_object_object_add(self, "proc_rescans", json_object_new_int64((int64_t) st->rescans));
        json_object_object_add(self, "bad_map_lines", json_object_new_int64((int64_t) ps->bad_map_lines));
        json_object_object_add(self, "forks", json_object_new_int64((int64_t) ps->forks));
        json_object_object_add(self, "execs", json_object_new_int64((int64_t) ps->execs));
        json_object_object_add(self, "exits", json_object_new_int64((int64_t) ps->exits));
        json_object_object_add(self, "mmaps", json_object_new_int64((int64_t) ps->mmaps));
        json_object_object_add(self, "records_lost", json_object_new_int64((int64_t) st->sideband_lost));
        json_object_object_add(self, "phase_faults", json_object_new_int64((int64_t) st->phase_faults));
        json_object_object_add(self, "burst_samples", json_object_new_int64((int64_t) st->burst_samples));
        json_object_object_add(self, "job_notices", json_object_new_int64((int64_t) iv->jobs->notices));
        json_object_object_add(self, "job_notices_refused",
                               json_object_new_int64((int64_t) iv->jobs->bad_notices));
        json_object_object_add(self, "regions_learned", json_object_new_int64((int64_t) st->regions));
        json_object_object_add(self, "rows_overflowed",
                               json_object_new_int64((int64_t) histogram_overflowed(iv->hist)));
        json_object_object_add(self, "rank_samples_overflowed",
                               json_object_new_int64((int64_t) histogram_ranks_overflowed(iv->hist)));
        return self;
}

