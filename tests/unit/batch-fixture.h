/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* One interval of one node with every section of a batch filled, built
 * from lmkd's own types: rows of every code kind with counters, events and
 * bursts, exact totals, jobs with and without metadata and notes, an
 * opted-out job (--lmk=off) and one that released the counters, markers,
 * ranks, energy zones, the node type with GPUs, installed families, a
 * software inventory and a spool id. For the tests of lmkd's batch
 * (test-batch-contract, test-batch-oom). */
#include "batch-build.h"
#include "histogram.h"
#include "interval-json.h"
#include "inventory/inventory.h"
#include "job-table.h"
#include "liblmk-state.h"
#include "tests.h"
#include "util.h"

#define START 1795550400.5
#define END 1795550460.25
#define FREQUENCY 100.0
#define CPUS 8
#define OPTED_OUT_JOB "4713"
#define OPTED_OUT_SAMPLES 777
#define OPTED_OUT_CPU_NS UINT64_C(7770000000)
#define NOCOUNTERS_JOB "4714"

enum { CYCLES, INSTRUCTIONS, L1D, LLC };

/* A row as it goes in: its key, and what its samples and windows held. */
typedef struct RowIn {
        const char *job, *step, *comm, *phase;
        uint32_t uid;
        ObjectKind object;              /* OBJECT_FILE: path names it */
        const char *path;
        CodeKind kind;
        uint64_t samples;
        uint64_t counts[LMK_MAX_COUNTERS]; /* over windows as long as the samples' time: scale 1 */
        uint64_t multiplexed;
        uint64_t burst_samples;         /* over one second of windows: counts are rates */
        uint64_t burst_counts[LMK_MAX_COUNTERS];
} RowIn;

static const uint8_t exe_build_id[] = { 0x5d, 0x1c, 0x0f, 0x9a, 0x00, 0xff, 0x12, 0x34 };

/* one row of each kind, in jobs and outside, in phases and steps */
static const RowIn rows_in[] = {
        { "4711", "0", "lulesh2.0", "timestep/solve", 1000, OBJECT_FILE, "/opt/lulesh/lulesh2.0", CODE_EXE, 2000,
          { 30000000000, 45000000000, 7000000, 0 }, 7, 3, { 2900000, 4100000, 900, 0 } },
        { "4711", "0", "lulesh2.0", "timestep/solve", 1000, OBJECT_FILE, "/usr/lib/libopenblas.so.0", CODE_LIB, 900,
          { 13000000000, 40000000000, 2000000, 0 }, 0, 0, {} },
        { "4711", "batch", "bash", "", 1000, OBJECT_KERNEL, NULL, CODE_KERNEL, 300, { 5000000, 2000000, 0, 0 }, 0,
          0, {} },
        { NULL, NULL, "swapper/0", "", 0, OBJECT_IDLE, NULL, CODE_IDLE, 500, {}, 0, 0, {} },
        { "4712", NULL, "java", "", 1001, OBJECT_ANON, NULL, CODE_ANON, 200, { 100, 200, 3, 0 }, 0, 0, {} },
        { NULL, NULL, "kworker/3:1", "", 0, OBJECT_UNKNOWN, NULL, CODE_UNKNOWN, 100, { 1, 1, 1, 0 }, 0, 0, {} },
};

/* The functions of rows_in[0] (2000 samples) and rows_in[1] (900): named,
 * offsets lmkd could not name (with the executable's build-id): a page and
 * a function's start from the unwind table (entry), and the rest; the
 * library has no build-id, so its rest carries none. */
typedef struct FunctionIn {
        size_t row;                     /* of rows_in: its (job, step, object, phase) */
        FunctionKind kind;
        const char *name;
        uint64_t offset;
        bool entry;
        uint64_t samples;
        uint64_t counts[LMK_MAX_COUNTERS]; /* over windows as long as the samples' time: scale 1 */
        bool no_build;                  /* an "other" over several builds of the path: names none */
} FunctionIn;

static const FunctionIn functions_in[] = {
        { 0, FUNCTION_NAMED, "CalcHourglassControlForElems(Domain&, double*, double)", 0, false, 1200,
          { 18000000000, 27000000000, 4000000, 0 } },
        { 0, FUNCTION_UNNAMED, NULL, 0x21000, false, 200, { 3000000000, 4500000000, 700000, 0 } },
        { 0, FUNCTION_UNNAMED, NULL, 0x21a70, true, 100, { 1500000000, 2200000000, 300000, 0 } },
        { 0, FUNCTION_OTHER, NULL, 0, false, 500, { 7500000000, 11300000000, 2000000, 0 }, true },
        { 1, FUNCTION_NAMED, "dgemm_kernel_HASWELL", 0, false, 800, { 12000000000, 38000000000, 1800000, 0 } },
        { 1, FUNCTION_OTHER, NULL, 0, false, 100, { 1000000000, 2000000000, 200000, 0 } },
};

