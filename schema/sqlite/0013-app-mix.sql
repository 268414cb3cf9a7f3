-- SPDX-License-Identifier: GPL-2.0-or-later
-- The site's application mix (docs/api.md, GET /api/v1/apps): CPU time and
-- samples per day and per (application, user, account, partition), kept at
-- ingest so that a month or a year is a range read of this table and not
-- of every job.
--
-- jobs.app_object is the executable a job's app was named after (NULL when
-- the LMK_NOTES app= note named it): the query groups such jobs by the
-- package that installed the executable. A job none of whose executables
-- had a sample (all its time in libraries: a BLAS driver, a program run by
-- an interpreter that was not sampled) is named after its command (comm)
-- with the most samples, app_object -1; the jobs stored before without an
-- app get theirs here. mix_keys holds each distinct
-- (app, app_object, user, account, partition), with '' and 0 for what is
-- unknown so that the unique key holds; jobs.mix_key is the key a job's
-- time is counted under. When a job's key changes (its top executable
-- changes early in the job, or its metadata arrives late), the store moves
-- the job's days, from its time line at grain 86400, to the new key.
-- runs counts each job once, on the day of the first batch that named it
-- (jobs.mix_day, so that a move takes the run from where it was counted).
ALTER TABLE jobs ADD COLUMN app_object INTEGER;
ALTER TABLE jobs ADD COLUMN mix_key INTEGER;
ALTER TABLE jobs ADD COLUMN mix_day INTEGER;
CREATE TABLE mix_keys (
        id INTEGER PRIMARY KEY,
        app TEXT NOT NULL,
        app_object INTEGER NOT NULL,
        user_name TEXT NOT NULL,
        account TEXT NOT NULL,
        partition_name TEXT NOT NULL,
        UNIQUE (app, app_object, user_name, account, partition_name)
);
CREATE TABLE app_days (
        day INTEGER NOT NULL,
        mix_key INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        runs INTEGER NOT NULL,
        PRIMARY KEY (day, mix_key)
) WITHOUT ROWID;

-- The same per single dimension, for the unfiltered answers (time per
-- application, per user, per account, per partition): a handful of rows
-- per day and dimension however many keys there are. dim 0: value is the
-- app, with its app_object; 1: user; 2: account; 3: partition (app_object 0).
-- Filtered answers read app_days through mix_keys' indexes.
CREATE TABLE app_dim_days (
        dim INTEGER NOT NULL,
        day INTEGER NOT NULL,
        value TEXT NOT NULL,
        app_object INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        runs INTEGER NOT NULL,
        PRIMARY KEY (dim, day, value, app_object)
) WITHOUT ROWID;
CREATE INDEX mix_keys_by_user ON mix_keys (user_name);
CREATE INDEX mix_keys_by_account ON mix_keys (account);
CREATE INDEX mix_keys_by_partition ON mix_keys (partition_name);
CREATE INDEX app_days_by_key ON app_days (mix_key, day);

-- The jobs stored before: the executable their app came from, the command
-- for those without, their keys and their days.
UPDATE jobs SET app_object = -1, app = (
        SELECT t.comm FROM samples s JOIN tasks t ON t.id = s.task_id WHERE s.job_id = jobs.id
        GROUP BY t.comm ORDER BY sum(s.samples) DESC, t.comm LIMIT 1)
WHERE app IS NULL AND EXISTS (SELECT 1 FROM samples s WHERE s.job_id = jobs.id);
UPDATE jobs SET app_object = (
        SELECT jo.object_id FROM job_objects jo JOIN objects o ON o.id = jo.object_id
        WHERE jo.job_id = jobs.id AND o.kind = 'exe' ORDER BY jo.samples DESC, o.path LIMIT 1)
WHERE app IS NOT NULL AND app_object IS NULL AND NOT EXISTS (
        SELECT 1 FROM job_notes n WHERE n.job_id = jobs.id AND n.note_key = 'app' AND n.note_value <> '');
INSERT OR IGNORE INTO mix_keys (app, app_object, user_name, account, partition_name)
        SELECT DISTINCT coalesce(app, ''), coalesce(app_object, 0), coalesce(user_name, ''), coalesce(account, ''),
               coalesce(partition_name, '')
        FROM jobs;
UPDATE jobs SET mix_day = CAST(first_seen / 86400 AS INTEGER) * 86400, mix_key = (
        SELECT k.id FROM mix_keys k
        WHERE k.app = coalesce(jobs.app, '') AND k.app_object = coalesce(jobs.app_object, 0)
          AND k.user_name = coalesce(jobs.user_name, '') AND k.account = coalesce(jobs.account, '')
          AND k.partition_name = coalesce(jobs.partition_name, ''));
INSERT INTO app_days (day, mix_key, samples, cpu_seconds, runs)
        SELECT t.day, j.mix_key, CAST(min(total(t.samples), 9223372036854775807) AS INTEGER), total(t.cpu_seconds), 0
        FROM (SELECT job_id, CAST(t AS INTEGER) AS day, samples, cpu_seconds FROM job_timeline WHERE grain = 86400) t
        JOIN jobs j ON j.id = t.job_id
        GROUP BY t.day, j.mix_key;
INSERT INTO app_days (day, mix_key, samples, cpu_seconds, runs)
        SELECT mix_day, mix_key, 0, 0, count(*) FROM jobs WHERE mix_day IS NOT NULL
        GROUP BY mix_day, mix_key
        ON CONFLICT (day, mix_key) DO UPDATE SET runs = app_days.runs + excluded.runs;
INSERT INTO app_dim_days (dim, day, value, app_object, samples, cpu_seconds, runs)
        SELECT x.dim, d.day, CASE x.dim WHEN 0 THEN k.app WHEN 1 THEN k.user_name WHEN 2 THEN k.account
                                        ELSE k.partition_name END,
               CASE x.dim WHEN 0 THEN k.app_object ELSE 0 END,
               CAST(min(total(d.samples), 9223372036854775807) AS INTEGER), total(d.cpu_seconds), sum(d.runs)
        FROM app_days d JOIN mix_keys k ON k.id = d.mix_key,
             (SELECT 0 AS dim UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3) x
        GROUP BY 1, 2, 3, 4;
