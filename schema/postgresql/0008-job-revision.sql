-- SPDX-License-Identifier: GPL-2.0-or-later
-- PostgreSQL dialect of schema/sqlite/0008-job-revision.sql.
ALTER TABLE jobs ADD COLUMN revision BIGINT NOT NULL DEFAULT 0;
