-- SPDX-License-Identifier: GPL-2.0-or-later
-- Functions (issue 30, docs/batch-format.md "functions[]"): which
-- functions of its executables and libraries a job's time went to, per
-- job and per phase, with samples and counter sums like job_objects and
-- job_phases.
--
-- A function is a dimension like objects: one row per (object, name,
-- file_offset, entry), its object the sampled file of one build (objects'
-- key holds the build-id). Three kinds:
--   named by lmkd from the file's symbols: name <> '', file_offset -1;
--   unnamed: name '', to be named later by the object's build-id
--     (function_names, 0022): entry 1 and file_offset the function's
--     first byte (lmkd found it in the unwind table), or entry 0 and
--     file_offset a sampled offset rounded down to 4 KiB;
--   "(other functions)", what did not make lmkd's top N of its (job,
--     step, object, phase): name '', file_offset -1.
-- Everything keyed by function keys by its id alone, so that sums per
-- function over the site (by hour, day, week, as object_hours and its
-- siblings do per object) are short rows of two integers and a join
-- gives the object and its library family.
CREATE TABLE functions (
        id INTEGER PRIMARY KEY,
        object_id INTEGER NOT NULL,
        name TEXT NOT NULL,
        file_offset INTEGER NOT NULL,
        entry INTEGER NOT NULL,
        UNIQUE (object_id, name, file_offset, entry)
);

-- Each job's samples per function (over its phases) and per phase and
-- function, summed over its batches: cpu_seconds = samples / the batch's
-- sampling rate; cycles and instructions NULL where no node counted them.
-- Functions of work outside jobs are not kept, as rows' per-job sums are
-- not.
CREATE TABLE job_functions (
        job_id INTEGER NOT NULL,
        function_id INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        cycles INTEGER,
        instructions INTEGER,
        PRIMARY KEY (job_id, function_id)
) WITHOUT ROWID;
CREATE TABLE job_phase_functions (
        job_id INTEGER NOT NULL,
        phase_id INTEGER NOT NULL,
        function_id INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        cycles INTEGER,
        instructions INTEGER,
        PRIMARY KEY (job_id, phase_id, function_id)
) WITHOUT ROWID;
