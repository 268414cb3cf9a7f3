/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "batch/batch-parse.h"
#include "db/options.h"
#include "macro.h"

/* The storage interface between lmk-store's HTTP side (ingest, queries) and a
 * database. Everything above this header is independent of the database.
 * The one implementation of StorageOps is the SQL code in store/db/sql/,
 * written against store/db/db.h; a database is a driver of db.h: SQLite
 * (store/db/sqlite/, the embedded default) or PostgreSQL (store/db/postgresql/).
 *
 * Threading: ingest() and the queries may be called from several threads at
 * once; a backend serialises writers itself and lets queries run in parallel
 * with them. Results are plain structs that the caller frees with the
 * matching *_free(). Counter fields use STORAGE_NULL for "unknown". */

#define STORAGE_NULL INT64_C(-1)

typedef struct Storage Storage;

typedef struct IngestResult {
        /* Nothing of the batch was stored when either is set: its key
         * (node, boot id, spool, seq) was stored before, with the same
         * content (a retry), or with other content. */
        bool duplicate;
        bool conflicting;
        uint64_t rows;
        /* Job claims of this batch whose metadata differed from the first
         * claim, which was kept; the first of them described for the log. */
        uint64_t metadata_conflicts;
        char conflict[256];
} IngestResult;

/* A line of a breakdown: an object, a phase, a kind or a node. */
typedef struct Share {
        char *name;
        char *kind;     /* objects only */
        char *build_id; /* objects only, NULL when unknown */
        int64_t samples;
        double cpu_seconds;
        int64_t cpu_time_ns, cycles, instructions;
        double first_seen, last_seen; /* nodes only */
        int64_t cpus_alloc;           /* nodes only: the job's CPUs there, STORAGE_NULL if unknown */
        char *installed;              /* nodes only: "purpose:family ..." installed there, or NULL */
        char *node_type;              /* nodes only: the node's type when the job ran there, or NULL */
        bool has_energy;              /* nodes only: the two below are known */
        double energy_joules;         /* nodes only: the job's energy there */
        double energy_alone_joules;   /* nodes only: of it, while the job was alone there */
        int64_t multiplexed_samples;  /* objects and phases: samples with scaled counter windows */
} Share;

typedef struct ShareList {
        Share *items;
        size_t n;
} ShareList;

/* What lmkd measures beyond samples (schema/0015, docs/api.md). Sums that
 * storage reads; rates and ratios are worked out above it
 * (store/analysis/measured.h). */

/* A node type as the store keeps it (node_types). Zero means "not
 * known" throughout, so that a struct nobody filled says nothing. */
typedef struct NodeTypeInfo {
        int64_t id;             /* 0: not known */
        char *name;             /* the store's key (store/analysis/measured.h, node_type_name()) */
        char *cpu_model;        /* NULL: not known */
        int64_t sockets, cores, threads, memory_gib; /* 0: not known */
        char *gpus;             /* "4 x NVIDIA GH100 [H100 SXM5 80GB]"; "" or NULL: none */
} NodeTypeInfo;

/* Which event filled a role on a job's nodes (job_counters). */
typedef struct JobCounter {
        char *role, *event;
        bool available;         /* counted on some node */
} JobCounter;

/* A named event's sums over rows that had it (job_events,
 * job_object_events, job_phase_events): count, those rows' samples and
 * CPU time (samples x period), and of those rows the ones with
 * instructions too: their instructions and their count of the event. */
typedef struct EventSum {
        char *name;             /* the object or phase; NULL for the job's own */
        char *role;
        int64_t count, samples, cpu_time_ns, instructions, count_with_instructions;
        int64_t exact_count;    /* the job's own only: lmkd's exact count, STORAGE_NULL if none */
} EventSum;

/* Burst windows at a code location (object and phase) for one role
 * (job_bursts): windows that counted it, their length, events in them. */
typedef struct BurstSum {
        char *object, *phase, *role;
        int64_t bursts, window_ns;
        double count;
} BurstSum;

