/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The batch contract (docs/batch-format.md) end to end: an interval with
 * every section filled (batch-fixture.h), written by lmkd's own
 * batch_build(), inflated and read by lmk-store's own inflate_bounded() and
 * batch_parse(), and every field the store reads compared with what went
 * in. A name spelt differently on one side, a field one side leaves out, a
 * unit or a scale that changes on the way fails here, without root or BPF. */
#include <math.h>
#include <stdlib.h>

#include "batch-fields.h"
#include "batch-fixture.h"
#include "batch/batch-parse.h"
#include "batch/inflate.h"

/* The batch as the store reads it: lmkd's bytes, through the store's
 * gzip reader and parser. */
static Batch *round_trip(const Sent *s) {
        _cleanup_free_ void *gz = NULL;
        _cleanup_free_ char *text = NULL;
        BatchError err;
        Batch *b = NULL;
        size_t size, len;
        int r;

        ASSERT_OK(batch_build(&s->iv, &s->info, &gz, &size));
        ASSERT_OK(inflate_bounded(gz, size, 32 << 20, &text, &len));
        r = batch_parse(text, len, &b, &err);
        if (r < 0)
                test_fail("the store refused lmkd's batch: %d %s: %s\n%s", r, err.field, err.message, text);
        return b;
}

static int role(const Batch *b, unsigned k) {
        static const char *const roles[] = { "cycles", "instructions", "l1d", "llc" };
        int i = batch_role_index(b, roles[k]);

        ASSERT_TRUE(i >= 0);
        return i;
}

static void check_header(const Sent *s, const Batch *b) {
        ASSERT_STREQ(b->node, s->info.node);
        ASSERT_STREQ(b->boot_id, s->info.boot_id);
        ASSERT_STREQ(b->spool, s->info.spool_id);
        ASSERT_EQ(b->seq, s->info.seq);
        ASSERT_STREQ(b->hostname, s->info.node);
        ASSERT_STREQ(b->cluster, s->info.cluster);
        ASSERT_EQ(b->cpus, CPUS);
        ASSERT_TRUE(b->start == START && b->end == END);
        ASSERT_STREQ(b->event, "cpu-clock");
        ASSERT_TRUE(b->frequency_hz == FREQUENCY);
        ASSERT_EQ(b->samples_lost, 12);

        ASSERT_TRUE(b->has_installed);
        ASSERT_EQ(b->n_installed, s->software.n);
        for (size_t i = 0; i < b->n_installed; i++) {
                ASSERT_STREQ(b->installed[i].purpose, s->software.v[i].purpose);
                ASSERT_STREQ(b->installed[i].family, s->software.v[i].family);
        }
}

static void check_node_type(const Sent *s, const Batch *b) {
        const NodeType *in = &s->node_type;
        const BatchNodeType *t = b->node_type;

        ASSERT_NOT_NULL(t);
        ASSERT_STREQ(t->cpu_model, in->cpu_model);
        ASSERT_EQ(t->sockets, in->sockets);
        ASSERT_EQ(t->cores, in->cores);
        ASSERT_EQ(t->threads, in->threads);
        ASSERT_EQ(t->memory_bytes, in->memory_bytes);
        ASSERT_EQ(t->gpus_other, in->n_gpus_other);
        ASSERT_STREQ(t->kernel, in->kernel);
        ASSERT_EQ(t->n_gpus, in->n_gpus);
        ASSERT_STREQ(t->gpus[0].vendor, "NVIDIA");
        ASSERT_STREQ(t->gpus[0].vendor_id, "10de");
        ASSERT_STREQ(t->gpus[0].device_id, "20b0");
        ASSERT_STREQ(t->gpus[0].name, "A100 SXM4 40GB");
        ASSERT_EQ(t->gpus[0].count, 4);
        /* not known: null */
        ASSERT_STREQ(t->gpus[1].vendor_id, "1002");
        ASSERT_NULL(t->gpus[1].device_id);
        ASSERT_NULL(t->gpus[1].name);
        ASSERT_EQ(t->gpus[1].count, 1);
}

