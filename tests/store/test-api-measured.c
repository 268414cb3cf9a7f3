/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What lmkd measures beyond samples as the job API answers it: units in
 * the names, rates from the sums, null for what is not known. */
#include <math.h>

#include "api/measured.h"
#include "http/json-out.h"
#include "tests.h"

static json_object *get(json_object *o, const char *path) {
        char key[64];

        while (o && *path) {
                size_t n = strcspn(path, ".");

                snprintf(key, sizeof(key), "%.*s", (int) n, path);
                if (json_object_is_type(o, json_type_array))
                        o = json_object_array_get_idx(o, (size_t) atoi(key));
                else if (!json_object_object_get_ex(o, key, &o))
                        test_fail("no %s in %s", key, path);
                path += n + (path[n] == '.');
        }
        return o;
}

static double num(json_object *o, const char *path) {
        json_object *v = get(o, path);

        if (!v || json_object_is_type(v, json_type_null))
                return NAN;
        return json_object_get_double(v);
}

static const char *str(json_object *o, const char *path) {
        json_object *v = get(o, path);

        return v && !json_object_is_type(v, json_type_null) ? json_object_get_string(v) : NULL;
}

static bool is_null(json_object *o, const char *path) {
        json_object *v = get(o, path);

        return !v || json_object_is_type(v, json_type_null);
}

#define ASSERT_NUM(o, path, want)                                                                       \
        do {                                                                                            \
                double _g_ = num((o), (path)), _w_ = (want);                                            \
                if (!(fabs(_g_ - _w_) <= 1e-9 * fmax(1, fabs(_w_))))                                    \
                        test_fail("%s: %.9g, expected %.9g", (path), _g_, _w_);                         \
        } while (0)

/* A job's node type, energy and exact figures; nothing known is null. */
TEST(job_info) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object(), *none = json_object_new_object();
        StoredJob j = {
                .first_seen = 1000, .last_seen = 1100, .node_type_id = 3,
                .node_type = (char *) "AMD EPYC, 2 x 64 cores, 256 threads, 512 GiB",
                .has_energy = true, .energy_joules = 50000, .energy_alone_joules = 42000,
                .has_exact = true, .exact_cpu_time_ns = 9000000000, .exact_cycles = STORAGE_NULL,
                .exact_instructions = STORAGE_NULL,
        };

        ASSERT_OK(api_add_job_measured_info(o, &j));
        ASSERT_STREQ(str(o, "node_type"), "AMD EPYC, 2 x 64 cores, 256 threads, 512 GiB");
        ASSERT_FALSE(json_object_get_boolean(get(o, "node_types_differ")));
        ASSERT_NUM(o, "energy.joules", 50000);
        ASSERT_NUM(o, "energy.alone_joules", 42000);
        ASSERT_NUM(o, "energy.estimated_joules", 8000);
        ASSERT_NUM(o, "energy.mean_watts", 500);
        ASSERT_NUM(o, "exact.cpu_time_ns", 9000000000);
        ASSERT_TRUE(is_null(o, "exact.cycles") && is_null(o, "exact.ipc"));

        /* a struct nobody filled says nothing */
        ASSERT_OK(api_add_job_measured_info(none, &(StoredJob) {}));
        ASSERT_TRUE(is_null(none, "node_type") && is_null(none, "energy") && is_null(none, "exact"));
        ASSERT_FALSE(json_object_get_boolean(get(none, "node_types_differ")));
}

TEST(node) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object(), *none = json_object_new_object();

        ASSERT_OK(api_add_node_measured(o, &(Share) { .node_type = (char *) "x", .has_energy = true,
                                                      .energy_joules = 1.5, .energy_alone_joules = 0 }));
        ASSERT_STREQ(str(o, "node_type"), "x");
        ASSERT_NUM(o, "energy_joules", 1.5);
        ASSERT_NUM(o, "energy_alone_joules", 0);
        ASSERT_OK(api_add_node_measured(none, &(Share) {}));
        ASSERT_TRUE(is_null(none, "node_type") && is_null(none, "energy_joules"));
}

/* Events per CPU second and per 1,000 instructions; burst rates with the
 * windows they rest on. */
