-- SPDX-License-Identifier: GPL-2.0-or-later
-- PostgreSQL dialect of schema/sqlite/0012-object-periods.sql.
CREATE TABLE object_periods (
        period BIGINT NOT NULL,
        object_id BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (period, object_id)
);
INSERT INTO object_periods (period, object_id, samples, cpu_seconds)
        SELECT week - week % 2419200, object_id, least(sum(samples), 9223372036854775807)::bigint,
               sum(cpu_seconds)
        FROM object_weeks GROUP BY week - week % 2419200, object_id;
