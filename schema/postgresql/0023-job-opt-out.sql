-- SPDX-License-Identifier: GPL-2.0-or-later
-- What a job's user asked of lmk (sbatch --lmk, docs/slurm.md "The SPANK
-- plugin"): opted_out 1 for --lmk=off, where lmkd sent only the job's CPU
-- time and samples (no objects, phases, functions, notes or counters are
-- stored for it); counters_released 1 for --lmk=nocounters, where lmkd
-- read no hardware counter while the job ran. Once a node said so, the job
-- keeps it.
ALTER TABLE jobs ADD COLUMN opted_out BIGINT NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN counters_released BIGINT NOT NULL DEFAULT 0;