static void check_inventory(const Sent *s, const Batch *b) {
        const BatchInventory *inv = b->inventory;

        ASSERT_NOT_NULL(inv);
        ASSERT_STREQ(inv->digest, s->inventory.digest);
        ASSERT_EQ(inv->n_packages, s->inventory.n_packages);
        ASSERT_EQ(inv->n_files, s->inventory.n_files);
        for (size_t i = 0; i < inv->n_packages; i++) {
                const InventoryPackage *in = &s->inventory.packages[i];
                const BatchPackage *p = &inv->packages[i];

                ASSERT_STREQ(p->manager, inventory_manager_to_string(in->manager));
                ASSERT_STREQ(p->name, in->name);
                ASSERT_STREQ(p->version, in->version);
                ASSERT_TRUE(in->arch ? p->arch && streq(p->arch, in->arch) : !p->arch);
                ASSERT_TRUE(in->hash ? p->hash && streq(p->hash, in->hash) : !p->hash);
                ASSERT_TRUE(in->prefix ? p->prefix && streq(p->prefix, in->prefix) : !p->prefix);
                ASSERT_EQ(p->size, in->size);
                ASSERT_EQ(p->n_files, in->n_files);
                for (size_t k = 0; k < p->n_files; k++)
                        ASSERT_STREQ(p->files[k], in->files[k]);
        }
}

static void check_counters(const Sent *s, const Batch *b) {
        ASSERT_EQ(b->n_counters, LMK_MAX_COUNTERS);
        ASSERT_EQ(b->n_roles, LMK_MAX_COUNTERS);
        for (unsigned k = 0; k < LMK_MAX_COUNTERS; k++) {
                const BatchCounter *c = &b->counters[k];

                ASSERT_STREQ(c->role, s->events[k].role);
                ASSERT_STREQ(b->roles[k], s->events[k].role);
                ASSERT_STREQ(c->event, s->events[k].name);
                ASSERT_STREQ(c->source, s->events[k].source);
                ASSERT_EQ(c->available, s->iv.counters[k].available);
                if (c->available)
                        ASSERT_NULL(c->error);
                else
                        ASSERT_STREQ(c->error, counter_error_text(s->iv.counters[k].error));
        }
}

static void check_energy(const Sent *s, const Batch *b) {
        const BatchEnergy *e = b->energy;

        ASSERT_NOT_NULL(e);
        ASSERT_STREQ(e->source, "powercap");
        ASSERT_TRUE(e->joules == 1500.75);
        ASSERT_TRUE(e->unattributed_joules == s->iv.energy_unattributed_joules);
        ASSERT_EQ(e->n_zones, s->energy.n);
        for (size_t i = 0; i < e->n_zones; i++) {
                ASSERT_STREQ(e->zones[i].zone, s->energy.zones[i].name);
                ASSERT_STREQ(e->zones[i].kind, s->energy.zones[i].kind);
                ASSERT_TRUE(e->zones[i].joules == s->energy.zones[i].joules);
        }
}

static const BatchJob *job_named(const Batch *b, const char *id) {
        for (size_t i = 0; i < b->n_jobs; i++)
                if (streq(b->jobs[i].job, id))
                        return &b->jobs[i];
        test_fail("no job %s in the batch", id);
}

