/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <json-c/json.h>
#include <stdint.h>

#include "interval.h"
#include "node-type.h"

/* The rows of an interval as JSON, the one place they are written: its
 * "rows", "totals", "counters", "markers" and "jobs" (the shape shared by
 * the batch format and the one-shot report). */
int interval_add_rows(const Interval *iv, json_object *root);
/* lmkd's own counts for the interval ("lmkd" in a batch). */
json_object *interval_lmkd_stats(const Interval *iv);

/* The node type (collectors/node-type.h) as node.type of a batch
 * (docs/batch-format.md): unknown values are null. */
json_object *node_type_json(const NodeType *t);

/* Why a counter could not be opened, in the admin's terms. */
const char *counter_error_text(int error);

/* uid → user name, or the number when it has none. Cached. */
const char *user_name(uint32_t uid);
