-- SPDX-License-Identifier: GPL-2.0-or-later
-- Running jobs kept out of the job list's indexes (docs/lmk-store.md,
-- "Ingest"). Each of those indexes holds last_seen and cpu_seconds, which
-- every batch of a job moves: with ten of them, moving a batch's jobs in
-- each was a third of the store's CPU at ingest (bench/store/run
-- --bare-jobs). A job is stored live (1) and leaves live for good a few
-- minutes after its last batch (STMT_JOBS_SETTLE, run by the writer); the
-- list's indexes hold only jobs that are not live, and the job list asks
-- for the live ones apart (store/db/sql/job-list.c), a few thousand at most,
-- through jobs_live. Whatever live says, the list holds every job: it
-- decides only which index finds it. Time ranges (retention, site scopes)
-- ask for the two apart too; retention moves quiet jobs out of live first.
-- Each index holds live as its last column although it is 0 in all its
-- rows: a query names live, and an index that lacks a column the query
-- names sends every row it finds to the table for it.
ALTER TABLE jobs ADD COLUMN live INTEGER NOT NULL DEFAULT 0;
CREATE INDEX jobs_live ON jobs (id) WHERE live = 1;
DROP INDEX jobs_by_last_seen;
DROP INDEX jobs_by_first_seen;
DROP INDEX jobs_by_cpu_seconds;
DROP INDEX jobs_by_user;
DROP INDEX jobs_by_account;
DROP INDEX jobs_by_partition;
DROP INDEX jobs_by_app;
DROP INDEX jobs_by_name;
DROP INDEX jobs_by_state;
DROP INDEX jobs_by_node_type;
CREATE INDEX jobs_by_last_seen ON jobs (last_seen, first_seen, cpu_seconds, live) WHERE live = 0;
CREATE INDEX jobs_by_first_seen ON jobs (first_seen, last_seen, cpu_seconds, live) WHERE live = 0;
CREATE INDEX jobs_by_cpu_seconds ON jobs (cpu_seconds, last_seen, first_seen, live) WHERE live = 0;
CREATE INDEX jobs_by_user ON jobs (user_name, last_seen, first_seen, cpu_seconds, live) WHERE live = 0;
CREATE INDEX jobs_by_account ON jobs (account, last_seen, first_seen, cpu_seconds, live) WHERE live = 0;
CREATE INDEX jobs_by_partition ON jobs (partition_name, last_seen, first_seen, cpu_seconds, live) WHERE live = 0;
CREATE INDEX jobs_by_app ON jobs (app, last_seen, first_seen, cpu_seconds, live) WHERE live = 0;
CREATE INDEX jobs_by_name ON jobs (name, last_seen, first_seen, cpu_seconds, live) WHERE live = 0;
CREATE INDEX jobs_by_state ON jobs (ended, last_seen, first_seen, cpu_seconds, live) WHERE live = 0;
CREATE INDEX jobs_by_node_type ON jobs (node_type_id, last_seen, first_seen, cpu_seconds, live) WHERE live = 0;
