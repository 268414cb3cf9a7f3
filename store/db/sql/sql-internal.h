/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* What the files of store/db/sql/ share: the storage (one write connection
 * behind a mutex, as SQLite has one writer at a time anyway, and a pool of
 * read connections, so that queries run while a batch is being stored),
 * its connections with their statements, and the helpers that bind and
 * read values the way storage.h wants them (STORAGE_NULL, NAN). */

#include <pthread.h>
#include <stdio.h>

#include "db/db.h"
#include "hashmap.h"
#include "db/sql/function-pack.h"
#include "db/sql/statements.h"
#include "db/storage.h"

#define BUCKET_SECONDS 3600
#define DAY_SECONDS 86400
#define WEEK_SECONDS (7 * DAY_SECONDS) /* from the epoch, a Thursday */
#define PERIOD_SECONDS (4 * WEEK_SECONDS) /* object_periods: four weeks */
/* /api/v1/objects over at least this long reads whole days (object_days) */
#define OBJECT_DAYS_FROM (7 * DAY_SECONDS)

/* The coarser grains of a job's time line, in seconds (schema/0009): each
 * holds at most JOB_TIMELINE_MAX_STEPS buckets for a job of up to 120
 * times its length. */
static const int64_t timeline_grains[] = { 300, 1800, 10800, 86400 };

typedef struct Pending Pending;

/* Rows a multi-row statement takes at most (conn_write_rows()). */
#define ROWS_MAX 64

typedef struct Conn {
        DbConn *db;
        DbStmt *stmts[_STMT_MAX];
        /* multi-row variants: [id][rows - 1], made on first use */
        DbStmt **rows_stmts[_STMT_MAX];
        unsigned rows_cols[_STMT_MAX];
        /* the writer's, for the write queue */
        DbStmt *savepoint, *ingest_setup, *lock_keys, *lock_site;
        /* In a transaction that stores batches beside other writers: the
         * statements that change shared rows want the site lock
         * (statements.h, stmt_changes_shared()), and whether it is held. */
        bool shares_writes, site_locked;
        bool busy; /* readers: handed out */
} Conn;

typedef struct SqlStorage {
        Storage base;
        const DbDriver *driver;
        StorageOptions opts;

        pthread_mutex_t write_lock;
        Conn writer;
        pthread_mutex_t queue_lock;
        pthread_cond_t queue_cond;
        Pending *queue_head, *queue_tail;
        bool writing;
        /* With several writers (StorageOptions.writers, PostgreSQL), the
         * others: storages of their own, each with its write connection,
         * queue and caches, and no readers; a node's batches always go to
         * the same one (sql_ingest()). NULL in those. */
        struct SqlStorage **lanes;
        unsigned n_lanes;
        Hashmap *object_ids, *phase_ids, *task_ids, *role_ids, *node_type_ids, *node_ids, *function_ids;
        /* The writer changes the caches, under caches_lock taken for
         * writing; a batch's own thread looks its rows' ids up under it
         * taken for reading (intern_lookup_rows()). caches_generation counts
         * their clearings: ids looked up before one may be gone. */
        pthread_rwlock_t caches_lock;
        uint64_t caches_generation;
        /* when the writer last settled live jobs (sql_jobs_settle();
         * CLOCK_MONOTONIC ns, 0: not yet) */
        uint64_t settled_ns;
        /* The storage whose lanes this is one of (itself, when it has
         * none), which counts the batches its writers committed with site
         * function sums to fold (schema/0027) since a fold took them all,
         * and when the first of them was (CLOCK_MONOTONIC ns); under
         * sums_lock. */
        struct SqlStorage *home;
        pthread_mutex_t sums_lock;
        size_t sums_pending;
        uint64_t sums_pending_ns;
        /* A pass of retention over raw rows, or over jobs, is under way
         * (its last step said there was more; retention's thread alone
         * prunes): only its first step settles live jobs gone quiet, not
         * each of its many short steps. */
        bool pruning_raw, pruning_jobs;
        /* retention's walk over the batches' (node, boot, spool) groups;
         * a boot id has at most 64 bytes (batch-parse.c, MAX_ID) */
        int64_t prune_node;
        char prune_boot[64 + 1];
        char prune_spool[LMK_BATCH_SPOOL_ID_LEN + 1];

        pthread_mutex_t readers_lock;
        pthread_cond_t readers_cond;
        Conn *readers;
        unsigned n_readers;
} SqlStorage;

