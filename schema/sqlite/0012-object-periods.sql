-- SPDX-License-Identifier: GPL-2.0-or-later
-- Site-wide time per object and 28 days (four weeks from the Unix epoch,
-- UTC), kept at ingest beside hours, days and weeks: a year of objects
-- reads 13 of these, the weeks and the days at its edges (the site page
-- over a year had two 35 ms sums of 52 weeks). Filled in here from the
-- weeks stored before, capped like them.
CREATE TABLE object_periods (
        period INTEGER NOT NULL,
        object_id INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (period, object_id)
) WITHOUT ROWID;
INSERT INTO object_periods (period, object_id, samples, cpu_seconds)
        SELECT week - week % 2419200, object_id, CAST(min(total(samples), 9223372036854775807) AS INTEGER),
               sum(cpu_seconds)
        FROM object_weeks GROUP BY week - week % 2419200, object_id;
