/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "db/db.h"
#include "migrations.h"

/* The statements store/db/sql/ prepares once per connection (conn_stmt()). */
typedef enum Stmt {
        /* writer */
        STMT_NODE_UPSERT,
        STMT_BATCH_INSERT,
        STMT_BATCH_SAME,
        STMT_JOB_UPSERT,
        STMT_JOBS_SETTLE,
        STMT_NOTE_UPSERT,
        STMT_OBJECT_SELECT,
        STMT_OBJECT_INSERT,
        STMT_PHASE_SELECT,
        STMT_PHASE_INSERT,
        STMT_TASK_SELECT,
        STMT_TASK_INSERT,
        STMT_SAMPLE_PACK_INSERT,
        STMT_JOB_TASK_UPSERT,
        STMT_JOB_OBJECT_UPSERT,
        STMT_JOB_PHASE_UPSERT,
        STMT_JOB_NODE_UPSERT,
        STMT_JOB_BATCH_UPSERT,
        STMT_JOB_GRAIN_UPSERT,
        STMT_OBJECT_HOUR_UPSERT,
        STMT_OBJECT_DAY_UPSERT,
        STMT_OBJECT_WEEK_UPSERT,
        STMT_OBJECT_PERIOD_UPSERT,
        STMT_MARKER_UPSERT,
        STMT_RANK_UPSERT,
        STMT_NODE_SUMS,
        STMT_NODE_INSTALLED,
        STMT_JOBS_CURRENT,
        STMT_NODE_DIGEST,
        STMT_NODE_PACKAGES_CLEAR,
        STMT_PACKAGE_INSERT,
        STMT_PACKAGE_SELECT,
        STMT_PACKAGE_FILE_INSERT,
        STMT_NODE_PACKAGE_INSERT,
        STMT_NODE_INVENTORY_SET,
        STMT_OBJECT_LAST_SEEN,
        STMT_JOB_NAMED_CLUSTER,
        STMT_JOB_ADOPT,
        STMT_NOTES_CURRENT,
        STMT_JOB_APP,
        STMT_JOB_MIX,
        STMT_JOB_MIXES,
        STMT_MIX_KEY_INSERT,
        STMT_JOB_MIX_SET,
        STMT_JOB_DAYS,
        STMT_APP_DAY_UPSERT,
        STMT_APP_DAY_TAKE,
        STMT_APP_DAY_PRUNE,
        STMT_APP_DIM_UPSERT,
        STMT_APP_DIM_ROW_UPSERT,
        STMT_APP_DIM_TAKE,
        STMT_APP_DIM_PRUNE,
        /* what lmkd measures beyond samples (schema/0015) */
        STMT_NODE_TYPE_SELECT,
        STMT_NODE_TYPE_INSERT,
        STMT_ROLE_SELECT,
        STMT_ROLE_INSERT,
        STMT_JOB_COUNTER_UPSERT,
        STMT_JOB_OBJECT_EVENT_UPSERT,
        STMT_JOB_PHASE_EVENT_UPSERT,
        STMT_JOB_EVENT_UPSERT,
        STMT_JOB_EVENT_SUMS,
        STMT_JOB_BURST_UPSERT,
        /* functions (schema/0021) */
        STMT_FUNCTION_SELECT,
        STMT_FUNCTION_INSERT,
        /* a job's function sums per object, packed (schema/0025) */
        STMT_JOB_FUNCTION_PACKS_READ,
        STMT_JOB_FUNCTION_PACK_UPSERT,
        /* the site's function sums of batches, to be folded (schema/0027) */
        STMT_FUNCTION_SUMS_PENDING_INSERT,
        STMT_FUNCTION_SUMS_PENDING_TAKE,
        STMT_FUNCTION_SUMS_PENDING_DELETE,
        STMT_FUNCTION_SUMS_PENDING_SET_ASIDE,
        STMT_FUNCTION_SUMS_PENDING_ANY,
        /* the site's functions by day and week (schema/0024), by the fold */
        STMT_FUNCTION_DAY_UPSERT,
        STMT_FUNCTION_WEEK_UPSERT,
        STMT_FUNCTION_KEY_DAY_UPSERT,
        STMT_FUNCTION_KEY_WEEK_UPSERT,
        STMT_FUNCTION_USER_UPSERT,
        STMT_FUNCTION_APP_UPSERT,
        STMT_FUNCTION_TOTAL_DAY_UPSERT,
        STMT_FUNCTION_TOTAL_WEEK_UPSERT,
        STMT_FUNCTION_SCOPE_DAY_UPSERT,
        STMT_FUNCTION_SCOPE_WEEK_UPSERT,
        /* retention (schema/0014) */
        STMT_PRUNE_MARK_GET,
        STMT_PRUNE_MARK_SET,
        STMT_PRUNE_JOBS,
        STMT_PRUNE_JOB_TIMELINE,
        STMT_PRUNE_JOB_PACKS_BUCKET,
        STMT_PRUNE_JOB_PACKS,
        STMT_PRUNE_IDLE_PACKS_NEXT,
        STMT_PRUNE_IDLE_PACKS,
        STMT_PRUNE_JOB_SAMPLES_BUCKET,
        STMT_PRUNE_JOB_SAMPLES,
        STMT_PRUNE_IDLE_SAMPLES_NEXT,
        STMT_PRUNE_IDLE_SAMPLES,
        STMT_PRUNE_BATCH_GROUP,
        STMT_PRUNE_BATCH_SEQS,
        STMT_PRUNE_BATCHES,
        /* retention of the site-wide rollups: the oldest time unit of each
         * table before the horizon, then its rows */
        STMT_PRUNE_OBJECT_HOURS_NEXT,
        STMT_PRUNE_OBJECT_HOURS,
        STMT_PRUNE_OBJECT_DAYS_NEXT,
        STMT_PRUNE_OBJECT_DAYS,
        STMT_PRUNE_OBJECT_WEEKS_NEXT,
        STMT_PRUNE_OBJECT_WEEKS,
        STMT_PRUNE_OBJECT_PERIODS_NEXT,
        STMT_PRUNE_OBJECT_PERIODS,
        STMT_PRUNE_APP_DAYS_NEXT,
        STMT_PRUNE_APP_DAYS,
        STMT_PRUNE_APP_DIM_DAYS_NEXT,
        STMT_PRUNE_APP_DIM_DAYS,
        STMT_PRUNE_FUNCTION_DAYS_NEXT,
        STMT_PRUNE_FUNCTION_DAYS,
        STMT_PRUNE_FUNCTION_WEEKS_NEXT,
        STMT_PRUNE_FUNCTION_WEEKS,
        STMT_PRUNE_FUNCTION_SCOPE_DAYS_NEXT,
        STMT_PRUNE_FUNCTION_SCOPE_DAYS,
        STMT_PRUNE_FUNCTION_SCOPE_WEEKS_NEXT,
        STMT_PRUNE_FUNCTION_SCOPE_WEEKS,
        STMT_PRUNE_FUNCTION_KEY_DAYS_NEXT,
        STMT_PRUNE_FUNCTION_KEY_DAYS,
        STMT_PRUNE_FUNCTION_KEY_WEEKS_NEXT,
        STMT_PRUNE_FUNCTION_KEY_WEEKS,
        STMT_PRUNE_FUNCTION_TOTAL_DAYS_NEXT,
        STMT_PRUNE_FUNCTION_TOTAL_DAYS,
        STMT_PRUNE_FUNCTION_TOTAL_WEEKS_NEXT,
        STMT_PRUNE_FUNCTION_TOTAL_WEEKS,
        /* retention of per-job summaries: the oldest job before the
         * horizon and its jobs row; the job whose other rows are still
         * being deleted (the retention table); then those rows, a slice of
         * each table at a time */
        STMT_EXPIRE_JOB_NEXT,
        STMT_EXPIRE_JOB,
        STMT_EXPIRE_LEFT_GET,
        STMT_EXPIRE_LEFT_SET,
        STMT_EXPIRE_LEFT_CLEAR,
        STMT_EXPIRE_JOB_OBJECTS,
        STMT_EXPIRE_JOB_PHASES,
        STMT_EXPIRE_JOB_NODES,
        STMT_EXPIRE_JOB_NOTES,
        STMT_EXPIRE_JOB_MARKERS,
        STMT_EXPIRE_JOB_RANKS,
        STMT_EXPIRE_JOB_TIMELINE,
        STMT_EXPIRE_JOB_COUNTERS,
        STMT_EXPIRE_JOB_OBJECT_EVENTS,
        STMT_EXPIRE_JOB_PHASE_EVENTS,
        STMT_EXPIRE_JOB_EVENTS,
        STMT_EXPIRE_JOB_BURSTS,
        STMT_EXPIRE_JOB_TASKS,
        STMT_EXPIRE_JOB_FUNCTION_PACKS,
        /* readers (the job list builds its SQL per filter: list_jobs) */
        STMT_JOB_FIND,
        STMT_JOB_FIND_CLUSTER,
        STMT_JOB_KINDS,
        STMT_JOB_OBJECTS,
        STMT_JOB_PHASES,
        STMT_JOB_NODES,
        STMT_JOB_NOTES,
        STMT_JOB_MARKERS,
        STMT_JOB_RANKS,
        STMT_JOB_SPAN,
        STMT_JOB_TIMELINE,
        STMT_JOB_NODE_TYPE,
        STMT_JOB_COUNTERS,
        STMT_JOB_EVENTS,
        STMT_JOB_OBJECT_EVENTS,
        STMT_JOB_PHASE_EVENTS,
        STMT_JOB_BURSTS,
        STMT_JOB_FUNCTION_PACKS,
        STMT_FUNCTION_ROWS,
        STMT_PHASE_FUNCTION_ROWS,
        STMT_OBJECT_HOURS,
        STMT_OBJECT_DAYS,
        STMT_OBJECT_WEEKS,
        STMT_OBJECT_PERIODS,
        STMT_OBJECT_IDS_OF_KIND,
        /* the site's functions (function-rank.c) */
        STMT_FUNCTION_DAYS,
        STMT_FUNCTION_WEEKS,
        STMT_FUNCTION_SITE_SUMS,
        STMT_FUNCTION_KEY_DAYS_ALL,
        STMT_FUNCTION_KEY_WEEKS_ALL,
        STMT_FUNCTION_TOTAL_DAYS,
        STMT_FUNCTION_TOTAL_WEEKS,
        STMT_FUNCTION_SCOPE_DAYS_ALL,
        STMT_FUNCTION_SCOPE_WEEKS_ALL,
        STMT_FUNCTION_IDS_OF_PATH,
        STMT_PACKAGES_INSTALLED,
        STMT_PACKAGE_OBJECTS,
        STMT_OBJECT_NAME,
        STMT_NODE_NAME,
        STMT_SUMMARY_JOBS,
        STMT_SUMMARY_OBJECTS,
        STMT_SUMMARY_NODES,
        STMT_SUMMARY_MARKERS,
        STMT_NODES,
        STMT_RUN_INFO,
        STMT_RUN_RANKS,
        STMT_APP_DAYS,
        STMT_APP_DIM_DAYS,
        STMT_OBJECT_PACKAGE,
        STMT_MIX_KEY,
        STMT_CHECK,
        /* login tickets used (schema/0019): outside any ingest, each
         * statement a transaction of its own (store/db/sql/tickets.c) */
        STMT_TICKET_PRUNE,
        STMT_TICKET_USE,
        /* names of unnamed functions found by build-id (schema/0022,
         * store/db/sql/function-names.c) */
        STMT_UNNAMED_BUILDS,
        STMT_UNNAMED_FUNCTIONS,
        STMT_FUNCTION_NAME_PUT,
        _STMT_MAX,
} Stmt;

