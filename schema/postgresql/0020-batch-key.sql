-- SPDX-License-Identifier: GPL-2.0-or-later
-- The batch key gets the spool id and each batch its digest, as in
-- schema/sqlite/0020-batch-key.sql (whose comments say why). PostgreSQL changes
-- the keys in place: the new columns reach every partition, and only the
-- keys' indexes are rebuilt. batches' key must hold its partition key
-- (interval_start), so it cannot by itself find a batch of the same key
-- whose body says another interval: the ingest looks for one first
-- (store/db/sql/statements.c, STMT_BATCH_INSERT), under its node's lock.
ALTER TABLE batches ADD COLUMN spool TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE batches ADD COLUMN digest BYTEA;
ALTER TABLE batches DROP CONSTRAINT batches_pkey;
ALTER TABLE batches ADD PRIMARY KEY (node_id, boot_id, spool, seq, interval_start);

ALTER TABLE sample_packs ADD COLUMN spool TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE sample_packs DROP CONSTRAINT sample_packs_job_id_bucket_node_id_boot_id_seq_key;
ALTER TABLE sample_packs ADD UNIQUE (job_id, bucket, node_id, boot_id, spool, seq);