/* The most burst rows and object or phase event rows a job summary reads. */
#define JOB_SUMMARY_MAX_BURSTS 2000
#define JOB_SUMMARY_MAX_EVENT_ROWS 8000

typedef struct JobMeasured {
        JobCounter *counters;   /* by role */
        size_t n_counters;
        EventSum *events;       /* the job's, by role */
        size_t n_events;
        EventSum *object_events; /* by object as JobSummary.objects, then role */
        size_t n_object_events;
        EventSum *phase_events; /* by phase, then role */
        size_t n_phase_events;
        bool event_rows_truncated; /* more than JOB_SUMMARY_MAX_EVENT_ROWS */
        BurstSum *bursts;       /* by object, phase, role */
        size_t n_bursts;
        bool bursts_truncated;  /* more than JOB_SUMMARY_MAX_BURSTS */
        NodeTypeInfo node_type; /* the type of all its nodes; id 0: not known or they differ */
} JobMeasured;

/* A function of a job (schema/0021): named by lmkd from its file's
 * symbols, unnamed (the first byte of a function in its object's file, or
 * a 4 KiB page of it; named since by the store where function_names has
 * it), or the other functions of its object, with its sums over the
 * whole job or in one phase. */
typedef struct FunctionShare {
        char *object, *kind;
        char *build_id;         /* NULL when unknown */
        char *name;             /* lmkd's name, or the store's of an unnamed one; NULL: none */
        int64_t offset;         /* an unnamed one's file offset; STORAGE_NULL: named by lmkd, or other */
        bool entry;             /* offset is a function's first byte, else a page's */
        bool other;             /* "(other functions)" */
        char *phase;            /* per phase only; else NULL */
        int64_t phase_samples;  /* per phase only: the phase's samples */
        int64_t samples;
        double cpu_seconds;
        int64_t cycles, instructions;
} FunctionShare;

/* An unnamed function of a build (its file offset, entry as in
 * FunctionShare) and the name a lookup found for it ("" none). */
typedef struct FunctionName {
        int64_t offset;
        bool entry;
        char *name;
} FunctionName;

typedef struct FunctionList {
        FunctionShare *items;
        size_t n;
        bool truncated;         /* there were more than asked for */
} FunctionList;

/* The functions of the jobs of a filter, summed (get_profile): of at most
 * JobFilter.limit jobs, the first of its order. */
typedef struct SiteProfile {
        FunctionList functions;
        uint64_t jobs;          /* the jobs summed */
        bool jobs_truncated;    /* more jobs matched */
} SiteProfile;

/* The most functions a job summary reads, over the job and per phase;
 * get_job_functions reads up to JOB_FUNCTIONS_MAX. */
#define JOB_SUMMARY_MAX_FUNCTIONS 1000
#define JOB_FUNCTIONS_MAX 100000

typedef struct StoredJob {
        char *job, *cluster, *user, *account, *partition, *name;
        char *app; /* the LMK_NOTES app= note, else the top executable's file name, else the top
                    * command when no executable had a sample; NULL if none */
        int64_t nodes_alloc, tasks; /* STORAGE_NULL when unknown */
        bool ended;
        double first_seen, last_seen; /* NAN when unknown */
        int64_t samples;
        double cpu_seconds;
        int64_t cpu_time_ns, cycles, instructions;
        uint64_t n_nodes;
        int64_t metadata_conflicts; /* later claims that differed from the kept one */
        int64_t row_id;   /* the store's own id of the job */
        int64_t revision; /* one more with each batch that changed the job */
        /* Zero or false means "not known" for these, so that a struct
         * nobody filled says nothing. */
        int64_t node_type_id;   /* its nodes' type; 0: not known, or node_types_differ */
        char *node_type;        /* that type's name, or NULL */
        bool node_types_differ; /* its nodes are of more than one type */
        bool has_energy;        /* energy_joules and energy_alone_joules are known */
        double energy_joules, energy_alone_joules;
        bool has_exact;         /* lmkd's exact figures: CPU time, counters unless STORAGE_NULL */
        int64_t exact_cpu_time_ns, exact_cycles, exact_instructions;
        /* what its user asked (sbatch --lmk, schema/0023): off, only CPU
         * time and samples kept; nocounters, no hardware counter read */
        bool opted_out, counters_released;
} StoredJob;