/* the software inventory: a Debian package and a Spack prefix */
static InventoryPackage packages_in[] = {
        { .manager = INVENTORY_DEBIAN, .name = (char[]) { "libopenblas0-pthread" },
          .version = (char[]) { "0.3.21+ds-4" }, .arch = (char[]) { "amd64" }, .size = 38912000,
          .files = (char *[]) { (char[]) { "/usr/lib/x86_64-linux-gnu/libopenblas.so.0" } }, .n_files = 1 },
        { .manager = INVENTORY_SPACK, .name = (char[]) { "lulesh" }, .version = (char[]) { "2.0.3" },
          .hash = (char[]) { "x4kq2xwdbrw3y2v5hjrgk3p5ujkgfc3a" },
          .prefix = (char[]) { "/opt/spack/lulesh-2.0.3-x4kq2xw" }, .size = 4096,
          .files = (char *[]) { (char[]) { "/opt/spack/lulesh-2.0.3-x4kq2xw/bin/lulesh2.0" },
                                (char[]) { "/opt/spack/lulesh-2.0.3-x4kq2xw/lib/liblulesh.so" } },
          .n_files = 2 },
};

/* What lmkd knows of the node and what it sends with each batch. */
typedef struct Sent {
        ObjectTable *objects;
        Histogram *hist;
        JobTable jobs;
        EventSpec events[LMK_MAX_COUNTERS];
        MarkerOff markers[2];
        Powercap energy;
        NodeType node_type;
        NodeSoftware software;
        Inventory inventory;
        char *inventory_json;
        SpoolStats spool;
        PushStats push;
        FunctionRow function_rows[ELEMENTSOF(functions_in)];
        Functions functions;
        Interval iv;
        BatchInfo info;
} Sent;

static Object *object_of(Sent *s, const RowIn *in) {
        Object *o;

        if (in->object != OBJECT_FILE)
                return object_table_get_special(s->objects, in->object);
        o = object_table_get_file(s->objects, 8, (uint64_t) (in - rows_in) + 100, in->path);
        ASSERT_NOT_NULL(o);
        o->build_id_tried = true;
        if (in->kind == CODE_EXE) {
                memcpy(o->build_id, exe_build_id, sizeof(exe_build_id));
                o->build_id_size = sizeof(exe_build_id);
        }
        return o;
}

static void add_rows(Sent *s) {
        for (size_t i = 0; i < ELEMENTSOF(rows_in); i++) {
                const RowIn *in = &rows_in[i];
                Object *o = object_of(s, in);
                HistRow *row;

                row = histogram_add(s->hist, &(HistKey) { .job = in->job, .step = in->step, .comm = in->comm,
                                                          .phase = in->phase, .obj = o, .uid = in->uid,
                                                          .kind = in->kind }, in->samples);
                ASSERT_NOT_NULL(row);
                object_unref(s->objects, o);
                row->window_ns = (uint64_t) ((double) in->samples * 1e9 / FREQUENCY);
                row->window_samples = in->samples;
                for (unsigned k = 0; k < LMK_MAX_COUNTERS; k++) {
                        row->counts[k] = in->counts[k];
                        /* the unavailable counter counted nowhere */
                        row->counted[k] = k == LLC ? 0 : in->samples;
                }
                row->multiplexed = in->multiplexed;
                if (in->burst_samples > 0) {
                        row->burst_samples = in->burst_samples;
                        row->burst_ns = 1000000000;
                        for (unsigned k = 0; k < LMK_MAX_COUNTERS; k++) {
                                row->burst_counts[k] = in->burst_counts[k];
                                row->burst_counted[k] = k == LLC ? 0 : in->burst_samples;
                        }
                }
        }
        /* exact totals of job 4711's solver: its figures as a job */
        ASSERT_NOT_NULL(histogram_add_total(s->hist, &(TotalKey) { .job = "4711", .step = "0", .comm = "lulesh2.0",
                                                                   .uid = 1000 },
                                            15000000000, (uint64_t[LMK_MAX_COUNTERS]) { 40000000000, 80000000000,
                                                                                        9000000, 0 }, 40));
        /* and of the opted-out job, counters and all: the batch keeps
         * its CPU time only */
        ASSERT_NOT_NULL(histogram_add_total(s->hist, &(TotalKey) { .job = OPTED_OUT_JOB, .step = "batch",
                                                                   .comm = "secret", .uid = 1002 },
                                            OPTED_OUT_CPU_NS, (uint64_t[LMK_MAX_COUNTERS]) { 9000000000,
                                                                                        12000000000, 5000, 0 },
                                            30));
        ASSERT_NOT_NULL(histogram_add_rank(s->hist, &(RankKey) { .job = "4711", .step = "0",
                                                                 .phase = "timestep/solve", .rank = 3 },
                                           150, 40, START + 1.25, END - 2.5));
        ASSERT_NOT_NULL(histogram_add_rank(s->hist, &(RankKey) { .job = "4711", .phase = "", .rank = 0 },
                                           20, 20, START + 3, START + 4));
}

