-- SPDX-License-Identifier: GPL-2.0-or-later
-- PostgreSQL dialect of schema/sqlite/0022-function-names.sql (whose
-- comments say what it is for). Text in byte order (0016).
CREATE TABLE function_names (
        build_id TEXT COLLATE "C" NOT NULL,
        file_offset BIGINT NOT NULL,
        entry BIGINT NOT NULL,
        name TEXT COLLATE "C" NOT NULL,
        PRIMARY KEY (build_id, file_offset, entry)
);
