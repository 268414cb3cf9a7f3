/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "api/measured.h"
#include "http/json-out.h"
#include "analysis/measured.h"
#include "util.h"

#define RATE_DECIMALS 3
#define JOULE_DECIMALS 3
#define IPC_DECIMALS 3

int api_add_job_measured_info(json_object *o, const StoredJob *j) {
        json_object *e = NULL, *x = NULL;
        int r;

        if ((r = json_add(o, "node_type", json_string_or_null(j->node_type_id > 0 ? j->node_type : NULL))) < 0 ||
            (r = json_add(o, "node_types_differ", json_object_new_boolean(j->node_types_differ))) < 0)
                return r;
        if (j->has_energy) {
                double elapsed = j->last_seen - j->first_seen;

                e = json_object_new_object();
                if ((r = json_add(o, "energy", e)) < 0 ||
                    (r = json_add(e, "joules", json_number(j->energy_joules, JOULE_DECIMALS))) < 0 ||
                    (r = json_add(e, "alone_joules", json_number(j->energy_alone_joules, JOULE_DECIMALS))) < 0 ||
                    (r = json_add(e, "estimated_joules",
                                  json_number(MAX(j->energy_joules - j->energy_alone_joules, 0.0), JOULE_DECIMALS))) < 0 ||
                    (r = json_add(e, "mean_watts", json_number(elapsed > 0 ? j->energy_joules / elapsed : NAN,
                                                               JOULE_DECIMALS))) < 0)
                        return r;
        } else if ((r = json_add(o, "energy", json_null())) < 0)
                return r;
        if (!j->has_exact)
                return json_add(o, "exact", json_null());
        x = json_object_new_object();
        if ((r = json_add(o, "exact", x)) < 0 ||
            (r = json_add(x, "cpu_time_ns", json_int_or_null(j->exact_cpu_time_ns))) < 0 ||
            (r = json_add(x, "cycles", json_int_or_null(j->exact_cycles))) < 0 ||
            (r = json_add(x, "instructions", json_int_or_null(j->exact_instructions))) < 0 ||
            (r = json_add(x, "ipc", json_ratio(j->exact_instructions, j->exact_cycles, IPC_DECIMALS))) < 0)
                return r;
        return 0;
}

int api_add_node_measured(json_object *e, const Share *node) {
        int r;

        if ((r = json_add(e, "node_type", json_string_or_null(node->node_type))) < 0 ||
            (r = json_add(e, "energy_joules", node->has_energy ? json_number(node->energy_joules, JOULE_DECIMALS)
                                                                : json_null())) < 0 ||
            (r = json_add(e, "energy_alone_joules",
                          node->has_energy ? json_number(node->energy_alone_joules, JOULE_DECIMALS) : json_null())) < 0)
                return r;
        return 0;
}

static json_object *count_or_null(int64_t v) {
        return v > 0 ? json_object_new_int64(v) : json_null();
}

json_object *api_node_type_json(const NodeTypeInfo *t) {
        json_object *o;

        if (t->id <= 0)
                return json_null();
        o = json_object_new_object();
        if (!o ||
            json_add(o, "id", json_object_new_int64(t->id)) < 0 ||
            json_add(o, "name", json_string_or_null(t->name)) < 0 ||
            json_add(o, "cpu_model", json_string_or_null(t->cpu_model)) < 0 ||
            json_add(o, "sockets", count_or_null(t->sockets)) < 0 ||
            json_add(o, "cores", count_or_null(t->cores)) < 0 ||
            json_add(o, "threads", count_or_null(t->threads)) < 0 ||
            json_add(o, "memory_gib", count_or_null(t->memory_gib)) < 0 ||
            json_add(o, "gpus", json_object_new_string(t->gpus ?: "")) < 0) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

/* The event that filled role; differs: the job's nodes named more than one. */
static const char *role_event(const JobMeasured *m, const char *role, bool *ret_differs) {
        const char *event = NULL;

        *ret_differs = false;
        for (size_t i = 0; i < m->n_counters; i++) {
                if (!streq(m->counters[i].role, role))
                        continue;
                if (event)
                        *ret_differs = true;
                else
                        event = m->counters[i].event;
        }
        return event;
}

/* count, samples and the two rates of a sum */
static int add_event_figures(json_object *e, const EventSum *x) {
        int r;

        if ((r = json_add(e, "count", json_object_new_int64(x->count))) < 0 ||
            (r = json_add(e, "samples", json_object_new_int64(x->samples))) < 0 ||
            (r = json_add(e, "cpu_seconds", json_number((double) x->cpu_time_ns / 1e9, 3))) < 0 ||
            (r = json_add(e, "per_cpu_second", json_number(event_per_cpu_second(x), RATE_DECIMALS))) < 0 ||
            (r = json_add(e, "per_1000_instructions", json_number(event_per_kilo_instruction(x), RATE_DECIMALS))) < 0)
                return r;
        return 0;
}

static int add_event_parts(json_object *e, const char *key, const char *name_key, const EventSum *v, size_t n,
                           const char *role) {
        json_object *a = json_object_new_array();
        int r;

        r = json_add(e, key, a);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                json_object *p;

                if (!streq(v[i].role, role))
                        continue;
                p = json_object_new_object();
                if ((r = json_append(a, p)) < 0 ||
                    (r = json_add(p, name_key, json_string_or_null(v[i].name))) < 0)
                        return r;
                r = add_event_figures(p, &v[i]);
        }
        return r;
}

