/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What lmk-store does with an ingest body before it touches the database:
 * gzip (when the input looks like it) with a bound (the server's is
 * max-body, 32 MiB; 1 MiB keeps each run short), then the batch parser.
 * Nothing here may crash, leak or read out of bounds, and a batch the parser
 * accepts must keep the promises of batch.h that the store relies on: strict
 * UTF-8 everywhere, identifiers without control characters, every count
 * within the node's per-row limits, totals that are the exact sums of the
 * rows, and finite derived values. A rejection says why, in valid UTF-8. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "batch-parse.h"
#include "inflate.h"
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