/* write-queue.c: a job is live (schema/0018) until JOBS_LIVE_S after its last batch: out
 * of the job list's indexes, so that its batches do not move it in each.
 * sql_jobs_settle() ends that for the jobs gone quiet, in the writer's
 * transaction: after groups of batches, and before retention walks jobs by
 * time, which finds only the jobs that are not live. */
#define JOBS_LIVE_S 300
int sql_jobs_settle(SqlStorage *s);

/* site-sums-fold.c: the site's function sums of batches (schema/0027)
 * added to their tables (schema/0024). Under s->write_lock: one fold, or
 * all: until none is left; *ret_folded (if not NULL): the batches'. 1
 * when there may be more (!all), else 0. */
int site_sums_fold_locked(SqlStorage *s, bool all, uint64_t *ret_folded);
/* Under s->write_lock, after a group committed batches with sums to fold:
 * counts them, with those of the store's other writers, and folds when
 * they are due (enough of them, or old enough); a failure is logged and
 * left for a later fold. */
void site_sums_committed(SqlStorage *s, size_t batches);
/* Before reading or pruning the tables: folds what any writer left. */
int site_sums_fold_for_read(SqlStorage *s);

/* conn.c */
int conn_open(Conn *c, const DbDriver *driver, const char *location, const StorageOptions *opts, bool writer);
void conn_close(Conn *c);
int conn_exec(Conn *c, const char *sql);
/* Runs sql on c through a statement kept in *st: one that a driver may
 * send without waiting for its answer (PostgreSQL's pipeline), unlike
 * conn_exec(). Its errors are reported by a later call at the latest. */
int conn_exec_kept(Conn *c, DbStmt **st, const char *sql);
/* Takes the site lock in a transaction that shares_writes, unless held. */
int conn_lock_site(Conn *c);
int conn_begin_read(Conn *c);
int conn_stmt(Conn *c, Stmt id, DbStmt **ret);
/* Binds row i of n to a multi-row statement, its parameters from base on. */
typedef int (*BindRow)(DbStmt *st, int base, size_t i, void *userdata);
/* Runs statement id (stmt_text_rows()) over n rows, up to ROWS_MAX at
 * once: a few statements where there were n. must_change: each row must
 * insert or update one (the guarded upserts of stored sums), else
 * -EOVERFLOW. */
int conn_write_rows(Conn *c, Stmt id, size_t n, BindRow bind, void *userdata, bool must_change);
/* Takes a row of what statement id answers. */
typedef int (*ReadRow)(DbStmt *st, void *userdata);
/* Runs statement id (a SELECT … FROM (VALUES …), or an upsert RETURNING)
 * over n rows, up to ROWS_MAX at once, and hands each row it answers to
 * read: one round trip to the server where there were n. */
int conn_read_rows(Conn *c, Stmt id, size_t n, BindRow bind, ReadRow read, void *userdata);
int reader_acquire(SqlStorage *s, Conn **ret);
void reader_release(SqlStorage *s, Conn *c);
/* Ends the read transaction conn_begin_read() began on a reader and
 * hands the reader back. */
void reader_end_read(SqlStorage *s, Conn *c);
int step_errno(int rc);
/* NULL, STORAGE_NULL and NAN are bound as SQL NULL */
int bind_nullable_text(DbStmt *s, int i, const char *v);
int bind_nullable_int(DbStmt *s, int i, int64_t v);
int bind_nullable_double(DbStmt *s, int i, double v);
int bind_sum(DbStmt *s, int i, double v);
int step_changes(DbStmt *s, int64_t *ret);
int step_id(DbStmt *s, int64_t *ret);
char *column_strdup(DbStmt *s, int i, int *r);
int64_t column_nullable_int(DbStmt *s, int i);
double column_nullable_double(DbStmt *s, int i);
int grow(void **items, size_t n, size_t *alloc, size_t size);

/* intern.c */
void caches_clear(SqlStorage *s);
int intern(SqlStorage *s, Hashmap *cache, Stmt select, Stmt insert, const char *a, const char *b, const char *c,
           int nargs, int64_t *ret);
/* The object, phase and task ids of a batch's rows from the caches alone,
 * outside the writer: ret[3 * i …] for row i. 1 with all of them and the
 * caches' generation they are of, 0 when one is not cached (the writer
 * interns the rows itself). */
