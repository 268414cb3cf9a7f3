/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The node-health gauges against steps of the store's wall clock (issue 33,
 * item 12): a node's age comes from CLOCK_MONOTONIC, so NTP stepping the
 * clock back by two hours must not keep a silent node fresh for two hours,
 * nor a step forward make every node stale at once. The clocks are the
 * test's own (node_health_set_clock()). */
#include <stdlib.h>
#include <string.h>

#include "metrics/node-health.h"
#include "tests.h"

#define NS INT64_C(1000000000)
#define T0 INT64_C(1795550400)

static NodeHealthNow test_clock(void *userdata) {
        return *(NodeHealthNow *) userdata;
}

/* The value of one sample line of /metrics ("name{labels}"), -1 if none. */
static double sample(NodeHealth *h, const char *series) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        const char *p;

        ASSERT_NOT_NULL(f);
        ASSERT_OK(node_health_write_metrics(h, f));
        ASSERT_TRUE(fclose(f) == 0);
        for (p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
                if (strncmp(p, series, strlen(series)) == 0 && p[strlen(series)] == ' ')
                        return strtod(p + strlen(series) + 1, NULL);
        return -1;
}

static double stale(NodeHealth *h, const char *after) {
        char series[64];

        snprintf(series, sizeof(series), "lmk_store_nodes_stale{after=\"%s\"}", after);
        return sample(h, series);
}

/* Pushed, then the wall clock stepped back two hours: ten minutes of
 * silence later the node is stale, and its last push shows as ten minutes
 * before the (stepped) clock's now. */
TEST(step_back) {
        _cleanup_(node_health_freep) NodeHealth *h = NULL;
        NodeHealthNow now = { .wall = T0 + 7200, .mono_ns = 1000 * NS };
        int64_t age;

        ASSERT_OK(node_health_new(&h));
        node_health_set_clock(h, test_clock, &now);
        ASSERT_OK(node_health_pushed(h, "cn001", 0, 0));
        now = (NodeHealthNow) { .wall = T0 + 601, .mono_ns = 1601 * NS };
        ASSERT_TRUE(stale(h, "10m") == 1);
        ASSERT_TRUE(stale(h, "1h") == 0);
        ASSERT_TRUE(sample(h, "lmk_store_node_last_push_timestamp_seconds{node=\"cn001\"}") == (double) T0);
        ASSERT_OK(node_health_age(h, "cn001", &age));
        ASSERT_EQ(age, 601);
        ASSERT_ERROR(node_health_age(h, "cn999", &age), ENOENT);
}

/* A step forward by a day ages nobody: a node that pushed a minute ago is
 * fresh. */
TEST(step_forward) {
        _cleanup_(node_health_freep) NodeHealth *h = NULL;
        NodeHealthNow now = { .wall = T0, .mono_ns = 50 * NS };

        ASSERT_OK(node_health_new(&h));
        node_health_set_clock(h, test_clock, &now);
        ASSERT_OK(node_health_pushed(h, "cn001", 3, 4096));
        now = (NodeHealthNow) { .wall = T0 + 86400 + 60, .mono_ns = 110 * NS };
        ASSERT_TRUE(stale(h, "10m") == 0);
        ASSERT_TRUE(sample(h, "lmk_store_node_last_push_timestamp_seconds{node=\"cn001\"}") == (double) T0 + 86400);
        ASSERT_TRUE(sample(h, "lmk_store_node_spool_batches{node=\"cn001\"}") == 3);
}

/* Last pushes from the database are aged by the wall clock once: an old
 * one is stale at once, one ahead of the clock (written by a store whose
 * clock was ahead) counts as just now and goes stale ten minutes later,
 * not when the clock reaches it. */
TEST(seeded) {
        _cleanup_(node_health_freep) NodeHealth *h = NULL;
        NodeHealthNow now = { .wall = T0, .mono_ns = 5 * NS };

        ASSERT_OK(node_health_new(&h));
        node_health_set_clock(h, test_clock, &now);
        ASSERT_OK(node_health_seed(h, "old", T0 - 4000));
        ASSERT_OK(node_health_seed(h, "ahead", T0 + 7200));
        ASSERT_OK(node_health_seed(h, "gone", T0 - 8 * 86400));
        ASSERT_TRUE(sample(h, "lmk_store_nodes_known") == 3);
        ASSERT_TRUE(stale(h, "10m") == 2);
        ASSERT_TRUE(stale(h, "1h") == 2);
        ASSERT_TRUE(stale(h, "1d") == 1);
        ASSERT_TRUE(sample(h, "lmk_store_node_last_push_timestamp_seconds{node=\"ahead\"}") == (double) T0);
        /* a week ago and more: no series of its own */
        ASSERT_TRUE(sample(h, "lmk_store_node_last_push_timestamp_seconds{node=\"gone\"}") == -1);
        now = (NodeHealthNow) { .wall = T0 + 601, .mono_ns = 606 * NS };
        ASSERT_TRUE(stale(h, "10m") == 3);
        /* a push after seeding counts */
        ASSERT_OK(node_health_pushed(h, "old", -1, -1));
        ASSERT_TRUE(stale(h, "10m") == 2);
        ASSERT_TRUE(stale(h, "1h") == 1);
}

int main(void) {
        RUN(step_back);
        RUN(step_forward);
        RUN(seeded);
        return 0;
}
