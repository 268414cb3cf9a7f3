-- SPDX-License-Identifier: GPL-2.0-or-later
-- PostgreSQL dialect of schema/sqlite/0007-object-days.sql. sum() of BIGINT is
-- NUMERIC here, exact, so capping it needs no detour through a float.
-- Small (objects x days), so not partitioned.
CREATE TABLE object_days (
        day BIGINT NOT NULL,
        object_id BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (day, object_id)
);
INSERT INTO object_days (day, object_id, samples, cpu_seconds)
        SELECT bucket - bucket % 86400, object_id, least(sum(samples), 9223372036854775807)::bigint,
               sum(cpu_seconds)
        FROM object_hours GROUP BY bucket - bucket % 86400, object_id;
