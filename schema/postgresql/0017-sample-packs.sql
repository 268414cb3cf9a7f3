-- SPDX-License-Identifier: GPL-2.0-or-later
-- PostgreSQL dialect of schema/sqlite/0017-sample-packs.sql (whose comments say
-- what each is for). sample_packs grows with time, like samples did, and
-- is partitioned by day of its bucket (store/db/sql/partitions.c), so that
-- retention drops whole days.
CREATE TABLE sample_packs (
        job_id BIGINT NOT NULL,
        bucket BIGINT NOT NULL,
        node_id BIGINT NOT NULL,
        boot_id TEXT COLLATE "C" NOT NULL,
        seq BIGINT NOT NULL,
        n_rows BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        packed BYTEA NOT NULL,
        UNIQUE (job_id, bucket, node_id, boot_id, seq)
) PARTITION BY RANGE (bucket);
CREATE TABLE sample_packs_default PARTITION OF sample_packs DEFAULT;

CREATE TABLE job_tasks (
        job_id BIGINT NOT NULL,
        task_id BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        PRIMARY KEY (job_id, task_id)
);
INSERT INTO job_tasks (job_id, task_id, samples)
        SELECT job_id, task_id, sum(samples) FROM samples WHERE job_id <> 0 GROUP BY job_id, task_id;
