/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lmkd's middle without BPF or root: samples through attribution into the
 * histogram, the exact totals from scripted kernel figures, and a closed
 * interval written as a batch that the store's rules accept. */
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include "attribution.h"
#include "batch-build.h"
#include "exact-totals.h"
#include "histogram.h"
#include "interval-json.h"
#include "job-table.h"
#include "phases.h"
#include "tests.h"
#include "utf8.h"
#include "util.h"

static int no_probes(void *u, const char *path) {
        return 0;
}

static int no_marked(void *u, uint32_t pid, int64_t off) {
        return 0;
}

static void no_forget(void *u, uint32_t pid) {
}

typedef struct Node {
        char proc[64];                  /* an empty /proc: every scan misses */
        ObjectTable *objects;
        ProcessTable procs;
        JobTable jobs;
        Phases phases;
        Attribution attribution;
        Histogram *hist;
} Node;

static void node_init(Node *n) {
        snprintf(n->proc, sizeof(n->proc), "/tmp/lmk-test-proc-XXXXXX");
        ASSERT_NOT_NULL(mkdtemp(n->proc));
        n->objects = object_table_new();
        ASSERT_NOT_NULL(n->objects);
        ASSERT_OK(process_table_init(&n->procs, n->objects, n->proc));
        ASSERT_OK(jobs_init(&n->jobs));
        phases_init(&n->phases, &n->procs, &n->jobs, &(const PhaseHooks) {
                .attach_probes = no_probes, .set_marked = no_marked, .forget_marked = no_forget });
        n->attribution = (Attribution) { .objects = n->objects, .procs = &n->procs, .jobs = &n->jobs,
                                         .phases = &n->phases };
        n->hist = histogram_new(n->objects, 1000, 1000);
        ASSERT_NOT_NULL(n->hist);
}

static void node_done(Node *n) {
        histogram_free(n->hist);
        phases_done(&n->phases);
        process_table_done(&n->procs);
        jobs_done(&n->jobs);
        object_table_free(n->objects);
        rmdir(n->proc);
}

static struct lmk_sample sample(uint32_t pid, uint64_t ip, bool kernel) {
        struct lmk_sample s = {
                .type = LMK_EVENT_SAMPLE, .pid = pid, .tid = pid, .uid = 1000, .ip = ip, .time_ns = 1000,
                .flags = kernel ? LMK_SAMPLE_KERNEL : 0,
        };
        snprintf(s.comm, sizeof(s.comm), "from-sample");
        return s;
}

static const HistRow *row_of(Histogram *h, const char *path) {
        _cleanup_free_ HistRow **rows = histogram_sorted(h);

        for (size_t i = 0; i < histogram_rows(h); i++)
                if (streq(rows[i]->key.obj->path, path))
                        return rows[i];
        return NULL;
}

/* Each sample lands in the object its address maps to, or in [kernel],
 * [idle] or [unknown]; the process's own command name wins over the
 * sample's. */