typedef struct JobList {
        StoredJob *items;
        size_t n;
        bool more; /* there are jobs beyond limit */
        /* With JobFilter.count: the jobs that match, counted up to
         * offset + limit + JOBS_COUNT_AHEAD; total_exact is false when
         * there are more than that (total is then a lower bound). */
        uint64_t total;
        bool total_exact;
} JobList;

/* How far past the page a job list counts the matching jobs: a hundred
 * pages of 100 ahead, so that counting costs about as much as paging
 * there, and never a walk over a million rows for a page of a hundred. */
#define JOBS_COUNT_AHEAD 10000

typedef struct KeyValue {
        char *key, *value;
} KeyValue;

typedef struct Marker {
        char *comm, *phase, *state;
        double first_seen, last_seen;
        int64_t batches;
} Marker;

/* A rank's stored figures in one phase, summed over the job's steps and
 * batches (docs/pop.md). */
typedef struct RankFigures {
        char *phase;            /* "" outside markers */
        int64_t rank;
        int64_t samples, comm_samples;
        double cpu_seconds, comm_seconds;
        double first_seen, last_seen;
} RankFigures;

/* The job's time line on one node: for each step of the summary's
 * timeline_step seconds from timeline_start, the seconds its batches
 * covered and the job's CPU seconds in them (both 0 where no batch fell). */
typedef struct TimelineNode {
        char *node;
        int64_t cpus_alloc; /* STORAGE_NULL when unknown */
        double *seconds, *cpu_seconds; /* n_timeline each */
} TimelineNode;

typedef struct JobSummary {
        StoredJob info;
        TimelineNode *timeline;
        size_t n_timeline_nodes, n_timeline;
        double timeline_start, timeline_step;
        bool timeline_truncated; /* more nodes than JOB_TIMELINE_MAX_NODES */
        RankFigures *ranks;     /* sorted by phase, then rank */
        size_t n_ranks;
        bool ranks_truncated;   /* more than JOB_SUMMARY_MAX_RANK_ROWS */
        ShareList kinds, objects, phases, nodes;
        bool objects_truncated;
        KeyValue *notes;
        size_t n_notes;
        Marker *markers;
        size_t n_markers;
        JobMeasured measured;   /* get_job only */
        /* get_job only: the most samples first, at most
         * JOB_SUMMARY_MAX_FUNCTIONS each */
        FunctionList functions, phase_functions;
} JobSummary;

/* JOB_STATE_ANY is 0: a filter that says nothing of the state keeps all. */
typedef enum JobState {
        JOB_STATE_ANY,
        JOB_STATE_RUNNING, /* not ended (yet) */
        JOB_STATE_ENDED,
        _JOB_STATE_MAX,
} JobState;

/* The orders a job list comes in, each from an index of its own and one
 * in every filter's index (schema/0006-job-app.sql): whatever the filter,
 * a page never sorts more than the jobs that match. Ties are broken by the
 * other two keys, then the job's row, in the same direction. */
typedef enum JobSort {
        JOB_SORT_LAST_SEEN,
        JOB_SORT_FIRST_SEEN,
        JOB_SORT_CPU_SECONDS,
        _JOB_SORT_MAX,
} JobSort;

int job_state_from_string(const char *s);
const char *job_sort_to_string(JobSort s);
int job_sort_from_string(const char *s);

/* Summaries of many jobs (list_job_summaries). Their objects', kinds' and
 * nodes' strings point into strings, which the list owns: free it whole
 * with job_summary_list_free, never an item with job_summary_free. */
typedef struct JobSummaryList {
        JobSummary *items; /* the jobs wanted, in the list's order */
        size_t n;
        size_t n_jobs;     /* the jobs of the page, wanted or not */
        bool more;         /* there are jobs beyond limit */
        char **strings;
        size_t n_strings;
} JobSummaryList;

