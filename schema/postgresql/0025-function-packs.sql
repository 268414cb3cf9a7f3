-- SPDX-License-Identifier: GPL-2.0-or-later
-- PostgreSQL dialect of schema/sqlite/0025-function-packs.sql (whose
-- comments say what it is for and how lmk-store fills it, in C, after
-- this file: store/db/sql/migrate-function-packs.c; 0026 drops the tables
-- it was filled from).
CREATE TABLE job_function_packs (
        job_id BIGINT NOT NULL,
        object_id BIGINT NOT NULL,
        packed BYTEA NOT NULL,
        UNIQUE (job_id, object_id)
);
