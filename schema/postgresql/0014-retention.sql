-- SPDX-License-Identifier: GPL-2.0-or-later
-- PostgreSQL dialect of schema/sqlite/0014-retention.sql. (PostgreSQL drops whole
-- time partitions instead, docs/postgresql.md; the watermark serves the
-- job-keyed tables, which are not partitioned by time.)
CREATE TABLE retention (
        name TEXT PRIMARY KEY,
        value DOUBLE PRECISION NOT NULL
);
INSERT INTO retention (name, value) VALUES ('prune_jobs_seen', 0), ('prune_jobs_id', 0);
