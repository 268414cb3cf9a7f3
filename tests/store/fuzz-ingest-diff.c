/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The batch parser against the json-c one it replaced (batch-parse-jsonc.c),
 * on the same bytes. The store reads I-JSON (RFC 7493) strictly, where
 * json-c was lenient (NaN, single quotes, raw control characters, names
 * twice, unpaired surrogates, numbers beyond range): text the new parser
 * refuses as not JSON may be anything to json-c. Otherwise both take a
 * batch or both refuse it, with the same error code, field and words; a
 * batch taken is the same Batch, field by field. Prints the first
 * difference and aborts. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch-parse-jsonc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *where;

_noreturn_ static void differ(const char *what, long i) {
        fprintf(stderr, "fuzz-ingest-diff: the parsers differ in %s%s[%ld]\n", where ?: "", what, i);
        abort();
}

#define SAME(cond, what, i)                     \
        do {                                    \
                if (!(cond))                    \
                        differ((what), (long) (i)); \
        } while (0)

static bool str_same(const char *a, const char *b) {
        return (!a && !b) || (a && b && streq(a, b));
}

static bool dbl_same(double a, double b) {
        return (isnan(a) && isnan(b)) || (a == b && signbit(a) == signbit(b));
}

#define S(field, i) SAME(str_same(x->field, y->field), #field, i)
#define I(field, i) SAME(x->field == y->field, #field, i)
#define D(field, i) SAME(dbl_same(x->field, y->field), #field, i)

static void events_same(const BatchEvents *a, const BatchEvents *b, long i) {
        SAME(!a == !b, "events", i);
        for (size_t k = 0; a && k < BATCH_MAX_ROLES; k++)
                SAME(a->count[k] == b->count[k], "events.count", i);
}

static void jobs_same(const Batch *a, const Batch *b) {
        where = "jobs.";
        for (size_t i = 0; i < a->n_jobs; i++) {
                const BatchJob *x = &a->jobs[i], *y = &b->jobs[i];

                S(job, i); S(cluster, i); S(user, i); S(account, i); S(partition, i); S(name, i);
                I(nodes, i); I(tasks, i); I(cpus_allocated, i); D(first_seen, i); D(last_seen, i); I(ended, i);
                I(n_notes, i);
                for (size_t k = 0; k < x->n_notes; k++) {
                        SAME(streq(x->notes[k].key, y->notes[k].key), "notes.key", i);
                        SAME(streq(x->notes[k].value, y->notes[k].value), "notes.value", i);
                }
                I(cpu_time_ns, i); I(cycles, i); I(instructions, i);
                events_same(x->events, y->events, (long) i);
                D(energy_joules, i); D(energy_alone_joules, i);
        }
}

static void rows_same(const Batch *a, const Batch *b) {
        where = "rows.";
        for (size_t i = 0; i < a->n_rows; i++) {
                const BatchRow *x = &a->rows[i], *y = &b->rows[i];

                S(job, i); S(step, i); S(user, i); S(comm, i); S(object, i); S(build_id, i); S(phase, i);
                I(kind, i); I(samples, i); I(cpu_time_ns, i); I(cycles, i); I(instructions, i);
                I(multiplexed_samples, i);
                events_same(x->events, y->events, (long) i);
                SAME(!x->burst == !y->burst, "burst", i);
                if (!x->burst)
                        continue;
                I(burst->samples, i); I(burst->window_ns, i);
                for (size_t k = 0; k < BATCH_MAX_ROLES; k++) {
                        D(burst->per_second[k], i);
                        D(burst->counts[k], i);
                }
        }
}

static void measured_same(const Batch *a, const Batch *b) {
        where = "";
        SAME(a->n_roles == b->n_roles, "n_roles", 0);
        for (size_t i = 0; i < a->n_roles; i++)
                SAME(streq(a->roles[i], b->roles[i]), "roles", i);
        SAME(a->n_counters == b->n_counters, "n_counters", 0);
        where = "counters.";
        for (size_t i = 0; i < a->n_counters; i++) {
                const BatchCounter *x = &a->counters[i], *y = &b->counters[i];

                S(role, i); S(event, i); S(source, i); I(available, i); S(error, i);
        }
        where = "node_type.";
        SAME(!a->node_type == !b->node_type, "", 0);
        if (a->node_type) {
                const BatchNodeType *x = a->node_type, *y = b->node_type;

                S(cpu_model, 0); I(sockets, 0); I(cores, 0); I(threads, 0); I(memory_bytes, 0);
                I(n_gpus, 0); I(gpus_other, 0); S(kernel, 0);
                for (size_t i = 0; i < x->n_gpus; i++) {
                        S(gpus[i].vendor, i); S(gpus[i].vendor_id, i); S(gpus[i].device_id, i);
                        S(gpus[i].name, i); I(gpus[i].count, i);
                }
        }
        where = "energy.";
        SAME(!a->energy == !b->energy, "", 0);
        if (a->energy) {
                const BatchEnergy *x = a->energy, *y = b->energy;

                S(source, 0); D(joules, 0); D(unattributed_joules, 0); I(n_zones, 0);
                for (size_t i = 0; i < x->n_zones; i++) {
                        S(zones[i].zone, i); S(zones[i].kind, i); D(zones[i].joules, i);
                }
        }
}

