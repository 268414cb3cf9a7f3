-- SPDX-License-Identifier: GPL-2.0-or-later
-- The site's time per function (issue 31, GET /api/v1/functions): sums of
-- job_functions by UTC day and by week (7 days from the Unix epoch), kept
-- at ingest as object_days and object_weeks are, so that a 30-day ranking
-- reads a few days and weeks and not every job's functions.
--
-- Each row is of one function (functions.id) in the time of the jobs of one
-- application-mix key (mix_keys, schema/0013: application, user, account,
-- partition) on one node type (node_types.id, 0: not known): the keys the
-- ranking filters by and sees through (a person sees their own jobs' and
-- their accounts'), and the users and applications it counts. A job's
-- functions count under the key it had when their batch was stored.
-- cycles and instructions are summed as floating point (NULL where no
-- node counted them): a week of a large site's cycles is past int64, and
-- only their ratio (IPC) is asked for.
-- jobs: the jobs that had the function for the first time in that day's
-- (week's) batches, so that a range's sum counts each job once, in the
-- bucket where it first ran the function.
CREATE TABLE function_days (
        day INTEGER NOT NULL,
        function_id INTEGER NOT NULL,
        mix_key INTEGER NOT NULL,
        node_type_id INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        cycles DOUBLE PRECISION,
        instructions DOUBLE PRECISION,
        jobs INTEGER NOT NULL,
        PRIMARY KEY (day, function_id, mix_key, node_type_id)
) WITHOUT ROWID;
CREATE TABLE function_weeks (
        week INTEGER NOT NULL,
        function_id INTEGER NOT NULL,
        mix_key INTEGER NOT NULL,
        node_type_id INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        cycles DOUBLE PRECISION,
        instructions DOUBLE PRECISION,
        jobs INTEGER NOT NULL,
        PRIMARY KEY (week, function_id, mix_key, node_type_id)
) WITHOUT ROWID;

-- All the samples of the same jobs (every kind: kernel, idle in the job,
-- libraries), per day and week, key and node type: what a function's share
-- is of ("share of all sampled core-hours" of the jobs in view).
CREATE TABLE function_scope_days (
        day INTEGER NOT NULL,
        mix_key INTEGER NOT NULL,
        node_type_id INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (day, mix_key, node_type_id)
) WITHOUT ROWID;
CREATE TABLE function_scope_weeks (
        week INTEGER NOT NULL,
        mix_key INTEGER NOT NULL,
        node_type_id INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (week, mix_key, node_type_id)
) WITHOUT ROWID;

-- The functions stored before have no time of their own: each job's are
-- put on the day (week) the job was first seen, with its key and type.
INSERT INTO function_days (day, function_id, mix_key, node_type_id, samples, cpu_seconds, cycles, instructions, jobs)
        SELECT CAST(j.first_seen / 86400 AS INTEGER) * 86400, jf.function_id, coalesce(j.mix_key, 0),
               coalesce(j.node_type_id, 0), CAST(min(total(jf.samples), 9223372036854775807) AS INTEGER),
               total(jf.cpu_seconds), CASE WHEN count(jf.cycles) > 0 THEN total(jf.cycles) END,
               CASE WHEN count(jf.instructions) > 0 THEN total(jf.instructions) END, count(*)
        FROM job_functions jf JOIN jobs j ON j.id = jf.job_id WHERE j.first_seen IS NOT NULL
        GROUP BY 1, 2, 3, 4;
INSERT INTO function_weeks (week, function_id, mix_key, node_type_id, samples, cpu_seconds, cycles, instructions, jobs)
        SELECT day - day % 604800, function_id, mix_key, node_type_id,
               CAST(min(total(samples), 9223372036854775807) AS INTEGER), total(cpu_seconds), sum(cycles),
               sum(instructions), sum(jobs)
        FROM function_days GROUP BY 1, 2, 3, 4;
INSERT INTO function_scope_days (day, mix_key, node_type_id, samples, cpu_seconds)
        SELECT CAST(first_seen / 86400 AS INTEGER) * 86400, coalesce(mix_key, 0), coalesce(node_type_id, 0),
               CAST(min(total(samples), 9223372036854775807) AS INTEGER), total(cpu_seconds)
        FROM jobs WHERE first_seen IS NOT NULL
        GROUP BY 1, 2, 3;
INSERT INTO function_scope_weeks (week, mix_key, node_type_id, samples, cpu_seconds)
        SELECT day - day % 604800, mix_key, node_type_id, CAST(min(total(samples), 9223372036854775807) AS INTEGER),
               total(cpu_seconds)
        FROM function_scope_days GROUP BY 1, 2, 3;
