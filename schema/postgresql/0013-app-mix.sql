-- SPDX-License-Identifier: GPL-2.0-or-later
-- PostgreSQL dialect of schema/sqlite/0013-app-mix.sql: the application mix per
-- day and key, the key each job counts under, the command that names a job
-- none of whose executables had a sample, and the jobs stored before.
-- Ties between executables are broken by the path in byte order, as
-- SQLite's BINARY collation does.
ALTER TABLE jobs ADD COLUMN app_object BIGINT;
ALTER TABLE jobs ADD COLUMN mix_key BIGINT;
ALTER TABLE jobs ADD COLUMN mix_day BIGINT;
CREATE TABLE mix_keys (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        app TEXT NOT NULL,
        app_object BIGINT NOT NULL,
        user_name TEXT NOT NULL,
        account TEXT NOT NULL,
        partition_name TEXT NOT NULL,
        UNIQUE (app, app_object, user_name, account, partition_name)
);
CREATE TABLE app_days (
        day BIGINT NOT NULL,
        mix_key BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        runs BIGINT NOT NULL,
        PRIMARY KEY (day, mix_key)
);

CREATE TABLE app_dim_days (
        dim BIGINT NOT NULL,
        day BIGINT NOT NULL,
        value TEXT NOT NULL,
        app_object BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        runs BIGINT NOT NULL,
        PRIMARY KEY (dim, day, value, app_object)
);
CREATE INDEX mix_keys_by_user ON mix_keys (user_name);
CREATE INDEX mix_keys_by_account ON mix_keys (account);
CREATE INDEX mix_keys_by_partition ON mix_keys (partition_name);
CREATE INDEX app_days_by_key ON app_days (mix_key, day);

UPDATE jobs SET app_object = -1, app = (
        SELECT t.comm FROM samples s JOIN tasks t ON t.id = s.task_id WHERE s.job_id = jobs.id
        GROUP BY t.comm ORDER BY sum(s.samples) DESC, t.comm COLLATE "C" LIMIT 1)
WHERE app IS NULL AND EXISTS (SELECT 1 FROM samples s WHERE s.job_id = jobs.id);
UPDATE jobs SET app_object = (
        SELECT jo.object_id FROM job_objects jo JOIN objects o ON o.id = jo.object_id
        WHERE jo.job_id = jobs.id AND o.kind = 'exe' ORDER BY jo.samples DESC, o.path COLLATE "C" LIMIT 1)
WHERE app IS NOT NULL AND app_object IS NULL AND NOT EXISTS (
        SELECT 1 FROM job_notes n WHERE n.job_id = jobs.id AND n.note_key = 'app' AND n.note_value <> '');
INSERT INTO mix_keys (app, app_object, user_name, account, partition_name)
        SELECT DISTINCT coalesce(app, ''), coalesce(app_object, 0), coalesce(user_name, ''), coalesce(account, ''),
               coalesce(partition_name, '')
        FROM jobs
        ON CONFLICT DO NOTHING;
UPDATE jobs SET mix_day = trunc(first_seen / 86400)::bigint * 86400, mix_key = k.id
        FROM mix_keys k
        WHERE k.app = coalesce(jobs.app, '') AND k.app_object = coalesce(jobs.app_object, 0)
          AND k.user_name = coalesce(jobs.user_name, '') AND k.account = coalesce(jobs.account, '')
          AND k.partition_name = coalesce(jobs.partition_name, '');
INSERT INTO app_days (day, mix_key, samples, cpu_seconds, runs)
        SELECT trunc(t.t)::bigint, j.mix_key, least(sum(t.samples), 9223372036854775807)::bigint,
               coalesce(sum(t.cpu_seconds), 0), 0
        FROM job_timeline t JOIN jobs j ON j.id = t.job_id
        WHERE t.grain = 86400
        GROUP BY trunc(t.t)::bigint, j.mix_key;
INSERT INTO app_days (day, mix_key, samples, cpu_seconds, runs)
        SELECT mix_day, mix_key, 0, 0, count(*) FROM jobs WHERE mix_day IS NOT NULL
        GROUP BY mix_day, mix_key
        ON CONFLICT (day, mix_key) DO UPDATE SET runs = app_days.runs + excluded.runs;
INSERT INTO app_dim_days (dim, day, value, app_object, samples, cpu_seconds, runs)
        SELECT x.dim, d.day, CASE x.dim WHEN 0 THEN k.app WHEN 1 THEN k.user_name WHEN 2 THEN k.account
                                        ELSE k.partition_name END,
               CASE x.dim WHEN 0 THEN k.app_object ELSE 0 END,
               least(sum(d.samples), 9223372036854775807)::bigint, coalesce(sum(d.cpu_seconds), 0), sum(d.runs)
        FROM app_days d JOIN mix_keys k ON k.id = d.mix_key,
             (VALUES (0), (1), (2), (3)) AS x(dim)
        GROUP BY 1, 2, 3, 4;