TEST(attribution) {
        Node n;
        struct lmk_sample s;

        node_init(&n);
        ASSERT_OK(process_table_comm(&n.procs, 42, 42, "solver", true));
        ASSERT_OK(process_table_mmap(&n.procs, 42, 0x400000, 0x10000, 0, 8, 1, 100, "/opt/app/bin/solver"));
        ASSERT_OK(process_table_mmap(&n.procs, 42, 0x7f0000000000, 0x200000, 0, 8, 1, 101,
                                     "/usr/lib/libopenblas.so.0"));
        for (int i = 0; i < 30; i++) {
                s = sample(42, 0x7f0000001000 + (uint64_t) i * 64, false);
                ASSERT_OK(attribute_sample(&n.attribution, n.hist, &s, 2000, 0));
        }
        for (int i = 0; i < 10; i++) {
                s = sample(42, 0x401000, false);
                ASSERT_OK(attribute_sample(&n.attribution, n.hist, &s, 2000, 0));
        }
        s = sample(42, 0xffffffff81000000, true);
        ASSERT_OK(attribute_sample(&n.attribution, n.hist, &s, 2000, 0));
        s = sample(0, 0xffffffff81000000, true);
        ASSERT_OK(attribute_sample(&n.attribution, n.hist, &s, 2000, 0));
        s = sample(42, 0x900000, false); /* nothing mapped there, and no /proc to ask */
        ASSERT_OK(attribute_sample(&n.attribution, n.hist, &s, 2000, 0));

        ASSERT_EQ(histogram_samples(n.hist), 43);
        ASSERT_EQ(row_of(n.hist, "/usr/lib/libopenblas.so.0")->samples, 30);
        ASSERT_EQ(row_of(n.hist, "/usr/lib/libopenblas.so.0")->key.kind, CODE_LIB);
        ASSERT_STREQ(row_of(n.hist, "/usr/lib/libopenblas.so.0")->key.comm, "solver");
        ASSERT_EQ(row_of(n.hist, "/opt/app/bin/solver")->samples, 10);
        ASSERT_EQ(row_of(n.hist, "/opt/app/bin/solver")->key.kind, CODE_EXE);
        ASSERT_EQ(row_of(n.hist, "[kernel]")->samples, 1);
        ASSERT_EQ(row_of(n.hist, "[idle]")->samples, 1);
        ASSERT_EQ(row_of(n.hist, "[unknown]")->samples, 1);
        ASSERT_EQ(n.attribution.unknown, 1);
        node_done(&n);
}