static void inventory_same(const Batch *a, const Batch *b) {
        where = "inventory.";
        SAME(!a->inventory == !b->inventory, "", 0);
        if (!a->inventory)
                return;
        SAME(streq(a->inventory->digest, b->inventory->digest), "digest", 0);
        SAME(a->inventory->n_packages == b->inventory->n_packages, "n_packages", 0);
        SAME(a->inventory->n_files == b->inventory->n_files, "n_files", 0);
        for (size_t i = 0; i < a->inventory->n_packages; i++) {
                const BatchPackage *x = &a->inventory->packages[i], *y = &b->inventory->packages[i];

                S(manager, i); S(name, i); S(version, i); S(arch, i); S(hash, i); S(prefix, i); I(size, i);
                I(n_files, i);
                for (size_t k = 0; k < x->n_files; k++)
                        SAME(streq(x->files[k], y->files[k]), "files", i);
        }
}

static void batches_same(const Batch *x, const Batch *y) {
        where = "";
        S(node, 0); S(boot_id, 0); S(spool, 0); I(seq, 0);
        SAME(memcmp(x->digest, y->digest, sizeof(x->digest)) == 0, "digest", 0); S(hostname, 0); S(cluster, 0); I(cpus, 0);
        D(start, 0); D(end, 0); S(event, 0); D(frequency_hz, 0); I(samples_lost, 0);
        I(has_installed, 0); I(n_installed, 0);
        for (size_t i = 0; i < x->n_installed; i++) {
                S(installed[i].purpose, i);
                S(installed[i].family, i);
        }
        I(n_jobs, 0); I(n_rows, 0); I(n_markers, 0); I(n_ranks, 0);
        SAME(memcmp(&x->limits, &y->limits, sizeof(x->limits)) == 0, "limits", 0);
        I(total_samples, 0); I(total_cpu_time_ns, 0); I(total_cycles, 0); I(total_instructions, 0);
        D(total_cpu_seconds, 0);
        for (size_t k = 0; k < BATCH_MAX_ROLES; k++)
                I(total_events[k], k);
        jobs_same(x, y);
        rows_same(x, y);
        where = "markers.";
        for (size_t i = 0; i < x->n_markers; i++) {
                S(markers[i].job, i); S(markers[i].comm, i); S(markers[i].phase, i); S(markers[i].state, i);
        }
        where = "ranks.";
        for (size_t i = 0; i < x->n_ranks; i++) {
                S(ranks[i].job, i); S(ranks[i].step, i); S(ranks[i].phase, i); I(ranks[i].rank, i);
                I(ranks[i].samples, i); I(ranks[i].comm_samples, i); D(ranks[i].first, i); D(ranks[i].last, i);
        }
        measured_same(x, y);
        inventory_same(x, y);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(batch_freep) Batch *a = NULL;
        _cleanup_(batch_free_jsoncp) Batch *b = NULL;
        BatchError ea = {}, eb = {};
        int ra, rb;

        ra = batch_parse((const char *) data, size, &a, &ea);
        rb = batch_parse_jsonc((const char *) data, size, &b, &eb);
        if (ra == -ENOMEM || rb == -ENOMEM || ra == -EBADMSG)
                return 0;
        /* json-c wanted a byte after a bare number: both refuse, for two reasons */
        if (rb == -EBADMSG && ra < 0)
                return 0;
        if (ra != rb) {
                fprintf(stderr, "fuzz-ingest-diff: new %d (%s: %s), json-c %d (%s: %s)\n", ra, ea.field, ea.message,
                        rb, eb.field, eb.message);
                abort();
        }
        if (ra < 0) {
                if (!streq(ea.field, eb.field) || !streq(ea.message, eb.message)) {
                        fprintf(stderr, "fuzz-ingest-diff: new says %s: %s\n                  json-c says %s: %s\n",
                                ea.field, ea.message, eb.field, eb.message);
                        abort();
                }
                return 0;
        }
        batches_same(a, b);
        return 0;
}
