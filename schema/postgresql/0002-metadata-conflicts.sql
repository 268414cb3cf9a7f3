-- SPDX-License-Identifier: GPL-2.0-or-later
-- PostgreSQL dialect of schema/sqlite/0002-metadata-conflicts.sql.
ALTER TABLE jobs ADD COLUMN metadata_conflicts BIGINT NOT NULL DEFAULT 0;
