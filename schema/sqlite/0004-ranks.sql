-- SPDX-License-Identifier: GPL-2.0-or-later
-- Per-rank figures of MPI jobs for POP metrics (docs/pop.md): samples of
-- each (job, step, rank, phase), those in communication libraries, their
-- CPU seconds (samples / the batch's sampling rate), and the times of the
-- first and last sample, summed over the job's batches from every node.
CREATE TABLE job_ranks (
        job_id INTEGER NOT NULL,
        step TEXT NOT NULL,
        rank INTEGER NOT NULL,
        phase_id INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        comm_samples INTEGER NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        comm_seconds DOUBLE PRECISION NOT NULL,
        first_seen DOUBLE PRECISION NOT NULL,
        last_seen DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (job_id, step, rank, phase_id)
) WITHOUT ROWID;
