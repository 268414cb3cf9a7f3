-- SPDX-License-Identifier: GPL-2.0-or-later
-- Site-wide time per object and week (7 days from the Unix epoch, UTC),
-- kept at ingest beside object_hours and object_days: a year of objects
-- reads 52 weeks and the days at its edges instead of 365 days (the site
-- page over a year took 380 ms on a million-job store). Filled in here from
-- the days stored before, capped like them.
CREATE TABLE object_weeks (
        week INTEGER NOT NULL,
        object_id INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (week, object_id)
) WITHOUT ROWID;
INSERT INTO object_weeks (week, object_id, samples, cpu_seconds)
        SELECT day - day % 604800, object_id, CAST(min(total(samples), 9223372036854775807) AS INTEGER),
               sum(cpu_seconds)
        FROM object_days GROUP BY day - day % 604800, object_id;
