/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What lmk-store does with an ingest body before it touches the database:
 * gzip (when the input looks like it) with a bound (the server's is
 * max-body, 32 MiB; 1 MiB keeps each run short), then the batch parser.
 * Nothing here may crash, leak or read out of bounds, and a batch the parser
 * accepts must keep the promises of batch.h that the store relies on: strict
 * UTF-8 everywhere, identifiers without control characters, every count
 * within the node's per-row limits, totals that are the exact sums of the
 * rows, functions that break down their rows' samples, and finite derived
 * values. A rejection says why, in valid UTF-8. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "batch/batch-parse.h"
#include "batch/inflate.h"
#include "utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define check(cond)                \
        do {                       \
                if (!(cond))       \
                        abort();   \
        } while (0)

static void check_text(const char *s) {
        check(s && utf8_is_valid(s, strlen(s)));
}

static void check_ident(const char *s) {
        check_text(s);
        check(!string_has_control(s, strlen(s)));
}

static void check_optional_ident(const char *s) {
        if (s)
                check_ident(s);
}

static void check_counter(int64_t v, int64_t max) {
        check(v == BATCH_NULL || (v >= 0 && v <= max));
}

static int64_t add(int64_t sum, int64_t v) {
        if (v != BATCH_NULL)
                check(!__builtin_add_overflow(sum, v, &sum));
        return sum;
}

static bool role_ok(const char *s) {
        size_t n = strlen(s);

        return n > 0 && n <= BATCH_MAX_ROLE_NAME &&
               strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == n;
}

static void check_events(const Batch *b, const BatchEvents *e, int64_t max) {
        for (size_t k = 0; e && k < BATCH_MAX_ROLES; k++) {
                check_counter(e->count[k], max);
                check(e->count[k] == BATCH_NULL || k < b->n_roles);
        }
}

static void check_joules(double j, double max) {
        check(isnan(j) || (isfinite(j) && j >= 0 && j <= max));
}

/* What lmkd measures beyond samples: roles, node type, energy. */
static void check_measured(const Batch *b) {
        check(b->n_roles <= BATCH_MAX_ROLES && b->n_counters <= b->n_roles);
        for (size_t i = 0; i < b->n_roles; i++) {
                check(role_ok(b->roles[i]));
                for (size_t k = 0; k < i; k++)
                        check(strcmp(b->roles[i], b->roles[k]) != 0);
        }
        for (size_t i = 0; i < b->n_counters; i++) {
                check(batch_role_index(b, b->counters[i].role) >= 0);
                check_ident(b->counters[i].event);
                check_optional_ident(b->counters[i].source);
                check_optional_ident(b->counters[i].error);
        }
        if (b->node_type) {
                const BatchNodeType *t = b->node_type;

                check_optional_ident(t->cpu_model);
                check_optional_ident(t->kernel);
                check(t->threads == BATCH_NULL || t->threads > 0);
                check(t->cores == BATCH_NULL || t->cores > 0);
                check(t->sockets == BATCH_NULL || t->sockets > 0);
                check(t->memory_bytes == BATCH_NULL || t->memory_bytes > 0);
                check(t->gpus_other >= 0 && t->n_gpus <= BATCH_MAX_GPU_MODELS);
                for (size_t i = 0; i < t->n_gpus; i++) {
                        check_ident(t->gpus[i].vendor);
                        check_ident(t->gpus[i].vendor_id);
                        check(strlen(t->gpus[i].vendor_id) == 4);
                        check_optional_ident(t->gpus[i].device_id);
                        check_optional_ident(t->gpus[i].name);
                        check(t->gpus[i].count > 0);
                }
        }
        if (b->energy) {
                check_ident(b->energy->source);
                check_joules(b->energy->joules, b->limits.joules);
                check(!isnan(b->energy->joules));
                check_joules(b->energy->unattributed_joules, b->limits.joules);
                check(b->energy->n_zones <= BATCH_MAX_ZONES);
                for (size_t i = 0; i < b->energy->n_zones; i++) {
                        check_ident(b->energy->zones[i].zone);
                        check_ident(b->energy->zones[i].kind);
                        check_joules(b->energy->zones[i].joules, b->limits.joules);
                }
        }
        for (size_t i = 0; i < b->n_jobs; i++) {
                const BatchJob *j = &b->jobs[i];

                check_counter(j->cpu_time_ns, b->limits.cpu_time_ns);
                check_counter(j->cycles, b->limits.cycles);
                check_counter(j->instructions, b->limits.instructions);
                check_events(b, j->events, b->limits.events);
                check_joules(j->energy_joules, b->limits.joules);
                check_joules(j->energy_alone_joules, b->limits.joules);
                check(isnan(j->energy_joules) || b->energy);
        }
        for (size_t i = 0; i < b->n_rows; i++) {
                const BatchRow *r = &b->rows[i];

                check(r->multiplexed_samples >= 0 && r->multiplexed_samples <= r->samples);
                check_events(b, r->events, b->limits.events);
                if (!r->burst)
                        continue;
                check(r->burst->samples > 0 && r->burst->samples <= b->limits.burst_samples);
                check(r->burst->window_ns >= 0 && r->burst->window_ns <= b->limits.cpu_time_ns);
                for (size_t k = 0; k < BATCH_MAX_ROLES; k++) {
                        check(isnan(r->burst->per_second[k]) || (isfinite(r->burst->per_second[k]) &&
                                                                  r->burst->per_second[k] >= 0 && k < b->n_roles));
                        check(isnan(r->burst->counts[k]) == isnan(r->burst->per_second[k]));
                        check(isnan(r->burst->counts[k]) || isfinite(r->burst->counts[k]));
                }
        }
}

