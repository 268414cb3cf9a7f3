/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "db/sql/ingest-ctx.h"

/* Stores the batch in the writer's open transaction. -EOVERFLOW with x->err
 * saying which sum would overflow. */
int ingest_locked(IngestCtx *x, int64_t now, IngestResult *ret);