/* The columns read_job_info() reads, of jobs j. */
#define JOB_COLUMNS                                                             \
        "j.id, j.job, j.cluster, j.user_name, j.account, j.partition_name, "    \
        "j.name, j.nodes_alloc, j.tasks, j.ended, j.first_seen, j.last_seen, "  \
        "j.samples, j.cpu_seconds, j.cpu_time_ns, j.cycles, j.instructions, "   \
        "(SELECT count(*) FROM job_nodes n WHERE n.job_id = j.id), j.metadata_conflicts, j.app, j.revision, " \
        "j.node_type_id, (SELECT t.name FROM node_types t WHERE t.id = j.node_type_id), "       \
        "j.energy_joules, j.energy_alone_joules, j.exact_cpu_time_ns, j.exact_cycles, j.exact_instructions, " \
        "j.opted_out, j.counters_released"

/* Functions' sums x (a job's, or a site range's in site-profile.c): the
 * function, its object, and the name found for an unnamed one since
 * (function_names), as read_function_row() reads them, then x's sums */
#define FUNCTION_COLUMNS(x)                                                                             \
        "o.path, o.kind, o.build_id, f.name, f.file_offset, f.entry, n.name, " x ".samples, "            \
        x ".cpu_seconds, " x ".cycles, " x ".instructions"