static void check_jobs(Sent *s, const Batch *b) {
        const Job *in = jobs_get(&s->jobs, "4711");
        const BatchJob *j;

        ASSERT_EQ(b->n_jobs, 4);
        j = job_named(b, "4711");
        ASSERT_STREQ(j->user, "alice");
        ASSERT_STREQ(j->account, "p1");
        ASSERT_STREQ(j->partition, "batch");
        ASSERT_STREQ(j->name, "lulesh run");
        ASSERT_STREQ(j->cluster, "other");
        ASSERT_EQ(j->nodes, 4);
        ASSERT_EQ(j->tasks, 192);
        ASSERT_EQ(j->cpus_allocated, 6);
        ASSERT_EQ(j->n_notes, 2);
        ASSERT_STREQ(j->notes[0].key, "app");
        ASSERT_STREQ(j->notes[0].value, "lulesh");
        ASSERT_STREQ(j->notes[1].key, "size");
        ASSERT_STREQ(j->notes[1].value, "128");
        ASSERT_TRUE(j->first_seen == in->first_seen && j->last_seen == in->last_seen);
        ASSERT_TRUE(j->ended);
        /* the exact totals of its (step, user, command)s */
        ASSERT_EQ(j->cpu_time_ns, 15000000000);
        ASSERT_EQ(j->cycles, 40000000000);
        ASSERT_EQ(j->instructions, 80000000000);
        ASSERT_NOT_NULL(j->events);
        ASSERT_EQ(j->events->count[role(b, L1D)], 9000000);
        ASSERT_EQ(j->events->count[role(b, LLC)], BATCH_NULL);
        ASSERT_TRUE(j->energy_joules == in->energy_joules);
        ASSERT_TRUE(j->energy_alone_joules == in->energy_alone_joules);
        ASSERT_FALSE(j->opted_out);
        ASSERT_EQ(j->samples, 0);
        ASSERT_FALSE(j->counters_released);

        in = jobs_get(&s->jobs, "4712");
        j = job_named(b, "4712");
        ASSERT_NULL(j->user);
        ASSERT_NULL(j->account);
        ASSERT_NULL(j->partition);
        ASSERT_NULL(j->name);
        ASSERT_NULL(j->cluster);
        ASSERT_EQ(j->nodes, BATCH_NULL);
        ASSERT_EQ(j->tasks, BATCH_NULL);
        ASSERT_EQ(j->cpus_allocated, BATCH_NULL);
        ASSERT_EQ(j->n_notes, 0);
        ASSERT_TRUE(j->first_seen == in->first_seen && j->last_seen == in->last_seen);
        ASSERT_FALSE(j->ended);
        ASSERT_EQ(j->cpu_time_ns, 0);
        ASSERT_TRUE(j->energy_joules == in->energy_joules);
        ASSERT_TRUE(j->energy_alone_joules == 0);
        ASSERT_FALSE(j->opted_out);
        ASSERT_EQ(j->samples, 0);
        ASSERT_FALSE(j->counters_released);

        /* --lmk=off: its CPU time and samples, no counters, no notes */
        j = job_named(b, OPTED_OUT_JOB);
        ASSERT_TRUE(j->opted_out);
        ASSERT_EQ(j->samples, OPTED_OUT_SAMPLES);
        ASSERT_EQ(j->cpu_time_ns, OPTED_OUT_CPU_NS);
        ASSERT_EQ(j->cycles, BATCH_NULL);
        ASSERT_EQ(j->instructions, BATCH_NULL);
        ASSERT_NULL(j->events);
        ASSERT_EQ(j->n_notes, 0);
        ASSERT_FALSE(j->counters_released);

        /* --lmk=nocounters: measured, the counters released */
        j = job_named(b, NOCOUNTERS_JOB);
        ASSERT_TRUE(j->counters_released);
        ASSERT_FALSE(j->opted_out);
        ASSERT_EQ(j->samples, 0);
}

static const BatchRow *row_of(const Batch *b, const char *object) {
        for (size_t i = 0; i < b->n_rows; i++)
                if (streq(b->rows[i].object, object))
                        return &b->rows[i];
        test_fail("no row of %s in the batch", object);
}

static void check_rows(const Batch *b) {
        static const char *const special[] = {
                [OBJECT_KERNEL] = "[kernel]", [OBJECT_IDLE] = "[idle]", [OBJECT_ANON] = "[anon]",
                [OBJECT_UNKNOWN] = "[unknown]",
        };
        int64_t samples = 0;

        ASSERT_EQ(b->n_rows, ELEMENTSOF(rows_in));
        for (size_t i = 0; i < ELEMENTSOF(rows_in); i++) {
                const RowIn *in = &rows_in[i];
                const BatchRow *r = row_of(b, in->object == OBJECT_FILE ? in->path : special[in->object]);
                char hex[2 * sizeof(exe_build_id) + 1];

                ASSERT_TRUE(in->job ? r->job && streq(r->job, in->job) : !r->job);
                ASSERT_STREQ(r->step, in->step ?: "");
                ASSERT_STREQ(r->user, user_name(in->uid));
                ASSERT_STREQ(r->comm, in->comm);
                ASSERT_STREQ(r->phase, in->phase);
                ASSERT_EQ(r->kind, in->kind);
                buildid_to_hex(exe_build_id, sizeof(exe_build_id), hex);
                ASSERT_STREQ(r->build_id, in->kind == CODE_EXE ? hex : "");
                ASSERT_EQ(r->samples, in->samples);
                ASSERT_EQ(r->cpu_time_ns, (int64_t) ((double) in->samples * 1e9 / FREQUENCY));
                ASSERT_EQ(r->cycles, in->counts[CYCLES]);
                ASSERT_EQ(r->instructions, in->counts[INSTRUCTIONS]);
                ASSERT_NOT_NULL(r->events);
                ASSERT_EQ(r->events->count[role(b, L1D)], in->counts[L1D]);
                ASSERT_EQ(r->events->count[role(b, LLC)], BATCH_NULL);
                ASSERT_EQ(r->multiplexed_samples, in->multiplexed);
                samples += r->samples;
                if (in->burst_samples == 0) {
                        ASSERT_NULL(r->burst);
                        continue;
                }
                ASSERT_NOT_NULL(r->burst);
                ASSERT_EQ(r->burst->samples, in->burst_samples);
                ASSERT_EQ(r->burst->window_ns, 1000000000);
                for (unsigned k = 0; k < LLC; k++) {
                        ASSERT_TRUE(r->burst->per_second[role(b, k)] == (double) in->burst_counts[k]);
                        ASSERT_TRUE(r->burst->counts[role(b, k)] == (double) in->burst_counts[k]);
                }
                ASSERT_TRUE(isnan(r->burst->per_second[role(b, LLC)]));
        }
        ASSERT_EQ(b->total_samples, samples);
}

