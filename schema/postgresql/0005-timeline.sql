-- SPDX-License-Identifier: GPL-2.0-or-later
-- PostgreSQL dialect of schema/sqlite/0005-timeline.sql. Not partitioned: 0009
-- replaces this table with job_timeline, which is.
CREATE TABLE job_intervals (
        job_id BIGINT NOT NULL,
        node_id BIGINT NOT NULL,
        start DOUBLE PRECISION NOT NULL,
        seconds DOUBLE PRECISION NOT NULL,
        samples BIGINT NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (job_id, node_id, start)
);
