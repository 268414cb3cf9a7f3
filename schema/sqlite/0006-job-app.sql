-- SPDX-License-Identifier: GPL-2.0-or-later
-- A job's application, as issue 13 and docs/api.md define it: its
-- LMK_NOTES app= note, else the file name of the executable it spent the
-- most samples in. Kept at ingest (store/storage-sqlite.c, STMT_JOB_APP)
-- so that the job list filters on it through an index instead of working
-- it out per query; here it is filled in for the jobs stored before.
-- The file name is the path without its directories: rtrim() strips the
-- trailing characters that are not '/', leaving the directory part, which
-- replace() then removes (it cannot occur again after the last '/').
ALTER TABLE jobs ADD COLUMN app TEXT;
UPDATE jobs SET app = coalesce(
        (SELECT nullif(n.note_value, '') FROM job_notes n WHERE n.job_id = jobs.id AND n.note_key = 'app'),
        (SELECT nullif(replace(o.path, rtrim(o.path, replace(o.path, '/', '')), ''), '')
         FROM job_objects jo JOIN objects o ON o.id = jo.object_id
         WHERE jo.job_id = jobs.id AND o.kind = 'exe' ORDER BY jo.samples DESC, o.path LIMIT 1));

-- The job list (docs/api.md): an index for each filter and each sort, and
-- each of them holding the three sort keys, so that a page, its offset and
-- its count walk one index and never read the table: by the sort's own
-- index, or by the filter's, sorting only the jobs that match. The order
-- of the keys is the list's order of ties. jobs_by_last_seen and
-- jobs_by_user of 0001 are replaced by wider ones.
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
