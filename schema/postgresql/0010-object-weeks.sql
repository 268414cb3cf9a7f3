-- SPDX-License-Identifier: GPL-2.0-or-later
-- PostgreSQL dialect of schema/sqlite/0010-object-weeks.sql.
CREATE TABLE object_weeks (
        week BIGINT NOT NULL,
        object_id BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (week, object_id)
);
INSERT INTO object_weeks (week, object_id, samples, cpu_seconds)
        SELECT day - day % 604800, object_id, least(sum(samples), 9223372036854775807)::bigint,
               sum(cpu_seconds)
        FROM object_days GROUP BY day - day % 604800, object_id;