#define FUNCTION_JOINS(x)                                                                               \
        "JOIN functions f ON f.id = " x ".function_id JOIN objects o ON o.id = f.object_id "            \
        "LEFT JOIN function_names n ON f.name = '' AND f.file_offset >= 0 AND n.build_id = o.build_id " \
        "AND n.file_offset = f.file_offset AND n.entry = f.entry "
/* An unnamed function f of object o that no lookup has named (0022) */
#define NOT_NAMED                                                                                       \
        "NOT EXISTS (SELECT 1 FROM function_names n WHERE n.build_id = o.build_id "                     \
        "AND n.file_offset = f.file_offset AND n.entry = f.entry)"

/* The text of statement id in a dialect. */
const char *stmt_text(DbDialect dialect, Stmt id);

/* Whether statement id changes rows that batches of any node and job
 * change too: the site-wide sums (objects per hour to four weeks, the
 * application mix) and the rows every batch may add to (objects, phases,
 * tasks, counter roles, node types, packages, mix keys, functions). A writer beside
 * others runs it under the site lock (SqlDialect.ingest_lock_site), as it
 * does markers outside jobs; all else it changes belongs to its batches'
 * nodes and jobs, which it locked first. Maintenance runs alone and takes
 * no site lock. tests/store/test-stmt-shared.c reads the table each
 * statement writes from its SQL and fails when this list disagrees, or
 * when a statement writes a table it has not classified. */
