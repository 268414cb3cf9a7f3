/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "db/sql/ingest-ctx.h"

/* What lmkd measures beyond samples (schema/0015, docs/batch-format.md),
 * stored with a batch: its node type, the counters of its jobs, their
 * named events per object, phase and job, and burst windows per code
 * location. */

/* The batch's node type into x->node_type_id, before its node and jobs
 * are stored (STORAGE_NULL when it has none). */
int ingest_node_type(IngestCtx *x);

/* Adds row i's named events and burst windows to the batch's sums, with
 * the ids its job (0: outside jobs, nothing to add), object and phase got.
 * -EOVERFLOW when the batch's own sums of bursts would. */
int measured_add_row(IngestCtx *x, size_t i, int64_t job_id, int64_t object_id, int64_t phase_id);

/* After the jobs and rows: each job's counters, and the sums of named
 * events (with the jobs' exact counts) and bursts. */
int ingest_measured(IngestCtx *x);

/* The batch's energy in its DRAM zones; NAN without energy. */
double batch_dram_joules(const Batch *b);
