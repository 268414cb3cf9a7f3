/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <json-c/json.h>

#include "db/storage.h"

/* What lmkd measures beyond samples, in the job API's JSON (docs/api.md):
 * node type, energy, exact figures, counters, named events and burst
 * rates, with their units in their names. Each returns 0 or -ENOMEM. */

/* "node_type", "node_types_differ", "energy", "exact" of a job, in the
 * list and the job's own answer. */
int api_add_job_measured_info(json_object *o, const StoredJob *j);

/* A job node's "node_type" and "energy_joules", "energy_alone_joules". */
int api_add_node_measured(json_object *e, const Share *node);

/* A job's "node_type_details", "counters", "events", "events_truncated",
 * "bursts", "bursts_truncated". */
int api_add_job_measured(json_object *o, const JobSummary *js);

/* A node type's details (NodeTypeInfo), or null when id is 0. */
json_object *api_node_type_json(const NodeTypeInfo *t);
