-- SPDX-License-Identifier: GPL-2.0-or-later
-- A job's time line at several grains, so that a page reads at most about
-- 120 rows per node however long the job ran: grain 0 is each batch (t is
-- the interval's start), grains 300, 1800, 10800 and 86400 are sums over
-- buckets of that many seconds (t the bucket's start, UTC), kept at ingest.
-- A week on 64 nodes is 645,120 batch rows but 3,584 rows of 3 hours.
-- Replaces job_intervals (0005), whose rows become grain 0 and are summed
-- into the others here.
CREATE TABLE job_timeline (
        job_id INTEGER NOT NULL,
        grain INTEGER NOT NULL,
        node_id INTEGER NOT NULL,
        t DOUBLE PRECISION NOT NULL,
        seconds DOUBLE PRECISION NOT NULL,
        samples INTEGER NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (job_id, grain, node_id, t)
) WITHOUT ROWID;
INSERT INTO job_timeline (job_id, grain, node_id, t, seconds, samples, cpu_seconds)
        SELECT job_id, 0, node_id, start, seconds, samples, cpu_seconds FROM job_intervals;
INSERT INTO job_timeline (job_id, grain, node_id, t, seconds, samples, cpu_seconds)
        SELECT i.job_id, g.grain, i.node_id, CAST(i.start / g.grain AS INTEGER) * g.grain, sum(i.seconds),
               CAST(min(total(i.samples), 9223372036854775807) AS INTEGER), sum(i.cpu_seconds)
        FROM job_intervals i, (SELECT 300 AS grain UNION ALL SELECT 1800 UNION ALL SELECT 10800
                               UNION ALL SELECT 86400) g
        GROUP BY i.job_id, g.grain, i.node_id, CAST(i.start / g.grain AS INTEGER) * g.grain;
DROP TABLE job_intervals;