TEST(events_and_bursts) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        JobCounter counters[] = {
                { (char *) "PAPI_L1_DCM", (char *) "PAPI_L1_DCM", true },
                { (char *) "cycles", (char *) "PAPI_TOT_CYC", true },
                { (char *) "flops", (char *) "FP_ARITH:SCALAR_DOUBLE", true },
                { (char *) "flops", (char *) "PAPI_DP_OPS", false },
                { (char *) "instructions", (char *) "PAPI_TOT_INS", true },
        };
        /* 2e9 misses in 4 CPU s; of them 1.5e9 in rows with 3e11 instructions */
        EventSum events[] = {
                { NULL, (char *) "PAPI_L1_DCM", 2000000000, 400, 4000000000, 300000000000, 1500000000, 2100000000 },
                { NULL, (char *) "flops", 0, 0, 0, 0, 0, STORAGE_NULL },
        };
        EventSum objects[] = {
                { (char *) "/bin/a", (char *) "PAPI_L1_DCM", 1000000000, 100, 1000000000, 0, 0, STORAGE_NULL },
                { (char *) "/bin/a", (char *) "flops", 0, 0, 0, 0, 0, STORAGE_NULL },
                { (char *) "/lib/libm.so", (char *) "PAPI_L1_DCM", 1000000000, 300, 3000000000, 300000000000,
                  1500000000, STORAGE_NULL },
        };
        BurstSum bursts[] = {
                { (char *) "/bin/a", (char *) "", (char *) "PAPI_L1_DCM", 30, 30000000, 150000 },
                { (char *) "/bin/a", (char *) "", (char *) "cycles", 30, 30000000, 75000000 },
                { (char *) "/bin/a", (char *) "", (char *) "instructions", 30, 30000000, 150000000 },
                { (char *) "/bin/a", (char *) "solve", (char *) "cycles", 3, 3000000, 6000000 },
        };
        JobSummary js = {
                .measured = {
                        .counters = counters, .n_counters = ELEMENTSOF(counters),
                        .events = events, .n_events = ELEMENTSOF(events),
                        .object_events = objects, .n_object_events = ELEMENTSOF(objects),
                        .bursts = bursts, .n_bursts = ELEMENTSOF(bursts), .bursts_truncated = true,
                        .node_type = { .id = 7, .name = (char *) "n", .cpu_model = (char *) "AMD EPYC", .sockets = 2,
                                       .cores = 128, .threads = 256, .memory_gib = 512 },
                },
        };

        ASSERT_OK(api_add_job_measured(o, &js));
        ASSERT_NUM(o, "node_type_details.id", 7);
        ASSERT_NUM(o, "node_type_details.memory_gib", 512);
        ASSERT_STREQ(str(o, "node_type_details.gpus"), "");
        ASSERT_EQ(json_object_array_length(get(o, "counters")), 5);
        ASSERT_STREQ(str(o, "counters.1.event"), "PAPI_TOT_CYC");

        ASSERT_STREQ(str(o, "events.0.role"), "PAPI_L1_DCM");
        ASSERT_STREQ(str(o, "events.0.event"), "PAPI_L1_DCM");
        ASSERT_FALSE(json_object_get_boolean(get(o, "events.0.event_differs")));
        ASSERT_NUM(o, "events.0.count", 2e9);
        ASSERT_NUM(o, "events.0.per_cpu_second", 5e8);
        ASSERT_NUM(o, "events.0.per_1000_instructions", 5);
        ASSERT_NUM(o, "events.0.exact_count", 2100000000);
        ASSERT_NUM(o, "events.0.cpu_seconds", 4);
        ASSERT_EQ(json_object_array_length(get(o, "events.0.objects")), 2);
        ASSERT_STREQ(str(o, "events.0.objects.1.object"), "/lib/libm.so");
        ASSERT_NUM(o, "events.0.objects.0.per_cpu_second", 1e9);
        ASSERT_TRUE(is_null(o, "events.0.objects.0.per_1000_instructions")); /* no instructions counted there */
        ASSERT_NUM(o, "events.0.objects.1.per_1000_instructions", 5);
        /* counted nowhere: no rate, not zero */
        ASSERT_TRUE(json_object_get_boolean(get(o, "events.1.event_differs")));
        ASSERT_TRUE(is_null(o, "events.1.per_cpu_second") && is_null(o, "events.1.exact_count"));
        ASSERT_FALSE(json_object_get_boolean(get(o, "events_truncated")));

        ASSERT_EQ(json_object_array_length(get(o, "bursts")), 2);
        ASSERT_STREQ(str(o, "bursts.0.object"), "/bin/a");
        ASSERT_NUM(o, "bursts.0.bursts", 30);
        ASSERT_NUM(o, "bursts.0.rates.PAPI_L1_DCM.per_second", 5e6);
        ASSERT_NUM(o, "bursts.0.rates.PAPI_L1_DCM.bursts", 30);
        ASSERT_NUM(o, "bursts.0.rates.PAPI_L1_DCM.window_seconds", 0.03);
        ASSERT_NUM(o, "bursts.0.rates.cycles.per_second", 2.5e9);
        ASSERT_NUM(o, "bursts.0.ipc", 2);
        ASSERT_STREQ(str(o, "bursts.1.phase"), "solve");
        ASSERT_TRUE(is_null(o, "bursts.1.ipc")); /* cycles alone */
        ASSERT_TRUE(json_object_get_boolean(get(o, "bursts_truncated")));
}

int main(void) {
        RUN(job_info);
        RUN(node);
        RUN(events_and_bursts);
        return 0;
}