static bool streq_null(const char *a, const char *b) {
        return a && b ? strcmp(a, b) == 0 : a == b;
}

static bool same_group(const BatchRow *r, const BatchFunction *f) {
        return streq_null(r->job, f->job) && !strcmp(r->step, f->step) && !strcmp(r->object, f->object) &&
               !strcmp(r->phase, f->phase);
}

/* functions[] (versions 2 and 3): exactly one of a name, an offset (a page's, or
 * any with entry) and other;
 * each of an executable's or a library's rows of its (job, step, object,
 * phase), of its build where it names one (its row the first of them);
 * the functions of a (job, step, object, phase) hold no more samples than
 * its rows; sums that fit. */
static void check_functions(const Batch *b) {
        int64_t cycles = 0, instructions = 0;

        check(b->version >= BATCH_VERSION_MIN && b->version <= LMK_BATCH_VERSION);
        check(b->n_functions <= BATCH_MAX_FUNCTIONS && (b->version >= 2 || b->n_functions == 0));
        for (size_t i = 0; i < b->n_functions; i++) {
                const BatchFunction *f = &b->functions[i];
                const BatchRow *r;
                int64_t rows = 0, functions = 0;

                check_optional_ident(f->job);
                check_ident(f->step);
                check_text(f->object);
                check_ident(f->build_id);
                check_text(f->phase);
                check(f->samples >= 0 && f->samples <= b->limits.samples);
                check_counter(f->cycles, b->limits.cycles);
                check_counter(f->instructions, b->limits.instructions);
                check_events(b, f->events, b->limits.events);
                check((f->function != NULL) + (f->offset != BATCH_NULL) + f->other == 1);
                if (f->function) {
                        check_ident(f->function);
                        check(f->function[0] && strlen(f->function) <= BATCH_MAX_FUNCTION_NAME);
                }
                check(f->offset == BATCH_NULL ||
                      (f->offset >= 0 && (f->entry || f->offset % BATCH_FUNCTION_PAGE == 0) &&
                       f->offset <= (int64_t) BATCH_MAX_COUNTER && f->build_id[0]));
                check(!f->entry || f->offset != BATCH_NULL);
                check(f->row < b->n_rows);
                r = &b->rows[f->row];
                check(same_group(r, f) && (!f->build_id[0] || !strcmp(r->build_id, f->build_id)));
                check(f->kind == r->kind && (r->kind == CODE_EXE || r->kind == CODE_LIB));
                for (size_t k = 0; k < b->n_rows; k++) {
                        const BatchRow *o = &b->rows[k];

                        if (!same_group(o, f))
                                continue;
                        check(k >= f->row || (f->build_id[0] && strcmp(o->build_id, f->build_id)));
                        rows += o->samples;
                }
                for (size_t k = 0; k < b->n_functions; k++) {
                        const BatchFunction *g = &b->functions[k];

                        if (streq_null(g->job, f->job) && !strcmp(g->step, f->step) &&
                            !strcmp(g->object, f->object) && !strcmp(g->phase, f->phase))
                                functions += g->samples;
                }
                check(functions <= rows);
                cycles = add(cycles, f->cycles);
                instructions = add(instructions, f->instructions);
        }
        check(cycles == b->total_function_cycles && instructions == b->total_function_instructions);
}