int intern_lookup_rows(SqlStorage *s, const Batch *b, int64_t *ret, uint64_t *ret_generation);
/* The generation of the caches, for the writer. */
uint64_t caches_generation(SqlStorage *s);
/* The id of a function (functions, schema/0021) of an object: named
 * (offset -1), unnamed (name "", its file offset) or the other functions
 * (name "", offset -1); found or created. */
int intern_function(SqlStorage *s, int64_t object_id, const char *name, int64_t offset, bool entry, int64_t *ret);
/* The id of a node type (node_types), found by its name or created. */
int intern_node_type(SqlStorage *s, const BatchNodeType *t, int64_t *ret);
/* The id of a node's row, from the cache that its upserts fill. */
bool node_id_cached(SqlStorage *s, const char *node, int64_t *ret);
int node_id_remember(SqlStorage *s, const char *node, int64_t id);

/* job-list.c */
int read_job_info(DbStmt *st, StoredJob *j, int64_t *ret_id);

/* job-summary.c */
int read_marker_row(DbStmt *st, int col, Marker *m);
int read_rank_rows(Conn *c, Stmt id, int64_t job_id, RankFigures **v, size_t *n, bool *truncated);

/* job-functions.c: a job's functions (its packs, schema/0025), over its
 * phases or per_phase, at most limit (truncated when there were more). */
int read_job_functions(Conn *c, int64_t job_id, bool per_phase, size_t limit, FunctionList *ret);
/* Sums decoded from packs, named and in the order of the answers: over
 * phases those of phase 0, per_phase the others, with the phase's samples
 * in job job_id (-1: none, 0). */
int name_function_sums(Conn *c, const JobFunctionSums *sums, bool per_phase, int64_t job_id, size_t limit,
                       FunctionList *ret);

/* migrate-function-packs.c: fills job_function_packs (schema/0025) from
 * the tables it replaces, in the migration's transaction. */
int migrate_function_packs(Conn *c);

/* job-measured.c */
int read_node_type(DbStmt *st, int col, NodeTypeInfo *ret);
int read_job_node_type(Conn *c, int64_t job_id, NodeTypeInfo *ret);
int read_job_measured(Conn *c, int64_t job_id, JobMeasured *ret);

/* StorageOps, one file each (storage-sql.c has the table) */
int sql_ingest(Storage *base, const Batch *b, int64_t now, IngestResult *ret, BatchError *err);
int sql_list_jobs(Storage *base, const JobFilter *f, JobList *ret);
int sql_get_job(Storage *base, const char *job, const char *cluster, const JobViewer *viewer,
                JobSummary *ret);
int sql_get_job_functions(Storage *base, const char *job, const char *cluster, const JobViewer *viewer,
                          bool per_phase, unsigned limit, StoredJob *ret_info, FunctionList *ret);
int sql_get_profile(Storage *base, const JobFilter *f, bool per_phase, unsigned limit, SiteProfile *ret);
int sql_list_job_summaries(Storage *base, const JobFilter *f, JobWant want, void *userdata, JobSummaryList *ret);
int sql_list_objects(Storage *base, const ObjectFilter *f, ObjectList *ret);
int sql_list_packages(Storage *base, const PackageFilter *f, PackageList *ret);
int sql_list_site_functions(Storage *base, const FunctionFilter *f, SiteFunctionList *ret);
int sql_list_nodes(Storage *base, NodeList *ret);
int sql_get_run_figures(Storage *base, const int64_t *row_ids, size_t n, RunFigures *ret);
int sql_list_app_mix(Storage *base, const AppMixFilter *f, AppMixList *ret);
int sql_fold_function_sums(Storage *base, bool all, uint64_t *ret_folded);
int sql_prune(Storage *base, int64_t before, unsigned max_rows, PruneResult *ret);
int sql_prune_rollups(Storage *base, int64_t before, unsigned max_rows, PruneResult *ret);
int sql_prune_jobs(Storage *base, int64_t before, unsigned max_rows, PruneResult *ret);
int sql_partitions(Storage *base, int64_t now, int64_t raw_before, int64_t rollup_before, PartitionResult *ret);
/* function-names.c */
int sql_list_unnamed_builds(Storage *base, const char *after, size_t limit, char ***ret, size_t *ret_n);
int sql_list_unnamed_functions(Storage *base, const char *build_id, size_t limit, FunctionName **ret, size_t *ret_n);
int sql_put_function_names(Storage *base, const char *build_id, const FunctionName *names, size_t n);

/* tickets.c */
int sql_use_ticket(Storage *base, uint64_t nonce, int64_t expires, int64_t now);
