-- SPDX-License-Identifier: GPL-2.0-or-later
-- The site's time per function (issue 31, GET /api/v1/functions,
-- docs/kernels.md): sums of the jobs' functions by UTC day and by week
-- (7 days from the Unix epoch), kept at ingest as object_days and
-- object_weeks are, so that a 30-day ranking reads a few days and weeks
-- and not every job's functions.
--
-- cycles and instructions are summed as floating point (NULL where no node
-- counted them): a week of a large site's cycles is past int64, and only
-- their ratio (IPC) is asked for. jobs: the jobs that had the function for
-- the first time in that day's (week's) batches, so that a range's sum
-- counts each job once, in the bucket where it first ran the function.

-- The whole site's, for a ranking over every job (an admin's).
CREATE TABLE function_days (
        day INTEGER NOT NULL,
        function_id INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        cycles DOUBLE PRECISION,
        instructions DOUBLE PRECISION,
        jobs INTEGER NOT NULL,
        PRIMARY KEY (day, function_id)
) WITHOUT ROWID;
CREATE TABLE function_weeks (
        week INTEGER NOT NULL,
        function_id INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        cycles DOUBLE PRECISION,
        instructions DOUBLE PRECISION,
        jobs INTEGER NOT NULL,
        PRIMARY KEY (week, function_id)
) WITHOUT ROWID;

