/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <sqlite3.h>

/* Checkpoints of the writer's WAL beside it, on a thread and connection of
 * their own. SQLite's default runs them in the commit that fills the WAL
 * past its limit, and a checkpoint syncs the database file to disk: the
 * writer, and every batch queued for it, waited for the disk (a third of
 * both CPUs idle under bench/store/run's ingest). A checkpoint here is
 * PASSIVE: it copies what it can without waiting for the writer, which
 * goes on committing meanwhile. Should they not keep up, the writer
 * checkpoints itself past a larger limit, so that the WAL stays bounded. */

typedef struct WalCheckpointer WalCheckpointer;

/* Takes over the checkpoints of writer, a connection to the database at
 * path in WAL mode. */
int wal_checkpointer_start(sqlite3 *writer, const char *path, WalCheckpointer **ret);
/* Stops the thread and closes its connection; no checkpoints run after
 * writer's commits then. NULL is fine. */
void wal_checkpointer_stop(WalCheckpointer *w, sqlite3 *writer);
