/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "db/sql/ingest-ctx.h"

/* The batch's functions (functions[], schema/0021), after its rows: each
 * function's id (of its object's build, as its rows'), and its samples
 * and counters added to its job's pack of its object (schema/0025), over
 * the job's phases and per phase. Functions of work outside jobs are not
 * kept. -EOVERFLOW when a job's stored sums would. */
int ingest_functions(IngestCtx *x);