static int add_events(json_object *o, const JobMeasured *m) {
        json_object *a = json_object_new_array();
        int r;

        r = json_add(o, "events", a);
        for (size_t i = 0; r >= 0 && i < m->n_events; i++) {
                const EventSum *x = &m->events[i];
                json_object *e = json_object_new_object();
                bool differs;
                const char *event = role_event(m, x->role, &differs);

                if ((r = json_append(a, e)) < 0 ||
                    (r = json_add(e, "role", json_object_new_string(x->role))) < 0 ||
                    (r = json_add(e, "event", json_string_or_null(event))) < 0 ||
                    (r = json_add(e, "event_differs", json_object_new_boolean(differs))) < 0 ||
                    (r = add_event_figures(e, x)) < 0 ||
                    (r = json_add(e, "exact_count", json_int_or_null(x->exact_count))) < 0 ||
                    (r = add_event_parts(e, "objects", "object", m->object_events, m->n_object_events, x->role)) < 0)
                        return r;
                r = add_event_parts(e, "phases", "phase", m->phase_events, m->n_phase_events, x->role);
        }
        if (r < 0)
                return r;
        return json_add(o, "events_truncated", json_object_new_boolean(m->event_rows_truncated));
}

static bool same_location(const BurstSum *a, const BurstSum *b) {
        return streq(a->object, b->object) && streq(a->phase, b->phase);
}

/* "bursts": per code location (object, phase), each role's events per
 * second in burst windows and the windows it rests on; IPC where cycles
 * and instructions were both counted there. */
static int add_bursts(json_object *o, const JobMeasured *m) {
        json_object *a = json_object_new_array();
        int r;

        r = json_add(o, "bursts", a);
        for (size_t i = 0; r >= 0 && i < m->n_bursts;) {
                const BurstSum *first = &m->bursts[i], *cyc = NULL, *ins = NULL;
                json_object *e = json_object_new_object(), *rates = json_object_new_object();
                int64_t bursts = 0;

                if ((r = json_append(a, e)) < 0 ||
                    (r = json_add(e, "object", json_object_new_string(first->object))) < 0 ||
                    (r = json_add(e, "phase", json_object_new_string(first->phase))) < 0 ||
                    (r = json_add(e, "rates", rates)) < 0)
                        return r;
                for (; r >= 0 && i < m->n_bursts && same_location(first, &m->bursts[i]); i++) {
                        const BurstSum *b = &m->bursts[i];
                        json_object *x = json_object_new_object();

                        if (streq(b->role, "cycles"))
                                cyc = b;
                        else if (streq(b->role, "instructions"))
                                ins = b;
                        bursts = MAX(bursts, b->bursts);
                        if ((r = json_add(rates, b->role, x)) < 0 ||
                            (r = json_add(x, "per_second", json_number(burst_per_second(b), RATE_DECIMALS))) < 0 ||
                            (r = json_add(x, "bursts", json_object_new_int64(b->bursts))) < 0)
                                return r;
                        r = json_add(x, "window_seconds", json_number((double) b->window_ns / 1e9, 6));
                }
                if (r < 0)
                        return r;
                /* IPC only from windows that counted both */
                if ((r = json_add(e, "bursts", json_object_new_int64(bursts))) < 0 ||
                    (r = json_add(e, "ipc", cyc && ins && cyc->count > 0 && cyc->bursts == ins->bursts
                                                    ? json_number(ins->count / cyc->count, IPC_DECIMALS)
                                                    : json_null())) < 0)
                        return r;
        }
        if (r < 0)
                return r;
        return json_add(o, "bursts_truncated", json_object_new_boolean(m->bursts_truncated));
}

int api_add_job_measured(json_object *o, const JobSummary *js) {
        const JobMeasured *m = &js->measured;
        json_object *c = json_object_new_array();
        int r;

        if ((r = json_add(o, "node_type_details", api_node_type_json(&m->node_type))) < 0 ||
            (r = json_add(o, "counters", c)) < 0)
                return r;
        for (size_t i = 0; r >= 0 && i < m->n_counters; i++) {
                json_object *e = json_object_new_object();

                if ((r = json_append(c, e)) < 0 ||
                    (r = json_add(e, "role", json_object_new_string(m->counters[i].role))) < 0 ||
                    (r = json_add(e, "event", json_object_new_string(m->counters[i].event))) < 0)
                        return r;
                r = json_add(e, "available", json_object_new_boolean(m->counters[i].available));
        }
        if (r < 0 || (r = add_events(o, m)) < 0 || (r = add_bursts(o, m)) < 0)
                return r;
        return 0;
}
