-- SPDX-License-Identifier: GPL-2.0-or-later
-- What the findings (docs/findings.md) compare a job's samples with: the CPUs
-- Slurm gave it on each node and the CPU time it used there, and the library
-- families installed on each node ("purpose:family" words, space-separated).
ALTER TABLE job_nodes ADD COLUMN cpu_seconds DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE job_nodes ADD COLUMN cpus_alloc INTEGER;
ALTER TABLE nodes ADD COLUMN installed TEXT;
