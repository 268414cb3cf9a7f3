/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "db/sql/ingest-ctx.h"

/* The job of that id in x (created on first sight), for the batch's sums. */
int ctx_job(IngestCtx *x, const char *job, JobAcc **ret);
/* The batch's jobs, their notes, their node and their time lines; each
 * JobAcc has its id afterwards. -EOVERFLOW when a job's sums would. */
int ingest_jobs(IngestCtx *x);