static void add_functions(Sent *s) {
        for (size_t i = 0; i < ELEMENTSOF(functions_in); i++) {
                const FunctionIn *in = &functions_in[i];
                const RowIn *row = &rows_in[in->row];
                /* the row's object: the histogram holds it */
                Object *o = object_of(s, row);

                s->function_rows[i] = (FunctionRow) {
                        .job = row->job, .step = row->step, .phase = row->phase, .obj = o,
                        .build_id = o->build_id_size > 0 && !in->no_build, .kind = in->kind, .name = in->name, .offset = in->offset,
                        .entry = in->entry,
                        .samples = in->samples, .window_ns = (uint64_t) ((double) in->samples * 1e9 / FREQUENCY),
                        .counted = (1u << CYCLES) | (1u << INSTRUCTIONS) | (1u << L1D),
                };
                memcpy(s->function_rows[i].counts, in->counts, sizeof(in->counts));
                object_unref(s->objects, o);
        }
        s->functions = (Functions) { .v = s->function_rows, .n = ELEMENTSOF(functions_in) };
}

static void add_jobs(Sent *s) {
        JobNotice n = { .event = JOB_NOTICE_START };
        Job *j;

        ASSERT_OK(jobs_init(&s->jobs));
        job_info_init(&n.info);
        snprintf(n.info.job, sizeof(n.info.job), "4711");
        snprintf(n.info.user, sizeof(n.info.user), "alice");
        n.info.uid = 1000;
        snprintf(n.info.account, sizeof(n.info.account), "p1");
        snprintf(n.info.partition, sizeof(n.info.partition), "batch");
        snprintf(n.info.cluster, sizeof(n.info.cluster), "other");
        snprintf(n.info.name, sizeof(n.info.name), "lulesh run");
        n.info.nodes = 4;
        n.info.tasks = 192;
        n.info.cpus_on_node = 6;
        job_notes_parse("app=lulesh:size=128", strlen("app=lulesh:size=128"), &n.info.notes);
        ASSERT_EQ(n.info.notes.n, 2);
        jobs_apply_notice(&s->jobs, &n, START + 1.25);
        j = jobs_get(&s->jobs, "4711");
        ASSERT_NOT_NULL(j);
        j->last_seen = END - 0.5;
        j->ended = true;
        j->energy_joules = 1000.25;
        j->energy_alone_joules = 800.5;

        /* known by its id alone */
        job_info_init(&n.info);
        snprintf(n.info.job, sizeof(n.info.job), "4712");
        jobs_apply_notice(&s->jobs, &n, START + 2);
        j = jobs_get(&s->jobs, "4712");
        ASSERT_NOT_NULL(j);
        j->energy_joules = 200.125;

        /* sbatch --lmk=off, with notes and counted CPU time: only its
         * CPU time and samples may leave the node */
        job_info_init(&n.info);
        snprintf(n.info.job, sizeof(n.info.job), OPTED_OUT_JOB);
        n.info.uid = 1002;
        n.info.lmk = JOB_LMK_OFF;
        job_notes_parse("app=secret:input=/home/x", strlen("app=secret:input=/home/x"), &n.info.notes);
        ASSERT_EQ(n.info.notes.n, 2);
        jobs_apply_notice(&s->jobs, &n, START + 3);
        j = jobs_get(&s->jobs, OPTED_OUT_JOB);
        ASSERT_NOT_NULL(j);
        ASSERT_TRUE(job_opted_out(j));
        j->private_samples = OPTED_OUT_SAMPLES;

        /* sbatch --lmk=nocounters */
        job_info_init(&n.info);
        snprintf(n.info.job, sizeof(n.info.job), NOCOUNTERS_JOB);
        n.info.uid = 1003;
        n.info.lmk = JOB_LMK_NOCOUNTERS;
        jobs_apply_notice(&s->jobs, &n, START + 4);
        ASSERT_TRUE(job_counters_released(jobs_get(&s->jobs, NOCOUNTERS_JOB)));
}