/* Asked by list_job_summaries about each job of the page, by its row id
 * and revision (StoredJob): true to have its summary read. */
typedef bool (*JobWant)(int64_t row_id, int64_t revision, void *userdata);

/* Who asks for a job (store/auth/identity.h): user NULL sees every job (an
 * admin); else the user's own jobs and those of the accounts in accounts
 * (NULL-terminated, or NULL for none). */
typedef struct JobViewer {
        const char *user;
        char *const *accounts;
} JobViewer;

bool job_viewer_may_see(const JobViewer *v, const char *user, const char *account);

typedef struct JobFilter {
        /* Each NULL: any; else an exact match. */
        const char *user;
        const char *cluster;
        const char *account;
        const char *partition;
        const char *app;
        const char *name;
        const char *node_type;  /* a node type's name: jobs whose nodes are all of it */
        JobState state;
        int64_t since, until; /* jobs seen in [since, until]; INT64_MIN/MAX: open */
        JobSort sort;
        bool ascending;
        unsigned limit, offset;
        bool count; /* fill JobList.total and total_exact */
        /* Who asks (store/auth/identity.h): NULL sees every job; else only the
         * viewer's own jobs and those of the accounts in viewer_accounts
         * (NULL-terminated, or NULL for none). */
        const char *viewer;
        char *const *viewer_accounts;
} JobFilter;

/* The jobs of a cluster, partition and/or account (NULL: any): site-wide
 * sums narrowed to them come from the jobs' own sums (job_objects), each
 * job's prorated by the part of it inside the range. */
typedef struct JobScope {
        const char *cluster, *partition, *account;
} JobScope;

static inline bool job_scope_any(const JobScope *s) {
        return s->cluster || s->partition || s->account;
}

typedef struct ObjectFilter {
        int64_t since, until;
        int kind; /* CodeKind, or -1 for all */
        unsigned limit;
        JobScope scope;
} ObjectFilter;

typedef struct ObjectList {
        ShareList objects;
        int64_t total_samples; /* all samples in the range, every kind */
        double total_cpu_seconds;
        int64_t since, until;  /* the range actually covered: since rounded down to grain */
        int64_t grain;         /* seconds: 3600 (whole hours) or 86400 (whole days, for a week or more);
                                * 0: a scope's jobs, prorated to the range as given */
} ObjectList;

/* The site's functions over a range (schema/0024, GET /api/v1/functions):
 * from the sums by day and week, narrowed to the jobs of an application,
 * account, user, node type and/or object (each NULL: any), and to those
 * viewer may see (NULL or no user: every job). Of the functions want
 * keeps (NULL: all), the most samples first, limit are listed; their
 * users and applications are counted unless no_counts. each (NULL:
 * none) sees every function of the range, the most samples first, want
 * or not, listed or not: a caller's sums over them all, in the same read. */
typedef struct SiteFunction SiteFunction;
typedef struct FunctionFilter {
        int64_t since, until;
        const char *app, *account, *user, *node_type;
        const char *object;     /* the path of an executable or library */
        const JobViewer *viewer;
        size_t limit;
        bool no_counts;
        bool (*want)(const SiteFunction *f, void *userdata);
        void (*each)(const SiteFunction *f, void *userdata);
        void *userdata;
} FunctionFilter;

/* Time of the listed functions by user or by application. */
typedef struct FunctionUse {
        char *name;             /* "" when unknown */
        int64_t samples;
        double cpu_seconds;
        size_t index;           /* storage's own, while it sums */
} FunctionUse;

/* The applications of a function shown beside it, the most samples first. */
#define FUNCTION_TOP_APPS 3

/* A function's sums over the range; builds of one path are one function
 * where the function is named (its unnamed pages stay per build). */
