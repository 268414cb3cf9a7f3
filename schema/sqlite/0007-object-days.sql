-- SPDX-License-Identifier: GPL-2.0-or-later
-- Site-wide time per object and day (UTC), kept at ingest beside
-- object_hours: /api/v1/objects over a range of a week or more reads whole
-- days, a month being 30 rows per object instead of 720 (docs/api.md).
-- Filled in here from the hours stored before; a day's sum is capped at
-- the largest integer rather than failing the migration (every hour's is
-- within it, their sum need not be).
CREATE TABLE object_days (
        day INTEGER NOT NULL,
        object_id INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (day, object_id)
) WITHOUT ROWID;
INSERT INTO object_days (day, object_id, samples, cpu_seconds)
        SELECT bucket - bucket % 86400, object_id, CAST(min(total(samples), 9223372036854775807) AS INTEGER),
               sum(cpu_seconds)
        FROM object_hours GROUP BY bucket - bucket % 86400, object_id;
