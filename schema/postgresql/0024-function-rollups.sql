-- SPDX-License-Identifier: GPL-2.0-or-later
-- PostgreSQL dialect of schema/sqlite/0024-function-rollups.sql (whose
-- comments say what each is for). Text in byte order (0016).
CREATE TABLE function_days (
        day BIGINT NOT NULL,
        function_id BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        cycles DOUBLE PRECISION,
        instructions DOUBLE PRECISION,
        jobs BIGINT NOT NULL,
        PRIMARY KEY (day, function_id)
);
CREATE TABLE function_weeks (
        week BIGINT NOT NULL,
        function_id BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        cycles DOUBLE PRECISION,
        instructions DOUBLE PRECISION,
        jobs BIGINT NOT NULL,
        PRIMARY KEY (week, function_id)
);
CREATE TABLE function_key_days (
        mix_key BIGINT NOT NULL,
        day BIGINT NOT NULL,
        node_type_id BIGINT NOT NULL,
        function_id BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        cycles DOUBLE PRECISION,
        instructions DOUBLE PRECISION,
        jobs BIGINT NOT NULL,
        PRIMARY KEY (mix_key, day, node_type_id, function_id)
);
CREATE TABLE function_key_weeks (
        mix_key BIGINT NOT NULL,
        week BIGINT NOT NULL,
        node_type_id BIGINT NOT NULL,
        function_id BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        cycles DOUBLE PRECISION,
        instructions DOUBLE PRECISION,
        jobs BIGINT NOT NULL,
        PRIMARY KEY (mix_key, week, node_type_id, function_id)
);
CREATE TABLE function_users (
        function_id BIGINT NOT NULL,
        user_name TEXT COLLATE "C" NOT NULL,
        first_day BIGINT NOT NULL,
        last_day BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        PRIMARY KEY (function_id, user_name)
);
CREATE TABLE function_apps (
        function_id BIGINT NOT NULL,
        app TEXT COLLATE "C" NOT NULL,
        first_day BIGINT NOT NULL,
        last_day BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        PRIMARY KEY (function_id, app)
);
CREATE TABLE function_total_days (
        day BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (day)
);
CREATE TABLE function_total_weeks (
        week BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (week)
);
CREATE TABLE function_scope_days (
        mix_key BIGINT NOT NULL,
        day BIGINT NOT NULL,
        node_type_id BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (mix_key, day, node_type_id)
);
CREATE TABLE function_scope_weeks (
        mix_key BIGINT NOT NULL,
        week BIGINT NOT NULL,
        node_type_id BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (mix_key, week, node_type_id)
);
CREATE INDEX function_key_days_by_day ON function_key_days (day);
CREATE INDEX function_key_weeks_by_week ON function_key_weeks (week);
CREATE INDEX function_scope_days_by_day ON function_scope_days (day);
CREATE INDEX function_scope_weeks_by_week ON function_scope_weeks (week);
INSERT INTO function_key_days (mix_key, day, node_type_id, function_id, samples, cpu_seconds, cycles, instructions,
                               jobs)
        SELECT coalesce(j.mix_key, 0), floor(j.first_seen / 86400)::bigint * 86400, coalesce(j.node_type_id, 0),
               jf.function_id, least(sum(jf.samples), 9223372036854775807)::bigint, sum(jf.cpu_seconds),
               sum(jf.cycles)::double precision,
               sum(jf.instructions)::double precision, count(*)
        FROM job_functions jf JOIN jobs j ON j.id = jf.job_id WHERE j.first_seen IS NOT NULL
        GROUP BY 1, 2, 3, 4;
INSERT INTO function_key_weeks (mix_key, week, node_type_id, function_id, samples, cpu_seconds, cycles, instructions,
                                jobs)
        SELECT mix_key, day - day % 604800, node_type_id, function_id,
               least(sum(samples), 9223372036854775807)::bigint, sum(cpu_seconds), sum(cycles),
               sum(instructions), sum(jobs)
        FROM function_key_days GROUP BY 1, 2, 3, 4;
INSERT INTO function_days (day, function_id, samples, cpu_seconds, cycles, instructions, jobs)
        SELECT day, function_id, least(sum(samples), 9223372036854775807)::bigint, sum(cpu_seconds),
               sum(cycles), sum(instructions), sum(jobs)
        FROM function_key_days GROUP BY 1, 2;
INSERT INTO function_weeks (week, function_id, samples, cpu_seconds, cycles, instructions, jobs)
        SELECT week, function_id, least(sum(samples), 9223372036854775807)::bigint, sum(cpu_seconds),
               sum(cycles), sum(instructions), sum(jobs)
        FROM function_key_weeks GROUP BY 1, 2;
INSERT INTO function_users (function_id, user_name, first_day, last_day, samples)
        SELECT jf.function_id, j.user_name, floor(min(j.first_seen) / 86400)::bigint * 86400,
               floor(max(j.last_seen) / 86400)::bigint * 86400, least(sum(jf.samples), 9223372036854775807)::bigint
        FROM job_functions jf JOIN jobs j ON j.id = jf.job_id
        WHERE j.first_seen IS NOT NULL AND j.user_name IS NOT NULL AND j.user_name <> ''
        GROUP BY 1, 2;
INSERT INTO function_apps (function_id, app, first_day, last_day, samples)
        SELECT jf.function_id, j.app, floor(min(j.first_seen) / 86400)::bigint * 86400,
               floor(max(j.last_seen) / 86400)::bigint * 86400, least(sum(jf.samples), 9223372036854775807)::bigint
        FROM job_functions jf JOIN jobs j ON j.id = jf.job_id
        WHERE j.first_seen IS NOT NULL AND j.app IS NOT NULL AND j.app <> ''
        GROUP BY 1, 2;
INSERT INTO function_scope_days (mix_key, day, node_type_id, samples, cpu_seconds)
        SELECT coalesce(mix_key, 0), floor(first_seen / 86400)::bigint * 86400, coalesce(node_type_id, 0),
               least(sum(samples), 9223372036854775807)::bigint, sum(cpu_seconds)
        FROM jobs WHERE first_seen IS NOT NULL
        GROUP BY 1, 2, 3;
INSERT INTO function_scope_weeks (mix_key, week, node_type_id, samples, cpu_seconds)
        SELECT mix_key, day - day % 604800, node_type_id, least(sum(samples), 9223372036854775807)::bigint,
               sum(cpu_seconds)
        FROM function_scope_days GROUP BY 1, 2, 3;
INSERT INTO function_total_days (day, samples, cpu_seconds)
        SELECT day, least(sum(samples), 9223372036854775807)::bigint, sum(cpu_seconds)
        FROM function_scope_days GROUP BY 1;
INSERT INTO function_total_weeks (week, samples, cpu_seconds)
        SELECT week, least(sum(samples), 9223372036854775807)::bigint, sum(cpu_seconds)
        FROM function_scope_weeks GROUP BY 1;
