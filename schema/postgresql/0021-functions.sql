-- SPDX-License-Identifier: GPL-2.0-or-later
-- PostgreSQL dialect of schema/sqlite/0021-functions.sql (whose comments
-- say what each is for). Text in byte order (0016).
CREATE TABLE functions (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        object_id BIGINT NOT NULL,
        name TEXT COLLATE "C" NOT NULL,
        file_offset BIGINT NOT NULL,
        entry BIGINT NOT NULL,
        UNIQUE (object_id, name, file_offset, entry)
);
CREATE TABLE job_functions (
        job_id BIGINT NOT NULL,
        function_id BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        cycles BIGINT,
        instructions BIGINT,
        PRIMARY KEY (job_id, function_id)
);
CREATE TABLE job_phase_functions (
        job_id BIGINT NOT NULL,
        phase_id BIGINT NOT NULL,
        function_id BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        cpu_seconds DOUBLE PRECISION NOT NULL,
        cycles BIGINT,
        instructions BIGINT,
        PRIMARY KEY (job_id, phase_id, function_id)
);
