/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>
#include <stdio.h>

#include "macro.h"

/* What the store knows of each node's health, for /metrics: when it last
 * pushed (the store's clock; seeded from the database at start) and the
 * backlog of its spool as it said when pushing (the Lmk-Spool header,
 * docs/api.md). Kept in memory only: a backlog is worth something while
 * it is fresh, and a restarted store learns it again with the next push.
 * Safe to use from every HTTP worker at once. */

/* Nodes tracked at most; a store that met more (fake names pushed with an
 * unbound node token) leaves the others out and counts them. */
#define NODE_HEALTH_MAX_NODES 65536u
/* Per-node series only for nodes that pushed within this long, at most
 * this many (the most recent), so that decommissioned nodes drop out and
 * /metrics stays bounded. */
#define NODE_HEALTH_SERIES_WINDOW_S (7 * 86400)
#define NODE_HEALTH_MAX_SERIES 10000u

typedef struct NodeHealth NodeHealth;

int node_health_new(NodeHealth **ret);
NodeHealth *node_health_free(NodeHealth *h);
DEFINE_TRIVIAL_CLEANUP_FUNC(NodeHealth *, node_health_free);

/* A batch of node was taken (stored or a duplicate: either way the node is
 * alive) at now. spool_batches < 0: the node did not say. */
int node_health_pushed(NodeHealth *h, const char *node, int64_t now, int64_t spool_batches, int64_t spool_bytes);
/* What the database knew at start: a node's last push. */
int node_health_seed(NodeHealth *h, const char *node, int64_t last_push);

/* Parses an Lmk-Spool header: "batches=N bytes=N" (any order, either may
 * be missing: -1). -EINVAL when it is something else. */
int node_health_parse_spool(const char *value, int64_t *ret_batches, int64_t *ret_bytes);

/* The gauges (docs/api.md, GET /metrics): nodes known and stale, and per
 * node the last push and the spool backlog. */
int node_health_write_metrics(NodeHealth *h, int64_t now, FILE *f);
