/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The store's node types: memory rounded to the installed size, and the
 * name that is a type's key. */
#include "batch/node-types.h"
#include "tests.h"

#define GIB (INT64_C(1) << 30)
#define MIB (INT64_C(1) << 20)

TEST(memory) {
        static const struct {
                int64_t bytes, gib;
        } cases[] = {
                { 0, 0 },
                { 1, 1 },
                { 7 * GIB + 700 * MIB, 8 },             /* an 8 GiB VM */
                { 23 * GIB + 512 * MIB, 24 },
                { 93 * GIB + 900 * MIB, 96 },
                { 125 * GIB + 300 * MIB, 128 },
                { 187 * GIB + 200 * MIB, 192 },
                { 187 * GIB + 900 * MIB, 192 },         /* its twin with other firmware */
                { 251 * GIB + 600 * MIB, 256 },
                { 376 * GIB, 384 },
                { 503 * GIB + 512 * MIB, 512 },
                { 755 * GIB, 768 },
                { 1007 * GIB, 1024 },
                { 2015 * GIB, 2048 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                if (node_memory_gib(cases[i].bytes) != cases[i].gib)
                        test_fail("node_memory_gib(%" PRId64 ") = %" PRId64 ", expected %" PRId64, cases[i].bytes,
                                  node_memory_gib(cases[i].bytes), cases[i].gib);
}

TEST(names) {
        BatchGpu gpus[] = {
                { .vendor = "NVIDIA", .vendor_id = "10de", .device_id = "2330", .name = "GH100 [H100 SXM5 80GB]",
                  .count = 4 },
                { .vendor = "AMD", .vendor_id = "1002", .device_id = "740c", .count = 1 },
                { .vendor = "NVIDIA", .vendor_id = "10de", .count = 2 },
        };
        BatchNodeType t = {
                .cpu_model = "Intel(R) Xeon(R) Platinum 8480+", .sockets = 2, .cores = 112, .threads = 224,
                .memory_bytes = 503 * GIB + 512 * MIB, .gpus = gpus, .n_gpus = 1,
        };
        _cleanup_free_ char *a = NULL, *b = NULL, *c = NULL, *d = NULL, *g = NULL;

        a = node_type_name(&t);
        ASSERT_STREQ(a, "Intel(R) Xeon(R) Platinum 8480+, 2 x 56 cores, 224 threads, 512 GiB, "
                        "4 x NVIDIA GH100 [H100 SXM5 80GB]");
        /* another kernel, a little less memory: the same type */
        t.memory_bytes -= 300 * MIB;
        b = node_type_name(&t);
        ASSERT_STREQ(a, b);
        t.n_gpus = 3;
        t.gpus_other = 5;
        g = node_gpus_text(&t);
        ASSERT_STREQ(g, "4 x NVIDIA GH100 [H100 SXM5 80GB], 1 x AMD 1002:740c, 2 x NVIDIA GPU, "
                        "5 GPUs of other models");
        c = node_type_name(&(BatchNodeType) { .sockets = BATCH_NULL, .cores = BATCH_NULL, .threads = 2,
                                              .memory_bytes = BATCH_NULL });
        ASSERT_STREQ(c, "?, ? x ? cores, 2 threads, ? GiB");
        d = node_type_name(&(BatchNodeType) { .cpu_model = "AMD EPYC", .sockets = 2, .cores = 3, .threads = 6,
                                              .memory_bytes = 8 * GIB });
        ASSERT_STREQ(d, "AMD EPYC, 2 x (3 in all) cores, 6 threads, 8 GiB");
}

int main(void) {
        RUN(memory);
        RUN(names);
        return 0;
}