struct SiteFunction {
        char *object, *kind;
        char *build_id;         /* an unnamed one's build, else NULL */
        char *name;             /* NULL: none (unnamed, or "(other functions)") */
        int64_t offset;         /* an unnamed one's file offset; STORAGE_NULL: named, or other */
        bool other;
        int64_t samples;
        double cpu_seconds;
        double cycles, instructions; /* NAN: no node counted them */
        int64_t jobs;           /* that first ran it in the range */
        int64_t users, apps;    /* distinct, in the range */
        /* name NULL: none; no cpu_seconds. Narrowed to some jobs
         * (FunctionFilter): by their samples of it in the range; over
         * every job: those that ran it in the range with the most samples
         * of it over all time, samples STORAGE_NULL. */
        FunctionUse top_apps[FUNCTION_TOP_APPS];
};

typedef struct SiteFunctionList {
        SiteFunction *items;    /* the most samples first, at most FunctionFilter.limit */
        size_t n;
        bool more;              /* there were more */
        /* of a ranking narrowed to some jobs, or to an object: the
         * functions' time by user and application, the most samples first */
        FunctionUse *users, *apps;
        size_t n_users, n_apps;
        int64_t total_samples;  /* all samples of the jobs in view, every kind */
        double total_cpu_seconds;
        int64_t since, until;   /* whole UTC days */
} SiteFunctionList;

typedef struct NodeInfo {
        char *name, *hostname, *cluster, *boot_id;
        int64_t cpus, last_seq, batches, samples, samples_lost;
        double first_seen, last_seen;
        int64_t last_push;
        NodeTypeInfo type;      /* id 0: its lmkd sent none */
        char *kernel;           /* NULL: not known */
        int64_t memory_bytes;   /* 0: not known */
} NodeInfo;

typedef struct NodeList {
        NodeInfo *items;
        size_t n;
} NodeList;

typedef struct StorageStats {
        uint64_t db_bytes;
} StorageStats;

/* The most (phase, rank) figures a job summary reads: POP metrics of a
 * job with more say so (pop.truncated) and rest on these. */
#define JOB_SUMMARY_MAX_RANK_ROWS 200000

/* A job's time line has at most this many steps (of whole seconds) and
 * nodes (the first by name). */
#define JOB_TIMELINE_MAX_STEPS 120
#define JOB_TIMELINE_MAX_NODES 64

/* The most objects a job summary lists (the rest are summed in the kinds). */
#define JOB_SUMMARY_MAX_OBJECTS 1000

/* Installed software and its use (docs/inventory.md): each package
 * installed on some node now, with the samples of its files in a range. */
typedef struct PackageFilter {
        int64_t since, until;
        bool unused;            /* only those without a sample in the range */
        JobScope scope;
} PackageFilter;

typedef struct PackageUse {
        char *manager, *name, *version, *arch, *prefix; /* arch, prefix "" when none */
        int64_t size;           /* bytes on disk */
        int64_t nodes;          /* nodes it is installed on */
        int64_t files;          /* of its files, those ever sampled */
        int64_t samples;        /* in the range */
        double cpu_seconds;
        int64_t last_seen;      /* the last hour any file had samples, -1: never */
} PackageUse;

typedef struct PackageList {
        PackageUse *items;
        size_t n;
        int64_t total_samples;  /* all samples in the range, for shares */
        int64_t since, until, grain;
} PackageList;

/* What scaling across runs (docs/scaling.md) needs of a job beyond its
 * StoredJob: its problem size, executable, node type and each rank's
 * figures summed over the job's steps and phases. */
typedef struct RunFigures {
        char *size;             /* its LMK_NOTES size= note, or NULL */
        char *exe;              /* the executable with the most samples, or NULL */
        int64_t node_cpus;      /* the most CPUs of its nodes; STORAGE_NULL: unknown */
        NodeTypeInfo node_type; /* its nodes' type (StoredJob.node_type_id's row) */
        int64_t cpus_alloc;     /* CPUs allocated to it on all its nodes; STORAGE_NULL: unknown */
        RankFigures *ranks;     /* per rank (phase ""), sorted by rank */
        size_t n_ranks;
        bool ranks_truncated;   /* more than JOB_SUMMARY_MAX_RANK_ROWS ranks */
} RunFigures;
/* The site's application mix (schema/0013): time per day and per key
 * (application, user, account, partition) over whole UTC days. */
