-- SPDX-License-Identifier: GPL-2.0-or-later
-- The raw detail packed: one row per batch and job holds that batch's rows
-- of the job (object, phase, task, samples and counters) in a compact
-- binary form (store/db/sql/sample-pack.h), instead of one upsert per raw row
-- into samples. Ingest then writes a handful of rows per batch, and a
-- batch's rows cost a few bytes each; nothing reads them per query (the
-- API answers from the rollups), only retention, which deletes them by
-- (job, hour), and lmk-store migrate, which copies them.
--
-- samples is no longer written; the rows it holds stay, are deleted by
-- retention as before, and are gone once the raw window has passed.
--
-- A rowid table, unlike the WITHOUT ROWID ones elsewhere: a pack of some
-- kB fits a table leaf page, and appends; the unique index is small.
CREATE TABLE sample_packs (
        job_id INTEGER NOT NULL,
        bucket INTEGER NOT NULL,
        node_id INTEGER NOT NULL,
        boot_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        n_rows INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        packed BLOB NOT NULL,
        UNIQUE (job_id, bucket, node_id, boot_id, seq)
);

-- Each job's samples per task (step, user, command), kept at ingest like
-- job_objects: what the job's application falls back to when none of its
-- executables had a sample (the command with the most samples,
-- STMT_JOB_APP), which was summed from samples before. Filled here from
-- the rows samples holds.
CREATE TABLE job_tasks (
        job_id INTEGER NOT NULL,
        task_id INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        PRIMARY KEY (job_id, task_id)
) WITHOUT ROWID;
INSERT INTO job_tasks (job_id, task_id, samples)
        SELECT job_id, task_id, sum(samples) FROM samples WHERE job_id <> 0 GROUP BY job_id, task_id;
