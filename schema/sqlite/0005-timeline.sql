-- SPDX-License-Identifier: GPL-2.0-or-later
-- A job's time line (the job page): for each batch, that is each node's
-- interval, the job's samples and CPU seconds there. Busy share of the
-- job's CPUs on a node over an interval = cpu_seconds / seconds / the
-- node's cpus_alloc (job_nodes). A job listed in a batch without samples
-- gets a row too: it was there and idle.
CREATE TABLE job_intervals (
        job_id INTEGER NOT NULL,
        node_id INTEGER NOT NULL,
        start DOUBLE PRECISION NOT NULL,
        seconds DOUBLE PRECISION NOT NULL,
        samples INTEGER NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (job_id, node_id, start)
) WITHOUT ROWID;