typedef struct AppMixKey {
        char *app;              /* the app= note, the executable's file name or the command; "" when none */
        char *package;          /* the package that installed the executable; NULL: none known or a note */
        bool from_note;         /* the app= note named it */
        bool from_command;      /* no executable had samples: the top command (comm) named it */
        char *user, *account, *partition; /* "" when unknown */
} AppMixKey;

typedef struct AppMixDay {
        int64_t day;            /* the day's start, Unix seconds (UTC) */
        size_t key;             /* into AppMixList.keys */
        int64_t samples, runs;  /* runs: jobs first seen that day */
        double cpu_seconds;
} AppMixDay;

typedef enum AppMixBy {
        APP_MIX_BY_APP,
        APP_MIX_BY_USER,
        APP_MIX_BY_ACCOUNT,
        APP_MIX_BY_PARTITION,
        _APP_MIX_BY_MAX,
} AppMixBy;

/* Without user, account, partition and app, the answer comes from the
 * per-dimension sums and its keys carry only the `by` field. */
typedef struct AppMixFilter {
        int64_t since, until;
        AppMixBy by;
        const char *user, *account, *partition, *app; /* NULL: any */
} AppMixFilter;

typedef struct AppMixList {
        AppMixKey *keys;
        size_t n_keys;
        AppMixDay *days;
        size_t n_days;
        int64_t since, until;   /* whole days: since rounded down, until up */
} AppMixList;

/* What one retention step deleted (docs/lmk-store.md, "Retention"). */
typedef struct PruneResult {
        uint64_t batches;       /* receipts of stored batches */
        uint64_t sample_packs;  /* packs of raw rows (batch, job), schema/0017 */
        uint64_t samples;       /* raw rows from before packs (job, hour, node, object, phase, task) */
        uint64_t timeline;      /* per-batch time-line rows */
        uint64_t rollups;       /* site-wide rollup rows (prune_rollups) */
        uint64_t jobs;          /* jobs deleted (prune_jobs) */
        uint64_t job_rows;      /* rows of their summaries: objects, phases, nodes, time line, … */
        bool more;              /* older rows remain: call again */
} PruneResult;

static inline bool ingest_result_kept_nothing(const IngestResult *r) {
        return r->duplicate || r->conflicting;
}

/* PostgreSQL's time-partitioned tables (docs/postgresql.md). */
typedef enum PartitionedTable {
        PARTITIONED_BATCHES,
        PARTITIONED_SAMPLES,            /* raw rows from before sample_packs: no longer made ahead */
        PARTITIONED_TIMELINE,           /* job_timeline's grain-0 rows */
        PARTITIONED_OBJECT_HOURS,
        PARTITIONED_SAMPLE_PACKS,
        _PARTITIONED_TABLE_MAX,
} PartitionedTable;

const char *partitioned_table_to_string(PartitionedTable t);

/* What one pass over the partitions did, and what is there after it. */
typedef struct PartitionResult {
        uint64_t created, dropped;
        uint64_t dropped_rows;          /* rows the dropped partitions held */
        uint64_t moved_rows;            /* rows moved out of a default partition */
        uint64_t failures;              /* partitions not made or dropped (busy: next pass) */
        uint64_t partitions[_PARTITIONED_TABLE_MAX];    /* besides the default one */
        uint64_t default_rows[_PARTITIONED_TABLE_MAX];  /* rows in the default partition */
} PartitionResult;

