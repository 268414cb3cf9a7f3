-- SPDX-License-Identifier: GPL-2.0-or-later
-- Placeholder on branch i31-rank only: number 0023 is taken by other work
-- being merged; this commit is dropped at that merge.
SELECT 1;
