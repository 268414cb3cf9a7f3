-- SPDX-License-Identifier: GPL-2.0-or-later
-- Retention (docs/lmk-store.md): the store deletes raw detail older than
-- --keep-raw-days in small steps and remembers here how far it got, so
-- that a restart does not walk every old job again: the jobs up to
-- (prune_jobs_seen, prune_jobs_id) in the order of (last_seen, id) have
-- had their raw rows deleted.
CREATE TABLE retention (
        name TEXT PRIMARY KEY,
        value DOUBLE PRECISION NOT NULL
);
INSERT INTO retention (name, value) VALUES ('prune_jobs_seen', 0), ('prune_jobs_id', 0);