typedef struct StorageOps {
        const char *name;
        /* Opens (creating if needed) the database named by location. */
        int (*open)(const char *location, const StorageOptions *opts, Storage **ret);
        /* Applies pending schema migrations in one transaction. -EPROTO when
         * the database is newer than this binary. */
        int (*migrate)(Storage *s, unsigned *ret_from, unsigned *ret_to);
        void (*close)(Storage *s);

        /* Stores a batch in one transaction, or nothing of it. A batch whose
         * key was stored before is a no-op with ret->duplicate set (the same
         * digest) or ret->conflicting (another). -EOVERFLOW
         * (err says which sum) when adding the batch would take a stored sum
         * past INT64_MAX or a derived value out of the finite range. */
        int (*ingest)(Storage *s, const Batch *b, int64_t now, IngestResult *ret, BatchError *err);

        int (*list_jobs)(Storage *s, const JobFilter *f, JobList *ret);
        /* Only the jobs viewer may see count (NULL: every job): -ENOENT
         * when there is no such job, -EACCES when there is but not one the
         * viewer may see (for the refusals' count: callers answer both
         * alike), -ENOTUNIQ when cluster is NULL and the viewer may see the
         * id on several clusters. */
        int (*get_job)(Storage *s, const char *job, const char *cluster, const JobViewer *viewer,
                       JobSummary *ret);
        /* A job's functions, the most samples first, at most limit (and
         * truncated when there were more): over its phases, or per_phase.
         * The job is found as by get_job, with its errors; ret_info is its
         * row. */
        int (*get_job_functions)(Storage *s, const char *job, const char *cluster, const JobViewer *viewer,
                                 bool per_phase, unsigned limit, StoredJob *ret_info, FunctionList *ret);
        /* The functions of the jobs f finds (its order, at most f->limit
         * of them; no offset, no count), summed over them, the most samples
         * first, at most limit: over their phases, or per_phase. */
        int (*get_profile)(Storage *s, const JobFilter *f, bool per_phase, unsigned limit, SiteProfile *ret);
        /* The summaries of a page of the job list (f as for list_jobs; no
         * count), for rules that judge many jobs at once (the findings):
         * each with its info, kinds, objects, nodes and markers as get_job
         * gives them, without phases, notes and ranks. A few reads for the
         * whole page, in one transaction, not a few per job. want (NULL:
         * all) chooses the jobs whose summaries are read. */
        int (*list_job_summaries)(Storage *s, const JobFilter *f, JobWant want, void *userdata,
                                  JobSummaryList *ret);
        int (*list_objects)(Storage *s, const ObjectFilter *f, ObjectList *ret);
        int (*list_nodes)(Storage *s, NodeList *ret);
        int (*list_packages)(Storage *s, const PackageFilter *f, PackageList *ret);
        /* The site's functions in a range, every one of them (the caller
         * ranks, groups and cuts). -ENOENT: f->node_type is not known. */
        int (*list_site_functions)(Storage *s, const FunctionFilter *f, SiteFunctionList *ret);
        /* The figures of n jobs by their row ids (StoredJob.row_id), into
         * ret[0 … n-1], in one read transaction; a job gone since is all
         * empty. */
        int (*get_run_figures)(Storage *s, const int64_t *row_ids, size_t n, RunFigures *ret);
        int (*list_app_mix)(Storage *s, const AppMixFilter *f, AppMixList *ret);
        /* The site's function sums (schema/0024) are added to in folds:
         * each batch's in its own transaction to a row of its own
         * (schema/0027), many such rows at once to the sums' rows later.
         * The queries and retention of those sums fold first; this folds
         * all that is left (at start, for rows a crash left, and at a
         * clean stop), or (!all) what this store's writers left when it is
         * due (a few hundred batches, or a couple of seconds: to be called
         * every second or so, for the batches of a store that went quiet).
         * *ret_folded (if not NULL): the batches' rows folded. */
        int (*fold_function_sums)(Storage *s, bool all, uint64_t *ret_folded);
        /* Retention: deletes at most about max_rows rows of raw detail from
         * before `before` in one short write transaction: the receipts of
         * batches received before it, and the sample rows and per-batch time
         * line of jobs last seen before it and of work outside jobs.
         * Summaries, rollups and time lines of coarser grains stay. */
        int (*prune)(Storage *s, int64_t before, unsigned max_rows, PruneResult *ret);
        /* Retention of the site-wide rollups (time per object by hour, day,
         * week and 28-day period; the application mix by day): deletes at
         * most about max_rows of their rows from before `before`, which is
         * the start of a 28-day period, so every grain covers the same time
         * afterwards. Per-job summaries stay. */
        int (*prune_rollups)(Storage *s, int64_t before, unsigned max_rows, PruneResult *ret);
        /* Retention of per-job summaries: deletes the jobs last seen before
         * `before`, oldest first, with every row that hangs off them (their
         * rollups, notes, markers, ranks, measured events, time line at
         * every grain and raw rows still there), at most about max_rows
         * rows in one short write transaction. A job leaves every answer at
         * once: its jobs row goes first, its other rows in this and later
         * steps. Site-wide rollups stay. */
        int (*prune_jobs)(Storage *s, int64_t before, unsigned max_rows, PruneResult *ret);
        /* Time partitions (PostgreSQL only, else NULL): makes those from
         * the day before now to a week ahead that are missing, drops the raw
         * ones wholly before raw_before and object_hours' wholly before
         * rollup_before (0: none), only those it made, and counts them. */
        int (*partitions)(Storage *s, int64_t now, int64_t raw_before, int64_t rollup_before,
                          PartitionResult *ret);
        int (*stats)(Storage *s, StorageStats *ret);
        /* A cheap read that fails when the database cannot serve queries. */
        int (*check)(Storage *s);
        /* A login ticket (store/auth/session.h) is being used at now: 0 the
         * first time, -EALREADY when it was before, through this store or
         * another on the database. Kept until it expires. */
        int (*use_ticket)(Storage *s, uint64_t nonce, int64_t expires, int64_t now);
        /* Names of unnamed functions found by build-id (schema/0022,
         * store/symbols/): up to limit build-ids with unnamed functions
         * that no lookup has named, in order, from the first after after
         * (NULL: from the first); the offsets of one
         * build's (name NULL), up to limit; and what a lookup found for
         * them (name "" for none), kept for good: a name once stored stays. */
        int (*list_unnamed_builds)(Storage *s, const char *after, size_t limit, char ***ret, size_t *ret_n);
        int (*list_unnamed_functions)(Storage *s, const char *build_id, size_t limit, FunctionName **ret,
                                      size_t *ret_n);
        int (*put_function_names)(Storage *s, const char *build_id, const FunctionName *names, size_t n);
} StorageOps;

