-- SPDX-License-Identifier: GPL-2.0-or-later
-- Text compares and sorts by its bytes, as SQLite's BINARY collation does,
-- whatever the database's default collation (a site's server is likely to
-- sort linguistically: "alpha" before "Zeta"). The store's lists, their
-- ties and the cursors that walk them then come out the same on both
-- backends. Every text column gets COLLATE "C"; a partition follows its
-- parent. Only the indexes on them are rebuilt: the text itself is not
-- rewritten. A later migration that adds a text column gives it
-- COLLATE "C" itself.
DO $$
DECLARE
        col record;
BEGIN
        FOR col IN
                SELECT c.relname, a.attname
                FROM pg_attribute a
                JOIN pg_class c ON c.oid = a.attrelid
                WHERE c.relnamespace = current_schema()::regnamespace
                  AND c.relkind IN ('r', 'p') AND NOT c.relispartition
                  AND a.attnum > 0 AND NOT a.attisdropped
                  AND a.atttypid = 'text'::regtype AND a.attcollation <> 'pg_catalog."C"'::regcollation
                ORDER BY c.relname, a.attnum
        LOOP
                EXECUTE format('ALTER TABLE %I ALTER COLUMN %I TYPE text COLLATE "C"', col.relname, col.attname);
        END LOOP;
END
$$;
