-- SPDX-License-Identifier: GPL-2.0-or-later
-- A job's revision: one more with every batch that changes anything of the
-- job (its sums and rollups, nodes, notes, markers, ranks), so that what
-- is worked out from them (the site's findings, store/analysis/findings-cache.h)
-- can be kept until the job changes.
ALTER TABLE jobs ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
