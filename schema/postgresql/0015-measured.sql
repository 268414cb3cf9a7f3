-- SPDX-License-Identifier: GPL-2.0-or-later
-- PostgreSQL dialect of schema/sqlite/0015-measured.sql (whose comments say what
-- each is for). batches is partitioned: its new columns reach every
-- partition.
CREATE TABLE node_types (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        cpu_model TEXT,
        sockets BIGINT,
        cores BIGINT,
        threads BIGINT,
        memory_gib BIGINT,
        gpus TEXT NOT NULL DEFAULT ''
);
ALTER TABLE nodes ADD COLUMN node_type_id BIGINT;
ALTER TABLE nodes ADD COLUMN memory_bytes BIGINT;
ALTER TABLE nodes ADD COLUMN kernel TEXT;
ALTER TABLE job_nodes ADD COLUMN node_type_id BIGINT;
ALTER TABLE job_nodes ADD COLUMN energy_joules DOUBLE PRECISION;
ALTER TABLE job_nodes ADD COLUMN energy_alone_joules DOUBLE PRECISION;
ALTER TABLE jobs ADD COLUMN node_type_id BIGINT;
ALTER TABLE jobs ADD COLUMN energy_joules DOUBLE PRECISION;
ALTER TABLE jobs ADD COLUMN energy_alone_joules DOUBLE PRECISION;
ALTER TABLE jobs ADD COLUMN exact_cpu_time_ns BIGINT;
ALTER TABLE jobs ADD COLUMN exact_cycles BIGINT;
ALTER TABLE jobs ADD COLUMN exact_instructions BIGINT;
CREATE INDEX jobs_by_node_type ON jobs (node_type_id, last_seen, first_seen, cpu_seconds);
ALTER TABLE batches ADD COLUMN energy_joules DOUBLE PRECISION;
ALTER TABLE batches ADD COLUMN dram_joules DOUBLE PRECISION;
ALTER TABLE batches ADD COLUMN unattributed_joules DOUBLE PRECISION;
ALTER TABLE job_objects ADD COLUMN multiplexed_samples BIGINT NOT NULL DEFAULT 0;
ALTER TABLE job_phases ADD COLUMN multiplexed_samples BIGINT NOT NULL DEFAULT 0;
CREATE TABLE event_roles (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        name TEXT NOT NULL UNIQUE
);
CREATE TABLE job_counters (
        job_id BIGINT NOT NULL,
        role_id BIGINT NOT NULL,
        event TEXT NOT NULL,
        available BIGINT NOT NULL,
        PRIMARY KEY (job_id, role_id, event)
);
CREATE TABLE job_object_events (
        job_id BIGINT NOT NULL,
        object_id BIGINT NOT NULL,
        role_id BIGINT NOT NULL,
        count BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        cpu_time_ns BIGINT NOT NULL,
        instructions BIGINT NOT NULL,
        count_with_instructions BIGINT NOT NULL,
        PRIMARY KEY (job_id, object_id, role_id)
);
CREATE TABLE job_phase_events (
        job_id BIGINT NOT NULL,
        phase_id BIGINT NOT NULL,
        role_id BIGINT NOT NULL,
        count BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        cpu_time_ns BIGINT NOT NULL,
        instructions BIGINT NOT NULL,
        count_with_instructions BIGINT NOT NULL,
        PRIMARY KEY (job_id, phase_id, role_id)
);
CREATE TABLE job_events (
        job_id BIGINT NOT NULL,
        role_id BIGINT NOT NULL,
        count BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        cpu_time_ns BIGINT NOT NULL,
        instructions BIGINT NOT NULL,
        count_with_instructions BIGINT NOT NULL,
        exact_count BIGINT,
        PRIMARY KEY (job_id, role_id)
);
CREATE TABLE job_bursts (
        job_id BIGINT NOT NULL,
        object_id BIGINT NOT NULL,
        phase_id BIGINT NOT NULL,
        role_id BIGINT NOT NULL,
        bursts BIGINT NOT NULL,
        window_ns BIGINT NOT NULL,
        count DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (job_id, object_id, phase_id, role_id)
);
