-- SPDX-License-Identifier: GPL-2.0-or-later
-- The site's function sums (0024) of batches not yet added to their
-- tables. Each batch's transaction inserts its contribution here as one
-- row (store/db/sql/site-sums.h: per function; per function, mix key and
-- node type; per key and node type; in total; who ran each function and
-- in which applications; of the batch's day, its week following from it),
-- where it upserted some 600 rows of those tables; so a batch that is
-- acknowledged has its sums stored. lmk-store folds these rows into the
-- tables (store/db/sql/site-sums-fold.c): in one transaction, up to a
-- thousand of them at a time, oldest first, summed in memory so that each
-- distinct row of the tables is upserted once, then deleted. It folds
-- after a few hundred batches or two seconds, before it answers from
-- those tables or prunes them, at start (rows a crash left) and at a clean
-- stop.
--
-- A body that does not decode (a damaged database) is kept, its id made
-- negative, out of the folds' way, and logged: folds take ids > 0 only.
-- AUTOINCREMENT: a new id stays above every id used before, also when the
-- only rows left are such negative ones.
CREATE TABLE function_sums_pending (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        body BLOB NOT NULL
);
