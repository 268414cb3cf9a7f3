-- SPDX-License-Identifier: GPL-2.0-or-later
-- Every number lmkd measures (issue 15, docs/batch-format.md): the node's
-- type, named counter events and burst rates per job, object and phase,
-- the jobs' exact figures, and energy per node and job.

-- Node types. name is the key the store derives from a batch's node.type
-- (store/node-type-key.c, docs/lmk-store.md "Node types"): CPU model,
-- sockets and cores, threads, memory rounded to its installed size, GPUs.
-- Nodes of one type share a row, whatever their kernels.
CREATE TABLE node_types (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        cpu_model TEXT,
        sockets INTEGER,
        cores INTEGER,
        threads INTEGER,
        memory_gib INTEGER,
        gpus TEXT NOT NULL DEFAULT ''
);
-- A node's type and kernel as its last batch said; NULL: an lmkd that
-- sends no node.type.
ALTER TABLE nodes ADD COLUMN node_type_id INTEGER;
ALTER TABLE nodes ADD COLUMN memory_bytes INTEGER;
ALTER TABLE nodes ADD COLUMN kernel TEXT;
-- The type of the node when the job ran there, and the job's energy
-- there: in all, and the part while it was alone on the node (measured;
-- the rest is split by samples, an estimate). NULL: not known.
ALTER TABLE job_nodes ADD COLUMN node_type_id INTEGER;
ALTER TABLE job_nodes ADD COLUMN energy_joules DOUBLE PRECISION;
ALTER TABLE job_nodes ADD COLUMN energy_alone_joules DOUBLE PRECISION;
-- The type of all the job's nodes, 0 when they differ, NULL when not
-- known; its energy on all of them; its exact CPU time and counters
-- (lmkd's per-job totals, not the samples' estimates).
ALTER TABLE jobs ADD COLUMN node_type_id INTEGER;
ALTER TABLE jobs ADD COLUMN energy_joules DOUBLE PRECISION;
ALTER TABLE jobs ADD COLUMN energy_alone_joules DOUBLE PRECISION;
ALTER TABLE jobs ADD COLUMN exact_cpu_time_ns INTEGER;
ALTER TABLE jobs ADD COLUMN exact_cycles INTEGER;
ALTER TABLE jobs ADD COLUMN exact_instructions INTEGER;
-- The job list filters by node type like by the other columns (0006).
CREATE INDEX jobs_by_node_type ON jobs (node_type_id, last_seen, first_seen, cpu_seconds);

-- The node's energy per batch: all zones, DRAM zones, while no job ran.
ALTER TABLE batches ADD COLUMN energy_joules DOUBLE PRECISION;
ALTER TABLE batches ADD COLUMN dram_joules DOUBLE PRECISION;
ALTER TABLE batches ADD COLUMN unattributed_joules DOUBLE PRECISION;

-- Samples whose counter windows were multiplexed (their counts scaled).
ALTER TABLE job_objects ADD COLUMN multiplexed_samples INTEGER NOT NULL DEFAULT 0;
ALTER TABLE job_phases ADD COLUMN multiplexed_samples INTEGER NOT NULL DEFAULT 0;

-- Counter roles ("cycles", "PAPI_L1_DCM", "l1m"): a dimension like phases.
CREATE TABLE event_roles (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE
);
-- Which event filled a role on the job's nodes (counters[]): one row per
-- role normally, more when its nodes disagree. available: on some node.
CREATE TABLE job_counters (
        job_id INTEGER NOT NULL,
        role_id INTEGER NOT NULL,
        event TEXT NOT NULL,
        available INTEGER NOT NULL,
        PRIMARY KEY (job_id, role_id, event)
) WITHOUT ROWID;

-- Named events (rows[].events) summed like cycles, per job and object,
-- job and phase, and job: count over the rows that had it, their CPU time
-- (samples x period: count / time = events per CPU second), their
-- samples, and of those rows the ones that had instructions too: their
-- instructions and their count of this event (events per 1,000
-- instructions = 1000 x count_with_instructions / instructions).
CREATE TABLE job_object_events (
        job_id INTEGER NOT NULL,
        object_id INTEGER NOT NULL,
        role_id INTEGER NOT NULL,
        count INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        cpu_time_ns INTEGER NOT NULL,
        instructions INTEGER NOT NULL,
        count_with_instructions INTEGER NOT NULL,
        PRIMARY KEY (job_id, object_id, role_id)
) WITHOUT ROWID;
CREATE TABLE job_phase_events (
        job_id INTEGER NOT NULL,
        phase_id INTEGER NOT NULL,
        role_id INTEGER NOT NULL,
        count INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        cpu_time_ns INTEGER NOT NULL,
        instructions INTEGER NOT NULL,
        count_with_instructions INTEGER NOT NULL,
        PRIMARY KEY (job_id, phase_id, role_id)
) WITHOUT ROWID;
-- The job's in all, and its exact count where lmkd split the counters at
-- context switches (jobs[].events; NULL otherwise).
CREATE TABLE job_events (
        job_id INTEGER NOT NULL,
        role_id INTEGER NOT NULL,
        count INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        cpu_time_ns INTEGER NOT NULL,
        instructions INTEGER NOT NULL,
        count_with_instructions INTEGER NOT NULL,
        exact_count INTEGER,
        PRIMARY KEY (job_id, role_id)
) WITHOUT ROWID;

-- Burst rates at a code location (object and phase): per role the burst
-- windows that counted it, their length and the events in them (derived
-- from rate x length, hence fractional). rate = count / window_ns x 1e9,
-- resting on bursts windows.
CREATE TABLE job_bursts (
        job_id INTEGER NOT NULL,
        object_id INTEGER NOT NULL,
        phase_id INTEGER NOT NULL,
        role_id INTEGER NOT NULL,
        bursts INTEGER NOT NULL,
        window_ns INTEGER NOT NULL,
        count DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (job_id, object_id, phase_id, role_id)
) WITHOUT ROWID;
