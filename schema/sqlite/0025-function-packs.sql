-- SPDX-License-Identifier: GPL-2.0-or-later
-- Each job's function sums packed per object: one row per (job, object)
-- holds what job_functions and job_phase_functions (0021) held as a row
-- per (job, function) and per (job, phase, function) of that object's
-- functions, in one value (store/db/sql/function-pack.h: per (phase,
-- function) samples, CPU seconds, cycles and instructions; phase 0 the
-- sums over the job's phases). A batch reads the packs of its (job,
-- object)s in one statement, adds to them in memory and writes them back
-- in another: some 55 rows a batch where it upserted 1,155, most of what
-- storing functions cost the database.
--
-- The sums over phases stay beside those per phase, not summed from them
-- when read: they were added batch by batch (CPU seconds are floating
-- point, so a sum over phases is not bit for bit the same), each guarded
-- against overflow on its own, and retention deleted the two tables a
-- slice at a time, so a job being expired could have one without the
-- other. Kept both, the packs answer exactly what the tables did.
--
-- This file creates the table. SQL cannot write the packed values (no
-- varints, no IEEE 754 bytes), so lmk-store fills it after this file, in
-- the same transaction (store/db/sql/migrate-function-packs.c): every
-- job's rows of both tables, grouped per (job, object of the function),
-- packed. 0026 then drops job_functions and job_phase_functions, so that
-- a schema applied from these files alone (psql, as docs/postgresql.md
-- allows for a new database) ends the same.
--
-- A rowid table with a unique index, as sample_packs (0017): a pack of a
-- few kB fits a leaf page of its own, the index stays small.
CREATE TABLE job_function_packs (
        job_id INTEGER NOT NULL,
        object_id INTEGER NOT NULL,
        packed BLOB NOT NULL,
        UNIQUE (job_id, object_id)
);
