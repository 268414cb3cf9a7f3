-- SPDX-License-Identifier: GPL-2.0-or-later
-- PostgreSQL dialect of schema/sqlite/0006-job-app.sql: jobs.app, filled in for
-- the jobs stored before, and the job list's indexes. The executable's file
-- name is its path without everything up to the last '/' (SQLite has no
-- regexp_replace, hence its rtrim/replace trick). Ties are broken by the
-- path in byte order, as SQLite's BINARY collation does, whatever the
-- database's collation.
ALTER TABLE jobs ADD COLUMN app TEXT;
UPDATE jobs SET app = coalesce(
        (SELECT nullif(n.note_value, '') FROM job_notes n WHERE n.job_id = jobs.id AND n.note_key = 'app'),
        (SELECT nullif(regexp_replace(o.path, '^.*/', ''), '')
         FROM job_objects jo JOIN objects o ON o.id = jo.object_id
         WHERE jo.job_id = jobs.id AND o.kind = 'exe' ORDER BY jo.samples DESC, o.path COLLATE "C" LIMIT 1));

DROP INDEX jobs_by_last_seen;
DROP INDEX jobs_by_user;
CREATE INDEX jobs_by_last_seen ON jobs (last_seen, first_seen, cpu_seconds);
CREATE INDEX jobs_by_first_seen ON jobs (first_seen, last_seen, cpu_seconds);
CREATE INDEX jobs_by_cpu_seconds ON jobs (cpu_seconds, last_seen, first_seen);
CREATE INDEX jobs_by_user ON jobs (user_name, last_seen, first_seen, cpu_seconds);
CREATE INDEX jobs_by_account ON jobs (account, last_seen, first_seen, cpu_seconds);
CREATE INDEX jobs_by_partition ON jobs (partition_name, last_seen, first_seen, cpu_seconds);
CREATE INDEX jobs_by_app ON jobs (app, last_seen, first_seen, cpu_seconds);
CREATE INDEX jobs_by_name ON jobs (name, last_seen, first_seen, cpu_seconds);
CREATE INDEX jobs_by_state ON jobs (ended, last_seen, first_seen, cpu_seconds);
