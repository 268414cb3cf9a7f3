-- SPDX-License-Identifier: GPL-2.0-or-later
-- A job's metadata (user, account, partition, name, nodes, tasks, notes) is
-- its first claim; later claims that differ are refused and counted here, so
-- that a node token pushing someone else's job id shows up
-- (docs/lmk-store.md, "Trust").
ALTER TABLE jobs ADD COLUMN metadata_conflicts INTEGER NOT NULL DEFAULT 0;
