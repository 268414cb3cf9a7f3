-- SPDX-License-Identifier: GPL-2.0-or-later
-- lmk-store schema, version 1 (SQLite dialect; see docs/lmk-store.md for what
-- a PostgreSQL schema must provide: the same tables, columns and keys).
--
-- Times are Unix seconds (DOUBLE PRECISION for times reported by nodes,
-- INTEGER for buckets and the store's own clock). Counter sums are NULL where
-- no node reported that counter. "user" is an SQL keyword, hence user_name.

CREATE TABLE nodes (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        hostname TEXT,
        cluster TEXT,
        cpus INTEGER NOT NULL,
        boot_id TEXT NOT NULL,
        last_seq INTEGER NOT NULL,
        first_seen DOUBLE PRECISION NOT NULL,
        last_seen DOUBLE PRECISION NOT NULL,
        last_push INTEGER NOT NULL,
        batches INTEGER NOT NULL DEFAULT 0,
        samples INTEGER NOT NULL DEFAULT 0,
        samples_lost INTEGER NOT NULL DEFAULT 0
);

-- One row per stored batch: the primary key is what makes a retried push a
-- no-op.
CREATE TABLE batches (
        node_id INTEGER NOT NULL,
        boot_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        received_at INTEGER NOT NULL,
        interval_start DOUBLE PRECISION NOT NULL,
        interval_end DOUBLE PRECISION NOT NULL,
        event TEXT NOT NULL,
        frequency_hz DOUBLE PRECISION NOT NULL,
        samples_lost INTEGER NOT NULL,
        n_rows INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        PRIMARY KEY (node_id, boot_id, seq)
) WITHOUT ROWID;

-- Slurm job ids are unique per cluster only; cluster is '' when unknown. The
-- unique key starts with job so that a lookup by job id alone uses it.
-- Work outside any job is stored under job_id 0, which has no row here.
CREATE TABLE jobs (
        id INTEGER PRIMARY KEY,
        cluster TEXT NOT NULL,
        job TEXT NOT NULL,
        user_name TEXT,
        account TEXT,
        partition_name TEXT,
        name TEXT,
        nodes_alloc INTEGER,
        tasks INTEGER,
        ended INTEGER NOT NULL DEFAULT 0,
        first_seen DOUBLE PRECISION,
        last_seen DOUBLE PRECISION,
        samples INTEGER NOT NULL DEFAULT 0,
        cpu_seconds DOUBLE PRECISION NOT NULL DEFAULT 0,
        cpu_time_ns INTEGER,
        cycles INTEGER,
        instructions INTEGER,
        UNIQUE (job, cluster)
);
CREATE INDEX jobs_by_last_seen ON jobs (last_seen);
CREATE INDEX jobs_by_user ON jobs (user_name, last_seen);

-- Dimensions: long strings are stored once and referenced by id.
CREATE TABLE objects (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL,
        kind TEXT NOT NULL,
        build_id TEXT NOT NULL,
        UNIQUE (path, kind, build_id)
);

CREATE TABLE phases (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL UNIQUE
);

CREATE TABLE tasks (
        id INTEGER PRIMARY KEY,
        step TEXT NOT NULL,
        user_name TEXT NOT NULL,
        comm TEXT NOT NULL,
        UNIQUE (step, user_name, comm)
);

-- The detail: one row per (job, hour, node, object, phase, task), summed over
-- the batches whose interval starts in that hour.
CREATE TABLE samples (
        job_id INTEGER NOT NULL,
        bucket INTEGER NOT NULL,
        node_id INTEGER NOT NULL,
        object_id INTEGER NOT NULL,
        phase_id INTEGER NOT NULL,
        task_id INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        cpu_time_ns INTEGER,
        cycles INTEGER,
        instructions INTEGER,
        PRIMARY KEY (job_id, bucket, node_id, object_id, phase_id, task_id)
) WITHOUT ROWID;

-- Rollups maintained at ingest, so that a job summary reads a few short key
-- ranges however large the store grows.
CREATE TABLE job_objects (
        job_id INTEGER NOT NULL,
        object_id INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        cpu_time_ns INTEGER,
        cycles INTEGER,
        instructions INTEGER,
        PRIMARY KEY (job_id, object_id)
) WITHOUT ROWID;

CREATE TABLE job_phases (
        job_id INTEGER NOT NULL,
        phase_id INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        cpu_time_ns INTEGER,
        cycles INTEGER,
        instructions INTEGER,
        PRIMARY KEY (job_id, phase_id)
) WITHOUT ROWID;

CREATE TABLE job_nodes (
        job_id INTEGER NOT NULL,
        node_id INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        first_seen DOUBLE PRECISION NOT NULL,
        last_seen DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (job_id, node_id)
) WITHOUT ROWID;

CREATE TABLE job_notes (
        job_id INTEGER NOT NULL,
        note_key TEXT NOT NULL,
        note_value TEXT NOT NULL,
        PRIMARY KEY (job_id, note_key)
) WITHOUT ROWID;

CREATE TABLE job_markers (
        job_id INTEGER NOT NULL,
        comm TEXT NOT NULL,
        phase TEXT NOT NULL,
        state TEXT NOT NULL,
        first_seen DOUBLE PRECISION NOT NULL,
        last_seen DOUBLE PRECISION NOT NULL,
        batches INTEGER NOT NULL,
        PRIMARY KEY (job_id, comm, phase, state)
) WITHOUT ROWID;

-- Site-wide time per object and hour, jobs and system work together.
CREATE TABLE object_hours (
        bucket INTEGER NOT NULL,
        object_id INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (bucket, object_id)
) WITHOUT ROWID;