static void check_markers_ranks(const Batch *b) {
        ASSERT_EQ(b->n_markers, 2);
        ASSERT_STREQ(b->markers[0].job, "4711");
        ASSERT_STREQ(b->markers[0].comm, "lulesh2.0");
        ASSERT_STREQ(b->markers[0].phase, "inner");
        ASSERT_STREQ(b->markers[0].state, marker_off_reason(LMK_REGION_OFF_RATE));
        ASSERT_NULL(b->markers[1].job);
        ASSERT_STREQ(b->markers[1].comm, "daemon");
        ASSERT_STREQ(b->markers[1].phase, "poll");
        ASSERT_STREQ(b->markers[1].state, marker_off_reason(LMK_REGION_OFF_FULL));

        /* sorted by job, step, rank, phase */
        ASSERT_EQ(b->n_ranks, 2);
        ASSERT_STREQ(b->ranks[0].job, "4711");
        ASSERT_STREQ(b->ranks[0].step, "");
        ASSERT_EQ(b->ranks[0].rank, 0);
        ASSERT_STREQ(b->ranks[0].phase, "");
        ASSERT_EQ(b->ranks[0].samples, 20);
        ASSERT_EQ(b->ranks[0].comm_samples, 20);
        ASSERT_TRUE(b->ranks[0].first == START + 3 && b->ranks[0].last == START + 4);
        ASSERT_STREQ(b->ranks[1].step, "0");
        ASSERT_EQ(b->ranks[1].rank, 3);
        ASSERT_STREQ(b->ranks[1].phase, "timestep/solve");
        ASSERT_EQ(b->ranks[1].samples, 150);
        ASSERT_EQ(b->ranks[1].comm_samples, 40);
        ASSERT_TRUE(b->ranks[1].first == START + 1.25 && b->ranks[1].last == END - 2.5);
}

static json_object *member(json_object *o, const char *key) {
        json_object *v = NULL;

        if (!json_object_object_get_ex(o, key, &v))
                test_fail("no member %s in %s", key, json_object_to_json_string(o));
        return v;
}

static int64_t int_member(json_object *o, const char *key) {
        json_object *v = member(o, key);

        ASSERT_TRUE(json_object_is_type(v, json_type_int));
        return json_object_get_int64(v);
}

static bool is_null(json_object *o, const char *key) {
        return member(o, key) == NULL;
}

/* functions[] (format version 3) as lmkd writes it: the contract's members
 * from batch-fields.h, the index of a rows[] entry of its (job, step,
 * object, phase) and build (build_id null where it names no build), one of
 * a name, an offset or "other" in each, the counters as in rows[]. */
