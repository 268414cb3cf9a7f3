-- SPDX-License-Identifier: GPL-2.0-or-later
-- Names of unnamed functions (0021) found by the store after the fact,
-- from the site's debuginfod (store/symbols/), keyed by the build-id of
-- their object and their file offset, entry as in functions: one lookup
-- names the function in every copy of the build, and answers show the
-- name without asking again. name '' records that the debug file was read
-- and names nothing there (a page that holds several functions, an
-- address no symbol covers): such a function stays object+0xOFFSET and
-- is not looked up again.
CREATE TABLE function_names (
        build_id TEXT NOT NULL,
        file_offset INTEGER NOT NULL,
        entry INTEGER NOT NULL,
        name TEXT NOT NULL,
        PRIMARY KEY (build_id, file_offset, entry)
) WITHOUT ROWID;