static void check_batch(const Batch *b) {
        int64_t samples = 0, cpu_time_ns = 0, cycles = 0, instructions = 0;
        BatchLimits limits;

        check_ident(b->node);
        check_ident(b->boot_id);
        check_optional_ident(b->hostname);
        check_optional_ident(b->cluster);
        check_ident(b->event);
        check(b->seq >= 0 && b->cpus > 0);
        check(isfinite(b->start) && isfinite(b->end) && b->start <= b->end &&
              b->end - b->start <= BATCH_MAX_INTERVAL_S);
        check(b->frequency_hz >= BATCH_MIN_FREQUENCY_HZ && b->frequency_hz <= BATCH_MAX_FREQUENCY_HZ);
        batch_limits(b, &limits);
        check(memcmp(&limits, &b->limits, sizeof(limits)) == 0);
        check(b->samples_lost >= 0 && b->samples_lost <= limits.samples);

        check(b->n_rows <= BATCH_MAX_ROWS && b->n_jobs <= BATCH_MAX_JOBS && b->n_markers <= BATCH_MAX_MARKERS);
        for (size_t i = 0; i < b->n_rows; i++) {
                const BatchRow *r = &b->rows[i];

                check_optional_ident(r->job);
                check_ident(r->step);
                check_ident(r->user);
                check_text(r->comm);
                check_text(r->object);
                check(r->object[0] != '\0');
                check_ident(r->build_id);
                check(r->build_id[strspn(r->build_id, "0123456789abcdef")] == '\0');
                check_text(r->phase);
                check(code_kind_to_string(r->kind) != NULL);
                check(r->samples >= 0 && r->samples <= limits.samples);
                check_counter(r->cpu_time_ns, limits.cpu_time_ns);
                check_counter(r->cycles, limits.cycles);
                check_counter(r->instructions, limits.instructions);
                samples = add(samples, r->samples);
                cpu_time_ns = add(cpu_time_ns, r->cpu_time_ns);
                cycles = add(cycles, r->cycles);
                instructions = add(instructions, r->instructions);
        }
        check(samples == b->total_samples && cpu_time_ns == b->total_cpu_time_ns &&
              cycles == b->total_cycles && instructions == b->total_instructions);
        check(isfinite(b->total_cpu_seconds) && b->total_cpu_seconds >= 0);

        for (size_t i = 0; i < b->n_jobs; i++) {
                const BatchJob *j = &b->jobs[i];
                size_t bytes = 0;

                check_ident(j->job);
                check_optional_ident(j->cluster);
                check_optional_ident(j->user);
                check_optional_ident(j->account);
                check_optional_ident(j->partition);
                if (j->name)
                        check_text(j->name);
                check(j->nodes == BATCH_NULL || j->nodes > 0);
                check(j->tasks == BATCH_NULL || j->tasks >= 0);
                check(isnan(j->first_seen) || isfinite(j->first_seen));
                check(isnan(j->last_seen) || isfinite(j->last_seen));
                check(j->n_notes <= BATCH_MAX_NOTES);
                for (size_t k = 0; k < j->n_notes; k++) {
                        check_ident(j->notes[k].key);
                        check(j->notes[k].key[0] != '\0');
                        check_text(j->notes[k].value);
                        bytes += strlen(j->notes[k].key) + strlen(j->notes[k].value);
                }
                check(bytes <= BATCH_MAX_NOTES_BYTES);
        }

        check_measured(b);
        check_functions(b);
        for (size_t i = 0; i < b->n_markers; i++) {
                check_optional_ident(b->markers[i].job);
                check_text(b->markers[i].comm);
                check_text(b->markers[i].phase);
                check_ident(b->markers[i].state);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *inflated = NULL;
        BatchError err = {};
        Batch *b = NULL;
        int r;

        if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
                if (inflate_bounded(data, size, 1 << 20, &inflated, &size) < 0)
                        return 0;
                data = (const uint8_t *) inflated;
        }
        r = batch_parse((const char *) data, size, &b, &err);
        if (r >= 0) {
                check_batch(b);
                batch_free(b);
        } else {
                check(r == -EBADMSG || r == -EINVAL || r == -EPROTONOSUPPORT || r == -E2BIG || r == -ENOMEM);
                /* the 400 answer names what was wrong, in valid JSON text */
                check(r == -ENOMEM || err.message[0] != '\0');
                check(utf8_is_valid(err.field, strlen(err.field)) &&
                      utf8_is_valid(err.message, strlen(err.message)));
        }
        free(inflated);
        return 0;
}
