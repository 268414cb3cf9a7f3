/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

#include "lmkd-config.h"

/* The software inventory (collectors/inventory/inventory.h) as lmkd reports it: a
 * thread scans at start and then every [inventory] interval, at the lowest
 * CPU and I/O priority, and when the report's digest differs from the last
 * one spooled, the next batch carries it (docs/batch-format.md,
 * "inventory"). The spool then sees it to the store however long the store
 * is away. */
typedef struct InventoryWatch InventoryWatch;

/* Starts the thread; *ret NULL when the inventory is off. */
int inventory_watch_start(const LmkdConfig *o, InventoryWatch **ret);
void inventory_watch_stop(InventoryWatch *w);

/* The report to send, if one is waiting: its JSON (to free) and digest.
 * 0 when none waits. */
int inventory_watch_pending(InventoryWatch *w, char **ret_json, char ret_digest[static 65]);
/* The batch carrying digest is in the spool: nothing waits unless a newer
 * scan came meanwhile. */
void inventory_watch_spooled(InventoryWatch *w, const char *digest);
