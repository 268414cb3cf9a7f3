-- SPDX-License-Identifier: GPL-2.0-or-later
-- PostgreSQL dialect of schema/sqlite/0026-function-tables-dropped.sql.
DROP TABLE job_functions;
DROP TABLE job_phase_functions;
