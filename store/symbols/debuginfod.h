/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

#include "batch/batch-parse.h"
#include "db/storage.h"
#include "metrics/metrics.h"

/* Names for the functions lmkd could not name (stripped executables,
 * libraries without symbols), from the site's debuginfod server by
 * build-id (docs/function-names.md), off every request's path: ingest
 * only queues a batch's build-ids (symbols_queue_batch(), a lock and a
 * hash lookup), and one thread of its own fetches each build's debug file
 * and executable with libdebuginfod, names the build's unnamed functions
 * (symbols/debug-names.h) and stores the names (function_names, schema/0022),
 * which the answers show from then on.
 *
 * Bounded: at most queue_max build-ids wait (more are dropped, counted,
 * and found again in the database once the queue drains); a query that
 * makes no progress for timeout_s is given up (DEBUGINFOD_TIMEOUT, each
 * of the client's tries), a lookup cut short past its tries; a build whose debug file the server does not have,
 * or whose lookup failed, is not asked for again before retry_s (nor one
 * named a moment ago). The client's own cache of fetched files lives in
 * DEBUGINFOD_CACHE_PATH, its servers in DEBUGINFOD_URLS: the program sets
 * both before it starts any thread. */

typedef struct SymbolsConfig {
        unsigned timeout_s;
        unsigned retry_s;
        unsigned queue_max;
} SymbolsConfig;

#define SYMBOLS_DEFAULT_TIMEOUT_S 10
#define SYMBOLS_DEFAULT_RETRY_S 3600
#define SYMBOLS_DEFAULT_QUEUE_MAX 1024

typedef struct Symbols Symbols;

/* Whether this build can ask a debuginfod server (libdebuginfod). */
bool symbols_supported(void);

/* Starts the lookups' thread: it first queues the builds the database
 * holds unnamed functions of. -EOPNOTSUPP without libdebuginfod. */
int symbols_start(const SymbolsConfig *config, Storage *storage, Metrics *metrics, Symbols **ret);
/* Stops the thread, cutting a lookup in flight short; NULL is fine. */
void symbols_stop(Symbols *s);

/* Queues the build-ids of a stored batch's unnamed functions; never
 * waits on a lookup. NULL s (no debuginfod): nothing. */
void symbols_queue_batch(Symbols *s, const Batch *b);