static void sent_init(Sent *s) {
        static const char spool_id[] = "0123456789abcdef0123456789abcdef";
        static const char *const roles[] = { "cycles", "instructions", "l1d", "llc" };
        static const char *const names[] = { "cycles", "instructions", "PAPI_L1_DCM", "LLC_MISSES" };
        static const char *const sources[] = { "perf", "perf", "papi", "pfm" };
        size_t size;

        *s = (Sent) {};
        s->objects = object_table_new();
        ASSERT_NOT_NULL(s->objects);
        s->hist = histogram_new(s->objects, 1000, 1000);
        ASSERT_NOT_NULL(s->hist);
        add_rows(s);
        add_functions(s);
        add_jobs(s);

        for (unsigned k = 0; k < LMK_MAX_COUNTERS; k++) {
                snprintf(s->events[k].role, sizeof(s->events[k].role), "%s", roles[k]);
                snprintf(s->events[k].name, sizeof(s->events[k].name), "%s", names[k]);
                s->events[k].source = sources[k];
                s->iv.counters[k] = (CounterState) { .available = k != LLC, .error = k == LLC ? -EBUSY : 0,
                                                     .total = 1000000 * (k + 1), .enabled_ns = 4000,
                                                     .running_ns = 3000 };
        }
        s->markers[0] = (MarkerOff) { .job = "4711", .comm = "lulesh2.0", .name = "inner", .uid = 1000,
                                      .reason = LMK_REGION_OFF_RATE };
        s->markers[1] = (MarkerOff) { .job = "", .comm = "daemon", .name = "poll", .uid = 0,
                                      .reason = LMK_REGION_OFF_FULL };
        s->energy.n = 2;
        s->energy.zones[0] = (PowercapZone) { .name = "package-0", .kind = "package", .fd = -1, .joules = 1200.5 };
        s->energy.zones[1] = (PowercapZone) { .name = "package-0/dram", .kind = "dram", .fd = -1, .joules = 300.25 };

        s->node_type = (NodeType) {
                .cpu_model = "AMD EPYC 7763 64-Core Processor", .sockets = 2, .cores = 128, .threads = 256,
                .memory_bytes = UINT64_C(549755813888), .n_gpus = 2, .n_gpus_other = 3, .kernel = "6.1.0-18-amd64",
                .gpus = { { .vendor_id = 0x10de, .device_id = 0x20b0, .vendor = "NVIDIA", .name = "A100 SXM4 40GB",
                            .count = 4 },
                          { .vendor_id = 0x1002, .device_id = 0, .vendor = "AMD", .name = "", .count = 1 } },
        };
        s->software = (NodeSoftware) { .n = 2, .v = { { "blas", "openblas" }, { "mpi", "openmpi" } } };

        s->inventory = (Inventory) { .packages = packages_in, .n_packages = 2, .n_files = 3,
                                     .digest = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" };
        ASSERT_OK(inventory_to_json(&s->inventory, &s->inventory_json, &size));

        s->spool = (SpoolStats) { .spooled = 10, .sent = 7, .rejected = 1, .dropped = 1, .queued = 1 };
        s->push = (PushStats) { .failures = 2 };

        s->iv.start = START;
        s->iv.end = END;
        s->iv.event = "cpu-clock";
        s->iv.frequency_hz = FREQUENCY;
        s->iv.cpus = CPUS;
        s->iv.switch_program = true;
        /* the nocounters job had the PMU for some of the interval */
        s->iv.pmu_released = true;
        s->iv.hist = s->hist;
        s->iv.stats = (MonitorStats) { .samples_lost = 12, .rescans = 3 };
        s->iv.events = s->events;
        s->iv.n_events = LMK_MAX_COUNTERS;
        s->iv.markers_off = s->markers;
        s->iv.n_markers_off = ELEMENTSOF(s->markers);
        s->iv.jobs = &s->jobs;
        s->iv.energy = &s->energy;
        s->iv.energy_unattributed_joules = 100.5;
        s->iv.functions = &s->functions;
        s->info = (BatchInfo) {
                .node = "cn001", .boot_id = "5b8f3c0e-4f6a-4c1e-9d2b-7a1e0c3f8d21", .spool_id = spool_id,
                .cluster = "demo", .seq = 4242, .spool = &s->spool, .push = &s->push, .software = &s->software,
                .node_type = &s->node_type, .inventory = s->inventory_json,
        };
}

static void sent_done(Sent *s) {
        free(s->inventory_json);
        histogram_free(s->hist);
        jobs_done(&s->jobs);
        object_table_free(s->objects);
}