-- The same per application-mix key (mix_keys, schema/0013: application,
-- user, account, partition) and node type (node_types.id, 0: not known):
-- what a ranking narrowed to an application, account, user or node type,
-- or to what a person may see (their own jobs, their accounts'), reads, a
-- key at a time. A job's functions count under the key it had when their
-- batch was stored.
CREATE TABLE function_key_days (
        mix_key INTEGER NOT NULL,
        day INTEGER NOT NULL,
        node_type_id INTEGER NOT NULL,
        function_id INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        cycles DOUBLE PRECISION,
        instructions DOUBLE PRECISION,
        jobs INTEGER NOT NULL,
        PRIMARY KEY (mix_key, day, node_type_id, function_id)
) WITHOUT ROWID;
CREATE TABLE function_key_weeks (
        mix_key INTEGER NOT NULL,
        week INTEGER NOT NULL,
        node_type_id INTEGER NOT NULL,
        function_id INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        cycles DOUBLE PRECISION,
        instructions DOUBLE PRECISION,
        jobs INTEGER NOT NULL,
        PRIMARY KEY (mix_key, week, node_type_id, function_id)
) WITHOUT ROWID;

-- Who ran each function, and which applications, from the first to the
-- last day they did, and their samples of it (over all time, capped at
-- the largest integer): a site-wide ranking counts the users and
-- applications whose days overlap its range (a few hundred rows of each
-- function shown, however many jobs) and names the applications with the
-- most samples of it.
CREATE TABLE function_users (
        function_id INTEGER NOT NULL,
        user_name TEXT NOT NULL,
        first_day INTEGER NOT NULL,
        last_day INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        PRIMARY KEY (function_id, user_name)
) WITHOUT ROWID;
CREATE TABLE function_apps (
        function_id INTEGER NOT NULL,
        app TEXT NOT NULL,
        first_day INTEGER NOT NULL,
        last_day INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        PRIMARY KEY (function_id, app)
) WITHOUT ROWID;

-- All the samples of the jobs (every kind: kernel, idle in the job,
-- libraries), per day and week: what a function's share is of ("share
-- of all sampled core-hours" of the jobs in view); the site's, and per
-- key and node type.
CREATE TABLE function_total_days (
        day INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (day)
) WITHOUT ROWID;
CREATE TABLE function_total_weeks (
        week INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (week)
) WITHOUT ROWID;
CREATE TABLE function_scope_days (
        mix_key INTEGER NOT NULL,
        day INTEGER NOT NULL,
        node_type_id INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (mix_key, day, node_type_id)
) WITHOUT ROWID;
CREATE TABLE function_scope_weeks (
        mix_key INTEGER NOT NULL,
        week INTEGER NOT NULL,
        node_type_id INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (mix_key, week, node_type_id)
) WITHOUT ROWID;

-- Retention (prune_rollups) deletes these a day or week at a time.
CREATE INDEX function_key_days_by_day ON function_key_days (day);
CREATE INDEX function_key_weeks_by_week ON function_key_weeks (week);
CREATE INDEX function_scope_days_by_day ON function_scope_days (day);
CREATE INDEX function_scope_weeks_by_week ON function_scope_weeks (week);

-- The functions stored before have no time of their own: each job's are
-- put on the day (week) the job was first seen, with its key and type.
INSERT INTO function_key_days (mix_key, day, node_type_id, function_id, samples, cpu_seconds, cycles, instructions,
                               jobs)
        SELECT coalesce(j.mix_key, 0), CAST(j.first_seen / 86400 AS INTEGER) * 86400, coalesce(j.node_type_id, 0),
               jf.function_id, CAST(min(total(jf.samples), 9223372036854775807) AS INTEGER), total(jf.cpu_seconds),
               CASE WHEN count(jf.cycles) > 0 THEN total(jf.cycles) END,
               CASE WHEN count(jf.instructions) > 0 THEN total(jf.instructions) END, count(*)
        FROM job_functions jf JOIN jobs j ON j.id = jf.job_id WHERE j.first_seen IS NOT NULL
        GROUP BY 1, 2, 3, 4;
INSERT INTO function_key_weeks (mix_key, week, node_type_id, function_id, samples, cpu_seconds, cycles, instructions,
                                jobs)
        SELECT mix_key, day - day % 604800, node_type_id, function_id,
               CAST(min(total(samples), 9223372036854775807) AS INTEGER), total(cpu_seconds), sum(cycles),
               sum(instructions), sum(jobs)
        FROM function_key_days GROUP BY 1, 2, 3, 4;
INSERT INTO function_days (day, function_id, samples, cpu_seconds, cycles, instructions, jobs)
        SELECT day, function_id, CAST(min(total(samples), 9223372036854775807) AS INTEGER), total(cpu_seconds),
               sum(cycles), sum(instructions), sum(jobs)
        FROM function_key_days GROUP BY 1, 2;
INSERT INTO function_weeks (week, function_id, samples, cpu_seconds, cycles, instructions, jobs)
        SELECT week, function_id, CAST(min(total(samples), 9223372036854775807) AS INTEGER), total(cpu_seconds),
               sum(cycles), sum(instructions), sum(jobs)
        FROM function_key_weeks GROUP BY 1, 2;
INSERT INTO function_users (function_id, user_name, first_day, last_day, samples)
        SELECT jf.function_id, j.user_name, CAST(min(j.first_seen) / 86400 AS INTEGER) * 86400,
               CAST(max(j.last_seen) / 86400 AS INTEGER) * 86400,
               CAST(min(total(jf.samples), 9223372036854775807) AS INTEGER)
        FROM job_functions jf JOIN jobs j ON j.id = jf.job_id
        WHERE j.first_seen IS NOT NULL AND j.user_name IS NOT NULL AND j.user_name <> ''
        GROUP BY 1, 2;
INSERT INTO function_apps (function_id, app, first_day, last_day, samples)
        SELECT jf.function_id, j.app, CAST(min(j.first_seen) / 86400 AS INTEGER) * 86400,
               CAST(max(j.last_seen) / 86400 AS INTEGER) * 86400,
               CAST(min(total(jf.samples), 9223372036854775807) AS INTEGER)
        FROM job_functions jf JOIN jobs j ON j.id = jf.job_id
        WHERE j.first_seen IS NOT NULL AND j.app IS NOT NULL AND j.app <> ''
        GROUP BY 1, 2;
INSERT INTO function_scope_days (mix_key, day, node_type_id, samples, cpu_seconds)
        SELECT coalesce(mix_key, 0), CAST(first_seen / 86400 AS INTEGER) * 86400, coalesce(node_type_id, 0),
               CAST(min(total(samples), 9223372036854775807) AS INTEGER), total(cpu_seconds)
        FROM jobs WHERE first_seen IS NOT NULL
        GROUP BY 1, 2, 3;
INSERT INTO function_scope_weeks (mix_key, week, node_type_id, samples, cpu_seconds)
        SELECT mix_key, day - day % 604800, node_type_id, CAST(min(total(samples), 9223372036854775807) AS INTEGER),
               total(cpu_seconds)
        FROM function_scope_days GROUP BY 1, 2, 3;
INSERT INTO function_total_days (day, samples, cpu_seconds)
        SELECT day, CAST(min(total(samples), 9223372036854775807) AS INTEGER), total(cpu_seconds)
        FROM function_scope_days GROUP BY 1;
INSERT INTO function_total_weeks (week, samples, cpu_seconds)
        SELECT week, CAST(min(total(samples), 9223372036854775807) AS INTEGER), total(cpu_seconds)
        FROM function_scope_weeks GROUP BY 1;
