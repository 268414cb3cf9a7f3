-- SPDX-License-Identifier: GPL-2.0-or-later
-- PostgreSQL dialect of schema/sqlite/0003-allocation.sql.
ALTER TABLE job_nodes ADD COLUMN cpu_seconds DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE job_nodes ADD COLUMN cpus_alloc BIGINT;
ALTER TABLE nodes ADD COLUMN installed TEXT;
