/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <libpq-fe.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

/* Copying a whole lmk-store from SQLite into PostgreSQL (lmk-store migrate,
 * docs/lmk-store.md "Moving from SQLite to PostgreSQL"). Library code: it
 * returns negative errno and, on failure, what went wrong in *ret_why; the
 * command (store/migrate/migrate.c) opens both ends, logs and decides.
 *
 * Both databases must hold the same schema version (the backends' migrations
 * have the same numbers, tests/store/test-schema-parity.py): the tables and
 * their columns are read from both sides and must match by name, and rows
 * are copied column by column by name. */

typedef struct DbCopyTable {
        char *name;
        uint64_t rows;     /* copied from SQLite */
        uint64_t replaced; /* rows the PostgreSQL migrations had seeded, replaced by SQLite's */
        double seconds;
} DbCopyTable;

/* A sum of a key column on both sides, as a double: exact for integer sums
 * below 2^53; a real column's sum may differ in the last bits with the
 * order of addition, so those are compared with a relative tolerance. */
typedef struct DbCopySum {
        const char *table, *column;
        double source, target;
} DbCopySum;

typedef struct DbCopyReport {
        DbCopyTable *tables;
        size_t n_tables;
        uint64_t rows;
        double seconds;     /* copying, committing and ANALYZE */
        DbCopySum *sums;    /* filled by db_copy_verify */
        size_t n_sums;
} DbCopyReport;

void db_copy_report_done(DbCopyReport *r);

/* Called about once a second during a table's copy and once at its end
 * (done): rows so far and the seconds since the table's copy began. */
typedef void (*DbCopyProgress)(const char *table, uint64_t rows, double seconds, bool done, void *userdata);

typedef struct DbCopyOptions {
        size_t flush_bytes; /* COPY data handed to libpq in pieces of about this size (0: 4 MiB) */
        DbCopyProgress progress;
        void *userdata;
} DbCopyOptions;

/* Whether the target holds data a store wrote: rows in any of the tables
 * ingest always writes first (nodes, batches, jobs, objects), which may or
 * may not exist yet. 1 with a description of what it holds in *ret_why, 0
 * if not. */
int db_copy_target_has_data(PGconn *dst, char **ret_why);

/* Copies every table of src into dst in one PostgreSQL transaction, so that
 * a failure leaves the target as it was (migrated and empty) and a second
 * attempt may simply be made. src must be inside a read transaction
 * (BEGIN), so that every table comes from the same snapshot. Refuses
 * (-EEXIST) a target holding data (db_copy_target_has_data, checked again
 * under the transaction's table locks); rows in other tables then can only
 * have come from the migrations and are replaced. Afterwards sets each
 * identity column's sequence past the copied ids and runs ANALYZE. */
int db_copy(sqlite3 *src, PGconn *dst, const DbCopyOptions *o, DbCopyReport *ret, char **ret_why);

/* Compares each copied table's rows counted on both sides and the sums of
 * a few key columns (jobs.samples, jobs.cpu_seconds, ...), filling
 * report->sums. -EBADMSG with the first difference in *ret_why. src must be
 * in the same read transaction as for db_copy. */
int db_copy_verify(sqlite3 *src, PGconn *dst, DbCopyReport *report, char **ret_why);
