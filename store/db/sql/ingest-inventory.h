/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "db/sql/ingest-ctx.h"

/* The node's software, when the batch carries one the store does not have. */
int ingest_inventory(IngestCtx *x, int64_t now);