static void check_functions_written(const Sent *s) {
        json_object *root = NULL, *a, *rows;
        char hex[2 * sizeof(exe_build_id) + 1];

        buildid_to_hex(exe_build_id, sizeof(exe_build_id), hex);
        ASSERT_OK(batch_json(&s->iv, &s->info, &root));
        ASSERT_EQ(int_member(root, BF_VERSION), 3);
        a = member(root, BF_FUNCTIONS);
        rows = member(root, BF_ROWS);
        ASSERT_TRUE(json_object_is_type(a, json_type_array));
        ASSERT_EQ(json_object_array_length(a), ELEMENTSOF(functions_in));
        for (size_t i = 0; i < ELEMENTSOF(functions_in); i++) {
                const FunctionIn *in = &functions_in[i];
                const RowIn *row = &rows_in[in->row];
                json_object *f = json_object_array_get_idx(a, i), *events, *jr;
                int64_t k = int_member(f, BF_FUNCTION_ROW);

                ASSERT_TRUE(k >= 0 && (size_t) k < json_object_array_length(rows));
                jr = json_object_array_get_idx(rows, (size_t) k);
                ASSERT_STREQ(json_object_get_string(member(jr, BF_ROW_JOB)), row->job);
                ASSERT_STREQ(json_object_get_string(member(jr, BF_ROW_STEP)), row->step);
                ASSERT_STREQ(json_object_get_string(member(jr, BF_ROW_OBJECT)), row->path);
                ASSERT_STREQ(json_object_get_string(member(jr, BF_ROW_PHASE)), row->phase);
                if (row->kind == CODE_EXE)
                        ASSERT_STREQ(json_object_get_string(member(jr, BF_ROW_BUILD_ID)), hex);
                else
                        ASSERT_TRUE(is_null(jr, BF_ROW_BUILD_ID));
                /* the five strings are the row's, not repeated */
                ASSERT_FALSE(json_object_object_get_ex(f, BF_FUNCTION_JOB, NULL));
                ASSERT_FALSE(json_object_object_get_ex(f, BF_FUNCTION_OBJECT, NULL));
                if (in->no_build && row->kind == CODE_EXE)
                        ASSERT_TRUE(is_null(f, BF_FUNCTION_BUILD_ID));
                else
                        ASSERT_FALSE(json_object_object_get_ex(f, BF_FUNCTION_BUILD_ID, NULL));
                /* only the member of its kind */
                if (in->kind == FUNCTION_NAMED)
                        ASSERT_STREQ(json_object_get_string(member(f, BF_FUNCTION_FUNCTION)), in->name);
                else
                        ASSERT_FALSE(json_object_object_get_ex(f, BF_FUNCTION_FUNCTION, NULL));
                if (in->kind == FUNCTION_UNNAMED)
                        ASSERT_EQ(int_member(f, BF_FUNCTION_OFFSET), in->offset);
                else
                        ASSERT_FALSE(json_object_object_get_ex(f, BF_FUNCTION_OFFSET, NULL));
                /* "entry": true with an exact start, absent otherwise (a page) */
                if (in->entry)
                        ASSERT_TRUE(json_object_get_boolean(member(f, BF_FUNCTION_ENTRY)));
                else
                        ASSERT_FALSE(json_object_object_get_ex(f, BF_FUNCTION_ENTRY, NULL));
                if (in->kind == FUNCTION_OTHER)
                        ASSERT_TRUE(json_object_get_boolean(member(f, BF_FUNCTION_OTHER)));
                else
                        ASSERT_FALSE(json_object_object_get_ex(f, BF_FUNCTION_OTHER, NULL));
                ASSERT_EQ(int_member(f, BF_FUNCTION_SAMPLES), in->samples);
                ASSERT_EQ(int_member(f, BF_CYCLES), in->counts[CYCLES]);
                ASSERT_EQ(int_member(f, BF_INSTRUCTIONS), in->counts[INSTRUCTIONS]);
                events = member(f, BF_EVENTS);
                ASSERT_EQ(int_member(events, "l1d"), in->counts[L1D]);
                ASSERT_TRUE(is_null(events, "llc"));
        }
        json_object_put(root);
}

/* functions[] as the store reads them: each entry of lmkd's, in its
 * order, with the first row of its (job, step, object, phase). */