/* The StorageOps of each driver differ only in the driver their open()
 * connects with: location is what the driver takes (a path for SQLite, a
 * URI or keyword string for PostgreSQL). storage_postgresql_ops exists
 * only when built with libpq (HAVE_LIBPQ). */
extern const StorageOps storage_sqlite_ops;
extern const StorageOps storage_postgresql_ops;

/* Picks the backend for a --db value (db_driver_for() in store/db/db.h):
 * "sqlite:PATH" or a plain path; "postgresql://…", "postgres://…" or a
 * libpq keyword string, -EPROTONOSUPPORT when built without libpq. */
int storage_ops_for(const char *db, const StorageOps **ret_ops, const char **ret_location);

struct Storage {
        const StorageOps *ops;
};

void share_list_free(ShareList *l);
/* store/analysis/measured.c */
void node_type_info_free(NodeTypeInfo *t);
void job_measured_free(JobMeasured *m);
void stored_job_free(StoredJob *j);
void job_list_free(JobList *l);
void job_summary_free(JobSummary *s);
void function_list_free(FunctionList *l);
void site_profile_free(SiteProfile *p);
void function_names_free(FunctionName *names, size_t n);
void strv_free_n(char **v, size_t n);
void job_summary_list_free(JobSummaryList *l);
void object_list_free(ObjectList *l);
void node_list_free(NodeList *l);
void package_list_free(PackageList *l);
void site_function_list_free(SiteFunctionList *l);
void run_figures_free(RunFigures *v, size_t n);
void app_mix_list_free(AppMixList *l);
