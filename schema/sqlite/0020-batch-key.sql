-- SPDX-License-Identifier: GPL-2.0-or-later
-- A batch's key gets the id of the spool lmkd took it from (batch.spool,
-- docs/batch-format.md; '' for batches of an older lmkd, which sends none),
-- and each batch keeps the SHA-256 of its text (digest). Keyed by (node,
-- boot id, seq) alone, a spool wiped and made anew in the same boot, or
-- another node's batches pushed with a shared token, reused keys that were
-- answered "duplicate" and dropped. Now the same key with the same digest
-- is a duplicate (a retry), with another digest a conflict (409); a batch
-- stored before this migration has no digest and stays a duplicate.
--
-- SQLite cannot change a table's key in place: batches and sample_packs
-- (whose key holds the batch's) are copied into tables with the new key,
-- their new columns last as ALTER TABLE adds them on PostgreSQL. The copy
-- writes each row once more (7 s for a database of 420 MB, 200,000 batches
-- and as many packs of 1.5 kB, on a busy 2-CPU VM), and the disk needs room
-- for a second copy of the two tables meanwhile.
CREATE TABLE batches_0020 (
        node_id INTEGER NOT NULL,
        boot_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        received_at INTEGER NOT NULL,
        interval_start DOUBLE PRECISION NOT NULL,
        interval_end DOUBLE PRECISION NOT NULL,
        event TEXT NOT NULL,
        frequency_hz DOUBLE PRECISION NOT NULL,
        samples_lost INTEGER NOT NULL,
        n_rows INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        energy_joules DOUBLE PRECISION,
        dram_joules DOUBLE PRECISION,
        unattributed_joules DOUBLE PRECISION,
        spool TEXT NOT NULL DEFAULT '',
        digest BLOB,
        PRIMARY KEY (node_id, boot_id, spool, seq)
) WITHOUT ROWID;
INSERT INTO batches_0020 (node_id, boot_id, seq, received_at, interval_start, interval_end, event, frequency_hz,
                          samples_lost, n_rows, samples, energy_joules, dram_joules, unattributed_joules)
        SELECT node_id, boot_id, seq, received_at, interval_start, interval_end, event, frequency_hz,
               samples_lost, n_rows, samples, energy_joules, dram_joules, unattributed_joules
        FROM batches;
DROP TABLE batches;
ALTER TABLE batches_0020 RENAME TO batches;

CREATE TABLE sample_packs_0020 (
        job_id INTEGER NOT NULL,
        bucket INTEGER NOT NULL,
        node_id INTEGER NOT NULL,
        boot_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        n_rows INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        packed BLOB NOT NULL,
        spool TEXT NOT NULL DEFAULT '',
        UNIQUE (job_id, bucket, node_id, boot_id, spool, seq)
);
INSERT INTO sample_packs_0020 (job_id, bucket, node_id, boot_id, seq, n_rows, samples, packed)
        SELECT job_id, bucket, node_id, boot_id, seq, n_rows, samples, packed FROM sample_packs ORDER BY rowid;
DROP TABLE sample_packs;
ALTER TABLE sample_packs_0020 RENAME TO sample_packs;