static void check_functions_read(const Batch *b) {
        char hex[2 * sizeof(exe_build_id) + 1];

        buildid_to_hex(exe_build_id, sizeof(exe_build_id), hex);
        ASSERT_EQ(b->n_functions, ELEMENTSOF(functions_in));
        for (size_t i = 0; i < ELEMENTSOF(functions_in); i++) {
                const FunctionIn *in = &functions_in[i];
                const RowIn *row = &rows_in[in->row];
                const BatchFunction *f = &b->functions[i];
                const BatchRow *r;

                ASSERT_STREQ(f->job, row->job);
                ASSERT_STREQ(f->step, row->step);
                ASSERT_STREQ(f->object, row->path);
                ASSERT_STREQ(f->phase, row->phase);
                ASSERT_STREQ(f->build_id, row->kind == CODE_EXE && !in->no_build ? hex : "");
                if (in->kind == FUNCTION_NAMED)
                        ASSERT_STREQ(f->function, in->name);
                else
                        ASSERT_NULL(f->function);
                ASSERT_EQ(f->offset, in->kind == FUNCTION_UNNAMED ? (int64_t) in->offset : BATCH_NULL);
                ASSERT_EQ(f->entry, in->entry);
                ASSERT_EQ(f->other, in->kind == FUNCTION_OTHER);
                ASSERT_EQ(f->samples, in->samples);
                ASSERT_EQ(f->cycles, in->counts[CYCLES]);
                ASSERT_EQ(f->instructions, in->counts[INSTRUCTIONS]);
                ASSERT_NOT_NULL(f->events);
                ASSERT_EQ(f->events->count[role(b, L1D)], in->counts[L1D]);
                ASSERT_EQ(f->events->count[role(b, LLC)], BATCH_NULL);
                ASSERT_EQ(f->kind, row->kind);
                ASSERT_TRUE(f->row < b->n_rows);
                r = &b->rows[f->row];
                ASSERT_STREQ(r->object, row->path);
                ASSERT_STREQ(r->job, row->job);
                ASSERT_STREQ(r->step, row->step);
                ASSERT_STREQ(r->phase, row->phase);
        }
}

/* sampling.pmu_released: lmkd's own (the store reads the jobs'
 * counters_released), written as the interval had it, and a batch with
 * it true is one the store takes. */
static void check_pmu_released(Sent *s) {
        for (int released = 0; released <= 1; released++) {
                _cleanup_(batch_freep) Batch *b = NULL;
                json_object *root = NULL;

                s->iv.pmu_released = released;
                ASSERT_OK(batch_json(&s->iv, &s->info, &root));
                ASSERT_EQ(json_object_get_boolean(member(member(root, BF_SAMPLING), BF_SAMPLING_PMU_RELEASED)),
                          released);
                json_object_put(root);
                b = round_trip(s);
                ASSERT_EQ(b->n_jobs, 4);
        }
}

/* Every section filled: what the store reads is what lmkd had. */
TEST(every_section) {
        _cleanup_(batch_freep) Batch *b = NULL;
        Sent s;

        sent_init(&s);
        b = round_trip(&s);
        check_header(&s, b);
        check_node_type(&s, b);
        check_inventory(&s, b);
        check_counters(&s, b);
        check_energy(&s, b);
        check_jobs(&s, b);
        check_rows(b);
        check_markers_ranks(b);
        check_functions_written(&s);
        check_functions_read(b);
        check_pmu_released(&s);
        sent_done(&s);
}

/* The optional sections left out, as an lmkd without them sends: the
 * store reads them as absent, not as empty or zero. */
TEST(sections_absent) {
        _cleanup_(batch_freep) Batch *b = NULL;
        Sent s;

        sent_init(&s);
        s.info.spool_id = NULL;
        s.info.cluster = NULL;
        s.info.software = NULL;
        s.info.node_type = NULL;
        s.info.inventory = NULL;
        s.iv.energy = NULL;
        s.iv.n_events = 0;
        s.iv.n_markers_off = 0;
        s.iv.functions = NULL;
        histogram_reset(s.hist);
        b = round_trip(&s);
        ASSERT_NULL(b->spool);
        ASSERT_NULL(b->cluster);
        ASSERT_FALSE(b->has_installed);
        ASSERT_NULL(b->node_type);
        ASSERT_NULL(b->inventory);
        ASSERT_NULL(b->energy);
        ASSERT_EQ(b->n_counters, 0);
        ASSERT_EQ(b->n_rows, 0);
        ASSERT_EQ(b->n_markers, 0);
        ASSERT_EQ(b->n_ranks, 0);
        for (size_t i = 0; i < b->n_jobs; i++)
                ASSERT_TRUE(isnan(b->jobs[i].energy_joules));
        {
                /* no functions named (lmkd.conf functions = 0): an empty functions[] */
                json_object *root = NULL;

                ASSERT_OK(batch_json(&s.iv, &s.info, &root));
                ASSERT_EQ(json_object_array_length(member(root, BF_FUNCTIONS)), 0);
                json_object_put(root);
        }
        sent_done(&s);
}

int main(void) {
        RUN(every_section);
        RUN(sections_absent);
        return 0;
}