bool stmt_changes_shared(Stmt id);

/* A statement whose SQL holds one VALUES tuple of '?' (an INSERT of one
 * row, an UPDATE … FROM (VALUES …)) made to take rows tuples at once: the
 * tuple repeated, its parameters bound row after row. *ret_cols: the
 * parameters of one row. -EINVAL for a statement without such a tuple. */
int stmt_text_rows(const char *sql, size_t rows, char **ret, unsigned *ret_cols);

/* What else differs between the dialects. */
typedef struct SqlDialect {
        /* Starts a read transaction that sees one snapshot throughout, so
         * that the parts of a summary add up (PostgreSQL's default, READ
         * COMMITTED, takes a snapshot per statement). */
        const char *read_begin;
        /* Taken after db_begin_write() before migrating (NULL: that
         * already locks, SQLite's BEGIN IMMEDIATE). */
        const char *migrate_lock;
        /* Run at the start of each transaction that stores batches (NULL:
         * nothing); one statement, which a driver may send without waiting. */
        const char *ingest_setup;
        /* Several writers on one database (NULL: one at a time, SQLite's
         * BEGIN IMMEDIATE). Each transaction that stores batches begins
         * with DbDriver.begin_ingest (the writers' lock, shared), then
         * locks its batches' nodes and jobs with ingest_lock_keys (one
         * parameter: their keys, sorted, in an array's text), then takes
         * ingest_lock_site before its first statement that
         * stmt_changes_shared(). Locks taken in that order wait for each
         * other but cannot deadlock: a writer holding the site lock already
         * has all the keys it will want, and two writers never change the
         * same row of a node or job at once. Maintenance (retention,
         * settling live jobs, migrations) takes the writers' lock alone
         * (DbDriver.begin_write). */
        const char *ingest_lock_keys, *ingest_lock_site;
        const char *schema_version_table;
        const SchemaMigration *migrations;
        const unsigned *n_migrations;
} SqlDialect;

const SqlDialect *sql_dialect(DbDialect d);
