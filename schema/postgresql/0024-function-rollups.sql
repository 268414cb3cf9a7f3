-- SPDX-License-Identifier: GPL-2.0-or-later
-- PostgreSQL dialect of schema/sqlite/0024-function-rollups.sql (whose
-- comments say what each is for).
CREATE TABLE function_days (
        day BIGINT NOT NULL,
        function_id BIGINT NOT NULL,
        mix_key BIGINT NOT NULL,
        node_type_id BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        cycles DOUBLE PRECISION,
        instructions DOUBLE PRECISION,
        jobs BIGINT NOT NULL,
        PRIMARY KEY (day, function_id, mix_key, node_type_id)
);
CREATE TABLE function_weeks (
        week BIGINT NOT NULL,
        function_id BIGINT NOT NULL,
        mix_key BIGINT NOT NULL,
        node_type_id BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        cycles DOUBLE PRECISION,
        instructions DOUBLE PRECISION,
        jobs BIGINT NOT NULL,
        PRIMARY KEY (week, function_id, mix_key, node_type_id)
);
CREATE TABLE function_scope_days (
        day BIGINT NOT NULL,
        mix_key BIGINT NOT NULL,
        node_type_id BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (day, mix_key, node_type_id)
);
CREATE TABLE function_scope_weeks (
        week BIGINT NOT NULL,
        mix_key BIGINT NOT NULL,
        node_type_id BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (week, mix_key, node_type_id)
);

INSERT INTO function_days (day, function_id, mix_key, node_type_id, samples, cpu_seconds, cycles, instructions, jobs)
        SELECT floor(j.first_seen / 86400)::bigint * 86400, jf.function_id, coalesce(j.mix_key, 0),
               coalesce(j.node_type_id, 0), least(sum(jf.samples), 9223372036854775807)::bigint,
               sum(jf.cpu_seconds), sum(jf.cycles)::double precision, sum(jf.instructions)::double precision,
               count(*)
        FROM job_functions jf JOIN jobs j ON j.id = jf.job_id WHERE j.first_seen IS NOT NULL
        GROUP BY 1, 2, 3, 4;
INSERT INTO function_weeks (week, function_id, mix_key, node_type_id, samples, cpu_seconds, cycles, instructions, jobs)
        SELECT day - day % 604800, function_id, mix_key, node_type_id,
               least(sum(samples), 9223372036854775807)::bigint, sum(cpu_seconds), sum(cycles),
               sum(instructions), sum(jobs)
        FROM function_days GROUP BY 1, 2, 3, 4;
INSERT INTO function_scope_days (day, mix_key, node_type_id, samples, cpu_seconds)
        SELECT floor(first_seen / 86400)::bigint * 86400, coalesce(mix_key, 0), coalesce(node_type_id, 0),
               least(sum(samples), 9223372036854775807)::bigint, sum(cpu_seconds)
        FROM jobs WHERE first_seen IS NOT NULL
        GROUP BY 1, 2, 3;
INSERT INTO function_scope_weeks (week, mix_key, node_type_id, samples, cpu_seconds)
        SELECT day - day % 604800, mix_key, node_type_id, least(sum(samples), 9223372036854775807)::bigint,
               sum(cpu_seconds)
        FROM function_scope_days GROUP BY 1, 2, 3;
