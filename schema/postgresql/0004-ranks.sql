-- SPDX-License-Identifier: GPL-2.0-or-later
-- PostgreSQL dialect of schema/sqlite/0004-ranks.sql.
CREATE TABLE job_ranks (
        job_id BIGINT NOT NULL,
        step TEXT NOT NULL,
        rank BIGINT NOT NULL,
        phase_id BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        comm_samples BIGINT NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        comm_seconds DOUBLE PRECISION NOT NULL,
        first_seen DOUBLE PRECISION NOT NULL,
        last_seen DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (job_id, step, rank, phase_id)
);
