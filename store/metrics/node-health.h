/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>
#include <stdio.h>

#include "macro.h"

/* What the store knows of each node's health, for /metrics: how long ago
 * it last pushed (seeded from the database at start) and the backlog of its
 * spool as it said when pushing (the Lmk-Spool header, docs/api.md). Kept
 * in memory only: a backlog is worth something while it is fresh, and a
 * restarted store learns it again with the next push. Safe to use from
 * every HTTP worker at once.
 *
 * Ages are measured on CLOCK_MONOTONIC, which no step of the wall clock
 * moves: a push this store took is as old as the monotonic time since. A
 * last push from the database (the wall clock of whichever store took it)
 * is aged by the wall clock once, at seeding, and one that lies ahead of
 * it counts as just now. A store whose clock NTP stepped back by hours
 * still sees a node go stale ten minutes after its last push. */

/* Nodes tracked at most; a store that met more (fake names pushed with an
 * unbound node token) leaves the others out and counts them. */
#define NODE_HEALTH_MAX_NODES 65536u
/* Per-node series only for nodes that pushed within this long, at most
 * this many (the most recent), so that decommissioned nodes drop out and
 * /metrics stays bounded. */
#define NODE_HEALTH_SERIES_WINDOW_S (7 * 86400)
#define NODE_HEALTH_MAX_SERIES 10000u

typedef struct NodeHealth NodeHealth;

/* The clocks read: the wall clock (Unix seconds) for the timestamps
 * shown, CLOCK_MONOTONIC (ns) for ages. node_health_new() reads the real
 * ones; a test sets its own. */
typedef struct NodeHealthNow {
        int64_t wall;
        int64_t mono_ns;
} NodeHealthNow;
typedef NodeHealthNow (*NodeHealthClock)(void *userdata);

int node_health_new(NodeHealth **ret);
void node_health_set_clock(NodeHealth *h, NodeHealthClock clock, void *userdata);
NodeHealth *node_health_free(NodeHealth *h);
DEFINE_TRIVIAL_CLEANUP_FUNC(NodeHealth *, node_health_free);

/* A batch of node was taken (stored or a duplicate: either way the node is
 * alive) just now. spool_batches < 0: the node did not say. */
int node_health_pushed(NodeHealth *h, const char *node, int64_t spool_batches, int64_t spool_bytes);
/* What the database knew at start: a node's last push (Unix time). */
int node_health_seed(NodeHealth *h, const char *node, int64_t last_push);
/* How many seconds ago the node last pushed; -ENOENT: not tracked. */
int node_health_age(NodeHealth *h, const char *node, int64_t *ret_seconds);

/* Parses an Lmk-Spool header: "batches=N bytes=N" (any order, either may
 * be missing: -1). -EINVAL when it is something else. */
int node_health_parse_spool(const char *value, int64_t *ret_batches, int64_t *ret_bytes);

/* The gauges (docs/api.md, GET /metrics): nodes known and stale, and per
 * node the last push (now on the wall clock less its age) and the spool
 * backlog. */
int node_health_write_metrics(NodeHealth *h, FILE *f);
