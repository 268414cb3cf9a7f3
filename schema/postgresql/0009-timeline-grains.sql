-- SPDX-License-Identifier: GPL-2.0-or-later
-- PostgreSQL dialect of schema/sqlite/0009-timeline-grains.sql. Grain 0 (a row per
-- batch) grows with time like samples and is kept as long; the coarser
-- grains are kept like the job's other summaries. So job_timeline is
-- partitioned by grain, and its grain-0 partition by t (docs/postgresql.md).
-- A bucket's start truncates start / grain toward zero as SQLite's CAST
-- does; PostgreSQL's cast of a float to an integer rounds instead.
CREATE TABLE job_timeline (
        job_id BIGINT NOT NULL,
        grain BIGINT NOT NULL,
        node_id BIGINT NOT NULL,
        t DOUBLE PRECISION NOT NULL,
        seconds DOUBLE PRECISION NOT NULL,
        samples BIGINT NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (job_id, grain, node_id, t)
) PARTITION BY LIST (grain);
CREATE TABLE job_timeline_raw PARTITION OF job_timeline FOR VALUES IN (0) PARTITION BY RANGE (t);
CREATE TABLE job_timeline_raw_default PARTITION OF job_timeline_raw DEFAULT;
CREATE TABLE job_timeline_grains PARTITION OF job_timeline DEFAULT;
INSERT INTO job_timeline (job_id, grain, node_id, t, seconds, samples, cpu_seconds)
        SELECT job_id, 0, node_id, start, seconds, samples, cpu_seconds FROM job_intervals;
INSERT INTO job_timeline (job_id, grain, node_id, t, seconds, samples, cpu_seconds)
        SELECT i.job_id, g.grain, i.node_id, trunc(i.start / g.grain)::bigint * g.grain, sum(i.seconds),
               least(sum(i.samples), 9223372036854775807)::bigint, sum(i.cpu_seconds)
        FROM job_intervals i, (VALUES (300), (1800), (10800), (86400)) g (grain)
        GROUP BY i.job_id, g.grain, i.node_id, trunc(i.start / g.grain)::bigint * g.grain;
DROP TABLE job_intervals;
