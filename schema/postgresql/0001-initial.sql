-- SPDX-License-Identifier: GPL-2.0-or-later
-- lmk-store schema, version 1, PostgreSQL dialect: the same tables, columns
-- and keys as schema/sqlite/0001-initial.sql (whose comments say what each is for),
-- checked by tests/store/test-schema-parity.py. Integers are BIGINT (SQLite's
-- INTEGER is 64-bit), ids are identities, and what grows with time is
-- partitioned by time (docs/postgresql.md): batches by interval_start,
-- samples and object_hours by bucket. Each partitioned table starts with
-- only a default partition; the store creates the ranges ahead and drops
-- them by retention.

CREATE TABLE nodes (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        hostname TEXT,
        cluster TEXT,
        cpus BIGINT NOT NULL,
        boot_id TEXT NOT NULL,
        last_seq BIGINT NOT NULL,
        first_seen DOUBLE PRECISION NOT NULL,
        last_seen DOUBLE PRECISION NOT NULL,
        last_push BIGINT NOT NULL,
        batches BIGINT NOT NULL DEFAULT 0,
        samples BIGINT NOT NULL DEFAULT 0,
        samples_lost BIGINT NOT NULL DEFAULT 0
);

-- A partitioned table's keys must hold its partition key, so the batch key
-- is (node_id, boot_id, seq, interval_start): a retried push carries the
-- same batch, interval_start included, and still conflicts.
CREATE TABLE batches (
        node_id BIGINT NOT NULL,
        boot_id TEXT NOT NULL,
        seq BIGINT NOT NULL,
        received_at BIGINT NOT NULL,
        interval_start DOUBLE PRECISION NOT NULL,
        interval_end DOUBLE PRECISION NOT NULL,
        event TEXT NOT NULL,
        frequency_hz DOUBLE PRECISION NOT NULL,
        samples_lost BIGINT NOT NULL,
        n_rows BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        PRIMARY KEY (node_id, boot_id, seq, interval_start)
) PARTITION BY RANGE (interval_start);
CREATE TABLE batches_default PARTITION OF batches DEFAULT;

CREATE TABLE jobs (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        cluster TEXT NOT NULL,
        job TEXT NOT NULL,
        user_name TEXT,
        account TEXT,
        partition_name TEXT,
        name TEXT,
        nodes_alloc BIGINT,
        tasks BIGINT,
        ended BIGINT NOT NULL DEFAULT 0,
        first_seen DOUBLE PRECISION,
        last_seen DOUBLE PRECISION,
        samples BIGINT NOT NULL DEFAULT 0,
        cpu_seconds DOUBLE PRECISION NOT NULL DEFAULT 0,
        cpu_time_ns BIGINT,
        cycles BIGINT,
        instructions BIGINT,
        UNIQUE (job, cluster)
);
CREATE INDEX jobs_by_last_seen ON jobs (last_seen);
CREATE INDEX jobs_by_user ON jobs (user_name, last_seen);

CREATE TABLE objects (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        path TEXT NOT NULL,
        kind TEXT NOT NULL,
        build_id TEXT NOT NULL,
        UNIQUE (path, kind, build_id)
);

CREATE TABLE phases (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        path TEXT NOT NULL UNIQUE
);

CREATE TABLE tasks (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        step TEXT NOT NULL,
        user_name TEXT NOT NULL,
        comm TEXT NOT NULL,
        UNIQUE (step, user_name, comm)
);

CREATE TABLE samples (
        job_id BIGINT NOT NULL,
        bucket BIGINT NOT NULL,
        node_id BIGINT NOT NULL,
        object_id BIGINT NOT NULL,
        phase_id BIGINT NOT NULL,
        task_id BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        cpu_time_ns BIGINT,
        cycles BIGINT,
        instructions BIGINT,
        PRIMARY KEY (job_id, bucket, node_id, object_id, phase_id, task_id)
) PARTITION BY RANGE (bucket);
CREATE TABLE samples_default PARTITION OF samples DEFAULT;

CREATE TABLE job_objects (
        job_id BIGINT NOT NULL,
        object_id BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        cpu_time_ns BIGINT,
        cycles BIGINT,
        instructions BIGINT,
        PRIMARY KEY (job_id, object_id)
);

CREATE TABLE job_phases (
        job_id BIGINT NOT NULL,
        phase_id BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        cpu_time_ns BIGINT,
        cycles BIGINT,
        instructions BIGINT,
        PRIMARY KEY (job_id, phase_id)
);

CREATE TABLE job_nodes (
        job_id BIGINT NOT NULL,
        node_id BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        first_seen DOUBLE PRECISION NOT NULL,
        last_seen DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (job_id, node_id)
);

CREATE TABLE job_notes (
        job_id BIGINT NOT NULL,
        note_key TEXT NOT NULL,
        note_value TEXT NOT NULL,
        PRIMARY KEY (job_id, note_key)
);

CREATE TABLE job_markers (
        job_id BIGINT NOT NULL,
        comm TEXT NOT NULL,
        phase TEXT NOT NULL,
        state TEXT NOT NULL,
        first_seen DOUBLE PRECISION NOT NULL,
        last_seen DOUBLE PRECISION NOT NULL,
        batches BIGINT NOT NULL,
        PRIMARY KEY (job_id, comm, phase, state)
);

CREATE TABLE object_hours (
        bucket BIGINT NOT NULL,
        object_id BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (bucket, object_id)
) PARTITION BY RANGE (bucket);
CREATE TABLE object_hours_default PARTITION OF object_hours DEFAULT;