static char *gunzip(const void *gz, size_t size) {
        z_stream z = { .next_in = (Bytef *) gz, .avail_in = (uInt) size };
        size_t cap = 1 << 20;
        char *out = malloc(cap);

        ASSERT_NOT_NULL(out);
        ASSERT_EQ(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
        z.next_out = (Bytef *) out;
        z.avail_out = (uInt) cap - 1;
        ASSERT_EQ(inflate(&z, Z_FINISH), Z_STREAM_END);
        out[z.total_out] = '\0';
        inflateEnd(&z);
        return out;
}

static const RankRow *rank_of(Histogram *h, const char *job, uint32_t rank) {
        _cleanup_free_ RankRow **v = NULL;
        size_t n;

        v = histogram_sorted_ranks(h, &n);
        ASSERT_NOT_NULL(v);
        for (size_t i = 0; i < n; i++)
                if (streq(v[i]->key.job, job) && v[i]->key.rank == rank)
                        return v[i];
        return NULL;
}

/* A rank (its job and rank as jobs_resolve() leaves them) in the shape
 * lmkd sees an Open MPI rank: its program, libmpi, a transport plugin. */
static Process *add_rank(Node *n, uint32_t pid, uint32_t rank) {
        Process *p;

        ASSERT_OK(process_table_comm(&n->procs, pid, pid, "a.out", true));
        ASSERT_OK(process_table_mmap(&n->procs, pid, 0x400000, 0x10000, 0, 8, 1, 200, "/home/u/a.out"));
        ASSERT_OK(process_table_mmap(&n->procs, pid, 0x7f0000000000, 0x100000, 0, 8, 1, 201,
                                     "/usr/lib/x86_64-linux-gnu/openmpi/lib/libmpi.so.40.30.4"));
        ASSERT_OK(process_table_mmap(&n->procs, pid, 0x7f1000000000, 0x100000, 0, 8, 1, 202,
                                     "/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/mca_btl_vader.so"));
        p = process_table_get(&n->procs, pid);
        ASSERT_NOT_NULL(p);
        snprintf(p->job.job, sizeof(p->job.job), "4711");
        snprintf(p->job.step, sizeof(p->job.step), "0");
        p->job_state = JOB_RESOLVED;
        p->rank = rank;
        return p;
}

static void samples_at(Node *n, uint32_t pid, uint64_t ip, bool kernel, int count, uint64_t t0) {
        for (int i = 0; i < count; i++) {
                struct lmk_sample s = sample(pid, ip, kernel);

                s.time_ns = t0 + (uint64_t) i * 5000000;
                ASSERT_OK(attribute_sample(&n->attribution, n->hist, &s, 2000, 0));
        }
}

/* Samples of ranks also count per rank: in communication libraries (the
 * families' "comm") or useful; kernel samples by the user code that
 * entered the kernel (useful when lmkd does not know it); a process that
 * is no rank, and work outside jobs, adds no rank row. */
TEST(ranks) {
        LibFamilies fam;
        Node n;
        const RankRow *r;
        Histogram *merged;
        Process *p;

        ASSERT_OK(lib_families_init(&fam));
        node_init(&n);
        n.attribution.families = &fam;
        add_rank(&n, 50, 0);
        add_rank(&n, 51, 1);
        samples_at(&n, 50, 0x401000, false, 80, 1000000000);          /* computing */
        samples_at(&n, 50, 0x7f0000000100, false, 15, 2000000000);    /* in libmpi */
        samples_at(&n, 50, 0x7f1000000100, false, 5, 3000000000);     /* in the vader transport */
        samples_at(&n, 50, 0xffffffff81000000, true, 4, 4000000000);  /* in the kernel */
        samples_at(&n, 51, 0x401000, false, 50, 1000000000);
        /* in the kernel, entered from libmpi (a single-copy transfer, say)
         * and from the program (a page fault) */
        for (int i = 0; i < 6; i++) {
                struct lmk_sample k = sample(51, 0xffffffff81000000, true);

                k.user_ip = i < 4 ? 0x7f0000000200 : 0x401100;
                k.time_ns = 1200000000 + (uint64_t) i * 5000000;
                ASSERT_OK(attribute_sample(&n.attribution, n.hist, &k, 2000, 0));
        }
        samples_at(&n, 51, 0x7f1000000100, false, 50, 1500000000);
        /* mpirun: same job, no rank */
        p = add_rank(&n, 52, 0);
        p->rank = JOB_UNSET;
        samples_at(&n, 52, 0x401000, false, 7, 1000000000);

        r = rank_of(n.hist, "4711", 0);
        ASSERT_NOT_NULL(r);
        ASSERT_EQ(r->samples, 104);
        ASSERT_EQ(r->comm_samples, 20);
        ASSERT_STREQ(r->key.step, "0");
        ASSERT_STREQ(r->key.phase, "");
        ASSERT_TRUE(r->first == 1.0 && fabs(r->last - 4.015) < 1e-9);
        r = rank_of(n.hist, "4711", 1);
        ASSERT_NOT_NULL(r);
        ASSERT_EQ(r->samples, 106);
        ASSERT_EQ(r->comm_samples, 54);
        {
                _cleanup_free_ RankRow **v = NULL;
                size_t nr;

                v = histogram_sorted_ranks(n.hist, &nr);
                ASSERT_EQ(nr, 2);
        }
        ASSERT_EQ(histogram_samples(n.hist), 217);

        /* as a batch's ranks[] */
        {
                _cleanup_free_ void *gz = NULL;
                _cleanup_free_ char *text = NULL;
                json_object *root, *a, *e, *v;
                Interval iv = {
                        .start = 1700000000.0, .end = 1700000060.0, .event = "cpu-clock", .frequency_hz = 1.0,
                        .cpus = 2, .hist = n.hist, .jobs = &n.jobs,
                };
                size_t size;

                ASSERT_OK(batch_build(&iv, &(const BatchInfo) { .node = "cn001", .boot_id = "b", .seq = 3 }, &gz,
                                      &size));
                text = gunzip(gz, size);
                root = json_tokener_parse(text);
                ASSERT_NOT_NULL(root);
                ASSERT_TRUE(json_object_object_get_ex(root, "ranks", &a));
                ASSERT_EQ(json_object_array_length(a), 2);
                e = json_object_array_get_idx(a, 0);
                ASSERT_TRUE(json_object_object_get_ex(e, "job", &v));
                ASSERT_STREQ(json_object_get_string(v), "4711");
                ASSERT_TRUE(json_object_object_get_ex(e, "step", &v));
                ASSERT_STREQ(json_object_get_string(v), "0");
                ASSERT_TRUE(json_object_object_get_ex(e, "rank", &v));
                ASSERT_EQ(json_object_get_int64(v), 0);
                ASSERT_TRUE(json_object_object_get_ex(e, "phase", &v));
                ASSERT_STREQ(json_object_get_string(v), "");
                ASSERT_TRUE(json_object_object_get_ex(e, "samples", &v));
                ASSERT_EQ(json_object_get_int64(v), 104);
                ASSERT_TRUE(json_object_object_get_ex(e, "comm_samples", &v));
                ASSERT_EQ(json_object_get_int64(v), 20);
                ASSERT_TRUE(json_object_object_get_ex(e, "first", &v));
                ASSERT_TRUE(json_object_get_double(v) == 1.0);
                json_object_put(root);
        }

        /* intervals add up (the one-shot report's cumulative histogram) */
        merged = histogram_new(n.objects, 1000, 1000);
        ASSERT_NOT_NULL(merged);
        ASSERT_OK(histogram_merge(merged, n.hist));
        ASSERT_OK(histogram_merge(merged, n.hist));
        r = rank_of(merged, "4711", 0);
        ASSERT_EQ(r->samples, 208);
        ASSERT_EQ(r->comm_samples, 40);
        histogram_free(merged);

        /* without families nothing is communication */
        histogram_reset(n.hist);
        n.attribution.families = NULL;
        samples_at(&n, 51, 0x7f1000000100, false, 3, 1000000000);
        ASSERT_EQ(rank_of(n.hist, "4711", 1)->comm_samples, 0);

        /* bounded: rows past HISTOGRAM_MAX_RANK_ROWS are counted, not kept */
        histogram_reset(n.hist);
        for (uint32_t k = 0; k < HISTOGRAM_MAX_RANK_ROWS + 10; k++)
                (void) histogram_add_rank(n.hist, &(RankKey) { .job = "1", .rank = k }, 2, 1, 5.0, 6.0);
        {
                _cleanup_free_ RankRow **v = NULL;
                size_t nr;

                v = histogram_sorted_ranks(n.hist, &nr);
                ASSERT_EQ(nr, HISTOGRAM_MAX_RANK_ROWS);
        }
        ASSERT_EQ(histogram_ranks_overflowed(n.hist), 20);
        /* a known row still counts */
        ASSERT_NOT_NULL(histogram_add_rank(n.hist, &(RankKey) { .job = "1", .rank = 0 }, 1, 0, 4.0, 7.0));
        r = rank_of(n.hist, "1", 0);
        ASSERT_TRUE(r->samples == 3 && r->first == 4.0 && r->last == 7.0);
        node_done(&n);
        lib_families_done(&fam);
}

/* Scripted kernel figures: what each walk of the exact totals reads. */
typedef struct Script {
        TaskTotals t[4];
        uint32_t tgid[4];
        size_t n;
        uint32_t forgotten[8];
        size_t n_forgotten;
} Script;

static int script_read(void *userdata, task_totals_cb_t cb, void *cb_userdata) {
        Script *sc = userdata;

        for (size_t i = 0; i < sc->n; i++)
                cb(sc->tgid[i], &sc->t[i], cb_userdata);
        return 0;
}

static void script_forget(void *userdata, uint32_t tgid) {
        Script *sc = userdata;

        if (sc->n_forgotten < 8)
                sc->forgotten[sc->n_forgotten++] = tgid;
}

static const TotalRow *total_of(Histogram *h, const char *comm) {
        _cleanup_free_ TotalRow **t = NULL;
        size_t n;

        t = histogram_sorted_totals(h, &n);
        for (size_t i = 0; i < n; i++)
                if (streq(t[i]->key.comm, comm))
                        return t[i];
        return NULL;
}

/* A process older than lmkd counts from lmkd's start; one born later from
 * its own start; a figure that dips while a thread exits is not counted
 * twice when it comes back. */
TEST(exact_totals) {
        Script sc = { .n = 2, .tgid = { 7, 8 } };
        ExactTotals x;
        Node n;

        node_init(&n);
        /* both live in the process table: whether some pid 7 or 8 happens
         * to exist on this machine must not matter */
        ASSERT_OK(process_table_comm(&n.procs, 7, 7, "old", true));
        ASSERT_OK(process_table_comm(&n.procs, 8, 8, "young", true));
        ASSERT_OK(exact_totals_init(&x, &(const TotalsSource) { script_read, script_forget, &sc }, &n.procs, &n.jobs,
                                    n.hist));
        x.epoch = 1000;
        sc.t[0] = (TaskTotals) { .cpu_time_ns = 5000, .switches = 3, .start_ns = 10, .uid = 1, .comm = "old" };
        sc.t[1] = (TaskTotals) { .cpu_time_ns = 700, .switches = 2, .start_ns = 2000, .uid = 1, .comm = "young" };
        exact_totals_account(&x);
        ASSERT_NULL(total_of(n.hist, "old"));           /* a baseline only */
        ASSERT_EQ(total_of(n.hist, "young")->cpu_time_ns, 700);

        sc.t[0].cpu_time_ns = 6000;
        sc.t[1].cpu_time_ns = 600;                      /* a thread between the two views */
        exact_totals_account(&x);
        ASSERT_EQ(total_of(n.hist, "old")->cpu_time_ns, 1000);
        ASSERT_EQ(total_of(n.hist, "young")->cpu_time_ns, 700);

        sc.t[1].cpu_time_ns = 900;                      /* back, and 200 ns more */
        exact_totals_account(&x);
        ASSERT_EQ(total_of(n.hist, "young")->cpu_time_ns, 900);
        ASSERT_EQ(total_of(n.hist, "old")->switches, 0);

        ASSERT_EQ(sc.n_forgotten, 0);                   /* both still run */

        /* "old" exited long before the order point: its figures go */
        process_table_exit(&n.procs, 7, 7, 5000);
        x.order_point = UINT64_C(10000000000);
        exact_totals_account(&x);
        ASSERT_EQ(sc.n_forgotten, 1);
        ASSERT_EQ(sc.forgotten[0], 7);

        /* Pid 9, born after the order point, is not in the table yet (its
         * fork waits behind the samples): its figures wait for the reading
         * that knows it, and then all of them go under its name. */
        sc.n = 3;
        sc.tgid[2] = 9;
        sc.t[2] = (TaskTotals) { .cpu_time_ns = 7500, .switches = 1, .start_ns = x.order_point + 5, .uid = 1,
                                 .comm = "python3" };
        exact_totals_account(&x);
        ASSERT_NULL(total_of(n.hist, "python3"));
        ASSERT_NULL(total_of(n.hist, "newborn"));
        ASSERT_OK(process_table_comm(&n.procs, 9, 9, "newborn", true));
        sc.t[2].cpu_time_ns = 33000;
        x.order_point += 1000;
        exact_totals_account(&x);
        ASSERT_NULL(total_of(n.hist, "python3"));
        ASSERT_EQ(total_of(n.hist, "newborn")->cpu_time_ns, 33000);
        /* one the table never learnt of, born before the order point,
         * counts under the kernel's name for it, as before */
        sc.tgid[2] = 10;
        sc.t[2].start_ns = 2000;
        exact_totals_account(&x);
        ASSERT_EQ(total_of(n.hist, "python3")->cpu_time_ns, 33000);
        exact_totals_done(&x);
        node_done(&n);
}


static void all_strings_valid(json_object *o) {
        if (json_object_is_type(o, json_type_string)) {
                ASSERT_TRUE(utf8_is_valid(json_object_get_string(o), (size_t) json_object_get_string_len(o)));
        } else if (json_object_is_type(o, json_type_array)) {
                for (size_t i = 0; i < json_object_array_length(o); i++)
                        all_strings_valid(json_object_array_get_idx(o, i));
        } else if (json_object_is_type(o, json_type_object)) {
                json_object_object_foreach(o, k, v) {
                        ASSERT_TRUE(utf8_is_valid(k, strlen(k)));
                        all_strings_valid(v);
                }
        }
}

/* One closed interval, written as a batch: the rows and totals it holds,
 * and only well-formed UTF-8 even for a process named with stray bytes. */
TEST(batch_from_interval) {
        _cleanup_free_ void *gz = NULL;
        _cleanup_free_ char *text = NULL;
        json_object *root, *rows, *v, *type;
        JobNotice off = { .event = JOB_NOTICE_START };
        NodeType nt = { .cpu_model = "Xeon caf\xe9", .threads = 2, .memory_bytes = 1 << 30, .n_gpus = 1,
                        .gpus = { { .vendor_id = 0x10de, .device_id = 0x20b0, .vendor = "NVIDIA", .count = 4 } } };
        uint64_t sum = 0;
        Interval iv;
        size_t size;
        Node n;

        node_init(&n);
        ASSERT_OK(process_table_comm(&n.procs, 9, 9, "bad\xff\xfe", true));
        ASSERT_OK(process_table_mmap(&n.procs, 9, 0x400000, 0x1000, 0, 8, 1, 7, "/tmp/caf\xe9/a.out"));
        for (int i = 0; i < 5; i++) {
                struct lmk_sample s = sample(9, 0x400100, false);
                ASSERT_OK(attribute_sample(&n.attribution, n.hist, &s, 2000, 0));
        }
        ASSERT_NOT_NULL(histogram_add_total(n.hist, &(TotalKey) { .comm = "bad\xff", .uid = 0 }, 5000000000,
                                            (uint64_t[LMK_MAX_COUNTERS]) {}, 4));
        /* lmkd.conf opt_out = forbidden, and a job that asked --lmk=off */
        n.jobs.opt_out_forbidden = true;
        job_info_init(&off.info);
        snprintf(off.info.job, sizeof(off.info.job), "4811");
        off.info.lmk = JOB_LMK_OFF;
        jobs_apply_notice(&n.jobs, &off, 1700000001.0);
        iv = (Interval) {
                .start = 1700000000.0, .end = 1700000060.0, .event = "cpu-clock", .frequency_hz = 1.0, .cpus = 2,
                .hist = n.hist, .jobs = &n.jobs,
        };
        ASSERT_OK(batch_build(&iv, &(const BatchInfo) { .node = "cn001", .boot_id = "b", .seq = 3,
                                                        .node_type = &nt }, &gz, &size));
        text = gunzip(gz, size);
        root = json_tokener_parse(text);
        ASSERT_NOT_NULL(root);
        all_strings_valid(root);
        ASSERT_TRUE(json_object_object_get_ex(root, "format", &v));
        ASSERT_STREQ(json_object_get_string(v), "lmk-batch");
        ASSERT_TRUE(json_object_object_get_ex(root, "rows", &rows));
        for (size_t i = 0; i < json_object_array_length(rows); i++) {
                json_object *r = json_object_array_get_idx(rows, i);

                ASSERT_TRUE(json_object_object_get_ex(r, "samples", &v));
                sum += (uint64_t) json_object_get_int64(v);
                ASSERT_TRUE(json_object_object_get_ex(r, "comm", &v));
                ASSERT_STREQ(json_object_get_string(v), "bad\xef\xbf\xbd\xef\xbf\xbd");
                ASSERT_TRUE(json_object_object_get_ex(r, "object", &v));
                ASSERT_STREQ(json_object_get_string(v), "/tmp/caf\xef\xbf\xbd/a.out");
        }
        ASSERT_EQ(sum, 5);
        /* the node type in node.type, unknown values null */
        ASSERT_TRUE(json_object_object_get_ex(root, "node", &v));
        ASSERT_TRUE(json_object_object_get_ex(v, "type", &type));
        ASSERT_TRUE(json_object_object_get_ex(type, "cpu_model", &v));
        ASSERT_STREQ(json_object_get_string(v), "Xeon caf\xef\xbf\xbd");
        ASSERT_TRUE(json_object_object_get_ex(type, "sockets", &v));
        ASSERT_NULL(v);
        ASSERT_TRUE(json_object_object_get_ex(type, "threads", &v));
        ASSERT_EQ(json_object_get_int64(v), 2);
        ASSERT_TRUE(json_object_object_get_ex(type, "gpus", &v));
        ASSERT_EQ(json_object_array_length(v), 1);
        ASSERT_TRUE(json_object_object_get_ex(json_object_array_get_idx(v, 0), "device_id", &v));
        ASSERT_STREQ(json_object_get_string(v), "20b0");
        ASSERT_TRUE(json_object_object_get_ex(root, "totals", &v));
        ASSERT_EQ(json_object_array_length(v), 1);
        /* no MPI ranks, no ranks[] (the field is optional) */
        ASSERT_FALSE(json_object_object_get_ex(root, "ranks", &v));
        /* lmkd's own counters, as the report has them too: the opt-out
         * refused, the notice taken */
        ASSERT_TRUE(json_object_object_get_ex(root, "lmkd", &type));
        ASSERT_TRUE(json_object_object_get_ex(type, "job_opt_outs_refused", &v));
        ASSERT_EQ(json_object_get_int64(v), 1);
        ASSERT_TRUE(json_object_object_get_ex(type, "job_notices", &v));
        ASSERT_EQ(json_object_get_int64(v), 1);
        json_object_put(root);
        node_done(&n);
}

/* A launcher forks outside the job, moves the child into the job's cgroup,
 * and the child execs (slurmstepd's way): what the fork inherited of the
 * cgroup no longer holds after the exec, so the exec'd process's cgroup is
 * read again, and its own children start from that. */
TEST(exec_rereads_cgroup) {
        uint32_t self = (uint32_t) getpid();
        Node n;
        Process *p;

        node_init(&n);
        ASSERT_OK(process_table_comm(&n.procs, 50, 50, "python3", true));
        p = process_table_get(&n.procs, 50);
        ASSERT_NOT_NULL(p);
        p->cgroup_read = true;          /* read once: outside any job */
        p->job_state = JOB_RESOLVED;
        ASSERT_OK(process_table_fork(&n.procs, self, 50, self));
        p = process_table_get(&n.procs, self);
        ASSERT_NOT_NULL(p);
        ASSERT_TRUE(p->cgroup_read);    /* inherited at the fork */
        ASSERT_OK(process_table_comm(&n.procs, self, self, "perf", true));
        p = process_table_get(&n.procs, self);
        ASSERT_FALSE(p->cgroup_read);
        ASSERT_EQ(p->job_state, JOB_UNRESOLVED);
        /* read now, while it lives (this test runs outside any job) */
        jobs_learn_exec(&n.jobs, p);
        ASSERT_TRUE(p->cgroup_read);
        ASSERT_STREQ(p->job.job, "");
        node_done(&n);
}

int main(void) {
        RUN(attribution);
        RUN(exec_rereads_cgroup);
        RUN(ranks);
        RUN(exact_totals);
        RUN(batch_from_interval);
        return 0;
}
