/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "db/sql/ingest-ctx.h"

/* After the jobs' applications: each job's time in this batch in the
 * application mix of the batch's day. */
int update_app_mix(IngestCtx *x);
