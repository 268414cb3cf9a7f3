/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The SQLite backend: one write connection behind a mutex (SQLite has one
 * writer at a time anyway) and a pool of read connections, so that queries
 * run while a batch is being stored (WAL). Statements are prepared once per
 * connection. The SQL text sticks to what PostgreSQL understands too
 * (ON CONFLICT ... DO UPDATE, RETURNING, CASE, coalesce, '?' placeholders);
 * what is SQLite-only is marked. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "db.h"
#include "hashmap.h"
#include "migrations.h"
#include "storage.h"

#define BUCKET_SECONDS 3600
#define DAY_SECONDS 86400
#define WEEK_SECONDS (7 * DAY_SECONDS) /* from the epoch, a Thursday */
#define PERIOD_SECONDS (4 * WEEK_SECONDS) /* object_periods: four weeks */
/* /api/v1/objects over at least this long reads whole days (object_days) */
#define OBJECT_DAYS_FROM (7 * DAY_SECONDS)
/* Interned ids of objects, phases and tasks are cached across batches; a
 * site has a few thousand distinct ones, the bound only guards against a
 * node that sends a new path with every row. */
#define ID_CACHE_MAX 200000

/* The sum of two nullable counters: NULL only when both are NULL. */
#define ADD_NULLABLE(t, c)                                                      \
        c " = CASE WHEN " t "." c " IS NULL THEN excluded." c                   \
        " WHEN excluded." c " IS NULL THEN " t "." c                            \
        " ELSE " t "." c " + excluded." c " END"
#define ADD_COUNTERS(t)                                                         \
        ADD_NULLABLE(t, "cpu_time_ns") ", " ADD_NULLABLE(t, "cycles") ", "      \
        ADD_NULLABLE(t, "instructions")
#define ADD(t, c) c " = " t "." c " + excluded." c
/* Every stored sum is guarded: the update happens only while adding what the
 * batch brings keeps it within int64 (both sides are ≥ 0; NULL counts as 0).
 * A refused update changes no row, which the writer takes as overflow and
 * rolls the batch back. Plain SQL, so PostgreSQL checks the same way. */
#define INT64_MAX_SQL "9223372036854775807"
#define FITS(t, c) "coalesce(" t "." c ", 0) <= " INT64_MAX_SQL " - coalesce(excluded." c ", 0)"
#define FITS_COUNTERS(t)                                                        \
        FITS(t, "samples") " AND " FITS(t, "cpu_time_ns") " AND "               \
        FITS(t, "cycles") " AND " FITS(t, "instructions")

/* The coarser grains of a job's time line, in seconds (schema/0009): each
 * holds at most JOB_TIMELINE_MAX_STEPS buckets for a job of up to 120
 * times its length. */
static const int64_t timeline_grains[] = { 300, 1800, 10800, 86400 };

typedef enum Stmt {
        /* writer */
        STMT_NODE_UPSERT,
        STMT_BATCH_INSERT,
        STMT_JOB_UPSERT,
        STMT_NOTE_UPSERT,
        STMT_OBJECT_SELECT,
        STMT_OBJECT_INSERT,
        STMT_PHASE_SELECT,
        STMT_PHASE_INSERT,
        STMT_TASK_SELECT,
        STMT_TASK_INSERT,
        STMT_SAMPLE_UPSERT,
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
        STMT_JOB_CURRENT,
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
        STMT_NOTE_SELECT,
        STMT_JOB_APP,
        STMT_JOB_MIX,
        STMT_MIX_KEY_INSERT,
        STMT_JOB_MIX_SET,
        STMT_JOB_DAYS,
        STMT_APP_DAY_UPSERT,
        STMT_APP_DAY_TAKE,
        STMT_APP_DAY_PRUNE,
        STMT_APP_DIM_UPSERT,
        STMT_APP_DIM_TAKE,
        STMT_APP_DIM_PRUNE,
        /* retention (schema/0014) */
        STMT_PRUNE_MARK_GET,
        STMT_PRUNE_MARK_SET,
        STMT_PRUNE_JOBS,
        STMT_PRUNE_JOB_TIMELINE,
        STMT_PRUNE_JOB_BUCKET,
        STMT_PRUNE_JOB_SAMPLES,
        STMT_PRUNE_IDLE_NEXT,
        STMT_PRUNE_IDLE,
        STMT_PRUNE_BATCH_GROUP,
        STMT_PRUNE_BATCH_SEQS,
        STMT_PRUNE_BATCHES,
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
        STMT_OBJECT_HOURS,
        STMT_OBJECT_DAYS,
        STMT_OBJECT_WEEKS,
        STMT_OBJECT_PERIODS,
        STMT_OBJECT_IDS_OF_KIND,
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
        _STMT_MAX,
} Stmt;

#define JOB_COLUMNS                                                             \
        "j.id, j.job, j.cluster, j.user_name, j.account, j.partition_name, "    \
        "j.name, j.nodes_alloc, j.tasks, j.ended, j.first_seen, j.last_seen, "  \
        "j.samples, j.cpu_seconds, j.cpu_time_ns, j.cycles, j.instructions, "   \
        "(SELECT count(*) FROM job_nodes n WHERE n.job_id = j.id), j.metadata_conflicts, j.app, j.revision"

/* The file name of a path: rtrim() strips the trailing characters that are
 * not '/', leaving the directories, which replace() removes (they cannot
 * occur again after the last '/'). schema/0006-job-app.sql spells the same. */
#define SQL_FILE_NAME(p) "nullif(replace(" p ", rtrim(" p ", replace(" p ", '/', '')), ''), '')"

/* A mix key's four single-dimension rows (schema/0013): k a mix_keys row,
 * x one of MIX_DIMS, day the day (?1, which PostgreSQL wants typed where
 * a column's type does not tell it). */
#define MIX_DIMS "(SELECT 0 AS dim UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3)"
#define MIX_DIM_COLUMNS(day)                                                                      \
        "x.dim, " day ", CASE x.dim WHEN 0 THEN k.app WHEN 1 THEN k.user_name WHEN 2 THEN k.account " \
        "ELSE k.partition_name END, CASE x.dim WHEN 0 THEN k.app_object ELSE 0 END"

/* The statements whose spelling differs between the dialects, written once
 * with the differing words as arguments: SQLite's two-argument max() and
 * min() are PostgreSQL's greatest() and least(), SQLite's "IS NOT" of two
 * values PostgreSQL's "IS DISTINCT FROM". */
#define SQL_NODE_INSTALLED(is_not) "UPDATE nodes SET installed = ?2 WHERE id = ?1 AND installed " is_not " ?2"
#define SQL_JOB_BATCH_UPSERT(max)                                                               \
        "INSERT INTO job_timeline (job_id, grain, node_id, t, seconds, samples, cpu_seconds) "  \
        "VALUES (?, 0, ?, ?, ?, ?, ?) "                                                         \
        "ON CONFLICT (job_id, grain, node_id, t) DO UPDATE SET "                                \
        "seconds = " max "(job_timeline.seconds, excluded.seconds), "                           \
        ADD("job_timeline", "samples") ", " ADD("job_timeline", "cpu_seconds") " "              \
        "WHERE " FITS("job_timeline", "samples")
/* The job's app: its app= note, else the file name of its top executable
 * (then app_object), else, when no executable of its had a sample (all
 * its time in libraries), the command with the most samples (app_object
 * -1). schema/0013. Written only when it changed, so its index is left
 * alone. */
#define SQL_JOB_APP(is_not)                                                                                     \
        "UPDATE jobs SET app = a.app, app_object = a.object FROM (SELECT b.app, "                               \
        "CASE WHEN b.note IS NOT NULL THEN NULL WHEN b.exe IS NOT NULL THEN b.exe "                             \
        "WHEN b.app IS NOT NULL THEN -1 END AS object FROM (SELECT n.note, e.id AS exe, "                       \
        "coalesce(n.note, e.name, (SELECT t.comm FROM samples s JOIN tasks t ON t.id = s.task_id "              \
        "WHERE s.job_id = ?1 GROUP BY t.comm ORDER BY sum(s.samples) DESC, t.comm LIMIT 1)) AS app "            \
        "FROM (SELECT (SELECT nullif(note_value, '') FROM job_notes "                                           \
        "WHERE job_id = ?1 AND note_key = 'app') AS note) n LEFT JOIN "                                         \
        "(SELECT o.id, " SQL_FILE_NAME("o.path") " AS name FROM job_objects jo "                                \
        "JOIN objects o ON o.id = jo.object_id "                                                                \
        "WHERE jo.job_id = ?1 AND o.kind = 'exe' ORDER BY jo.samples DESC, o.path LIMIT 1) e) b) AS a "         \
        "WHERE jobs.id = ?1 AND (jobs.app " is_not " a.app OR jobs.app_object " is_not " a.object)"
/* what was counted under a key that no longer holds */
#define SQL_APP_DAY_TAKE(max)                                                                                   \
        "UPDATE app_days SET samples = " max "(samples - ?3, 0), cpu_seconds = " max "(cpu_seconds - ?4, 0), "  \
        "runs = " max "(runs - ?5, 0) WHERE day = ?1 AND mix_key = ?2"
#define SQL_APP_DIM_UPSERT(day)                                                                         \
        "INSERT INTO app_dim_days (dim, day, value, app_object, samples, cpu_seconds, runs) "           \
        "SELECT " MIX_DIM_COLUMNS(day) ", ?3, ?4, ?5 FROM mix_keys k, " MIX_DIMS " x WHERE k.id = ?2 "  \
        "ON CONFLICT (dim, day, value, app_object) DO UPDATE SET "                                      \
        ADD("app_dim_days", "samples") ", " ADD("app_dim_days", "cpu_seconds") ", "                     \
        ADD("app_dim_days", "runs") " "                                                                 \
        "WHERE " FITS("app_dim_days", "samples") " AND " FITS("app_dim_days", "runs")
#define SQL_APP_DIM_TAKE(max, day)                                                                              \
        "UPDATE app_dim_days SET samples = " max "(samples - ?3, 0), cpu_seconds = " max "(cpu_seconds - ?4, 0), " \
        "runs = " max "(runs - ?5, 0) WHERE (dim, day, value, app_object) IN "                                  \
        "(SELECT " MIX_DIM_COLUMNS(day) " FROM mix_keys k, " MIX_DIMS " x WHERE k.id = ?2)"
#define SQL_APP_DIM_PRUNE(day)                                                                                  \
        "DELETE FROM app_dim_days WHERE samples = 0 AND runs = 0 AND (dim, day, value, app_object) IN "         \
        "(SELECT " MIX_DIM_COLUMNS(day) " FROM mix_keys k, " MIX_DIMS " x WHERE k.id = ?2)"
/* ?1 job, ?2 start, ?3 step, ?4 steps, ?5 nodes, ?6 grain: whole steps from
 * the start (k: SQLite's CAST truncates, PostgreSQL's rounds, hence its
 * trunc()), the first nodes by name */
#define SQL_JOB_TIMELINE(max, min, k)                                                                   \
        "SELECT n.name, jn.cpus_alloc, "                                                                \
        max "(" min "(" k ", ?4 - 1), 0) AS k, sum(t.seconds), sum(t.cpu_seconds) "                    \
        "FROM (SELECT node_id, cpus_alloc FROM job_nodes jn JOIN nodes n ON n.id = jn.node_id "         \
        "      WHERE jn.job_id = ?1 ORDER BY n.name LIMIT ?5) jn "                                      \
        "JOIN nodes n ON n.id = jn.node_id "                                                            \
        "JOIN job_timeline t ON t.job_id = ?1 AND t.grain = ?6 AND t.node_id = jn.node_id "             \
        "GROUP BY n.name, k ORDER BY n.name, k"
/* list_job_summaries: the jobs whose row ids ?1 lists (a JSON array), as w
 * with the id w.value and the array's order w.key */
#define SQL_SUMMARY_JOBS(ids, id) "SELECT " JOB_COLUMNS " FROM " ids " JOIN jobs j ON j.id = " id " ORDER BY w.key"
#define SQL_SUMMARY_OBJECTS(ids, id)                                                                    \
        "SELECT jo.job_id, jo.object_id, jo.samples, jo.cpu_seconds, jo.cpu_time_ns, jo.cycles, "       \
        "jo.instructions FROM " ids " JOIN job_objects jo ON jo.job_id = " id
#define SQL_SUMMARY_NODES(ids, id)                                                                      \
        "SELECT jn.job_id, jn.node_id, jn.samples, jn.first_seen, jn.last_seen, jn.cpu_seconds, "       \
        "jn.cpus_alloc FROM " ids " JOIN job_nodes jn ON jn.job_id = " id
#define SQL_SUMMARY_MARKERS(ids, id)                                                                    \
        "SELECT m.job_id, m.comm, m.phase, m.state, m.first_seen, m.last_seen, m.batches "              \
        "FROM " ids " JOIN job_markers m ON m.job_id = " id
#define SQLITE_IDS "json_each(?1) w"
#define SQLITE_ID "w.value"
#define POSTGRESQL_IDS "json_array_elements_text(CAST(?1 AS json)) WITH ORDINALITY AS w(value, key)"
#define POSTGRESQL_ID "CAST(w.value AS BIGINT)"
#define POSTGRESQL_DAY "CAST(?1 AS BIGINT)"

static const char *const stmt_sql[_STMT_MAX] = {
        [STMT_NODE_UPSERT] =
                "INSERT INTO nodes (name, hostname, cluster, cpus, boot_id, last_seq, first_seen, "
                "last_seen, last_push, batches, samples, samples_lost) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?) "
                "ON CONFLICT (name) DO UPDATE SET hostname = excluded.hostname, "
                "cluster = excluded.cluster, cpus = excluded.cpus, boot_id = excluded.boot_id, "
                "last_seq = excluded.last_seq, "
                "first_seen = CASE WHEN excluded.first_seen < nodes.first_seen "
                "THEN excluded.first_seen ELSE nodes.first_seen END, "
                "last_seen = CASE WHEN excluded.last_seen > nodes.last_seen "
                "THEN excluded.last_seen ELSE nodes.last_seen END, "
                "last_push = excluded.last_push, batches = nodes.batches + 1, "
                ADD("nodes", "samples") ", " ADD("nodes", "samples_lost") " "
                "WHERE " FITS("nodes", "samples") " AND " FITS("nodes", "samples_lost") " "
                "AND nodes.batches < " INT64_MAX_SQL " "
                "RETURNING id",
        [STMT_BATCH_INSERT] =
                "INSERT INTO batches (node_id, boot_id, seq, received_at, interval_start, "
                "interval_end, event, frequency_hz, samples_lost, n_rows, samples) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        [STMT_JOB_UPSERT] =
                "INSERT INTO jobs (job, cluster, user_name, account, partition_name, name, "
                "nodes_alloc, tasks, ended, first_seen, last_seen, samples, cpu_seconds, "
                "cpu_time_ns, cycles, instructions, metadata_conflicts) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (job, cluster) DO UPDATE SET "
                /* The first claim of each field stays (docs/lmk-store.md, "Trust"). */
                "user_name = coalesce(jobs.user_name, excluded.user_name), "
                "account = coalesce(jobs.account, excluded.account), "
                "partition_name = coalesce(jobs.partition_name, excluded.partition_name), "
                "name = coalesce(jobs.name, excluded.name), "
                "nodes_alloc = coalesce(jobs.nodes_alloc, excluded.nodes_alloc), "
                "tasks = coalesce(jobs.tasks, excluded.tasks), "
                "metadata_conflicts = jobs.metadata_conflicts + excluded.metadata_conflicts, "
                "revision = jobs.revision + 1, "
                "ended = CASE WHEN excluded.ended > jobs.ended THEN excluded.ended ELSE jobs.ended END, "
                "first_seen = CASE WHEN jobs.first_seen IS NULL OR excluded.first_seen < jobs.first_seen "
                "THEN excluded.first_seen ELSE jobs.first_seen END, "
                "last_seen = CASE WHEN jobs.last_seen IS NULL OR excluded.last_seen > jobs.last_seen "
                "THEN excluded.last_seen ELSE jobs.last_seen END, "
                ADD("jobs", "samples") ", " ADD("jobs", "cpu_seconds") ", " ADD_COUNTERS("jobs") " "
                "WHERE " FITS_COUNTERS("jobs") " "
                "RETURNING id",
        [STMT_NOTE_UPSERT] =
                "INSERT INTO job_notes (job_id, note_key, note_value) VALUES (?, ?, ?) "
                "ON CONFLICT (job_id, note_key) DO NOTHING",
        [STMT_OBJECT_SELECT] = "SELECT id FROM objects WHERE path = ? AND kind = ? AND build_id = ?",
        [STMT_OBJECT_INSERT] = "INSERT INTO objects (path, kind, build_id) VALUES (?, ?, ?) RETURNING id",
        [STMT_PHASE_SELECT] = "SELECT id FROM phases WHERE path = ?",
        [STMT_PHASE_INSERT] = "INSERT INTO phases (path) VALUES (?) RETURNING id",
        [STMT_TASK_SELECT] = "SELECT id FROM tasks WHERE step = ? AND user_name = ? AND comm = ?",
        [STMT_TASK_INSERT] = "INSERT INTO tasks (step, user_name, comm) VALUES (?, ?, ?) RETURNING id",
        [STMT_SAMPLE_UPSERT] =
                "INSERT INTO samples (job_id, bucket, node_id, object_id, phase_id, task_id, "
                "samples, cpu_seconds, cpu_time_ns, cycles, instructions) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (job_id, bucket, node_id, object_id, phase_id, task_id) DO UPDATE SET "
                ADD("samples", "samples") ", " ADD("samples", "cpu_seconds") ", " ADD_COUNTERS("samples") " "
                "WHERE " FITS_COUNTERS("samples"),
        [STMT_JOB_OBJECT_UPSERT] =
                "INSERT INTO job_objects (job_id, object_id, samples, cpu_seconds, cpu_time_ns, "
                "cycles, instructions) VALUES (?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (job_id, object_id) DO UPDATE SET "
                ADD("job_objects", "samples") ", " ADD("job_objects", "cpu_seconds") ", "
                ADD_COUNTERS("job_objects") " WHERE " FITS_COUNTERS("job_objects"),
        [STMT_JOB_PHASE_UPSERT] =
                "INSERT INTO job_phases (job_id, phase_id, samples, cpu_seconds, cpu_time_ns, "
                "cycles, instructions) VALUES (?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (job_id, phase_id) DO UPDATE SET "
                ADD("job_phases", "samples") ", " ADD("job_phases", "cpu_seconds") ", "
                ADD_COUNTERS("job_phases") " WHERE " FITS_COUNTERS("job_phases"),
        [STMT_JOB_NODE_UPSERT] =
                "INSERT INTO job_nodes (job_id, node_id, samples, first_seen, last_seen, cpu_seconds, cpus_alloc) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (job_id, node_id) DO UPDATE SET " ADD("job_nodes", "samples") ", "
                ADD("job_nodes", "cpu_seconds") ", "
                "cpus_alloc = CASE WHEN job_nodes.cpus_alloc IS NULL OR excluded.cpus_alloc > job_nodes.cpus_alloc "
                "THEN coalesce(excluded.cpus_alloc, job_nodes.cpus_alloc) ELSE job_nodes.cpus_alloc END, "
                "first_seen = CASE WHEN excluded.first_seen < job_nodes.first_seen "
                "THEN excluded.first_seen ELSE job_nodes.first_seen END, "
                "last_seen = CASE WHEN excluded.last_seen > job_nodes.last_seen "
                "THEN excluded.last_seen ELSE job_nodes.last_seen END "
                "WHERE " FITS("job_nodes", "samples"),
        /* a node's batches do not overlap; a retried batch is a duplicate
         * before it gets here, so a conflict is a restarted lmkd's interval
         * that began at the same instant: its figures add */
        [STMT_JOB_BATCH_UPSERT] = SQL_JOB_BATCH_UPSERT("max"),
        /* the same batch summed into each coarser grain's bucket */
        [STMT_JOB_GRAIN_UPSERT] =
                "INSERT INTO job_timeline (job_id, grain, node_id, t, seconds, samples, cpu_seconds) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (job_id, grain, node_id, t) DO UPDATE SET "
                ADD("job_timeline", "seconds") ", "
                ADD("job_timeline", "samples") ", " ADD("job_timeline", "cpu_seconds") " "
                "WHERE " FITS("job_timeline", "samples"),
        [STMT_OBJECT_HOUR_UPSERT] =
                "INSERT INTO object_hours (bucket, object_id, samples, cpu_seconds) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (bucket, object_id) DO UPDATE SET "
                ADD("object_hours", "samples") ", " ADD("object_hours", "cpu_seconds") " "
                "WHERE " FITS("object_hours", "samples"),
        [STMT_OBJECT_WEEK_UPSERT] =
                "INSERT INTO object_weeks (week, object_id, samples, cpu_seconds) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (week, object_id) DO UPDATE SET "
                ADD("object_weeks", "samples") ", " ADD("object_weeks", "cpu_seconds") " "
                "WHERE " FITS("object_weeks", "samples"),
        [STMT_OBJECT_PERIOD_UPSERT] =
                "INSERT INTO object_periods (period, object_id, samples, cpu_seconds) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (period, object_id) DO UPDATE SET "
                ADD("object_periods", "samples") ", " ADD("object_periods", "cpu_seconds") " "
                "WHERE " FITS("object_periods", "samples"),
        [STMT_OBJECT_DAY_UPSERT] =
                "INSERT INTO object_days (day, object_id, samples, cpu_seconds) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (day, object_id) DO UPDATE SET "
                ADD("object_days", "samples") ", " ADD("object_days", "cpu_seconds") " "
                "WHERE " FITS("object_days", "samples"),
        [STMT_MARKER_UPSERT] =
                "INSERT INTO job_markers (job_id, comm, phase, state, first_seen, last_seen, batches) "
                "VALUES (?, ?, ?, ?, ?, ?, 1) "
                "ON CONFLICT (job_id, comm, phase, state) DO UPDATE SET "
                "batches = job_markers.batches + 1, "
                "first_seen = CASE WHEN excluded.first_seen < job_markers.first_seen "
                "THEN excluded.first_seen ELSE job_markers.first_seen END, "
                "last_seen = CASE WHEN excluded.last_seen > job_markers.last_seen "
                "THEN excluded.last_seen ELSE job_markers.last_seen END",
        [STMT_RANK_UPSERT] =
                "INSERT INTO job_ranks (job_id, step, rank, phase_id, samples, comm_samples, cpu_seconds, "
                "comm_seconds, first_seen, last_seen) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (job_id, step, rank, phase_id) DO UPDATE SET "
                ADD("job_ranks", "samples") ", " ADD("job_ranks", "comm_samples") ", "
                ADD("job_ranks", "cpu_seconds") ", " ADD("job_ranks", "comm_seconds") ", "
                "first_seen = CASE WHEN excluded.first_seen < job_ranks.first_seen "
                "THEN excluded.first_seen ELSE job_ranks.first_seen END, "
                "last_seen = CASE WHEN excluded.last_seen > job_ranks.last_seen "
                "THEN excluded.last_seen ELSE job_ranks.last_seen END "
                "WHERE " FITS("job_ranks", "samples") " AND " FITS("job_ranks", "comm_samples"),
        [STMT_NODE_SUMS] = "SELECT samples, samples_lost, batches FROM nodes WHERE name = ?",
        [STMT_NODE_INSTALLED] = SQL_NODE_INSTALLED("IS NOT"),
        /* the software inventory (schema/0011) */
        [STMT_NODE_DIGEST] = "SELECT inventory_digest FROM nodes WHERE id = ?",
        [STMT_NODE_PACKAGES_CLEAR] = "DELETE FROM node_packages WHERE node_id = ?",
        [STMT_PACKAGE_INSERT] =
                "INSERT INTO packages (manager, name, version, arch, hash, prefix, size) VALUES (?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT DO NOTHING RETURNING id",
        [STMT_PACKAGE_SELECT] =
                "SELECT id FROM packages WHERE manager = ? AND name = ? AND version = ? AND arch = ? AND hash = ? "
                "AND prefix = ?",
        [STMT_PACKAGE_FILE_INSERT] = "INSERT INTO package_files (package_id, path) VALUES (?, ?) ON CONFLICT DO NOTHING",
        [STMT_NODE_PACKAGE_INSERT] =
                "INSERT INTO node_packages (node_id, package_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
        [STMT_NODE_INVENTORY_SET] = "UPDATE nodes SET inventory_digest = ?, inventory_at = ? WHERE id = ?",
        [STMT_OBJECT_LAST_SEEN] =
                "UPDATE objects SET last_seen = ?2 WHERE id = ?1 AND (last_seen IS NULL OR last_seen < ?2)",
        [STMT_JOB_CURRENT] =
                "SELECT id, user_name, account, partition_name, name, nodes_alloc, tasks, samples, "
                "cpu_seconds, cpu_time_ns, cycles, instructions FROM jobs WHERE job = ? AND cluster = ?",
        [STMT_JOB_NAMED_CLUSTER] = "SELECT cluster FROM jobs WHERE job = ? AND cluster <> '' LIMIT 2",
        [STMT_JOB_ADOPT] =
                "UPDATE jobs SET cluster = ?2 WHERE job = ?1 AND cluster = '' "
                "AND NOT EXISTS (SELECT 1 FROM jobs WHERE job = ?1 AND cluster = ?2)",
        [STMT_NOTE_SELECT] = "SELECT note_value FROM job_notes WHERE job_id = ? AND note_key = ?",
        [STMT_JOB_APP] = SQL_JOB_APP("IS NOT"),
        /* the application mix (schema/0013): the key a job's time is
         * counted under, and the key its columns name now */
        [STMT_JOB_MIX] =
                "SELECT j.mix_key, j.mix_day, k.id FROM jobs j LEFT JOIN mix_keys k "
                "ON k.app = coalesce(j.app, '') AND k.app_object = coalesce(j.app_object, 0) "
                "AND k.user_name = coalesce(j.user_name, '') AND k.account = coalesce(j.account, '') "
                "AND k.partition_name = coalesce(j.partition_name, '') WHERE j.id = ?",
        [STMT_MIX_KEY_INSERT] =
                "INSERT INTO mix_keys (app, app_object, user_name, account, partition_name) "
                "SELECT coalesce(app, ''), coalesce(app_object, 0), coalesce(user_name, ''), coalesce(account, ''), "
                "coalesce(partition_name, '') FROM jobs WHERE id = ? RETURNING id",
        [STMT_JOB_MIX_SET] = "UPDATE jobs SET mix_key = ?2, mix_day = ?3 WHERE id = ?1",
        [STMT_JOB_DAYS] =
                "SELECT CAST(t AS BIGINT), sum(samples), sum(cpu_seconds) FROM job_timeline "
                "WHERE job_id = ? AND grain = 86400 GROUP BY t",
        [STMT_APP_DAY_UPSERT] =
                "INSERT INTO app_days (day, mix_key, samples, cpu_seconds, runs) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (day, mix_key) DO UPDATE SET "
                ADD("app_days", "samples") ", " ADD("app_days", "cpu_seconds") ", " ADD("app_days", "runs") " "
                "WHERE " FITS("app_days", "samples") " AND " FITS("app_days", "runs"),
        [STMT_APP_DAY_TAKE] = SQL_APP_DAY_TAKE("max"),
        [STMT_APP_DAY_PRUNE] = "DELETE FROM app_days WHERE day = ? AND mix_key = ? AND samples = 0 AND runs = 0",
        /* the same per dimension (schema/0013): ?1 day, ?2 key, ?3 samples,
         * ?4 CPU seconds, ?5 runs, into the key's four rows */
        [STMT_APP_DIM_UPSERT] = SQL_APP_DIM_UPSERT("?1"),
        [STMT_APP_DIM_TAKE] = SQL_APP_DIM_TAKE("max", "?1"),
        [STMT_APP_DIM_PRUNE] = SQL_APP_DIM_PRUNE("?1"),
        /* retention: raw detail older than the horizon, in small steps */
        [STMT_PRUNE_MARK_GET] =
                "SELECT (SELECT value FROM retention WHERE name = 'prune_jobs_seen'), "
                "(SELECT value FROM retention WHERE name = 'prune_jobs_id')",
        [STMT_PRUNE_MARK_SET] =
                "UPDATE retention SET value = CASE name WHEN 'prune_jobs_seen' THEN ?1 ELSE ?2 END "
                "WHERE name IN ('prune_jobs_seen', 'prune_jobs_id')",
        /* after the mark in the order of (last_seen, id): the index gives
         * last_seen's order, ties are sorted among themselves */
        [STMT_PRUNE_JOBS] =
                "SELECT id, last_seen FROM jobs WHERE last_seen >= ?1 AND last_seen < ?3 "
                "AND (last_seen > ?1 OR id > ?2) ORDER BY last_seen, id LIMIT ?4",
        [STMT_PRUNE_JOB_TIMELINE] = "DELETE FROM job_timeline WHERE job_id = ? AND grain = 0",
        [STMT_PRUNE_JOB_BUCKET] = "SELECT min(bucket) FROM samples WHERE job_id = ?",
        [STMT_PRUNE_JOB_SAMPLES] = "DELETE FROM samples WHERE job_id = ? AND bucket = ?",
        [STMT_PRUNE_IDLE_NEXT] =
                "SELECT bucket, node_id FROM samples WHERE job_id = 0 AND bucket < ? ORDER BY bucket, node_id LIMIT 1",
        [STMT_PRUNE_IDLE] = "DELETE FROM samples WHERE job_id = 0 AND bucket = ? AND node_id = ?",
        [STMT_PRUNE_BATCH_GROUP] =
                "SELECT node_id, boot_id FROM batches WHERE (node_id, boot_id) > (?, ?) ORDER BY node_id, boot_id LIMIT 1",
        [STMT_PRUNE_BATCH_SEQS] =
                "SELECT seq, received_at FROM batches WHERE node_id = ? AND boot_id = ? ORDER BY seq LIMIT ?",
        [STMT_PRUNE_BATCHES] = "DELETE FROM batches WHERE node_id = ? AND boot_id = ? AND seq <= ?",

        [STMT_JOB_FIND] = "SELECT " JOB_COLUMNS " FROM jobs j WHERE j.job = ? LIMIT 2",
        [STMT_JOB_FIND_CLUSTER] = "SELECT " JOB_COLUMNS " FROM jobs j WHERE j.job = ? AND j.cluster = ?",
        [STMT_JOB_KINDS] =
                "SELECT o.kind, sum(jo.samples), sum(jo.cpu_seconds), sum(jo.cpu_time_ns), "
                "sum(jo.cycles), sum(jo.instructions) "
                "FROM job_objects jo JOIN objects o ON o.id = jo.object_id WHERE jo.job_id = ? "
                "GROUP BY o.kind ORDER BY 2 DESC, 1",
        [STMT_JOB_OBJECTS] =
                "SELECT o.path, o.kind, o.build_id, jo.samples, jo.cpu_seconds, jo.cpu_time_ns, "
                "jo.cycles, jo.instructions "
                "FROM job_objects jo JOIN objects o ON o.id = jo.object_id WHERE jo.job_id = ? "
                "ORDER BY jo.samples DESC, o.path LIMIT ?",
        [STMT_JOB_PHASES] =
                "SELECT p.path, jp.samples, jp.cpu_seconds, jp.cpu_time_ns, jp.cycles, jp.instructions "
                "FROM job_phases jp JOIN phases p ON p.id = jp.phase_id WHERE jp.job_id = ? "
                "ORDER BY jp.samples DESC, p.path",
        [STMT_JOB_NODES] =
                "SELECT n.name, jn.samples, jn.first_seen, jn.last_seen, jn.cpu_seconds, jn.cpus_alloc, n.installed "
                "FROM job_nodes jn JOIN nodes n ON n.id = jn.node_id WHERE jn.job_id = ? "
                "ORDER BY n.name",
        [STMT_JOB_NOTES] =
                "SELECT note_key, note_value FROM job_notes WHERE job_id = ? ORDER BY note_key",
        [STMT_JOB_MARKERS] =
                "SELECT comm, phase, state, first_seen, last_seen, batches FROM job_markers "
                "WHERE job_id = ? ORDER BY phase, comm, state",
        /* a rank's steps are summed: see docs/pop.md */
        [STMT_JOB_RANKS] =
                "SELECT p.path, r.rank, sum(r.samples), sum(r.comm_samples), sum(r.cpu_seconds), "
                "sum(r.comm_seconds), min(r.first_seen), max(r.last_seen) "
                "FROM job_ranks r JOIN phases p ON p.id = r.phase_id WHERE r.job_id = ? "
                "GROUP BY p.path, r.rank ORDER BY p.path, r.rank LIMIT ?",
        /* the job's span from its nodes (a few rows, not its time line), and
         * the length of its batches from a few of them */
        [STMT_JOB_SPAN] =
                "SELECT min(first_seen), max(last_seen), "
                "(SELECT avg(seconds) FROM (SELECT seconds FROM job_timeline WHERE job_id = ?1 AND grain = 0 "
                "LIMIT 16) AS b), CASE WHEN EXISTS (SELECT 1 FROM job_timeline WHERE job_id = ?1 AND grain = 300) "
                "THEN 1 ELSE 0 END "
                "FROM job_nodes WHERE job_id = ?1",
        [STMT_JOB_TIMELINE] = SQL_JOB_TIMELINE("max", "min", "CAST((t.t - ?2) / ?3 AS INTEGER)"),
        /* summed by list_objects, see there */
        [STMT_OBJECT_HOURS] =
                "SELECT object_id, samples, cpu_seconds FROM object_hours WHERE bucket >= ? AND bucket < ?",
        [STMT_OBJECT_DAYS] =
                "SELECT object_id, samples, cpu_seconds FROM object_days WHERE day >= ? AND day < ?",
        [STMT_OBJECT_IDS_OF_KIND] = "SELECT id FROM objects WHERE kind = ?",
        /* packages installed on a node now, and on how many */
        [STMT_PACKAGES_INSTALLED] =
                "SELECT p.id, p.manager, p.name, p.version, p.arch, p.prefix, p.size, count(*) "
                "FROM node_packages np JOIN packages p ON p.id = np.package_id GROUP BY p.id",
        /* the sampled objects each of those packages holds */
        [STMT_PACKAGE_OBJECTS] =
                "SELECT pf.package_id, o.id, o.last_seen FROM package_files pf JOIN objects o ON o.path = pf.path "
                "WHERE pf.package_id IN (SELECT package_id FROM node_packages)",
        [STMT_OBJECT_WEEKS] =
                "SELECT object_id, samples, cpu_seconds FROM object_weeks WHERE week >= ? AND week < ?",
        [STMT_OBJECT_PERIODS] =
                "SELECT object_id, samples, cpu_seconds FROM object_periods WHERE period >= ? AND period < ?",
        [STMT_OBJECT_NAME] = "SELECT path, kind, build_id FROM objects WHERE id = ?",
        [STMT_NODE_NAME] = "SELECT name, installed FROM nodes WHERE id = ?",
        [STMT_SUMMARY_JOBS] = SQL_SUMMARY_JOBS(SQLITE_IDS, SQLITE_ID),
        [STMT_SUMMARY_OBJECTS] = SQL_SUMMARY_OBJECTS(SQLITE_IDS, SQLITE_ID),
        [STMT_SUMMARY_NODES] = SQL_SUMMARY_NODES(SQLITE_IDS, SQLITE_ID),
        [STMT_SUMMARY_MARKERS] = SQL_SUMMARY_MARKERS(SQLITE_IDS, SQLITE_ID),
        [STMT_NODES] =
                "SELECT name, hostname, cluster, boot_id, cpus, last_seq, batches, samples, "
                "samples_lost, first_seen, last_seen, last_push FROM nodes ORDER BY name",
        /* scaling across runs: a job's size note, top executable, node
         * type (the most CPUs of its nodes) and allocated CPUs */
        [STMT_RUN_INFO] =
                "SELECT (SELECT note_value FROM job_notes WHERE job_id = ?1 AND note_key = 'size'), "
                "(SELECT o.path FROM job_objects jo JOIN objects o ON o.id = jo.object_id "
                " WHERE jo.job_id = ?1 AND o.kind = 'exe' ORDER BY jo.samples DESC, o.path LIMIT 1), "
                "(SELECT max(n.cpus) FROM job_nodes jn JOIN nodes n ON n.id = jn.node_id WHERE jn.job_id = ?1), "
                "(SELECT sum(cpus_alloc) FROM job_nodes WHERE job_id = ?1)",
        /* each rank's steps and phases summed (docs/pop.md) */
        [STMT_RUN_RANKS] =
                "SELECT '', rank, sum(samples), sum(comm_samples), sum(cpu_seconds), sum(comm_seconds), "
                "min(first_seen), max(last_seen) FROM job_ranks WHERE job_id = ? GROUP BY rank ORDER BY rank LIMIT ?",
        [STMT_APP_DAYS] = "SELECT day, mix_key, samples, cpu_seconds, runs FROM app_days WHERE day >= ? AND day < ?",
        [STMT_APP_DIM_DAYS] =
                "SELECT day, value, app_object, samples, cpu_seconds, runs FROM app_dim_days "
                "WHERE dim = ? AND day >= ? AND day < ?",
        [STMT_OBJECT_PACKAGE] =
                "SELECT p.name FROM objects o JOIN package_files f ON f.path = o.path "
                "JOIN packages p ON p.id = f.package_id WHERE o.id = ? ORDER BY p.name LIMIT 1",
        /* a key, with the package that installed its executable (the first
         * by name when several list the path) */
        [STMT_MIX_KEY] =
                "SELECT k.app, k.app_object, k.user_name, k.account, k.partition_name FROM mix_keys k WHERE k.id = ?",
        [STMT_CHECK] = "SELECT count(*) FROM schema_version",
};

/* What PostgreSQL spells differently; NULL: as stmt_sql[]. */
static const char *const stmt_sql_postgresql[_STMT_MAX] = {
        [STMT_NODE_INSTALLED] = SQL_NODE_INSTALLED("IS DISTINCT FROM"),
        [STMT_JOB_BATCH_UPSERT] = SQL_JOB_BATCH_UPSERT("greatest"),
        [STMT_JOB_APP] = SQL_JOB_APP("IS DISTINCT FROM"),
        [STMT_APP_DAY_TAKE] = SQL_APP_DAY_TAKE("greatest"),
        [STMT_APP_DIM_UPSERT] = SQL_APP_DIM_UPSERT(POSTGRESQL_DAY),
        [STMT_APP_DIM_TAKE] = SQL_APP_DIM_TAKE("greatest", POSTGRESQL_DAY),
        [STMT_APP_DIM_PRUNE] = SQL_APP_DIM_PRUNE(POSTGRESQL_DAY),
        [STMT_JOB_TIMELINE] = SQL_JOB_TIMELINE("greatest", "least", "CAST(trunc((t.t - ?2) / ?3) AS BIGINT)"),
        [STMT_SUMMARY_JOBS] = SQL_SUMMARY_JOBS(POSTGRESQL_IDS, POSTGRESQL_ID),
        [STMT_SUMMARY_OBJECTS] = SQL_SUMMARY_OBJECTS(POSTGRESQL_IDS, POSTGRESQL_ID),
        [STMT_SUMMARY_NODES] = SQL_SUMMARY_NODES(POSTGRESQL_IDS, POSTGRESQL_ID),
        [STMT_SUMMARY_MARKERS] = SQL_SUMMARY_MARKERS(POSTGRESQL_IDS, POSTGRESQL_ID),
};

static const char *stmt_text(DbDialect dialect, Stmt id) {
        if (dialect == DB_DIALECT_POSTGRESQL && stmt_sql_postgresql[id])
                return stmt_sql_postgresql[id];
        return stmt_sql[id];
}

/* What else differs between the dialects. */
typedef struct SqlDialect {
        /* Starts a read transaction that sees one snapshot throughout, so
         * that the parts of a summary add up (PostgreSQL's default, READ
         * COMMITTED, takes a snapshot per statement). */
        const char *read_begin;
        /* Taken after db_begin_write() before migrating (NULL: that
         * already locks, SQLite's BEGIN IMMEDIATE). */
        const char *migrate_lock;
        const char *schema_version_table;
        const SchemaMigration *migrations;
        const unsigned *n_migrations;
} SqlDialect;

#define SCHEMA_VERSION_TABLE(integer)                                                                   \
        "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "  \
        "applied_at " integer " NOT NULL)"

static const SqlDialect sql_dialects[] = {
        [DB_DIALECT_SQLITE] = {
                .read_begin = "BEGIN",
                .schema_version_table = SCHEMA_VERSION_TABLE("INTEGER"),
                .migrations = schema_migrations,
                .n_migrations = &schema_migrations_count,
        },
#if HAVE_LIBPQ
        [DB_DIALECT_POSTGRESQL] = {
                .read_begin = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
                /* any fixed number; "lmk-migr" in ASCII */
                .migrate_lock = "SELECT pg_advisory_xact_lock(7813018771411003250)",
                .schema_version_table = SCHEMA_VERSION_TABLE("BIGINT"),
                .migrations = schema_postgresql_migrations,
                .n_migrations = &schema_postgresql_migrations_count,
        },
#endif
};

static const SqlDialect *sql_dialect(DbDialect d) {
        return &sql_dialects[d];
}

typedef struct Pending Pending;

typedef struct Conn {
        DbConn *db;
        DbStmt *stmts[_STMT_MAX];
        bool busy; /* readers: handed out */
} Conn;

typedef struct SqlStorage {
        Storage base;
        const DbDriver *driver;
        char *location;
        StorageOptions opts;

        pthread_mutex_t write_lock;
        Conn writer;
        pthread_mutex_t queue_lock;
        pthread_cond_t queue_cond;
        Pending *queue_head, *queue_tail;
        bool writing;
        Hashmap *object_ids, *phase_ids, *task_ids;
        /* retention's walk over the batches' (node, boot) groups */
        int64_t prune_node;
        char prune_boot[64];

        pthread_mutex_t readers_lock;
        pthread_cond_t readers_cond;
        Conn *readers;
        unsigned n_readers;
} SqlStorage;

/* What a loop over db_step() ended with: an error, else 0. */
static int step_errno(int rc) {
        return rc < 0 ? rc : 0;
}

static int conn_exec(Conn *c, const char *sql) {
        return db_exec(c->db, sql);
}

/* A read transaction: one snapshot for all its statements. */
static int conn_begin_read(Conn *c) {
        return conn_exec(c, sql_dialect(c->db->driver->dialect)->read_begin);
}

/* Hands out statement id of connection c, prepared on first use, reset and
 * with no bindings. */
static int conn_stmt(Conn *c, Stmt id, DbStmt **ret) {
        if (!c->stmts[id]) {
                int r = db_prepare(c->db, stmt_text(c->db->driver->dialect, id), true, &c->stmts[id]);

                if (r < 0)
                        return r;
        } else
                db_reset(c->stmts[id]);
        *ret = c->stmts[id];
        return 0;
}

static void conn_close(Conn *c) {
        for (size_t i = 0; i < _STMT_MAX; i++)
                db_finalize(c->stmts[i]);
        if (c->db)
                c->db->driver->disconnect(c->db);
        *c = (Conn) {};
}

static int conn_open(Conn *c, const DbDriver *driver, const char *location, const StorageOptions *opts,
                     bool writer) {
        return driver->connect(location, opts, writer, &c->db);
}

static int bind_text(DbStmt *s, int i, const char *v) {
        return v ? db_bind_text(s, i, v) : db_bind_null(s, i);
}

static int bind_int(DbStmt *s, int i, int64_t v) {
        return db_bind_int(s, i, v);
}

static int bind_nullable_int(DbStmt *s, int i, int64_t v) {
        return v == STORAGE_NULL ? db_bind_null(s, i) : db_bind_int(s, i, v);
}

static int bind_double(DbStmt *s, int i, double v) {
        return isnan(v) ? db_bind_null(s, i) : db_bind_double(s, i, v);
}

/* A derived sum (CPU seconds): an Inf or NaN stored once would make every
 * sum it joins null, so it is refused here whatever let it through. */
static int bind_sum(DbStmt *s, int i, double v) {
        if (!isfinite(v))
                return -EOVERFLOW;
        return db_bind_double(s, i, v);
}

/* Runs a statement whose rows are not needed and whose count of changed
 * rows is: stepped to the end, which a pipelining driver must wait for. */
static int step_changes(DbStmt *s, int64_t *ret) {
        int r;

        while ((r = db_step(s)) > 0)
                ;
        if (r < 0)
                return r;
        *ret = db_changes(s);
        return 0;
}

/* Steps a statement that returns one integer (an id). -ENOENT for no row. */
static int step_id(DbStmt *s, int64_t *ret) {
        int r = db_step(s);

        if (r == 0)
                return -ENOENT;
        if (r < 0)
                return r;
        *ret = db_column_int(s, 0);
        db_reset(s);
        return 0;
}

static char *column_strdup(DbStmt *s, int i, int *r) {
        const char *t = db_column_text(s, i);
        char *p;

        if (!t)
                return NULL;
        p = strdup(t);
        if (!p)
                *r = -ENOMEM;
        return p;
}

static int64_t column_nullable_int(DbStmt *s, int i) {
        return db_column_null(s, i) ? STORAGE_NULL : db_column_int(s, i);
}

static double column_nullable_double(DbStmt *s, int i) {
        return db_column_null(s, i) ? NAN : db_column_double(s, i);
}

/* ---- caches of interned ids (writer only) ---- */

static void id_cache_clear(Hashmap *h) {
        const void *key;
        size_t i = 0;

        while (hashmap_iterate(h, &i, NULL, &key))
                free((void *) key);
        hashmap_clear(h);
}

static void caches_clear(SqlStorage *s) {
        id_cache_clear(s->object_ids);
        id_cache_clear(s->phase_ids);
        id_cache_clear(s->task_ids);
}

/* Cache keys of several strings: each string prefixed by its length, so that
 * no choice of separator can make two different tuples collide. */
static char *make_key(char *buf, size_t size, const char *a, const char *b, const char *c) {
        int n = snprintf(buf, size, "%zu:%s%zu:%s%zu:%s", strlen(a), a, strlen(b), b, strlen(c), c);

        return n >= 0 && (size_t) n < size ? buf : NULL;
}

static int id_cache_put(Hashmap *h, const char *key, int64_t id) {
        char *k;
        int r;

        if (hashmap_size(h) >= ID_CACHE_MAX)
                id_cache_clear(h);
        k = strdup(key);
        if (!k)
                return -ENOMEM;
        r = hashmap_put(h, k, (void *) (uintptr_t) id);
        if (r < 0)
                free(k);
        return r;
}

/* Finds or creates a dimension row (object, phase, task) by its strings. */
static int intern(SqlStorage *s, Hashmap *cache, Stmt select, Stmt insert,
                  const char *a, const char *b, const char *c, int nargs, int64_t *ret) {
        char buf[6144];
        const char *key = make_key(buf, sizeof(buf), a, b ?: "", c ?: "");
        const char *args[3] = { a, b, c };
        DbStmt *st;
        void *v;
        int r;

        if (key && hashmap_get2(cache, key, &v, NULL)) {
                *ret = (int64_t) (uintptr_t) v;
                return 0;
        }
        for (int pass = 0; pass < 2; pass++) {
                r = conn_stmt(&s->writer, pass == 0 ? select : insert, &st);
                if (r < 0)
                        return r;
                for (int i = 0; i < nargs; i++)
                        if ((r = bind_text(st, i + 1, args[i])) < 0)
                                return r;
                r = step_id(st, ret);
                if (r != -ENOENT)
                        break;
        }
        if (r < 0)
                return r;
        return key ? id_cache_put(cache, key, *ret) : 0;
}

/* ---- ingest ---- */

/* Sums for one rollup key, accumulated in memory over a batch so that each
 * rollup row is written once per batch, not once per input row. */
typedef struct Acc {
        int64_t a, b; /* the key: (job, object), (job, phase), (object, 0) */
        int64_t samples;
        double cpu_seconds;
        int64_t cpu_time_ns, cycles, instructions;
} Acc;

static uint64_t acc_hash(const void *k) {
        const Acc *x = k;

        return hash_u64((uint64_t) x->a * UINT64_C(0x9e3779b97f4a7c15) ^ (uint64_t) x->b);
}

static bool acc_equal(const void *p, const void *q) {
        const Acc *x = p, *y = q;

        return x->a == y->a && x->b == y->b;
}

static const HashOps acc_hash_ops = { acc_hash, acc_equal };

typedef struct AccMap {
        Hashmap *map;
        Acc *pool;
        size_t n, max;
} AccMap;

static void acc_map_done(AccMap *m) {
        hashmap_free(m->map);
        free(m->pool);
}

static int acc_map_init(AccMap *m, size_t max) {
        *m = (AccMap) { .max = MAX(max, (size_t) 1) };
        m->map = hashmap_new(&acc_hash_ops);
        m->pool = calloc(m->max, sizeof(Acc));
        return m->map && m->pool ? 0 : -ENOMEM;
}

static void acc_map_reset(AccMap *m) {
        hashmap_clear(m->map);
        m->n = 0;
}

static void add_counter(int64_t *sum, int64_t v) {
        if (v == STORAGE_NULL)
                return;
        *sum = *sum == STORAGE_NULL ? v : *sum + v;
}

static int acc_add(AccMap *m, int64_t a, int64_t b, const BatchRow *row, double cpu_seconds) {
        Acc key = { .a = a, .b = b }, *x;
        int r;

        x = hashmap_get(m->map, &key);
        if (!x) {
                if (m->n >= m->max)
                        return -ENOBUFS;
                x = &m->pool[m->n++];
                *x = (Acc) { .a = a, .b = b, .cpu_time_ns = STORAGE_NULL, .cycles = STORAGE_NULL,
                             .instructions = STORAGE_NULL };
                r = hashmap_put(m->map, x, x);
                if (r < 0)
                        return r;
        }
        x->samples += row->samples;
        x->cpu_seconds += cpu_seconds;
        add_counter(&x->cpu_time_ns, row->cpu_time_ns);
        add_counter(&x->cycles, row->cycles);
        add_counter(&x->instructions, row->instructions);
        return 0;
}

/* Per-batch state of one job: its metadata (if the batch had any), its id
 * once upserted, and its totals over the batch's rows. */
typedef struct JobAcc {
        const char *job;
        const BatchJob *meta;
        int64_t id;
        int64_t conflicts; /* 1 when meta differs from the stored first claim */
        int64_t samples;
        double cpu_seconds;
        int64_t cpu_time_ns, cycles, instructions;
} JobAcc;

typedef struct IngestCtx {
        SqlStorage *s;
        const Batch *b;
        int64_t node_id, bucket;
        Hashmap *jobs; /* job string → JobAcc */
        JobAcc *job_pool;
        size_t n_jobs, max_jobs;
        AccMap job_objects, job_phases, object_hours;
        BatchError err;        /* for -EOVERFLOW */
        uint64_t conflicts;
        char conflict[256];
} IngestCtx;

_printf_(3, 4)
static int overflow(IngestCtx *x, const char *field, const char *fmt, ...) {
        va_list ap;

        snprintf(x->err.field, sizeof(x->err.field), "%s", field);
        va_start(ap, fmt);
        vsnprintf(x->err.message, sizeof(x->err.message), fmt, ap);
        va_end(ap);
        return -EOVERFLOW;
}

/* stored + add within int64, where either may be NULL (STORAGE_NULL). */
static bool sum_fits(int64_t stored, int64_t add) {
        int64_t t;

        return stored == STORAGE_NULL || add == STORAGE_NULL || !__builtin_add_overflow(stored, add, &t);
}

static int ctx_job(IngestCtx *x, const char *job, JobAcc **ret) {
        JobAcc *j = hashmap_get(x->jobs, job);
        int r;

        if (!j) {
                if (x->n_jobs >= x->max_jobs)
                        return -ENOBUFS;
                j = &x->job_pool[x->n_jobs++];
                *j = (JobAcc) { .job = job, .cpu_time_ns = STORAGE_NULL, .cycles = STORAGE_NULL,
                                .instructions = STORAGE_NULL };
                r = hashmap_put(x->jobs, job, j);
                if (r < 0)
                        return r;
        }
        *ret = j;
        return 0;
}

static int ingest_node(IngestCtx *x, int64_t now) {
        const Batch *b = x->b;
        DbStmt *st;
        int r, rc;

        /* The node's sums first, so that an overflow names its field; the
         * guard in the upsert is the backstop. */
        if ((r = conn_stmt(&x->s->writer, STMT_NODE_SUMS, &st)) < 0 ||
            (r = bind_text(st, 1, b->node)) < 0)
                return r;
        rc = db_step(st);
        if (rc == 1) {
                int64_t samples = db_column_int(st, 0), lost = db_column_int(st, 1),
                        batches = db_column_int(st, 2);

                db_reset(st);
                if (!sum_fits(samples, b->total_samples))
                        return overflow(x, "rows", "adding this batch's samples to node %s's would overflow", b->node);
                if (!sum_fits(lost, b->samples_lost))
                        return overflow(x, "sampling.samples_lost",
                                        "adding to node %s's lost samples would overflow", b->node);
                if (!sum_fits(batches, 1))
                        return overflow(x, "batch.seq", "node %s has stored too many batches to count", b->node);
        } else if (rc != 0)
                return step_errno(rc);

        if ((r = conn_stmt(&x->s->writer, STMT_NODE_UPSERT, &st)) < 0 ||
            (r = bind_text(st, 1, b->node)) < 0 ||
            (r = bind_text(st, 2, b->hostname)) < 0 ||
            (r = bind_text(st, 3, b->cluster)) < 0 ||
            (r = bind_int(st, 4, b->cpus)) < 0 ||
            (r = bind_text(st, 5, b->boot_id)) < 0 ||
            (r = bind_int(st, 6, b->seq)) < 0 ||
            (r = bind_double(st, 7, b->start)) < 0 ||
            (r = bind_double(st, 8, b->end)) < 0 ||
            (r = bind_int(st, 9, now)) < 0 ||
            (r = bind_int(st, 10, b->total_samples)) < 0 ||
            (r = bind_int(st, 11, b->samples_lost)) < 0)
                return r;
        r = step_id(st, &x->node_id);
        if (r == -ENOENT)
                return overflow(x, "rows", "adding this batch to node %s's sums would overflow", b->node);
        if (r < 0 || !b->has_installed)
                return r;

        /* what the node has installed: rewritten only when it changed */
        _cleanup_free_ char *installed = NULL;
        size_t len = 0;
        installed = calloc(1, b->n_installed * (2 * BATCH_MAX_FAMILY_NAME + 2) + 1);
        if (!installed)
                return -ENOMEM;
        for (size_t i = 0; i < b->n_installed; i++)
                len += (size_t) sprintf(installed + len, "%s%s:%s", i ? " " : "", b->installed[i].purpose,
                                        b->installed[i].family);
        if ((r = conn_stmt(&x->s->writer, STMT_NODE_INSTALLED, &st)) < 0 ||
            (r = bind_int(st, 1, x->node_id)) < 0 ||
            (r = bind_text(st, 2, installed)) < 0)
                return r;
        return db_execute(st, false);
}

static bool text_differs(DbStmt *st, int col, const char *claim) {
        const char *kept = db_column_text(st, col);

        return claim && kept && !streq(kept, claim);
}

static bool int_differs(DbStmt *st, int col, int64_t claim) {
        return claim != BATCH_NULL && !db_column_null(st, col) &&
                db_column_int(st, col) != claim;
}

/* Reads what is stored of job j: checks that the batch's sums still fit
 * and whether its metadata claim differs from the kept first claim. A field
 * the batch leaves null, or that nobody claimed yet, is no conflict; the
 * same claim again (every node of a multi-node job sends it, a node resends
 * it after a restart) is none either. Values stay out of the description:
 * free-text fields may hold control characters that have no place in a log. */
static int check_job(IngestCtx *x, JobAcc *j, const char *cluster) {
        const BatchJob *m = j->meta;
        char differ[128] = "";
        DbStmt *st;
        int64_t id;
        int r, rc;

        if ((r = conn_stmt(&x->s->writer, STMT_JOB_CURRENT, &st)) < 0 ||
            (r = bind_text(st, 1, j->job)) < 0 ||
            (r = bind_text(st, 2, cluster)) < 0)
                return r;
        rc = db_step(st);
        if (rc == 0)
                return 0;
        if (rc != 1)
                return step_errno(rc);

        id = db_column_int(st, 0);
        if (!sum_fits(db_column_int(st, 7), j->samples))
                return overflow(x, "rows", "adding this batch's samples to job %s's would overflow", j->job);
        if (!isfinite(db_column_double(st, 8) + j->cpu_seconds))
                return overflow(x, "rows", "adding this batch's CPU seconds to job %s's would overflow", j->job);
        if (!sum_fits(column_nullable_int(st, 9), j->cpu_time_ns))
                return overflow(x, "rows", "adding this batch's cpu_time_ns to job %s's would overflow", j->job);
        if (!sum_fits(column_nullable_int(st, 10), j->cycles))
                return overflow(x, "rows", "adding this batch's cycles to job %s's would overflow", j->job);
        if (!sum_fits(column_nullable_int(st, 11), j->instructions))
                return overflow(x, "rows", "adding this batch's instructions to job %s's would overflow", j->job);
        if (!m)
                return 0;

#define DIFFERS(cond, field) \
        if (cond) \
                strncat(differ, differ[0] ? ", " field : field, sizeof(differ) - strlen(differ) - 1)
        DIFFERS(text_differs(st, 1, m->user), "user");
        DIFFERS(text_differs(st, 2, m->account), "account");
        DIFFERS(text_differs(st, 3, m->partition), "partition");
        DIFFERS(text_differs(st, 4, m->name), "name");
        DIFFERS(int_differs(st, 5, m->nodes), "nodes");
        DIFFERS(int_differs(st, 6, m->tasks), "tasks");
        db_reset(st);
        for (size_t k = 0; k < m->n_notes; k++) {
                if ((r = conn_stmt(&x->s->writer, STMT_NOTE_SELECT, &st)) < 0 ||
                    (r = bind_int(st, 1, id)) < 0 ||
                    (r = bind_text(st, 2, m->notes[k].key)) < 0)
                        return r;
                rc = db_step(st);
                if (rc == 1 && text_differs(st, 0, m->notes[k].value)) {
                        DIFFERS(true, "notes");
                        break;
                }
                if (rc != 1 && rc != 0)
                        return step_errno(rc);
        }
#undef DIFFERS
        db_reset(st);

        if (differ[0]) {
                j->conflicts = 1;
                /* the first conflict of the batch, for the log: cut short if long */
                if (x->conflicts++ == 0 &&
                    snprintf(x->conflict, sizeof(x->conflict), "job %s%s%s: %s", j->job,
                             cluster[0] ? " on cluster " : "", cluster, differ) >= (int) sizeof(x->conflict))
                        x->conflict[sizeof(x->conflict) - 1] = 0;
        }
        return 0;
}

/* Returns 1 when the batch is new, 0 when it was stored before. */
static int ingest_batch_row(IngestCtx *x, int64_t now) {
        const Batch *b = x->b;
        int64_t changed;
        DbStmt *st;
        int r;

        if ((r = conn_stmt(&x->s->writer, STMT_BATCH_INSERT, &st)) < 0 ||
            (r = bind_int(st, 1, x->node_id)) < 0 ||
            (r = bind_text(st, 2, b->boot_id)) < 0 ||
            (r = bind_int(st, 3, b->seq)) < 0 ||
            (r = bind_int(st, 4, now)) < 0 ||
            (r = bind_double(st, 5, b->start)) < 0 ||
            (r = bind_double(st, 6, b->end)) < 0 ||
            (r = bind_text(st, 7, b->event)) < 0 ||
            (r = bind_double(st, 8, b->frequency_hz)) < 0 ||
            (r = bind_int(st, 9, b->samples_lost)) < 0 ||
            (r = bind_int(st, 10, (int64_t) b->n_rows)) < 0 ||
            (r = bind_int(st, 11, b->total_samples)) < 0 ||
            (r = step_changes(st, &changed)) < 0)
                return r;
        return changed > 0;
}

/* A node that knows no cluster name may push a job's first batch before it
 * has read the job's SLURM_CLUSTER_NAME: the job is then the same one as
 * the one id on a named cluster. An unnamed copy is adopted by the first
 * named claim; an unnamed claim joins the one named job of that id (with
 * two or more, it stays apart: which one is unknown). *cluster may be
 * pointed at buf, which then holds the named cluster. */
static int job_cluster(IngestCtx *x, const char *job, const char **cluster, char *buf, size_t size) {
        DbStmt *st;
        int r, rc, n = 0;

        if (**cluster) {
                if ((r = conn_stmt(&x->s->writer, STMT_JOB_ADOPT, &st)) < 0 ||
                    (r = bind_text(st, 1, job)) < 0 ||
                    (r = bind_text(st, 2, *cluster)) < 0)
                        return r;
                return db_execute(st, false);
        }
        if ((r = conn_stmt(&x->s->writer, STMT_JOB_NAMED_CLUSTER, &st)) < 0 ||
            (r = bind_text(st, 1, job)) < 0)
                return r;
        while ((rc = db_step(st)) == 1)
                if (n++ == 0)
                        snprintf(buf, size, "%s", db_column_text(st, 0));
        db_reset(st);
        if (rc != 0)
                return step_errno(rc);
        if (n == 1)
                *cluster = buf;
        return 0;
}

/* The batch in the job's time line: as itself (grain 0), and added to the
 * bucket of each coarser grain it starts in (schema/0009). */
static int ingest_timeline(IngestCtx *x, const JobAcc *j) {
        const Batch *b = x->b;
        DbStmt *st;
        int r;

        for (size_t g = 0; g <= ELEMENTSOF(timeline_grains); g++) {
                int64_t grain = g == 0 ? 0 : timeline_grains[g - 1];
                int i = 1;

                if ((r = conn_stmt(&x->s->writer, g == 0 ? STMT_JOB_BATCH_UPSERT : STMT_JOB_GRAIN_UPSERT, &st)) < 0 ||
                    (r = bind_int(st, i++, j->id)) < 0 ||
                    (g > 0 && (r = bind_int(st, i++, grain)) < 0) ||
                    (r = bind_int(st, i++, x->node_id)) < 0 ||
                    (r = bind_double(st, i++, g == 0 ? b->start : floor(b->start / (double) grain) * (double) grain)) < 0 ||
                    (r = bind_double(st, i++, b->end - b->start)) < 0 ||
                    (r = bind_int(st, i++, j->samples)) < 0 ||
                    (r = bind_sum(st, i++, j->cpu_seconds)) < 0)
                        return r;
                r = db_execute(st, true);
                if (r == -EOVERFLOW)
                        return overflow(x, "rows", "adding this batch to job %s's time line on node %s would overflow",
                                        j->job, b->node);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int ingest_jobs(IngestCtx *x) {
        const Batch *b = x->b;
        double cps = 1.0 / b->frequency_hz;
        size_t i;
        JobAcc *j;
        int r;

        for (i = 0; i < b->n_jobs; i++) {
                r = ctx_job(x, b->jobs[i].job, &j);
                if (r < 0)
                        return r;
                j->meta = &b->jobs[i];
        }
        for (i = 0; i < b->n_rows; i++) {
                const BatchRow *row = &b->rows[i];

                if (!row->job)
                        continue;
                r = ctx_job(x, row->job, &j);
                if (r < 0)
                        return r;
                j->samples += row->samples;
                j->cpu_seconds += (double) row->samples * cps;
                add_counter(&j->cpu_time_ns, row->cpu_time_ns);
                add_counter(&j->cycles, row->cycles);
                add_counter(&j->instructions, row->instructions);
        }
        for (i = 0; i < b->n_markers; i++)
                if (b->markers[i].job && (r = ctx_job(x, b->markers[i].job, &j)) < 0)
                        return r;
        for (i = 0; i < b->n_ranks; i++)
                if ((r = ctx_job(x, b->ranks[i].job, &j)) < 0)
                        return r;

        for (i = 0; i < x->n_jobs; i++) {
                const BatchJob *m;
                const char *cluster;
                char named[256];
                DbStmt *st;

                j = &x->job_pool[i];
                m = j->meta;
                cluster = (m ? m->cluster : NULL) ?: b->cluster ?: "";
                r = job_cluster(x, j->job, &cluster, named, sizeof(named));
                if (r < 0)
                        return r;
                r = check_job(x, j, cluster);
                if (r < 0)
                        return r;
                if ((r = conn_stmt(&x->s->writer, STMT_JOB_UPSERT, &st)) < 0 ||
                    (r = bind_text(st, 1, j->job)) < 0 ||
                    (r = bind_text(st, 2, cluster)) < 0)
                        return r;
                if (m && ((r = bind_text(st, 3, m->user)) < 0 ||
                          (r = bind_text(st, 4, m->account)) < 0 ||
                          (r = bind_text(st, 5, m->partition)) < 0 ||
                          (r = bind_text(st, 6, m->name)) < 0 ||
                          (r = bind_nullable_int(st, 7, m->nodes)) < 0 ||
                          (r = bind_nullable_int(st, 8, m->tasks)) < 0))
                        return r;
                if ((r = bind_int(st, 9, m && m->ended)) < 0 ||
                    (r = bind_double(st, 10, m && !isnan(m->first_seen) ? m->first_seen : b->start)) < 0 ||
                    (r = bind_double(st, 11, m && !isnan(m->last_seen) ? m->last_seen : b->end)) < 0 ||
                    (r = bind_int(st, 12, j->samples)) < 0 ||
                    (r = bind_sum(st, 13, j->cpu_seconds)) < 0 ||
                    (r = bind_nullable_int(st, 14, j->cpu_time_ns)) < 0 ||
                    (r = bind_nullable_int(st, 15, j->cycles)) < 0 ||
                    (r = bind_nullable_int(st, 16, j->instructions)) < 0 ||
                    (r = bind_int(st, 17, j->conflicts)) < 0)
                        return r;
                r = step_id(st, &j->id);
                if (r == -ENOENT)
                        return overflow(x, "rows", "adding this batch to job %s's sums would overflow", j->job);
                if (r < 0)
                        return r;

                for (size_t k = 0; m && k < m->n_notes; k++)
                        if ((r = conn_stmt(&x->s->writer, STMT_NOTE_UPSERT, &st)) < 0 ||
                            (r = bind_int(st, 1, j->id)) < 0 ||
                            (r = bind_text(st, 2, m->notes[k].key)) < 0 ||
                            (r = bind_text(st, 3, m->notes[k].value)) < 0 ||
                            (r = db_execute(st, false)) < 0)
                                return r;

                /* A job listed in the batch ran on this node, samples or not. */
                if ((r = conn_stmt(&x->s->writer, STMT_JOB_NODE_UPSERT, &st)) < 0 ||
                    (r = bind_int(st, 1, j->id)) < 0 ||
                    (r = bind_int(st, 2, x->node_id)) < 0 ||
                    (r = bind_int(st, 3, j->samples)) < 0 ||
                    /* lmkd's first and last sight of the job here, else the interval */
                    (r = bind_double(st, 4, m && !isnan(m->first_seen) ? m->first_seen : b->start)) < 0 ||
                    (r = bind_double(st, 5, m && !isnan(m->last_seen) ? m->last_seen : b->end)) < 0 ||
                    (r = bind_sum(st, 6, j->cpu_seconds)) < 0 ||
                    (r = bind_nullable_int(st, 7, m ? m->cpus_allocated : BATCH_NULL)) < 0)
                        return r;
                r = db_execute(st, true);
                if (r == -EOVERFLOW)
                        return overflow(x, "rows", "adding this batch to job %s's samples on node %s would overflow",
                                        j->job, b->node);
                if (r < 0)
                        return r;

                r = ingest_timeline(x, j);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int ingest_rows(IngestCtx *x) {
        SqlStorage *s = x->s;
        const Batch *b = x->b;
        double cps = 1.0 / b->frequency_hz;

        for (size_t i = 0; i < b->n_rows; i++) {
                const BatchRow *row = &b->rows[i];
                int64_t job_id = 0, object_id, phase_id, task_id;
                double cpu_seconds = (double) row->samples * cps;
                DbStmt *st;
                int r;

                if (row->job)
                        job_id = ((JobAcc *) hashmap_get(x->jobs, row->job))->id;
                if ((r = intern(s, s->object_ids, STMT_OBJECT_SELECT, STMT_OBJECT_INSERT,
                                row->object, code_kind_to_string(row->kind), row->build_id, 3,
                                &object_id)) < 0 ||
                    (r = intern(s, s->phase_ids, STMT_PHASE_SELECT, STMT_PHASE_INSERT,
                                row->phase, NULL, NULL, 1, &phase_id)) < 0 ||
                    (r = intern(s, s->task_ids, STMT_TASK_SELECT, STMT_TASK_INSERT,
                                row->step, row->user, row->comm, 3, &task_id)) < 0)
                        return r;

                if ((r = conn_stmt(&s->writer, STMT_SAMPLE_UPSERT, &st)) < 0 ||
                    (r = bind_int(st, 1, job_id)) < 0 ||
                    (r = bind_int(st, 2, x->bucket)) < 0 ||
                    (r = bind_int(st, 3, x->node_id)) < 0 ||
                    (r = bind_int(st, 4, object_id)) < 0 ||
                    (r = bind_int(st, 5, phase_id)) < 0 ||
                    (r = bind_int(st, 6, task_id)) < 0 ||
                    (r = bind_int(st, 7, row->samples)) < 0 ||
                    (r = bind_sum(st, 8, cpu_seconds)) < 0 ||
                    (r = bind_nullable_int(st, 9, row->cpu_time_ns)) < 0 ||
                    (r = bind_nullable_int(st, 10, row->cycles)) < 0 ||
                    (r = bind_nullable_int(st, 11, row->instructions)) < 0)
                        return r;
                r = db_execute(st, true);
                if (r == -EOVERFLOW) {
                        char field[32];

                        snprintf(field, sizeof(field), "rows[%zu]", i);
                        return overflow(x, field, "adding this row to the stored sums of its job, hour, node, "
                                        "object, phase and task would overflow");
                }
                if (r < 0)
                        return r;

                if (job_id != 0 &&
                    ((r = acc_add(&x->job_objects, job_id, object_id, row, cpu_seconds)) < 0 ||
                     (r = acc_add(&x->job_phases, job_id, phase_id, row, cpu_seconds)) < 0))
                        return r;
                r = acc_add(&x->object_hours, object_id, 0, row, cpu_seconds);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int write_rollup(IngestCtx *x, const AccMap *m, Stmt id, const char *what) {
        for (size_t i = 0; i < m->n; i++) {
                const Acc *a = &m->pool[i];
                DbStmt *st;
                int r;

                if ((r = conn_stmt(&x->s->writer, id, &st)) < 0 ||
                    (r = bind_int(st, 1, a->a)) < 0 ||
                    (r = bind_int(st, 2, a->b)) < 0 ||
                    (r = bind_int(st, 3, a->samples)) < 0 ||
                    (r = bind_sum(st, 4, a->cpu_seconds)) < 0 ||
                    (r = bind_nullable_int(st, 5, a->cpu_time_ns)) < 0 ||
                    (r = bind_nullable_int(st, 6, a->cycles)) < 0 ||
                    (r = bind_nullable_int(st, 7, a->instructions)) < 0)
                        return r;
                r = db_execute(st, true);
                if (r == -EOVERFLOW)
                        return overflow(x, "rows", "adding this batch to a job's stored sums per %s would overflow", what);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* After the batch's rollups: the application of each job it touched. */
static int update_apps(IngestCtx *x) {
        for (size_t i = 0; i < x->n_jobs; i++) {
                DbStmt *st;
                int r;

                if ((r = conn_stmt(&x->s->writer, STMT_JOB_APP, &st)) < 0 ||
                    (r = bind_int(st, 1, x->job_pool[i].id)) < 0 ||
                    (r = db_execute(st, false)) < 0)
                        return r;
        }
        return 0;
}

static int app_day_add(IngestCtx *x, int64_t day, int64_t key, int64_t samples, double cpu_seconds, int64_t runs) {
        static const Stmt stmts[] = { STMT_APP_DAY_UPSERT, STMT_APP_DIM_UPSERT };

        for (size_t i = 0; i < ELEMENTSOF(stmts); i++) {
                int64_t changed;
                DbStmt *st;
                int r;

                if ((r = conn_stmt(&x->s->writer, stmts[i], &st)) < 0 ||
                    (r = bind_int(st, 1, day)) < 0 ||
                    (r = bind_int(st, 2, key)) < 0 ||
                    (r = bind_int(st, 3, samples)) < 0 ||
                    (r = bind_sum(st, 4, cpu_seconds)) < 0 ||
                    (r = bind_int(st, 5, runs)) < 0 ||
                    (r = step_changes(st, &changed)) < 0)
                        return r;
                /* a refused guard changes fewer rows: one, or the key's four */
                if (changed != (i == 0 ? 1 : 4))
                        return overflow(x, "rows", "adding this batch to the site's application mix of that day "
                                        "would overflow");
        }
        return 0;
}

static int app_day_take(IngestCtx *x, int64_t day, int64_t key, int64_t samples, double cpu_seconds, int64_t runs) {
        static const Stmt stmts[] = { STMT_APP_DAY_TAKE, STMT_APP_DIM_TAKE };
        DbStmt *st;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(stmts); i++)
                if ((r = conn_stmt(&x->s->writer, stmts[i], &st)) < 0 ||
                    (r = bind_int(st, 1, day)) < 0 ||
                    (r = bind_int(st, 2, key)) < 0 ||
                    (r = bind_int(st, 3, samples)) < 0 ||
                    (r = bind_double(st, 4, cpu_seconds)) < 0 ||
                    (r = bind_int(st, 5, runs)) < 0 ||
                    (r = db_execute(st, false)) < 0)
                        return r;
        if ((r = conn_stmt(&x->s->writer, STMT_APP_DIM_PRUNE, &st)) < 0 ||
            (r = bind_int(st, 1, day)) < 0 ||
            (r = bind_int(st, 2, key)) < 0 ||
            (r = db_execute(st, false)) < 0 ||
            (r = conn_stmt(&x->s->writer, STMT_APP_DAY_PRUNE, &st)) < 0 ||
            (r = bind_int(st, 1, day)) < 0 ||
            (r = bind_int(st, 2, key)) < 0)
                return r;
        return db_execute(st, false);
}

/* Moves what a job counted under one key of the application mix to
 * another: its days from its time line (grain 86400, which already holds
 * this batch) and its run. */
static int app_mix_move(IngestCtx *x, int64_t job_id, int64_t from, int64_t to, int64_t run_day) {
        DbStmt *st;
        int64_t n = 0;
        struct { int64_t day, samples; double cpu_seconds; } *days = NULL;
        int r, rc;

        r = conn_stmt(&x->s->writer, STMT_JOB_DAYS, &st);
        if (r < 0 || (r = bind_int(st, 1, job_id)) < 0)
                return r;
        /* a job's days are few (JOB_TIMELINE_MAX_STEPS at grain 86400 is four
         * months); read them all before writing, the statement stays open */
        while ((rc = db_step(st)) == 1) {
                void *p = reallocarray(days, (size_t) n + 1, sizeof(*days));

                if (!p) {
                        db_reset(st);
                        free(days);
                        return -ENOMEM;
                }
                days = p;
                days[n].day = db_column_int(st, 0);
                days[n].samples = db_column_int(st, 1);
                days[n].cpu_seconds = db_column_double(st, 2);
                n++;
        }
        db_reset(st);
        r = rc == 0 ? 0 : step_errno(rc);
        for (int64_t i = 0; r >= 0 && i < n; i++)
                if ((r = app_day_take(x, days[i].day, from, days[i].samples, days[i].cpu_seconds, 0)) >= 0)
                        r = app_day_add(x, days[i].day, to, days[i].samples, days[i].cpu_seconds, 0);
        free(days);
        if (r >= 0 && run_day != STORAGE_NULL && (r = app_day_take(x, run_day, from, 0, 0, 1)) >= 0)
                r = app_day_add(x, run_day, to, 0, 0, 1);
        return r;
}

/* After the apps: each job's time in this batch, in the application mix
 * of the batch's day, under the key its app and metadata name. */
static int update_app_mix(IngestCtx *x) {
        int64_t day = (int64_t) floor(x->b->start / 86400.0) * 86400;

        for (size_t i = 0; i < x->n_jobs; i++) {
                const JobAcc *j = &x->job_pool[i];
                int64_t old, run_day, key;
                DbStmt *st;
                int r, rc;

                if ((r = conn_stmt(&x->s->writer, STMT_JOB_MIX, &st)) < 0 || (r = bind_int(st, 1, j->id)) < 0)
                        return r;
                rc = db_step(st);
                if (rc != 1) {
                        db_reset(st);
                        return rc == 0 ? -ENOENT : step_errno(rc);
                }
                old = column_nullable_int(st, 0);
                run_day = column_nullable_int(st, 1);
                key = column_nullable_int(st, 2);
                db_reset(st);
                if (key == STORAGE_NULL &&
                    ((r = conn_stmt(&x->s->writer, STMT_MIX_KEY_INSERT, &st)) < 0 ||
                     (r = bind_int(st, 1, j->id)) < 0 ||
                     (r = step_id(st, &key)) < 0))
                        return r;

                if (old == STORAGE_NULL) {
                        /* the job's first batch: its run counts on this day */
                        run_day = day;
                        r = app_day_add(x, day, key, j->samples, j->cpu_seconds, 1);
                } else if (j->samples > 0)
                        r = app_day_add(x, day, old, j->samples, j->cpu_seconds, 0);
                if (r < 0)
                        return r;
                if (old == key)
                        continue;
                if (old != STORAGE_NULL && (r = app_mix_move(x, j->id, old, key, run_day)) < 0)
                        return r;
                if ((r = conn_stmt(&x->s->writer, STMT_JOB_MIX_SET, &st)) < 0 ||
                    (r = bind_int(st, 1, j->id)) < 0 ||
                    (r = bind_int(st, 2, key)) < 0 ||
                    (r = bind_nullable_int(st, 3, run_day)) < 0 ||
                    (r = db_execute(st, false)) < 0)
                        return r;
        }
        return 0;
}

/* Site-wide time per object, in the batch's hour and in its day. */
static int write_object_sums(IngestCtx *x) {
        static const struct {
                Stmt stmt;
                int64_t seconds;
                const char *name;
        } grains[] = {
                { STMT_OBJECT_HOUR_UPSERT, BUCKET_SECONDS, "hour" },
                { STMT_OBJECT_DAY_UPSERT, DAY_SECONDS, "day" },
                { STMT_OBJECT_WEEK_UPSERT, WEEK_SECONDS, "week" },
                { STMT_OBJECT_PERIOD_UPSERT, PERIOD_SECONDS, "four weeks" },
        };

        for (size_t g = 0; g < ELEMENTSOF(grains); g++)
                for (size_t i = 0; i < x->object_hours.n; i++) {
                        const Acc *a = &x->object_hours.pool[i];
                        DbStmt *st;
                        int r;

                        if ((r = conn_stmt(&x->s->writer, grains[g].stmt, &st)) < 0 ||
                            (r = bind_int(st, 1, x->bucket - x->bucket % grains[g].seconds)) < 0 ||
                            (r = bind_int(st, 2, a->a)) < 0 ||
                            (r = bind_int(st, 3, a->samples)) < 0 ||
                            (r = bind_sum(st, 4, a->cpu_seconds)) < 0)
                                return r;
                        r = db_execute(st, true);
                        if (r == -EOVERFLOW)
                                return overflow(x, "rows", "adding this batch to the site-wide samples of an "
                                                "object in that %s would overflow", grains[g].name);
                        if (r < 0)
                                return r;
                }
        /* when each object was last used (the unused-software list) */
        for (size_t i = 0; i < x->object_hours.n; i++) {
                DbStmt *st;
                int r;

                if (x->object_hours.pool[i].samples <= 0)
                        continue;
                if ((r = conn_stmt(&x->s->writer, STMT_OBJECT_LAST_SEEN, &st)) < 0 ||
                    (r = bind_int(st, 1, x->object_hours.pool[i].a)) < 0 ||
                    (r = bind_int(st, 2, x->bucket)) < 0 || (r = db_execute(st, false)) < 0)
                        return r;
        }
        return 0;
}

static int ingest_markers(IngestCtx *x) {
        const Batch *b = x->b;

        for (size_t i = 0; i < b->n_markers; i++) {
                const BatchMarker *m = &b->markers[i];
                int64_t job_id = m->job ? ((JobAcc *) hashmap_get(x->jobs, m->job))->id : 0;
                DbStmt *st;
                int r;

                if ((r = conn_stmt(&x->s->writer, STMT_MARKER_UPSERT, &st)) < 0 ||
                    (r = bind_int(st, 1, job_id)) < 0 ||
                    (r = bind_text(st, 2, m->comm)) < 0 ||
                    (r = bind_text(st, 3, m->phase)) < 0 ||
                    (r = bind_text(st, 4, m->state)) < 0 ||
                    (r = bind_double(st, 5, b->start)) < 0 ||
                    (r = bind_double(st, 6, b->end)) < 0 ||
                    (r = db_execute(st, false)) < 0)
                        return r;
        }
        return 0;
}

static int ingest_ranks(IngestCtx *x) {
        SqlStorage *s = x->s;
        const Batch *b = x->b;
        double cps = 1.0 / b->frequency_hz;

        for (size_t i = 0; i < b->n_ranks; i++) {
                const BatchRank *k = &b->ranks[i];
                int64_t job_id = ((JobAcc *) hashmap_get(x->jobs, k->job))->id, phase_id;
                DbStmt *st;
                int r;

                if ((r = intern(s, s->phase_ids, STMT_PHASE_SELECT, STMT_PHASE_INSERT,
                                k->phase, NULL, NULL, 1, &phase_id)) < 0)
                        return r;
                if ((r = conn_stmt(&s->writer, STMT_RANK_UPSERT, &st)) < 0 ||
                    (r = bind_int(st, 1, job_id)) < 0 ||
                    (r = bind_text(st, 2, k->step)) < 0 ||
                    (r = bind_int(st, 3, k->rank)) < 0 ||
                    (r = bind_int(st, 4, phase_id)) < 0 ||
                    (r = bind_int(st, 5, k->samples)) < 0 ||
                    (r = bind_int(st, 6, k->comm_samples)) < 0 ||
                    (r = bind_sum(st, 7, (double) k->samples * cps)) < 0 ||
                    (r = bind_sum(st, 8, (double) k->comm_samples * cps)) < 0 ||
                    (r = bind_double(st, 9, k->first)) < 0 ||
                    (r = bind_double(st, 10, k->last)) < 0)
                        return r;
                r = db_execute(st, true);
                if (r == -EOVERFLOW) {
                        char field[32];

                        snprintf(field, sizeof(field), "ranks[%zu]", i);
                        return overflow(x, field, "adding this rank's samples to its stored sums would overflow");
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

static int package_id(IngestCtx *x, const BatchPackage *p, int64_t *ret, bool *ret_new) {
        DbStmt *st;
        int r;

        for (int pass = 0; pass < 2; pass++) {
                if ((r = conn_stmt(&x->s->writer, pass == 0 ? STMT_PACKAGE_INSERT : STMT_PACKAGE_SELECT, &st)) < 0 ||
                    (r = bind_text(st, 1, p->manager)) < 0 ||
                    (r = bind_text(st, 2, p->name)) < 0 ||
                    (r = bind_text(st, 3, p->version)) < 0 ||
                    (r = bind_text(st, 4, p->arch ?: "")) < 0 ||
                    (r = bind_text(st, 5, p->hash ?: "")) < 0 ||
                    (r = bind_text(st, 6, p->prefix ?: "")) < 0 ||
                    (pass == 0 && (r = bind_int(st, 7, p->size)) < 0))
                        return r;
                r = step_id(st, ret);
                if (r != -ENOENT) {
                        if (pass == 0)
                                db_reset(st);
                        *ret_new = pass == 0;
                        return r;
                }
        }
        return -EIO; /* neither inserted nor found */
}

/* The node's software, when the batch carries it and it is not what the
 * store has for the node: the node's packages replaced, packages new to
 * the store added with their files (a package of the same manager, name,
 * version, arch, hash and prefix has the same files wherever it is). */
static int ingest_inventory(IngestCtx *x, int64_t now) {
        const BatchInventory *inv = x->b->inventory;
        DbStmt *st;
        int r, rc;

        if (!inv)
                return 0;
        if ((r = conn_stmt(&x->s->writer, STMT_NODE_DIGEST, &st)) < 0 || (r = bind_int(st, 1, x->node_id)) < 0)
                return r;
        rc = db_step(st);
        if (rc == 1 && db_column_text(st, 0) && streq(db_column_text(st, 0), inv->digest)) {
                db_reset(st);
                return 0;
        }
        db_reset(st);
        if ((r = conn_stmt(&x->s->writer, STMT_NODE_PACKAGES_CLEAR, &st)) < 0 ||
            (r = bind_int(st, 1, x->node_id)) < 0 || (r = db_execute(st, false)) < 0)
                return r;
        for (size_t i = 0; i < inv->n_packages; i++) {
                const BatchPackage *p = &inv->packages[i];
                int64_t id;
                bool added;

                r = package_id(x, p, &id, &added);
                if (r < 0)
                        return r;
                for (size_t k = 0; added && k < p->n_files; k++)
                        if ((r = conn_stmt(&x->s->writer, STMT_PACKAGE_FILE_INSERT, &st)) < 0 ||
                            (r = bind_int(st, 1, id)) < 0 || (r = bind_text(st, 2, p->files[k])) < 0 ||
                            (r = db_execute(st, false)) < 0)
                                return r;
                if ((r = conn_stmt(&x->s->writer, STMT_NODE_PACKAGE_INSERT, &st)) < 0 ||
                    (r = bind_int(st, 1, x->node_id)) < 0 || (r = bind_int(st, 2, id)) < 0 ||
                    (r = db_execute(st, false)) < 0)
                        return r;
        }
        if ((r = conn_stmt(&x->s->writer, STMT_NODE_INVENTORY_SET, &st)) < 0 ||
            (r = bind_text(st, 1, inv->digest)) < 0 || (r = bind_int(st, 2, now)) < 0 ||
            (r = bind_int(st, 3, x->node_id)) < 0)
                return r;
        return db_execute(st, false);
}

/* Forgets what an attempt to store the batch gathered, for another. */
static void ingest_ctx_reset(IngestCtx *x) {
        hashmap_clear(x->jobs);
        x->n_jobs = 0;
        acc_map_reset(&x->job_objects);
        acc_map_reset(&x->job_phases);
        acc_map_reset(&x->object_hours);
        x->node_id = 0;
        x->err = (BatchError) {};
        x->conflicts = 0;
        x->conflict[0] = 0;
}

static int ingest_locked(IngestCtx *x, int64_t now, IngestResult *ret) {
        int r;

        r = ingest_node(x, now);
        if (r < 0)
                return r;
        r = ingest_batch_row(x, now);
        if (r < 0)
                return r;
        if (r == 0) {
                *ret = (IngestResult) { .duplicate = true, .rows = x->b->n_rows };
                return 0;
        }
        if ((r = ingest_jobs(x)) < 0 ||
            (r = ingest_rows(x)) < 0 ||
            (r = write_rollup(x, &x->job_objects, STMT_JOB_OBJECT_UPSERT, "object")) < 0 ||
            (r = write_rollup(x, &x->job_phases, STMT_JOB_PHASE_UPSERT, "phase")) < 0 ||
            (r = update_apps(x)) < 0 ||
            (r = update_app_mix(x)) < 0 ||
            (r = write_object_sums(x)) < 0 ||
            (r = ingest_markers(x)) < 0 ||
            (r = ingest_ranks(x)) < 0 ||
            (r = ingest_inventory(x, now)) < 0)
                return r;
        *ret = (IngestResult) { .duplicate = false, .rows = x->b->n_rows, .metadata_conflicts = x->conflicts };
        memcpy(ret->conflict, x->conflict, sizeof(ret->conflict));
        return 0;
}

/* A batch waiting for the writer. Batches that arrive while one is being
 * written are written together in the next transaction, each inside its own
 * savepoint: one commit (and one write of the hot pages to the WAL) for many
 * batches, and each batch still stored whole or not at all. */
struct Pending {
        IngestCtx *ctx;
        int64_t now;
        IngestResult res;
        int r;
        bool done;
        Pending *next;
};

/* Rows per group transaction: bounds how long one commit keeps others waiting. */
#define GROUP_MAX_ROWS 200000

/* How often a group is run again when the database refused it for a
 * conflict with another writer (PostgreSQL's deadlocks and serialization
 * failures, -EAGAIN), before its batches fail and their nodes retry. */
#define GROUP_TRIES 3

/* Writes the group in one transaction. < 0: the transaction failed as a
 * whole; each batch's own outcome is in its p->r. */
static int write_group_once(SqlStorage *s, Pending *group) {
        Conn *c = &s->writer;
        int r;

        r = db_begin_write(c->db);
        for (Pending *p = group; p && r >= 0; p = p->next) {
                p->r = conn_exec(c, "SAVEPOINT batch");
                if (p->r >= 0)
                        p->r = ingest_locked(p->ctx, p->now, &p->res);
                /* A driver that pipelines reports what the batch's writes
                 * did by here at the latest. */
                if (p->r >= 0 && !p->res.duplicate)
                        p->r = conn_exec(c, "RELEASE batch");
                if (p->r < 0 || p->res.duplicate) {
                        (void) conn_exec(c, "ROLLBACK TO batch");
                        (void) conn_exec(c, "RELEASE batch");
                }
                if (p->r < 0) {
                        /* Ids interned in what was rolled back are gone. */
                        caches_clear(s);
                        /* Some errors (I/O, full disk, a lost server) end
                         * the transaction itself, and a conflict with
                         * another writer wants all of it run again: then
                         * the group cannot be committed. */
                        if (!db_in_transaction(c->db) || p->r == -EAGAIN || p->r == -ECONNRESET)
                                r = p->r;
                }
        }
        if (r >= 0) {
                r = conn_exec(c, "COMMIT");
                if (r < 0) {
                        (void) conn_exec(c, "ROLLBACK");
                        caches_clear(s);
                }
        } else if (db_in_transaction(c->db))
                (void) conn_exec(c, "ROLLBACK");
        return r;
}

static void write_group(SqlStorage *s, Pending *group) {
        int r;

        pthread_mutex_lock(&s->write_lock);
        for (unsigned tries = 1;; tries++) {
                r = write_group_once(s, group);
                if (r != -EAGAIN || tries == GROUP_TRIES)
                        break;
                for (Pending *p = group; p; p = p->next) {
                        ingest_ctx_reset(p->ctx);
                        p->r = 0;
                        p->res = (IngestResult) {};
                }
        }
        pthread_mutex_unlock(&s->write_lock);

        if (r < 0)
                for (Pending *p = group; p; p = p->next)
                        if (p->r >= 0)
                                p->r = r;
}

static Pending *take_group(SqlStorage *s) {
        Pending *group = s->queue_head, *last = group;
        size_t rows = last->ctx->b->n_rows;

        while (last->next && rows + last->next->ctx->b->n_rows <= GROUP_MAX_ROWS) {
                last = last->next;
                rows += last->ctx->b->n_rows;
        }
        s->queue_head = last->next;
        if (!s->queue_head)
                s->queue_tail = NULL;
        last->next = NULL;
        return group;
}

static int sqlite_ingest(Storage *base, const Batch *b, int64_t now, IngestResult *ret, BatchError *err) {
        SqlStorage *s = (SqlStorage *) base;
        IngestCtx x = {
                .s = s,
                .b = b,
                .bucket = (int64_t) floor(b->start / BUCKET_SECONDS) * BUCKET_SECONDS,
                .max_jobs = b->n_jobs + b->n_rows + b->n_markers + b->n_ranks,
        };
        Pending me = { .ctx = &x, .now = now };

        x.jobs = hashmap_new(&string_hash_ops);
        x.job_pool = calloc(MAX(x.max_jobs, (size_t) 1), sizeof(JobAcc));
        if (!x.jobs || !x.job_pool ||
            acc_map_init(&x.job_objects, b->n_rows) < 0 ||
            acc_map_init(&x.job_phases, b->n_rows) < 0 ||
            acc_map_init(&x.object_hours, b->n_rows) < 0) {
                me.r = -ENOMEM;
                goto finish;
        }

        pthread_mutex_lock(&s->queue_lock);
        if (s->queue_tail)
                s->queue_tail->next = &me;
        else
                s->queue_head = &me;
        s->queue_tail = &me;
        while (!me.done) {
                Pending *group, *next;

                if (s->writing) {
                        pthread_cond_wait(&s->queue_cond, &s->queue_lock);
                        continue;
                }
                /* Nobody is writing: write what is queued, ours or not. */
                group = take_group(s);
                s->writing = true;
                pthread_mutex_unlock(&s->queue_lock);
                write_group(s, group);
                pthread_mutex_lock(&s->queue_lock);
                for (Pending *p = group; p; p = next) {
                        next = p->next; /* p belongs to its waiting thread once done */
                        p->done = true;
                }
                s->writing = false;
                pthread_cond_broadcast(&s->queue_cond);
        }
        pthread_mutex_unlock(&s->queue_lock);

finish:
        hashmap_free(x.jobs);
        free(x.job_pool);
        acc_map_done(&x.job_objects);
        acc_map_done(&x.job_phases);
        acc_map_done(&x.object_hours);
        if (me.r >= 0)
                *ret = me.res;
        else if (me.r == -EOVERFLOW) {
                *err = x.err;
                if (!err->field[0])
                        *err = (BatchError) { .field = "rows", .message = "a derived value (CPU seconds) is not finite" };
        }
        return me.r;
}

/* ---- queries ---- */

static int reader_acquire(SqlStorage *s, Conn **ret) {
        pthread_mutex_lock(&s->readers_lock);
        for (;;) {
                for (unsigned i = 0; i < s->n_readers; i++)
                        if (!s->readers[i].busy) {
                                s->readers[i].busy = true;
                                pthread_mutex_unlock(&s->readers_lock);
                                *ret = &s->readers[i];
                                return 0;
                        }
                pthread_cond_wait(&s->readers_cond, &s->readers_lock);
        }
}

/* Resets the statements, which ends an implicit read transaction now, so the
 * WAL can be checkpointed past it. */
static void reader_release_stmts(Conn *c) {
        for (size_t i = 0; i < _STMT_MAX; i++)
                if (c->stmts[i])
                        db_reset(c->stmts[i]);
}

static void reader_release(SqlStorage *s, Conn *c) {
        reader_release_stmts(c);
        pthread_mutex_lock(&s->readers_lock);
        c->busy = false;
        pthread_cond_signal(&s->readers_cond);
        pthread_mutex_unlock(&s->readers_lock);
}

static int read_job_info(DbStmt *st, StoredJob *j, int64_t *ret_id) {
        int r = 0;

        *ret_id = db_column_int(st, 0);
        *j = (StoredJob) {
                .job = column_strdup(st, 1, &r),
                .cluster = column_strdup(st, 2, &r),
                .user = column_strdup(st, 3, &r),
                .account = column_strdup(st, 4, &r),
                .partition = column_strdup(st, 5, &r),
                .name = column_strdup(st, 6, &r),
                .nodes_alloc = column_nullable_int(st, 7),
                .tasks = column_nullable_int(st, 8),
                .ended = db_column_int(st, 9) != 0,
                .first_seen = column_nullable_double(st, 10),
                .last_seen = column_nullable_double(st, 11),
                .samples = db_column_int(st, 12),
                .cpu_seconds = db_column_double(st, 13),
                .cpu_time_ns = column_nullable_int(st, 14),
                .cycles = column_nullable_int(st, 15),
                .instructions = column_nullable_int(st, 16),
                .n_nodes = (uint64_t) db_column_int(st, 17),
                .metadata_conflicts = db_column_int(st, 18),
                .app = column_strdup(st, 19, &r),
                .row_id = db_column_int(st, 0),
                .revision = db_column_int(st, 20),
        };
        return r;
}

static int grow(void **items, size_t n, size_t *alloc, size_t size) {
        void *p;
        size_t na;

        if (n < *alloc)
                return 0;
        na = *alloc ? *alloc * 2 : 16;
        p = reallocarray(*items, na, size);
        if (!p)
                return -ENOMEM;
        memset((char *) p + *alloc * size, 0, (na - *alloc) * size);
        *items = p;
        *alloc = na;
        return 0;
}

/* ---- the job list ----
 *
 * Its SQL is put together per request from the filters it has: one static
 * statement with "? IS NULL OR column = ?" for every filter would keep
 * SQLite from using the index of the filter at hand. Values are always
 * bound (numbered, so that a condition can appear twice), never put into
 * the text. Each filter's index also holds the three sort keys
 * (schema/0006-job-app.sql), so that a page, its offset and the count walk
 * an index without reading the table. */

typedef struct JobArg {
        const char *text; /* NULL: num */
        int64_t num;
} JobArg;

/* Past this many accounts a lead's jobs come from one OR (an IN list)
 * instead of one SELECT per account merged: SQLite allows 500 SELECTs in a
 * compound, and a merge of many walks no fewer rows than the OR. */
#define JOBS_MAX_MERGED 16

typedef struct JobQuery {
        FILE *f;
        char *where;        /* what every job must match, "" for nothing */
        size_t where_size;
        /* Who may see (store/identity.h), when the filter does not already
         * keep to it: the argument naming the viewer (0: anyone may), and
         * those naming the accounts they lead. */
        int viewer;
        int *accounts;
        size_t n_accounts;
        JobArg *args;
        size_t n_args, alloc_args;
} JobQuery;

static void job_query_done(JobQuery *q) {
        if (q->f)
                fclose(q->f);
        free(q->where);
        free(q->accounts);
        free(q->args);
        *q = (JobQuery) {};
}

/* The number of a new argument, -ENOMEM. */
static int job_arg(JobQuery *q, const char *text, int64_t num) {
        int r = grow((void **) &q->args, q->n_args, &q->alloc_args, sizeof(JobArg));

        if (r < 0)
                return r;
        q->args[q->n_args++] = (JobArg) { .text = text, .num = num };
        return (int) q->n_args;
}

/* Appends "AND column op ?N" to the conditions being written to f. */
static int job_cond(JobQuery *q, FILE *f, const char *column, const char *op, const char *text, int64_t num) {
        int n = job_arg(q, text, num);

        if (n < 0)
                return n;
        fprintf(f, "%s%s %s ?%d", ftell(f) > 0 ? " AND " : "", column, op, n);
        return 0;
}

static bool led(char *const *accounts, const char *account) {
        for (char *const *a = accounts; a && *a; a++)
                if (streq(*a, account))
                        return true;
        return false;
}

/* Who may see what (store/identity.h): a person their own jobs and those of
 * the accounts they lead. Nothing to add when the filter already keeps to
 * them (their own user, or an account they lead). */
static int job_query_viewer(JobQuery *q, const JobFilter *f) {
        size_t n = 0;
        int r;

        if (!f->viewer || (f->user && streq(f->user, f->viewer)) || (f->account && led(f->viewer_accounts, f->account)))
                return 0;
        r = q->viewer = job_arg(q, f->viewer, 0);
        if (r < 0)
                return r;
        for (char *const *a = f->viewer_accounts; a && *a; a++)
                n++;
        if (n == 0)
                return 0;
        q->accounts = calloc(n, sizeof(int));
        if (!q->accounts)
                return -ENOMEM;
        for (; q->n_accounts < n; q->n_accounts++) {
                r = q->accounts[q->n_accounts] = job_arg(q, f->viewer_accounts[q->n_accounts], 0);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int job_query_init(JobQuery *q, const JobFilter *f) {
        const struct {
                const char *column, *value;
        } eq[] = {
                { "j.user_name", f->user },
                { "j.cluster", f->cluster },
                { "j.account", f->account },
                { "j.partition_name", f->partition },
                { "j.app", f->app },
                { "j.name", f->name },
        };
        int r = 0;

        *q = (JobQuery) {};
        q->f = open_memstream(&q->where, &q->where_size);
        if (!q->f)
                return -ENOMEM;
        if (f->since != INT64_MIN)
                r = job_cond(q, q->f, "j.last_seen", ">=", NULL, f->since);
        if (r >= 0 && f->until != INT64_MAX)
                r = job_cond(q, q->f, "j.first_seen", "<=", NULL, f->until);
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(eq); i++)
                if (eq[i].value)
                        r = job_cond(q, q->f, eq[i].column, "=", eq[i].value, 0);
        if (r >= 0 && f->state != JOB_STATE_ANY)
                r = job_cond(q, q->f, "j.ended", "=", NULL, f->state == JOB_STATE_ENDED);
        if (r >= 0)
                r = job_query_viewer(q, f);
        if (fclose(q->f) != 0 && r >= 0)
                r = -ENOMEM;
        q->f = NULL;
        return r;
}

/* "WHERE ..." with what the viewer may see as one condition (alt < 0), or
 * only one part of it: their own jobs (alt 0) or an account's (alt k). */
static void job_query_where(const JobQuery *q, FILE *f, ssize_t alt) {
        bool any = q->where[0] || q->viewer > 0;

        fprintf(f, "%s%s", any ? " WHERE " : "", q->where);
        if (q->viewer == 0)
                return;
        fputs(q->where[0] ? " AND " : "", f);
        if (alt == 0 || (alt < 0 && q->n_accounts == 0))
                fprintf(f, "j.user_name = ?%d", q->viewer);
        else if (alt > 0)
                fprintf(f, "j.account = ?%d", q->accounts[alt - 1]);
        else {
                fprintf(f, "(j.user_name = ?%d OR j.account IN (", q->viewer);
                for (size_t i = 0; i < q->n_accounts; i++)
                        fprintf(f, "%s?%d", i ? ", " : "", q->accounts[i]);
                fputs("))", f);
        }
}

/* The order of each sort: its key, then the other two, then the row, all
 * in one direction, which is the order of the key's index. */
static const char *const job_sort_keys[_JOB_SORT_MAX][3] = {
        [JOB_SORT_LAST_SEEN] = { "last_seen", "first_seen", "cpu_seconds" },
        [JOB_SORT_FIRST_SEEN] = { "first_seen", "last_seen", "cpu_seconds" },
        [JOB_SORT_CPU_SECONDS] = { "cpu_seconds", "last_seen", "first_seen" },
};

static void job_query_order(const JobFilter *f, FILE *out, const char *prefix) {
        const char *dir = f->ascending ? "ASC" : "DESC";
        const char *const *k = job_sort_keys[f->sort];

        fprintf(out, " ORDER BY %s%s %s, %s%s %s, %s%s %s, %sid %s", prefix, k[0], dir, prefix, k[1], dir,
                prefix, k[2], dir, prefix, dir);
}

/* The SQL of a page of ids (?L and ?L+1: limit and offset). With a viewer
 * who leads accounts and the default order, one SELECT for their own jobs
 * and one per account, merged: each walks its own index in order, where an
 * OR would read every job the viewer may see and sort them. */
static void job_query_page(const JobQuery *q, const JobFilter *f, FILE *out) {
        int l = (int) q->n_args + 1;

        if (q->n_accounts > 0 && q->n_accounts <= JOBS_MAX_MERGED && f->sort == JOB_SORT_LAST_SEEN) {
                for (size_t i = 0; i <= q->n_accounts; i++) {
                        fprintf(out, "%sSELECT j.id AS id, j.last_seen AS last_seen, j.first_seen AS first_seen, "
                                "j.cpu_seconds AS cpu_seconds FROM jobs j", i ? " UNION " : "");
                        job_query_where(q, out, (ssize_t) i);
                }
                job_query_order(f, out, "");
        } else {
                fputs("SELECT j.id FROM jobs j", out);
                job_query_where(q, out, -1);
                job_query_order(f, out, "j.");
        }
        fprintf(out, " LIMIT ?%d OFFSET ?%d", l, l + 1);
}

/* Prepares sql (not cached: it depends on the filter) and binds the
 * query's arguments, then extra[] as integers after them. */
static int job_query_prepare(Conn *c, const JobQuery *q, const char *sql, const int64_t *extra, size_t n_extra,
                             DbStmt **ret) {
        DbStmt *st;
        int r;

        r = db_prepare(c->db, sql, false, &st);
        if (r < 0)
                return r;
        for (size_t i = 0; r >= 0 && i < q->n_args; i++)
                r = q->args[i].text ? bind_text(st, (int) i + 1, q->args[i].text)
                                    : bind_int(st, (int) i + 1, q->args[i].num);
        for (size_t i = 0; r >= 0 && i < n_extra; i++)
                r = bind_int(st, (int) (q->n_args + i + 1), extra[i]);
        if (r < 0) {
                db_finalize(st);
                return r;
        }
        *ret = st;
        return 0;
}

/* sql, written by fn. -ENOMEM. */
static int job_query_sql(const JobQuery *q, const JobFilter *f, void (*fn)(const JobQuery *, const JobFilter *, FILE *),
                         char **ret) {
        size_t size;
        FILE *out = open_memstream(ret, &size);

        if (!out)
                return -ENOMEM;
        fn(q, f, out);
        if (fclose(out) != 0) {
                free(*ret);
                *ret = NULL;
                return -ENOMEM;
        }
        return 0;
}

static void job_query_list(const JobQuery *q, const JobFilter *f, FILE *out) {
        /* The page's ids first, from indexes alone; the columns (and the
         * count of nodes) then only for those. */
        fputs("WITH page AS MATERIALIZED (", out);
        job_query_page(q, f, out);
        fputs(") SELECT " JOB_COLUMNS " FROM page JOIN jobs j ON j.id = page.id", out);
        job_query_order(f, out, "j.");
}

/* Counts up to a limit (?N after the arguments): a capped count walks no
 * more of an index than the pages before it. */
static void job_query_count(const JobQuery *q, const JobFilter *f, FILE *out) {
        fputs("SELECT count(*) FROM (SELECT 1 FROM jobs j", out);
        job_query_where(q, out, -1);
        fprintf(out, " LIMIT ?%zu) AS c", q->n_args + 1);
}

static int count_jobs(Conn *c, const JobQuery *q, const JobFilter *f, int64_t cap, int64_t *ret) {
        _cleanup_free_ char *sql = NULL;
        DbStmt *st;
        int r;

        r = job_query_sql(q, f, job_query_count, &sql);
        if (r < 0)
                return r;
        r = job_query_prepare(c, q, sql, &cap, 1, &st);
        if (r < 0)
                return r;
        r = step_id(st, ret);
        db_finalize(st);
        return r;
}

static int sqlite_list_jobs(Storage *base, const JobFilter *f, JobList *ret) {
        SqlStorage *s = (SqlStorage *) base;
        /* one more than asked, to tell whether there are more */
        const int64_t page[2] = { (int64_t) f->limit + 1, f->offset };
        _cleanup_(job_query_done) JobQuery q = {};
        _cleanup_free_ char *sql = NULL;
        DbStmt *st = NULL;
        JobList l = {};
        size_t alloc = 0;
        Conn *c;
        int r, rc;

        if (f->sort < 0 || f->sort >= _JOB_SORT_MAX)
                return -EINVAL;
        if ((r = job_query_init(&q, f)) < 0 ||
            (r = job_query_sql(&q, f, job_query_list, &sql)) < 0)
                return r;

        reader_acquire(s, &c);
        /* one read transaction, so that the count and the page agree */
        r = conn_begin_read(c);
        if (r < 0)
                goto release;
        r = job_query_prepare(c, &q, sql, page, ELEMENTSOF(page), &st);
        if (r < 0)
                goto finish;
        while ((rc = db_step(st)) == 1) {
                int64_t id;

                if (l.n == f->limit) {
                        l.more = true;
                        break;
                }
                r = grow((void **) &l.items, l.n, &alloc, sizeof(StoredJob));
                if (r < 0)
                        goto finish;
                r = read_job_info(st, &l.items[l.n++], &id);
                if (r < 0)
                        goto finish;
        }
        if (rc != 1 && rc != 0) {
                r = step_errno(rc);
                goto finish;
        }
        if (f->count) {
                int64_t cap = (int64_t) f->offset + f->limit + JOBS_COUNT_AHEAD, total;

                r = count_jobs(c, &q, f, cap + 1, &total);
                if (r < 0)
                        goto finish;
                l.total = (uint64_t) MIN(total, cap);
                l.total_exact = total <= cap;
        }

finish:
        db_finalize(st);
        (void) conn_exec(c, "COMMIT");
release:
        reader_release(s, c);
        if (r < 0) {
                job_list_free(&l);
                return r;
        }
        *ret = l;
        return 0;
}

/* Reads a breakdown: columns name, [kind, build_id,] samples, cpu_seconds,
 * cpu_time_ns, cycles, instructions (with_kind) or name, samples, ... */
/* A line of a breakdown from columns at col: name, [kind, build_id,]
 * samples, cpu_seconds, cpu_time_ns, cycles, instructions. */
static int read_share_row(DbStmt *st, int col, bool with_kind, Share *x) {
        int r = 0, k = col + (with_kind ? 3 : 1);

        x->name = column_strdup(st, col, &r);
        if (with_kind) {
                x->kind = column_strdup(st, col + 1, &r);
                const char *build_id = db_column_text(st, col + 2);

                x->build_id = build_id && *build_id ? column_strdup(st, col + 2, &r) : NULL;
        }
        x->samples = db_column_int(st, k);
        x->cpu_seconds = db_column_double(st, k + 1);
        x->cpu_time_ns = column_nullable_int(st, k + 2);
        x->cycles = column_nullable_int(st, k + 3);
        x->instructions = column_nullable_int(st, k + 4);
        x->first_seen = x->last_seen = NAN;
        return r;
}

/* A job's node from columns at col: name, samples, first_seen, last_seen,
 * cpu_seconds, cpus_alloc, installed. */
static int read_node_row(DbStmt *st, int col, Share *x) {
        int r = 0;

        x->name = column_strdup(st, col, &r);
        x->samples = db_column_int(st, col + 1);
        x->first_seen = db_column_double(st, col + 2);
        x->last_seen = db_column_double(st, col + 3);
        x->cpu_seconds = db_column_double(st, col + 4);
        x->cpus_alloc = column_nullable_int(st, col + 5);
        x->installed = column_strdup(st, col + 6, &r);
        x->cpu_time_ns = x->cycles = x->instructions = STORAGE_NULL;
        return r;
}

/* A switched-off marker from columns at col: comm, phase, state,
 * first_seen, last_seen, batches. */
static int read_marker_row(DbStmt *st, int col, Marker *m) {
        int r = 0;

        m->comm = column_strdup(st, col, &r);
        m->phase = column_strdup(st, col + 1, &r);
        m->state = column_strdup(st, col + 2, &r);
        m->first_seen = db_column_double(st, col + 3);
        m->last_seen = db_column_double(st, col + 4);
        m->batches = db_column_int(st, col + 5);
        return r;
}

static int read_shares(Conn *c, Stmt id, int64_t job_id, int64_t limit, bool with_kind, ShareList *ret) {
        ShareList l = {};
        size_t alloc = 0;
        DbStmt *st;
        int r, rc;

        r = conn_stmt(c, id, &st);
        if (r < 0)
                return r;
        if ((r = bind_int(st, 1, job_id)) < 0 || (limit > 0 && (r = bind_int(st, 2, limit)) < 0))
                return r;
        while ((rc = db_step(st)) == 1) {
                r = grow((void **) &l.items, l.n, &alloc, sizeof(Share));
                if (r < 0)
                        break;
                r = read_share_row(st, 0, with_kind, &l.items[l.n++]);
                if (r < 0)
                        break;
        }
        if (r >= 0 && rc != 1 && rc != 0)
                r = step_errno(rc);
        if (r < 0) {
                share_list_free(&l);
                return r;
        }
        *ret = l;
        return 0;
}

static int read_nodes(Conn *c, int64_t job_id, ShareList *ret) {
        ShareList l = {};
        size_t alloc = 0;
        DbStmt *st;
        int r, rc;

        r = conn_stmt(c, STMT_JOB_NODES, &st);
        if (r < 0 || (r = bind_int(st, 1, job_id)) < 0)
                return r;
        while ((rc = db_step(st)) == 1) {
                r = grow((void **) &l.items, l.n, &alloc, sizeof(Share));
                if (r < 0)
                        break;
                r = read_node_row(st, 0, &l.items[l.n++]);
                if (r < 0)
                        break;
        }
        if (r >= 0 && rc != 1 && rc != 0)
                r = step_errno(rc);
        if (r < 0) {
                share_list_free(&l);
                return r;
        }
        *ret = l;
        return 0;
}

static int read_notes(Conn *c, int64_t job_id, JobSummary *js) {
        size_t alloc = 0;
        DbStmt *st;
        int r, rc;

        r = conn_stmt(c, STMT_JOB_NOTES, &st);
        if (r < 0 || (r = bind_int(st, 1, job_id)) < 0)
                return r;
        while ((rc = db_step(st)) == 1) {
                r = grow((void **) &js->notes, js->n_notes, &alloc, sizeof(KeyValue));
                if (r < 0)
                        return r;
                js->notes[js->n_notes].key = column_strdup(st, 0, &r);
                js->notes[js->n_notes++].value = column_strdup(st, 1, &r);
                if (r < 0)
                        return r;
        }
        return rc == 0 ? 0 : step_errno(rc);
}

static int read_markers(Conn *c, int64_t job_id, JobSummary *js) {
        size_t alloc = 0;
        DbStmt *st;
        int r, rc;

        r = conn_stmt(c, STMT_JOB_MARKERS, &st);
        if (r < 0 || (r = bind_int(st, 1, job_id)) < 0)
                return r;
        while ((rc = db_step(st)) == 1) {
                r = grow((void **) &js->markers, js->n_markers, &alloc, sizeof(Marker));
                if (r < 0)
                        return r;
                r = read_marker_row(st, 0, &js->markers[js->n_markers++]);
                if (r < 0)
                        return r;
        }
        return rc == 0 ? 0 : step_errno(rc);
}

/* A job's rank figures from STMT_JOB_RANKS (per phase and rank) or
 * STMT_RUN_RANKS (per rank, phase ""): at most JOB_SUMMARY_MAX_RANK_ROWS. */
static int read_rank_rows(Conn *c, Stmt id, int64_t job_id, RankFigures **v, size_t *n, bool *truncated) {
        size_t alloc = 0;
        DbStmt *st;
        int r, rc;

        r = conn_stmt(c, id, &st);
        if (r < 0 || (r = bind_int(st, 1, job_id)) < 0 || (r = bind_int(st, 2, JOB_SUMMARY_MAX_RANK_ROWS + 1)) < 0)
                return r;
        while ((rc = db_step(st)) == 1) {
                RankFigures *f;

                if (*n == JOB_SUMMARY_MAX_RANK_ROWS) {
                        *truncated = true;
                        rc = 0;
                        break;
                }
                r = grow((void **) v, *n, &alloc, sizeof(RankFigures));
                if (r < 0)
                        return r;
                f = &(*v)[(*n)++];
                *f = (RankFigures) {
                        .phase = column_strdup(st, 0, &r),
                        .rank = db_column_int(st, 1),
                        .samples = db_column_int(st, 2),
                        .comm_samples = db_column_int(st, 3),
                        .cpu_seconds = db_column_double(st, 4),
                        .comm_seconds = db_column_double(st, 5),
                        .first_seen = db_column_double(st, 6),
                        .last_seen = db_column_double(st, 7),
                };
                if (r < 0)
                        return r;
        }
        return rc == 0 ? 0 : step_errno(rc);
}

/* The job's time line in at most JOB_TIMELINE_MAX_STEPS steps: whole
 * batches for a job of up to that many of them, else buckets of the
 * smallest grain that covers a step, so that at most about as many rows
 * per node are read however long the job ran. */
static int read_timeline(Conn *c, int64_t job_id, JobSummary *js) {
        double first, last, span, interval, target, step;
        TimelineNode *tn = NULL;
        size_t alloc = 0, steps;
        int64_t grain = 0;
        bool raw;
        DbStmt *st;
        int r, rc;

        r = conn_stmt(c, STMT_JOB_SPAN, &st);
        if (r < 0 || (r = bind_int(st, 1, job_id)) < 0)
                return r;
        rc = db_step(st);
        if (rc != 1)
                return step_errno(rc);
        if (db_column_null(st, 0) ||
            (db_column_null(st, 2) && !db_column_int(st, 3)))
                return 0; /* no node, or stored before the time line was */
        first = floor(db_column_double(st, 0));
        last = db_column_double(st, 1);
        /* retention deleted the batches' own rows (grain 0): the finest left */
        raw = !db_column_null(st, 2);
        interval = raw ? MAX(round(db_column_double(st, 2)), 1.0) : (double) timeline_grains[0];
        span = MAX(last - first, 1.0);
        target = span / JOB_TIMELINE_MAX_STEPS;
        if (raw && target <= interval)
                step = interval; /* whole batches */
        else {
                grain = timeline_grains[ELEMENTSOF(timeline_grains) - 1];
                for (size_t g = 0; g < ELEMENTSOF(timeline_grains); g++)
                        if ((double) timeline_grains[g] >= MAX(target, interval)) {
                                grain = timeline_grains[g];
                                break;
                        }
                first = floor(first / (double) grain) * (double) grain;
                span = MAX(last - first, 1.0);
                step = (double) grain * ceil(span / JOB_TIMELINE_MAX_STEPS / (double) grain);
        }
        steps = (size_t) ceil(span / step);
        steps = MIN(MAX(steps, (size_t) 1), (size_t) JOB_TIMELINE_MAX_STEPS);
        js->timeline_start = first;
        js->timeline_step = step;
        js->n_timeline = steps;

        r = conn_stmt(c, STMT_JOB_TIMELINE, &st);
        if (r < 0 || (r = bind_int(st, 1, job_id)) < 0 || (r = bind_double(st, 2, first)) < 0 ||
            (r = bind_double(st, 3, step)) < 0 || (r = bind_int(st, 4, (int64_t) steps)) < 0 ||
            (r = bind_int(st, 5, JOB_TIMELINE_MAX_NODES)) < 0 || (r = bind_int(st, 6, grain)) < 0)
                return r;
        while ((rc = db_step(st)) == 1) {
                const char *node = db_column_text(st, 0);
                int64_t k = db_column_int(st, 2);

                if (!tn || !streq(tn->node, node ?: "")) {
                        r = grow((void **) &js->timeline, js->n_timeline_nodes, &alloc, sizeof(TimelineNode));
                        if (r < 0)
                                return r;
                        tn = &js->timeline[js->n_timeline_nodes++];
                        *tn = (TimelineNode) {
                                .node = column_strdup(st, 0, &r),
                                .cpus_alloc = column_nullable_int(st, 1),
                                .seconds = calloc(steps, sizeof(double)),
                                .cpu_seconds = calloc(steps, sizeof(double)),
                        };
                        if (r < 0 || !tn->node || !tn->seconds || !tn->cpu_seconds)
                                return -ENOMEM;
                }
                if (k < 0 || (size_t) k >= steps)
                        continue; /* cannot happen: the query clamps */
                tn->seconds[k] += db_column_double(st, 3);
                tn->cpu_seconds[k] += db_column_double(st, 4);
        }
        if (rc != 0)
                return step_errno(rc);
        js->timeline_truncated = js->info.n_nodes > JOB_TIMELINE_MAX_NODES;
        return 0;
}

static int sqlite_get_job(Storage *base, const char *job, const char *cluster, JobSummary *ret) {
        SqlStorage *s = (SqlStorage *) base;
        JobSummary js = {};
        DbStmt *st;
        int64_t id;
        Conn *c;
        int r, rc;

        reader_acquire(s, &c);
        /* One read transaction for the job row and its rollups, so that the
         * parts add up to the total even while batches arrive. */
        r = conn_begin_read(c);
        if (r < 0)
                goto release;
        r = conn_stmt(c, cluster ? STMT_JOB_FIND_CLUSTER : STMT_JOB_FIND, &st);
        if (r < 0 || (r = bind_text(st, 1, job)) < 0 || (cluster && (r = bind_text(st, 2, cluster)) < 0))
                goto finish;
        rc = db_step(st);
        if (rc != 1) {
                r = rc == 0 ? -ENOENT : step_errno(rc);
                goto finish;
        }
        r = read_job_info(st, &js.info, &id);
        if (r < 0)
                goto finish;
        rc = db_step(st);
        if (rc == 1) {
                r = -ENOTUNIQ;
                goto finish;
        }
        if ((r = read_shares(c, STMT_JOB_KINDS, id, 0, false, &js.kinds)) < 0 ||
            (r = read_shares(c, STMT_JOB_OBJECTS, id, JOB_SUMMARY_MAX_OBJECTS + 1, true, &js.objects)) < 0 ||
            (r = read_shares(c, STMT_JOB_PHASES, id, 0, false, &js.phases)) < 0 ||
            (r = read_nodes(c, id, &js.nodes)) < 0 ||
            (r = read_notes(c, id, &js)) < 0 ||
            (r = read_markers(c, id, &js)) < 0 ||
            (r = read_rank_rows(c, STMT_JOB_RANKS, id, &js.ranks, &js.n_ranks, &js.ranks_truncated)) < 0 ||
            (r = read_timeline(c, id, &js)) < 0)
                goto finish;
        if (js.objects.n > JOB_SUMMARY_MAX_OBJECTS) {
                Share *last = &js.objects.items[--js.objects.n];

                free(last->name);
                free(last->kind);
                free(last->build_id);
                js.objects_truncated = true;
        }

finish:
        reader_release_stmts(c);
        (void) conn_exec(c, "COMMIT");
release:
        reader_release(s, c);
        if (r < 0) {
                job_summary_free(&js);
                return r;
        }
        *ret = js;
        return 0;
}

/* ---- summaries of many jobs, for the findings ----
 *
 * A few reads for a whole page of jobs: the page's row ids and revisions
 * first (from the indexes), then, for the jobs wanted, their rows and
 * each part of their summaries by one statement over the list of their
 * ids. The parts carry object and node ids: their names are looked up once
 * per distinct id (thousands, against tens of thousands of rows), and the
 * summaries point to them (JobSummaryList.strings). */

enum { PART_OBJECTS, PART_NODES, PART_MARKERS, _PART_MAX };

static const Stmt summary_parts[_PART_MAX] = {
        [PART_OBJECTS] = STMT_SUMMARY_OBJECTS,
        [PART_NODES] = STMT_SUMMARY_NODES,
        [PART_MARKERS] = STMT_SUMMARY_MARKERS,
};

/* An object's (path, kind, build_id) or a node's (name, installed, -). */
typedef struct Names {
        char *s[3];
} Names;

typedef struct SummaryRead {
        Conn *c;
        JobSummaryList *l;
        Hashmap *jobs;          /* job row id → index + 1 */
        Hashmap *names[2];      /* object id, node id → Names */
        size_t (*alloc)[_PART_MAX];
        size_t alloc_strings;
} SummaryRead;

static int keep_string(SummaryRead *x, DbStmt *st, int col, char **ret) {
        JobSummaryList *l = x->l;
        int r = 0;

        *ret = column_strdup(st, col, &r);
        if (r < 0 || !*ret)
                return r;
        r = grow((void **) &l->strings, l->n_strings, &x->alloc_strings, sizeof(char *));
        if (r < 0) {
                free(*ret);
                return r;
        }
        l->strings[l->n_strings++] = *ret;
        return 0;
}

/* The names of object or node id, looked up on first use. */
static int summary_names(SummaryRead *x, int which, int64_t id, const Names **ret) {
        Names *n = hashmap_get(x->names[which], INT_TO_KEY(id));
        DbStmt *st;
        int r, rc;

        if (n) {
                *ret = n;
                return 0;
        }
        if ((r = conn_stmt(x->c, which == PART_OBJECTS ? STMT_OBJECT_NAME : STMT_NODE_NAME, &st)) < 0 ||
            (r = bind_int(st, 1, id)) < 0)
                return r;
        rc = db_step(st);
        if (rc != 1)
                return rc == 0 ? -ENOENT : step_errno(rc);
        n = calloc(1, sizeof(Names));
        if (!n)
                return -ENOMEM;
        r = hashmap_put(x->names[which], INT_TO_KEY(id), n);
        if (r < 0) {
                free(n);
                return r;
        }
        for (int i = 0; r >= 0 && i < (which == PART_OBJECTS ? 3 : 2); i++)
                r = keep_string(x, st, i, &n->s[i]);
        db_reset(st);
        *ret = n;
        return r;
}

static int read_summary_row(SummaryRead *x, DbStmt *st, int part, JobSummary *js, size_t *alloc) {
        const Names *n;
        int r;

        switch (part) {
        case PART_OBJECTS:
                if ((r = summary_names(x, PART_OBJECTS, db_column_int(st, 1), &n)) < 0 ||
                    (r = grow((void **) &js->objects.items, js->objects.n, alloc, sizeof(Share))) < 0)
                        return r;
                js->objects.items[js->objects.n++] = (Share) {
                        .name = n->s[0], .kind = n->s[1], .build_id = n->s[2] && *n->s[2] ? n->s[2] : NULL,
                        .samples = db_column_int(st, 2),
                        .cpu_seconds = db_column_double(st, 3),
                        .cpu_time_ns = column_nullable_int(st, 4),
                        .cycles = column_nullable_int(st, 5),
                        .instructions = column_nullable_int(st, 6),
                        .first_seen = NAN, .last_seen = NAN,
                };
                return 0;
        case PART_NODES:
                if ((r = summary_names(x, PART_NODES, db_column_int(st, 1), &n)) < 0 ||
                    (r = grow((void **) &js->nodes.items, js->nodes.n, alloc, sizeof(Share))) < 0)
                        return r;
                js->nodes.items[js->nodes.n++] = (Share) {
                        .name = n->s[0], .installed = n->s[1],
                        .samples = db_column_int(st, 2),
                        .first_seen = db_column_double(st, 3),
                        .last_seen = db_column_double(st, 4),
                        .cpu_seconds = db_column_double(st, 5),
                        .cpus_alloc = column_nullable_int(st, 6),
                        .cpu_time_ns = STORAGE_NULL, .cycles = STORAGE_NULL, .instructions = STORAGE_NULL,
                };
                return 0;
        default:
                r = grow((void **) &js->markers, js->n_markers, alloc, sizeof(Marker));
                if (r < 0)
                        return r;
                return read_marker_row(st, 1, &js->markers[js->n_markers++]);
        }
}

/* Steps a statement over the wanted ids (?1, a JSON array). */
static int summary_stmt(SummaryRead *x, Stmt id, const char *ids, DbStmt **ret) {
        int r = conn_stmt(x->c, id, ret);

        return r < 0 ? r : bind_text(*ret, 1, ids);
}

static int read_summary_part(SummaryRead *x, const char *ids, int part) {
        DbStmt *st;
        int r, rc = 0;

        r = summary_stmt(x, summary_parts[part], ids, &st);
        while (r >= 0 && (rc = db_step(st)) == 1) {
                size_t i = (uintptr_t) hashmap_get(x->jobs, INT_TO_KEY(db_column_int(st, 0)));

                if (i > 0) /* always: the ids are the jobs read */
                        r = read_summary_row(x, st, part, &x->l->items[i - 1], &x->alloc[i - 1][part]);
        }
        if (r >= 0 && rc != 0)
                r = step_errno(rc);
        return r;
}

/* The row ids and revisions of the page; the ids of the jobs wanted into
 * *ids (a JSON array). */
static int summary_page(SummaryRead *x, const JobQuery *q, const JobFilter *f, JobWant want, void *userdata,
                        char **ids) {
        const int64_t page[2] = { (int64_t) f->limit + 1, f->offset };
        _cleanup_fclose_ FILE *out = NULL;
        _cleanup_free_ char *sql = NULL;
        size_t size, n = 0;
        DbStmt *st;
        int r, rc = 0;

        out = open_memstream(&sql, &size);
        if (!out)
                return -ENOMEM;
        fputs("WITH page AS MATERIALIZED (", out);
        job_query_page(q, f, out);
        fputs(") SELECT j.id, j.revision FROM page JOIN jobs j ON j.id = page.id", out);
        job_query_order(f, out, "j.");
        if (fclose(TAKE_PTR(out)) != 0)
                return -ENOMEM;
        r = job_query_prepare(x->c, q, sql, page, ELEMENTSOF(page), &st);
        if (r < 0)
                return r;
        out = open_memstream(ids, &size);
        if (!out) {
                db_finalize(st);
                return -ENOMEM;
        }
        fputc('[', out);
        while ((rc = db_step(st)) == 1) {
                int64_t id = db_column_int(st, 0);

                if (x->l->n_jobs == f->limit) {
                        x->l->more = true;
                        break;
                }
                x->l->n_jobs++;
                if (!want || want(id, db_column_int(st, 1), userdata))
                        fprintf(out, "%s%" PRId64, n++ ? "," : "", id);
        }
        fputc(']', out);
        if (rc != 1 && rc != 0)
                r = step_errno(rc);
        db_finalize(st);
        if (fclose(TAKE_PTR(out)) != 0 && r >= 0)
                r = -ENOMEM;
        return r;
}

static int64_t sum_nullable(int64_t sum, int64_t v) {
        if (v == STORAGE_NULL)
                return sum;
        if (sum == STORAGE_NULL)
                return v;
        return __builtin_add_overflow(sum, v, &sum) ? INT64_MAX : sum;
}

static int by_samples_then_name(const void *a, const void *b) {
        const Share *x = a, *y = b;

        if (x->samples != y->samples)
                return x->samples < y->samples ? 1 : -1;
        return strcmp(x->name, y->name);
}

static int by_share_name(const void *a, const void *b) {
        return strcmp(((const Share *) a)->name, ((const Share *) b)->name);
}

static int by_marker(const void *a, const void *b) {
        const Marker *x = a, *y = b;
        int c = strcmp(x->phase, y->phase);

        if (c == 0)
                c = strcmp(x->comm, y->comm);
        return c ? c : strcmp(x->state, y->state);
}

/* Puts a summary read in parts into the order and shape get_job gives:
 * objects by samples (the first JOB_SUMMARY_MAX_OBJECTS), their kinds
 * summed over all of them, nodes by name, markers by phase. */
static int finish_summary(JobSummary *js) {
        size_t alloc = 0;
        int r;

        if (js->objects.n > 1)
                qsort(js->objects.items, js->objects.n, sizeof(Share), by_samples_then_name);
        for (size_t i = 0; i < js->objects.n; i++) {
                const Share *o = &js->objects.items[i];
                Share *k = NULL;

                for (size_t j = 0; j < js->kinds.n && !k; j++)
                        if (streq(js->kinds.items[j].name, o->kind))
                                k = &js->kinds.items[j];
                if (!k) {
                        r = grow((void **) &js->kinds.items, js->kinds.n, &alloc, sizeof(Share));
                        if (r < 0)
                                return r;
                        k = &js->kinds.items[js->kinds.n++];
                        *k = (Share) { .name = o->kind, .cpu_time_ns = STORAGE_NULL, .cycles = STORAGE_NULL,
                                       .instructions = STORAGE_NULL, .first_seen = NAN, .last_seen = NAN };
                }
                k->samples = sum_nullable(k->samples, o->samples);
                k->cpu_seconds += o->cpu_seconds;
                k->cpu_time_ns = sum_nullable(k->cpu_time_ns, o->cpu_time_ns);
                k->cycles = sum_nullable(k->cycles, o->cycles);
                k->instructions = sum_nullable(k->instructions, o->instructions);
        }
        if (js->kinds.n > 1)
                qsort(js->kinds.items, js->kinds.n, sizeof(Share), by_samples_then_name);
        if (js->objects.n > JOB_SUMMARY_MAX_OBJECTS) {
                js->objects.n = JOB_SUMMARY_MAX_OBJECTS;
                js->objects_truncated = true;
        }
        if (js->nodes.n > 1)
                qsort(js->nodes.items, js->nodes.n, sizeof(Share), by_share_name);
        if (js->n_markers > 1)
                qsort(js->markers, js->n_markers, sizeof(Marker), by_marker);
        return 0;
}

static void names_free(Hashmap *h) {
        Names *n;
        size_t i;

        HASHMAP_FOREACH(n, h, i)
                free(n);
        hashmap_free(h);
}

static int sqlite_list_job_summaries(Storage *base, const JobFilter *f, JobWant want, void *userdata,
                                     JobSummaryList *ret) {
        SqlStorage *s = (SqlStorage *) base;
        _cleanup_(job_query_done) JobQuery q = {};
        _cleanup_free_ char *ids = NULL;
        JobSummaryList l = {};
        SummaryRead x = { .l = &l };
        DbStmt *st;
        size_t n_alloc = 0;
        int r, rc = 0;

        if (f->sort < 0 || f->sort >= _JOB_SORT_MAX)
                return -EINVAL;
        r = job_query_init(&q, f);
        if (r < 0)
                return r;
        x.jobs = hashmap_new(&uint64_hash_ops);
        x.names[0] = hashmap_new(&uint64_hash_ops);
        x.names[1] = hashmap_new(&uint64_hash_ops);
        if (!x.jobs || !x.names[0] || !x.names[1]) {
                r = -ENOMEM;
                goto free;
        }

        reader_acquire(s, &x.c);
        /* one read transaction: the parts of each summary add up */
        r = conn_begin_read(x.c);
        if (r < 0)
                goto release;
        r = summary_page(&x, &q, f, want, userdata, &ids);
        if (r >= 0)
                r = summary_stmt(&x, STMT_SUMMARY_JOBS, ids, &st);
        while (r >= 0 && (rc = db_step(st)) == 1) {
                int64_t id;

                if ((r = grow((void **) &l.items, l.n, &n_alloc, sizeof(JobSummary))) < 0 ||
                    (r = read_job_info(st, &l.items[l.n++].info, &id)) < 0 ||
                    (r = hashmap_put(x.jobs, INT_TO_KEY(id), (void *) (uintptr_t) l.n)) < 0)
                        break;
        }
        if (r >= 0 && rc != 0)
                r = step_errno(rc);
        if (r >= 0 && l.n > 0) {
                x.alloc = calloc(l.n, sizeof(*x.alloc));
                if (!x.alloc)
                        r = -ENOMEM;
        }
        for (int part = 0; r >= 0 && l.n > 0 && part < _PART_MAX; part++)
                r = read_summary_part(&x, ids, part);
        reader_release_stmts(x.c);
        (void) conn_exec(x.c, "COMMIT");
release:
        reader_release(s, x.c);
        for (size_t i = 0; r >= 0 && i < l.n; i++)
                r = finish_summary(&l.items[i]);
free:
        free(x.alloc);
        hashmap_free(x.jobs);
        names_free(x.names[0]);
        names_free(x.names[1]);
        if (r < 0) {
                job_summary_list_free(&l);
                return r;
        }
        *ret = l;
        return 0;
}

/* An object's sums over the range, while list_objects adds them up. */
typedef struct ObjectSum {
        int64_t id, samples;
        double cpu_seconds;
        char *path, *kind;
} ObjectSum;

static int by_name(const void *a, const void *b) {
        const ObjectSum *x = a, *y = b;
        int c = strcmp(x->path, y->path);

        return c ? c : strcmp(x->kind, y->kind);
}

static int by_samples(const void *a, const void *b) {
        const ObjectSum *x = a, *y = b;

        if (x->samples != y->samples)
                return x->samples < y->samples ? 1 : -1;
        return by_name(a, b);
}

/* Reads the rows of the range (object, samples, CPU seconds) and sums them
 * per object in v, and all of them in ol. */
/* Adds the sums of one grain's rows in [since, until). */
/* Adds one row of sums to the range's: every row counts to the total,
 * only the kind asked for is named. */
static int object_sum_add(int64_t id, int64_t samples, double cpu, Hashmap *only, Hashmap *index, ObjectSum **v,
                          size_t *n, size_t *alloc, ObjectList *ol) {
        ObjectSum *x;
        void *p;
        int r;

        ol->total_samples = __builtin_add_overflow(ol->total_samples, samples, &ol->total_samples)
                                    ? INT64_MAX : ol->total_samples;
        ol->total_cpu_seconds += cpu;
        if (only && !hashmap_get(only, INT_TO_KEY(id)))
                return 0;
        p = hashmap_get(index, INT_TO_KEY(id));
        if (p)
                x = &(*v)[(uintptr_t) p - 1];
        else {
                if ((r = grow((void **) v, *n, alloc, sizeof(ObjectSum))) < 0 ||
                    (r = hashmap_put(index, INT_TO_KEY(id), (void *) (uintptr_t) (*n + 1))) < 0)
                        return r;
                x = &(*v)[(*n)++];
                x->id = id;
        }
        /* each stored sum is within int64, a range of them need not be */
        x->samples = __builtin_add_overflow(x->samples, samples, &x->samples) ? INT64_MAX : x->samples;
        x->cpu_seconds += cpu;
        return 0;
}

static int add_object_rows(Conn *c, Stmt which, int64_t since, int64_t until, Hashmap *only, Hashmap *index,
                           ObjectSum **v, size_t *n, size_t *alloc, ObjectList *ol) {
        DbStmt *st;
        int r, rc;

        if (since >= until)
                return 0;
        r = conn_stmt(c, which, &st);
        if (r < 0 || (r = bind_int(st, 1, since)) < 0 || (r = bind_int(st, 2, until)) < 0)
                return r;
        while ((rc = db_step(st)) == 1)
                if ((r = object_sum_add(db_column_int(st, 0), db_column_int(st, 1),
                                        db_column_double(st, 2), only, index, v, n, alloc, ol)) < 0) {
                        db_reset(st);
                        return r;
                }
        db_reset(st);
        return rc == 0 ? 0 : step_errno(rc);
}

/* The objects of a scope's jobs that ran in [since, until): each job's
 * sums (job_objects, which has no time) times the part of the job inside
 * the range. The job list's indexes (schema/0006) find the account's or the
 * partition's jobs by last_seen. */
static int add_scoped_object_rows(Conn *c, const JobScope *scope, int64_t since, int64_t until, Hashmap *only,
                                  Hashmap *index, ObjectSum **v, size_t *n, size_t *alloc, ObjectList *ol) {
        char sql[512];
        DbStmt *st = NULL;
        int r, rc, i = 3;
        char account[32] = "", partition[32] = "", cluster[32] = "";

        /* numbered: the dialects number a '?' after "?2" differently */
        if (scope->account)
                snprintf(account, sizeof(account), " AND j.account = ?%d", i++);
        if (scope->partition)
                snprintf(partition, sizeof(partition), " AND j.partition_name = ?%d", i++);
        if (scope->cluster)
                snprintf(cluster, sizeof(cluster), " AND j.cluster = ?%d", i++);
        i = 3;
        snprintf(sql, sizeof(sql),
                 "SELECT jo.object_id, jo.samples, jo.cpu_seconds, j.first_seen, j.last_seen FROM jobs j "
                 "JOIN job_objects jo ON jo.job_id = j.id WHERE j.last_seen >= ?1 AND j.first_seen < ?2%s%s%s",
                 account, partition, cluster);
        r = db_prepare(c->db, sql, false, &st);
        if (r < 0 || (r = bind_int(st, 1, since)) < 0 || (r = bind_int(st, 2, until)) < 0 ||
            (scope->account && (r = bind_text(st, i++, scope->account)) < 0) ||
            (scope->partition && (r = bind_text(st, i++, scope->partition)) < 0) ||
            (scope->cluster && (r = bind_text(st, i++, scope->cluster)) < 0)) {
                db_finalize(st);
                return r;
        }
        while ((rc = db_step(st)) == 1) {
                double first = db_column_double(st, 3), last = db_column_double(st, 4);
                double in = MIN(last, (double) until) - MAX(first, (double) since), part = 1;

                if (last - first > 0)
                        part = MIN(MAX(in / (last - first), 0.0), 1.0);
                r = object_sum_add(db_column_int(st, 0), llround((double) db_column_int(st, 1) * part),
                                   db_column_double(st, 2) * part, only, index, v, n, alloc, ol);
                if (r < 0)
                        break;
        }
        if (r >= 0 && rc != 0)
                r = step_errno(rc);
        db_finalize(st);
        return r;
}

/* The range's rows: hours, or days, with whole weeks inside a range of
 * days read as weeks (the days at its edges as days). */
/* The ids of the objects of a kind, for sum_objects() to name only those. */
static int kind_ids(Conn *c, const char *kind, Hashmap **ret) {
        _cleanup_(hashmap_freep) Hashmap *h = hashmap_new(&uint64_hash_ops);
        DbStmt *st;
        int r, rc;

        if (!h)
                return -ENOMEM;
        r = conn_stmt(c, STMT_OBJECT_IDS_OF_KIND, &st);
        if (r < 0 || (r = bind_text(st, 1, kind)) < 0)
                return r;
        while ((rc = db_step(st)) == 1)
                if ((r = hashmap_put(h, INT_TO_KEY(db_column_int(st, 0)), (void *) 1)) < 0)
                        return r;
        db_reset(st);
        if (rc != 0)
                return step_errno(rc);
        *ret = TAKE_PTR(h);
        return 0;
}

static int sum_objects(Conn *c, const ObjectList *range, const char *kind, const JobScope *scope, ObjectSum **v,
                       size_t *n, ObjectList *ol) {
        _cleanup_(hashmap_freep) Hashmap *index = hashmap_new(&uint64_hash_ops), *only = NULL;
        size_t alloc = 0;
        int r;

        if (!index)
                return -ENOMEM;
        if (kind && (r = kind_ids(c, kind, &only)) < 0)
                return r;
        if (scope && job_scope_any(scope))
                return add_scoped_object_rows(c, scope, range->since, range->until, only, index, v, n, &alloc, ol);
        if (range->grain != DAY_SECONDS)
                return add_object_rows(c, STMT_OBJECT_HOURS, range->since, range->until, only, index, v, n, &alloc,
                                       ol);
        /* [since, until) in the coarsest whole buckets: days at the edges,
         * then weeks, then four-week periods in the middle (a period is
         * four weeks from the epoch, so its edges are weeks' edges) */
        {
                static const struct {
                        Stmt stmt;
                        int64_t seconds;
                } ladder[] = {
                        { STMT_OBJECT_DAYS, DAY_SECONDS },
                        { STMT_OBJECT_WEEKS, WEEK_SECONDS },
                        { STMT_OBJECT_PERIODS, PERIOD_SECONDS },
                };
                int64_t lo = range->since, hi = range->until;

                for (size_t g = 0;; g++) {
                        int64_t next, a, b;

                        if (g + 1 == ELEMENTSOF(ladder))
                                return add_object_rows(c, ladder[g].stmt, lo, hi, only, index, v, n, &alloc, ol);
                        next = ladder[g + 1].seconds;
                        a = lo + (next - lo % next) % next;
                        b = hi - hi % next;
                        if (b <= a) /* no whole bucket of the next grain */
                                return add_object_rows(c, ladder[g].stmt, lo, hi, only, index, v, n, &alloc, ol);
                        if ((r = add_object_rows(c, ladder[g].stmt, lo, a, only, index, v, n, &alloc, ol)) < 0 ||
                            (r = add_object_rows(c, ladder[g].stmt, b, hi, only, index, v, n, &alloc, ol)) < 0)
                                return r;
                        lo = a;
                        hi = b;
                }
        }
}

/* Site-wide time per object: the sums of the range are added up here, not
 * by SQL, whose GROUP BY sorts every row first; then named, merged over
 * build ids (same path and kind), and the largest kept. Ranges of a week or
 * more read whole days, shorter ones whole hours. */
static int sqlite_list_objects(Storage *base, const ObjectFilter *f, ObjectList *ret) {
        SqlStorage *s = (SqlStorage *) base;
        const char *kind = f->kind >= 0 ? code_kind_to_string(f->kind) : NULL;
        ObjectSum *v = NULL;
        ObjectList ol = {};
        size_t n = 0, m = 0;
        DbStmt *st;
        Conn *c;
        int r, rc;

        ol.grain = f->until - f->since >= OBJECT_DAYS_FROM ? DAY_SECONDS : BUCKET_SECONDS;
        /* whole hours or days: the rollups have no finer grain; a scope's
         * jobs are prorated to the range as it is */
        if (job_scope_any(&f->scope))
                ol.grain = 0;
        ol.since = ol.grain ? f->since - ((f->since % ol.grain) + ol.grain) % ol.grain : f->since;
        ol.until = f->until;

        reader_acquire(s, &c);
        /* one read transaction, not one per name looked up */
        r = conn_begin_read(c);
        if (r >= 0)
                r = sum_objects(c, &ol, kind, &f->scope, &v, &n, &ol);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                if ((r = conn_stmt(c, STMT_OBJECT_NAME, &st)) < 0 || (r = bind_int(st, 1, v[i].id)) < 0)
                        break;
                rc = db_step(st);
                if (rc != 1) {
                        r = rc == 0 ? -ENOENT : step_errno(rc);
                        break;
                }
                v[i].path = column_strdup(st, 0, &r);
                v[i].kind = column_strdup(st, 1, &r);
                db_reset(st);
        }
        reader_release_stmts(c);
        (void) conn_exec(c, "COMMIT");
        reader_release(s, c);
        if (r < 0)
                goto finish;

        /* the kind asked for, each path once */
        if (n > 1)
                qsort(v, n, sizeof(*v), by_name);
        for (size_t i = 0; i < n; i++) {
                if (kind && !streq(v[i].kind, kind))
                        continue;
                if (m > 0 && by_name(&v[m - 1], &v[i]) == 0) {
                        if (__builtin_add_overflow(v[m - 1].samples, v[i].samples, &v[m - 1].samples))
                                v[m - 1].samples = INT64_MAX;
                        v[m - 1].cpu_seconds += v[i].cpu_seconds;
                        continue;
                }
                if (m != i) {
                        ObjectSum t = v[m];

                        v[m] = v[i];
                        v[i] = t;
                }
                m++;
        }
        if (m > 1)
                qsort(v, m, sizeof(*v), by_samples);

        ol.objects.items = calloc(MIN(m, (size_t) f->limit) ?: 1, sizeof(Share));
        if (!ol.objects.items) {
                r = -ENOMEM;
                goto finish;
        }
        for (size_t i = 0; i < m && i < f->limit; i++) {
                Share *x = &ol.objects.items[ol.objects.n++];

                x->name = TAKE_PTR(v[i].path);
                x->kind = TAKE_PTR(v[i].kind);
                x->samples = v[i].samples;
                x->cpu_seconds = v[i].cpu_seconds;
                x->cpu_time_ns = x->cycles = x->instructions = STORAGE_NULL;
                x->first_seen = x->last_seen = NAN;
        }

finish:
        for (size_t i = 0; i < n; i++) {
                free(v[i].path);
                free(v[i].kind);
        }
        free(v);
        if (r < 0) {
                object_list_free(&ol);
                return r;
        }
        *ret = ol;
        return 0;
}

/* Installed packages and the samples of their files in the range: the
 * range's object sums (as list_objects adds them), then each package's
 * sampled objects, by path. */
static int sqlite_list_packages(Storage *base, const PackageFilter *f, PackageList *ret) {
        SqlStorage *s = (SqlStorage *) base;
        _cleanup_(hashmap_freep) Hashmap *by_object = NULL, *by_package = hashmap_new(&uint64_hash_ops);
        ObjectList range = {};
        ObjectSum *v = NULL;
        PackageList pl = {};
        size_t n = 0, alloc = 0;
        DbStmt *st;
        Conn *c;
        int r, rc;

        if (!by_package)
                return -ENOMEM;
        range.grain = job_scope_any(&f->scope) ? 0 : f->until - f->since >= OBJECT_DAYS_FROM ? DAY_SECONDS
                                                                                             : BUCKET_SECONDS;
        range.since = range.grain ? f->since - ((f->since % range.grain) + range.grain) % range.grain : f->since;
        range.until = f->until;

        reader_acquire(s, &c);
        r = conn_begin_read(c);
        if (r >= 0)
                r = sum_objects(c, &range, NULL, &f->scope, &v, &n, &range);
        if (r >= 0 && !(by_object = hashmap_new(&uint64_hash_ops)))
                r = -ENOMEM;
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = hashmap_put(by_object, INT_TO_KEY(v[i].id), &v[i]);
        if (r >= 0)
                r = conn_stmt(c, STMT_PACKAGES_INSTALLED, &st);
        while (r >= 0 && (rc = db_step(st)) == 1) {
                PackageUse *p;

                if ((r = grow((void **) &pl.items, pl.n, &alloc, sizeof(PackageUse))) < 0)
                        break;
                p = &pl.items[pl.n++];
                *p = (PackageUse) {
                        .manager = column_strdup(st, 1, &r), .name = column_strdup(st, 2, &r),
                        .version = column_strdup(st, 3, &r), .arch = column_strdup(st, 4, &r),
                        .prefix = column_strdup(st, 5, &r), .size = db_column_int(st, 6),
                        .nodes = db_column_int(st, 7), .last_seen = -1,
                };
                if (r >= 0)
                        r = hashmap_put(by_package, INT_TO_KEY(db_column_int(st, 0)), (void *) (uintptr_t) pl.n);
        }
        if (r >= 0 && rc != 0)
                r = step_errno(rc);
        if (r >= 0)
                r = conn_stmt(c, STMT_PACKAGE_OBJECTS, &st);
        /* grow() may move items: looked up by index */
        while (r >= 0 && (rc = db_step(st)) == 1) {
                uintptr_t k = (uintptr_t) hashmap_get(by_package, INT_TO_KEY(db_column_int(st, 0)));
                ObjectSum *o = hashmap_get(by_object, INT_TO_KEY(db_column_int(st, 1)));
                PackageUse *p;

                if (k == 0)
                        continue;
                p = &pl.items[k - 1];
                p->files++;
                if (!db_column_null(st, 2))
                        p->last_seen = MAX(p->last_seen, db_column_int(st, 2));
                if (o) {
                        p->samples = __builtin_add_overflow(p->samples, o->samples, &p->samples) ? INT64_MAX : p->samples;
                        p->cpu_seconds += o->cpu_seconds;
                }
        }
        if (r >= 0 && rc != 0)
                r = step_errno(rc);
        reader_release_stmts(c);
        (void) conn_exec(c, "COMMIT");
        reader_release(s, c);
        for (size_t i = 0; i < n; i++) {
                free(v[i].path);
                free(v[i].kind);
        }
        free(v);
        if (r < 0) {
                package_list_free(&pl);
                return r;
        }
        if (f->unused) {
                size_t m = 0;

                for (size_t i = 0; i < pl.n; i++) {
                        if (pl.items[i].samples == 0) {
                                PackageUse t = pl.items[m];

                                pl.items[m++] = pl.items[i];
                                pl.items[i] = t;
                        }
                }
                for (size_t i = m; i < pl.n; i++) {
                        free(pl.items[i].manager);
                        free(pl.items[i].name);
                        free(pl.items[i].version);
                        free(pl.items[i].arch);
                        free(pl.items[i].prefix);
                }
                pl.n = m;
        }
        pl.total_samples = range.total_samples;
        pl.since = range.since;
        pl.until = range.until;
        pl.grain = range.grain;
        *ret = pl;
        return 0;
}

/* The package that installed an executable, looked up once per object
 * (NULL: none known). */
static int object_package(Conn *c, Hashmap *cache, int64_t object, char **ret) {
        DbStmt *st;
        char *name = NULL;
        void *v;
        int r = 0, rc;

        *ret = NULL;
        if (object <= 0)
                return 0;
        if (hashmap_get2(cache, INT_TO_KEY(object), &v, NULL)) {
                if (v && !(*ret = strdup(v)))
                        return -ENOMEM;
                return 0;
        }
        if ((r = conn_stmt(c, STMT_OBJECT_PACKAGE, &st)) < 0 || (r = bind_int(st, 1, object)) < 0)
                return r;
        rc = db_step(st);
        if (rc == 1)
                name = column_strdup(st, 0, &r);
        db_reset(st);
        if (rc != 1 && rc != 0)
                return step_errno(rc);
        if (r < 0 || (r = hashmap_put(cache, INT_TO_KEY(object), name)) < 0) {
                free(name);
                return r;
        }
        if (name && !(*ret = strdup(name)))
                return -ENOMEM;
        return 0;
}

static void package_cache_free(Hashmap *h) {
        void *v;
        size_t i = 0;

        while (hashmap_iterate(h, &i, &v, NULL))
                free(v);
        hashmap_free(h);
}

static int mix_key_fill(AppMixKey *k, const char *app, int64_t object, const char *user, const char *account,
                        const char *partition) {
        k->from_note = object == 0 && app && *app;
        k->from_command = object < 0;
        if (!(k->app = strdup(app ?: "")) || !(k->user = strdup(user ?: "")) ||
            !(k->account = strdup(account ?: "")) || !(k->partition = strdup(partition ?: "")))
                return -ENOMEM;
        return 0;
}

static int mix_add_day(AppMixList *l, size_t *alloc, DbStmt *st, int col_day, int col_sums, size_t key) {
        int r = grow((void **) &l->days, l->n_days, alloc, sizeof(AppMixDay));

        if (r < 0)
                return r;
        l->days[l->n_days++] = (AppMixDay) {
                .day = db_column_int(st, col_day), .key = key,
                .samples = db_column_int(st, col_sums), .cpu_seconds = db_column_double(st, col_sums + 1),
                .runs = db_column_int(st, col_sums + 2),
        };
        return 0;
}

/* Unfiltered: one dimension's rows (app_dim_days), a key per value. */
static int mix_read_dim(Conn *c, const AppMixFilter *f, Hashmap *packages, AppMixList *l) {
        _cleanup_(hashmap_freep) Hashmap *index = hashmap_new(&string_hash_ops);
        size_t days_alloc = 0, keys_alloc = 0;
        DbStmt *st;
        int r, rc;

        if (!index)
                return -ENOMEM;
        if ((r = conn_stmt(c, STMT_APP_DIM_DAYS, &st)) < 0 || (r = bind_int(st, 1, f->by)) < 0 ||
            (r = bind_int(st, 2, l->since)) < 0 || (r = bind_int(st, 3, l->until)) < 0)
                return r;
        while ((rc = db_step(st)) == 1) {
                const char *value = db_column_text(st, 1) ?: "";
                int64_t object = db_column_int(st, 2);
                char name[32 + 4096], *copy;
                uintptr_t k;

                /* the app with its executable: one key per pair */
                snprintf(name, sizeof(name), "%" PRId64 "/%s", object, value);
                k = (uintptr_t) hashmap_get(index, name);
                if (k == 0) {
                        AppMixKey *key;

                        if ((r = grow((void **) &l->keys, l->n_keys, &keys_alloc, sizeof(AppMixKey))) < 0)
                                break;
                        key = &l->keys[l->n_keys++];
                        *key = (AppMixKey) {};
                        r = f->by == APP_MIX_BY_APP ? mix_key_fill(key, value, object, NULL, NULL, NULL) :
                            f->by == APP_MIX_BY_USER ? mix_key_fill(key, NULL, 0, value, NULL, NULL) :
                            f->by == APP_MIX_BY_ACCOUNT ? mix_key_fill(key, NULL, 0, NULL, value, NULL) :
                                                          mix_key_fill(key, NULL, 0, NULL, NULL, value);
                        if (r >= 0 && f->by == APP_MIX_BY_APP)
                                r = object_package(c, packages, object, &key->package);
                        if (r < 0)
                                break;
                        k = l->n_keys;
                        /* the index keeps its own copy of the name */
                        copy = strdup(name);
                        if (!copy || (r = hashmap_put(index, copy, (void *) k)) < 0) {
                                free(copy);
                                r = copy ? r : -ENOMEM;
                                break;
                        }
                }
                if ((r = mix_add_day(l, &days_alloc, st, 0, 3, k - 1)) < 0)
                        break;
        }
        db_reset(st);
        {
                const void *key;
                size_t i = 0;

                while (hashmap_iterate(index, &i, NULL, &key))
                        free((void *) key);
        }
        if (r < 0)
                return r;
        return rc == 0 ? 0 : step_errno(rc);
}

/* Filtered: the days of the keys that match, through mix_keys' indexes
 * (or, for an application alone, every key of the range), then each key
 * once. */
static int mix_read_keys(Conn *c, const AppMixFilter *f, Hashmap *packages, AppMixList *l) {
        _cleanup_(hashmap_freep) Hashmap *index = hashmap_new(&uint64_hash_ops);
        size_t days_alloc = 0, keys_alloc = 0;
        int64_t *key_ids = NULL;
        char sql[512];
        DbStmt *st = NULL;
        int r, rc = 0, i = 3;

        if (!index)
                return -ENOMEM;
        char user[32] = "", account[32] = "", partition[32] = "";

        /* numbered: the dialects number a '?' after "?2" differently */
        if (f->user)
                snprintf(user, sizeof(user), " AND k.user_name = ?%d", i++);
        if (f->account)
                snprintf(account, sizeof(account), " AND k.account = ?%d", i++);
        if (f->partition)
                snprintf(partition, sizeof(partition), " AND k.partition_name = ?%d", i++);
        i = 3;
        snprintf(sql, sizeof(sql),
                 "SELECT d.day, d.mix_key, d.samples, d.cpu_seconds, d.runs FROM mix_keys k JOIN app_days d "
                 "ON d.mix_key = k.id AND d.day >= ?1 AND d.day < ?2 WHERE TRUE%s%s%s",
                 user, account, partition);
        r = db_prepare(c->db, sql, false, &st);
        if (r >= 0 && (r = bind_int(st, 1, l->since)) >= 0 && (r = bind_int(st, 2, l->until)) >= 0 &&
            (!f->user || (r = bind_text(st, i++, f->user)) >= 0) &&
            (!f->account || (r = bind_text(st, i++, f->account)) >= 0) && f->partition)
                r = bind_text(st, i++, f->partition);
        while (r >= 0 && (rc = db_step(st)) == 1) {
                int64_t id = db_column_int(st, 1);
                uintptr_t k = (uintptr_t) hashmap_get(index, INT_TO_KEY(id));

                if (k == 0) {
                        if ((r = grow((void **) &key_ids, l->n_keys, &keys_alloc, sizeof(int64_t))) < 0)
                                break;
                        key_ids[l->n_keys++] = id;
                        k = l->n_keys;
                        if ((r = hashmap_put(index, INT_TO_KEY(id), (void *) k)) < 0)
                                break;
                }
                r = mix_add_day(l, &days_alloc, st, 0, 2, k - 1);
        }
        if (r >= 0 && rc != 0)
                r = step_errno(rc);
        db_finalize(st);
        if (r >= 0 && l->n_keys > 0 && !(l->keys = calloc(l->n_keys, sizeof(AppMixKey))))
                r = -ENOMEM;
        for (size_t n = 0; r >= 0 && n < l->n_keys; n++) {
                AppMixKey *k = &l->keys[n];
                int64_t object;

                if ((r = conn_stmt(c, STMT_MIX_KEY, &st)) < 0 || (r = bind_int(st, 1, key_ids[n])) < 0)
                        break;
                rc = db_step(st);
                if (rc != 1) {
                        db_reset(st);
                        r = rc == 0 ? -EIO : step_errno(rc);
                        break;
                }
                object = db_column_int(st, 1);
                r = mix_key_fill(k, db_column_text(st, 0), object,
                                 db_column_text(st, 2), db_column_text(st, 3),
                                 db_column_text(st, 4));
                db_reset(st);
                if (r >= 0)
                        r = object_package(c, packages, object, &k->package);
        }
        free(key_ids);
        return r;
}

/* The application mix over whole UTC days. */
static int sqlite_list_app_mix(Storage *base, const AppMixFilter *f, AppMixList *ret) {
        SqlStorage *s = (SqlStorage *) base;
        Hashmap *packages = hashmap_new(&uint64_hash_ops);
        AppMixList l = {};
        Conn *c;
        int r;

        if (!packages)
                return -ENOMEM;
        l.since = f->since - ((f->since % DAY_SECONDS) + DAY_SECONDS) % DAY_SECONDS;
        l.until = f->until - ((f->until % DAY_SECONDS) + DAY_SECONDS) % DAY_SECONDS;
        if (l.until < f->until)
                l.until += DAY_SECONDS;

        reader_acquire(s, &c);
        r = conn_begin_read(c);
        if (r >= 0)
                r = f->user || f->account || f->partition || f->app ? mix_read_keys(c, f, packages, &l)
                                                                     : mix_read_dim(c, f, packages, &l);
        reader_release_stmts(c);
        (void) conn_exec(c, "COMMIT");
        reader_release(s, c);
        package_cache_free(packages);
        if (r < 0) {
                app_mix_list_free(&l);
                return r;
        }
        *ret = l;
        return 0;
}

/* ---- retention ---- */

typedef struct PruneStep {
        SqlStorage *s;
        int64_t before;
        int64_t budget;         /* rows this step may still delete */
        PruneResult *res;
} PruneStep;

static int prune_exec(PruneStep *p, DbStmt *st, uint64_t *count) {
        int64_t n;
        int r = step_changes(st, &n);

        if (r < 0)
                return r;
        *count += (uint64_t) n;
        p->budget -= n;
        return 0;
}

/* One job's raw rows: its per-batch time line, then its sample rows an
 * hour at a time. 1: all gone, 0: the budget ran out first. */
static int prune_job(PruneStep *p, int64_t job_id) {
        Conn *c = &p->s->writer;
        DbStmt *st;
        int r;

        if ((r = conn_stmt(c, STMT_PRUNE_JOB_TIMELINE, &st)) < 0 || (r = bind_int(st, 1, job_id)) < 0 ||
            (r = prune_exec(p, st, &p->res->timeline)) < 0)
                return r;
        while (p->budget > 0) {
                int64_t bucket;
                int rc;

                if ((r = conn_stmt(c, STMT_PRUNE_JOB_BUCKET, &st)) < 0 || (r = bind_int(st, 1, job_id)) < 0)
                        return r;
                rc = db_step(st);
                if (rc != 1) {
                        db_reset(st);
                        return step_errno(rc);
                }
                if (db_column_null(st, 0)) {
                        db_reset(st);
                        return 1;
                }
                bucket = db_column_int(st, 0);
                db_reset(st);
                if ((r = conn_stmt(c, STMT_PRUNE_JOB_SAMPLES, &st)) < 0 || (r = bind_int(st, 1, job_id)) < 0 ||
                    (r = bind_int(st, 2, bucket)) < 0 || (r = prune_exec(p, st, &p->res->samples)) < 0)
                        return r;
        }
        return 0;
}

/* The jobs last seen before the horizon, in the order of (last_seen, id)
 * from where the last step left off (schema/0014). 1: every such job done. */
static int prune_jobs(PruneStep *p) {
        enum { JOBS_PER_STEP = 64 };
        Conn *c = &p->s->writer;
        int64_t ids[JOBS_PER_STEP], mark_id;
        double seen[JOBS_PER_STEP], mark_seen;
        DbStmt *st;
        bool done = true;
        size_t n = 0;
        int r = 0, rc;

        if ((r = conn_stmt(c, STMT_PRUNE_MARK_GET, &st)) < 0)
                return r;
        rc = db_step(st);
        if (rc != 1) {
                db_reset(st);
                return rc == 0 ? -EIO : step_errno(rc);
        }
        mark_seen = db_column_double(st, 0);
        mark_id = (int64_t) db_column_double(st, 1);
        db_reset(st);
        if (mark_seen >= (double) p->before)
                return 1;
        if ((r = conn_stmt(c, STMT_PRUNE_JOBS, &st)) < 0 || (r = bind_double(st, 1, mark_seen)) < 0 ||
            (r = bind_int(st, 2, mark_id)) < 0 || (r = bind_int(st, 3, p->before)) < 0 ||
            (r = bind_int(st, 4, JOBS_PER_STEP)) < 0)
                return r;
        while (n < JOBS_PER_STEP && (rc = db_step(st)) == 1) {
                ids[n] = db_column_int(st, 0);
                seen[n++] = db_column_double(st, 1);
        }
        db_reset(st);
        if (n < JOBS_PER_STEP && rc != 0)
                return step_errno(rc);
        for (size_t i = 0; i < n; i++) {
                r = prune_job(p, ids[i]);
                if (r < 0)
                        return r;
                if (r == 0) {
                        done = false;
                        break;
                }
                mark_seen = seen[i];
                mark_id = ids[i];
        }
        /* fewer jobs than asked for and all done: everything before the horizon */
        if (n < JOBS_PER_STEP && done) {
                mark_seen = (double) p->before;
                mark_id = 0;
        }
        if ((r = conn_stmt(c, STMT_PRUNE_MARK_SET, &st)) < 0 || (r = bind_double(st, 1, mark_seen)) < 0 ||
            (r = bind_int(st, 2, mark_id)) < 0 || (r = db_execute(st, false)) < 0)
                return r;
        return mark_seen >= (double) p->before;
}

/* Samples of work outside jobs (job 0) before the horizon, an hour and a
 * node at a time. 1: none left. */
static int prune_outside_jobs(PruneStep *p) {
        Conn *c = &p->s->writer;
        DbStmt *st;
        int r, rc;

        while (p->budget > 0) {
                int64_t bucket, node;

                if ((r = conn_stmt(c, STMT_PRUNE_IDLE_NEXT, &st)) < 0 || (r = bind_int(st, 1, p->before)) < 0)
                        return r;
                rc = db_step(st);
                if (rc != 1) {
                        db_reset(st);
                        return rc == 0 ? 1 : step_errno(rc);
                }
                bucket = db_column_int(st, 0);
                node = db_column_int(st, 1);
                db_reset(st);
                if ((r = conn_stmt(c, STMT_PRUNE_IDLE, &st)) < 0 || (r = bind_int(st, 1, bucket)) < 0 ||
                    (r = bind_int(st, 2, node)) < 0 || (r = prune_exec(p, st, &p->res->samples)) < 0)
                        return r;
        }
        return 0;
}

/* The receipts of batches received before the horizon: per (node, boot),
 * whose sequence numbers grow with time, the oldest prefix. The walk over
 * the groups goes on where the last step left it. 1: a whole walk done. */
static int prune_batches(PruneStep *p) {
        SqlStorage *s = p->s;
        Conn *c = &s->writer;
        DbStmt *st;
        int r, rc;

        while (p->budget > 0) {
                int64_t last = -1, node;
                char boot[sizeof(s->prune_boot)];
                const unsigned char *t;

                if ((r = conn_stmt(c, STMT_PRUNE_BATCH_GROUP, &st)) < 0 || (r = bind_int(st, 1, s->prune_node)) < 0 ||
                    (r = bind_text(st, 2, s->prune_boot)) < 0)
                        return r;
                rc = db_step(st);
                if (rc != 1) {
                        db_reset(st);
                        s->prune_node = 0;
                        s->prune_boot[0] = 0;
                        return rc == 0 ? 1 : step_errno(rc);
                }
                t = db_column_text(st, 1);
                node = db_column_int(st, 0);
                snprintf(boot, sizeof(boot), "%s", t ? (const char *) t : "");
                db_reset(st);

                if ((r = conn_stmt(c, STMT_PRUNE_BATCH_SEQS, &st)) < 0 || (r = bind_int(st, 1, node)) < 0 ||
                    (r = bind_text(st, 2, boot)) < 0 || (r = bind_int(st, 3, p->budget)) < 0)
                        return r;
                while ((rc = db_step(st)) == 1 && db_column_int(st, 1) < p->before)
                        last = db_column_int(st, 0);
                db_reset(st);
                if (rc != 1 && rc != 0)
                        return step_errno(rc);
                if (last >= 0 && ((r = conn_stmt(c, STMT_PRUNE_BATCHES, &st)) < 0 || (r = bind_int(st, 1, node)) < 0 ||
                                  (r = bind_text(st, 2, boot)) < 0 || (r = bind_int(st, 3, last)) < 0 ||
                                  (r = prune_exec(p, st, &p->res->batches)) < 0))
                        return r;
                /* the group's old prefix may go on beyond what was read: the
                 * next step starts with this group again */
                if (p->budget <= 0)
                        break;
                s->prune_node = node;
                memcpy(s->prune_boot, boot, sizeof(boot));
        }
        return 0;
}

static int sqlite_prune(Storage *base, int64_t before, unsigned max_rows, PruneResult *ret) {
        SqlStorage *s = (SqlStorage *) base;
        PruneStep p = { .s = s, .before = before, .budget = MAX(max_rows, 1u), .res = ret };
        Conn *c = &s->writer;
        int r, jobs = 0, outside = 0, batches = 0;

        *ret = (PruneResult) {};
        pthread_mutex_lock(&s->write_lock);
        r = db_begin_write(c->db);
        if (r >= 0 && (jobs = prune_jobs(&p)) < 0)
                r = jobs;
        if (r >= 0 && (outside = prune_outside_jobs(&p)) < 0)
                r = outside;
        if (r >= 0 && (batches = prune_batches(&p)) < 0)
                r = batches;
        if (r >= 0)
                r = conn_exec(c, "COMMIT");
        if (r < 0) {
                if (db_in_transaction(c->db))
                        (void) conn_exec(c, "ROLLBACK");
                *ret = (PruneResult) {};
        }
        pthread_mutex_unlock(&s->write_lock);
        ret->more = r >= 0 && !(jobs == 1 && outside == 1 && batches == 1);
        return r;
}

static int sqlite_list_nodes(Storage *base, NodeList *ret) {
        SqlStorage *s = (SqlStorage *) base;
        NodeList l = {};
        size_t alloc = 0;
        DbStmt *st;
        Conn *c;
        int r, rc;

        reader_acquire(s, &c);
        r = conn_stmt(c, STMT_NODES, &st);
        if (r < 0)
                goto finish;
        while ((rc = db_step(st)) == 1) {
                NodeInfo *n;

                r = grow((void **) &l.items, l.n, &alloc, sizeof(NodeInfo));
                if (r < 0)
                        goto finish;
                n = &l.items[l.n++];
                n->name = column_strdup(st, 0, &r);
                n->hostname = column_strdup(st, 1, &r);
                n->cluster = column_strdup(st, 2, &r);
                n->boot_id = column_strdup(st, 3, &r);
                n->cpus = db_column_int(st, 4);
                n->last_seq = db_column_int(st, 5);
                n->batches = db_column_int(st, 6);
                n->samples = db_column_int(st, 7);
                n->samples_lost = db_column_int(st, 8);
                n->first_seen = db_column_double(st, 9);
                n->last_seen = db_column_double(st, 10);
                n->last_push = db_column_int(st, 11);
                if (r < 0)
                        goto finish;
        }
        if (rc != 0)
                r = step_errno(rc);

finish:
        reader_release(s, c);
        if (r < 0) {
                node_list_free(&l);
                return r;
        }
        *ret = l;
        return 0;
}

static int read_run(Conn *c, int64_t job_id, RunFigures *f) {
        DbStmt *st;
        int r = 0, rc;

        if ((r = conn_stmt(c, STMT_RUN_INFO, &st)) < 0 || (r = bind_int(st, 1, job_id)) < 0)
                return r;
        rc = db_step(st);
        if (rc == 1) {
                f->size = column_strdup(st, 0, &r);
                f->exe = column_strdup(st, 1, &r);
                f->node_cpus = column_nullable_int(st, 2);
                f->cpus_alloc = column_nullable_int(st, 3);
        } else if (rc != 0)
                return step_errno(rc);
        if (r < 0)
                return r;

        return read_rank_rows(c, STMT_RUN_RANKS, job_id, &f->ranks, &f->n_ranks, &f->ranks_truncated);
}

static int sqlite_get_run_figures(Storage *base, const int64_t *row_ids, size_t n, RunFigures *ret) {
        SqlStorage *s = (SqlStorage *) base;
        Conn *c;
        int r;

        for (size_t i = 0; i < n; i++)
                ret[i] = (RunFigures) { .node_cpus = STORAGE_NULL, .cpus_alloc = STORAGE_NULL };
        reader_acquire(s, &c);
        r = conn_begin_read(c);
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = read_run(c, row_ids[i], &ret[i]);
        reader_release_stmts(c);
        (void) conn_exec(c, "COMMIT");
        reader_release(s, c);
        if (r < 0)
                run_figures_free(ret, n);
        return r;
}

static int sqlite_check(Storage *base) {
        SqlStorage *s = (SqlStorage *) base;
        DbStmt *st;
        int64_t n;
        Conn *c;
        int r;

        reader_acquire(s, &c);
        r = conn_stmt(c, STMT_CHECK, &st);
        if (r >= 0)
                r = step_id(st, &n);
        reader_release(s, c);
        return r;
}

static int sqlite_stats(Storage *base, StorageStats *ret) {
        SqlStorage *s = (SqlStorage *) base;
        uint64_t bytes = 0;
        Conn *c;
        int r;

        reader_acquire(s, &c);
        r = c->db->driver->size(c->db, &bytes);
        reader_release(s, c);
        if (r < 0)
                return r;
        *ret = (StorageStats) { .db_bytes = bytes };
        return 0;
}

/* ---- open, migrate, close ---- */

static int sqlite_migrate(Storage *base, unsigned *ret_from, unsigned *ret_to) {
        SqlStorage *s = (SqlStorage *) base;
        const SqlDialect *d = sql_dialect(s->driver->dialect);
        const SchemaMigration *migrations = d->migrations;
        unsigned current = 0, count = *d->n_migrations;
        Conn *c = &s->writer;
        DbStmt *st = NULL;
        int r, rc;

        pthread_mutex_lock(&s->write_lock);
        r = db_begin_write(c->db);
        if (r < 0)
                goto unlock;
        /* Two stores starting together on one server: the second waits
         * here until the first has migrated, then finds nothing to do. The
         * lock comes before the table is created, which would race too. */
        if (d->migrate_lock && (r = conn_exec(c, d->migrate_lock)) < 0)
                goto rollback;
        r = conn_exec(c, d->schema_version_table);
        if (r < 0)
                goto rollback;

        r = db_prepare(c->db, "SELECT version, name FROM schema_version ORDER BY version", false, &st);
        if (r < 0)
                goto rollback;
        while ((rc = db_step(st)) == 1) {
                int64_t v = db_column_int(st, 0);
                const char *name = db_column_text(st, 1);

                /* A database written by a newer lmk-store, or one whose
                 * history differs from ours, is not ours to change. */
                if (v != (int64_t) current + 1 || v > (int64_t) count || !name ||
                    !streq(name, migrations[v - 1].name)) {
                        r = -EPROTO;
                        goto rollback;
                }
                current = (unsigned) v;
        }
        if (rc != 0) {
                r = step_errno(rc);
                goto rollback;
        }
        db_finalize(st);
        st = NULL;

        for (unsigned v = current + 1; v <= count; v++) {
                const SchemaMigration *m = &migrations[v - 1];

                r = conn_exec(c, m->sql);
                if (r < 0)
                        goto rollback;
                r = db_prepare(c->db, "INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)",
                               false, &st);
                if (r < 0)
                        goto rollback;
                if ((r = bind_int(st, 1, v)) < 0 || (r = bind_text(st, 2, m->name)) < 0 ||
                    (r = bind_int(st, 3, (int64_t) time(NULL))) < 0 || (r = db_execute(st, false)) < 0)
                        goto rollback;
                db_finalize(st);
                st = NULL;
        }
        r = conn_exec(c, "COMMIT");
        if (r < 0)
                goto rollback;
        pthread_mutex_unlock(&s->write_lock);
        if (ret_from)
                *ret_from = current;
        if (ret_to)
                *ret_to = count;
        return 0;

rollback:
        db_finalize(st);
        (void) conn_exec(c, "ROLLBACK");
unlock:
        pthread_mutex_unlock(&s->write_lock);
        return r;
}

static void sqlite_close(Storage *base) {
        SqlStorage *s = (SqlStorage *) base;

        if (!s)
                return;
        for (unsigned i = 0; s->readers && i < s->n_readers; i++)
                conn_close(&s->readers[i]);
        free(s->readers);
        conn_close(&s->writer);
        if (s->object_ids) {
                caches_clear(s);
                hashmap_free(s->object_ids);
                hashmap_free(s->phase_ids);
                hashmap_free(s->task_ids);
        }
        pthread_mutex_destroy(&s->write_lock);
        pthread_mutex_destroy(&s->queue_lock);
        pthread_cond_destroy(&s->queue_cond);
        pthread_mutex_destroy(&s->readers_lock);
        pthread_cond_destroy(&s->readers_cond);
        free(s);
}

static int sql_open(const StorageOps *ops, const DbDriver *driver, const char *location, const StorageOptions *opts,
                    Storage **ret) {
        SqlStorage *s;
        int r;

        if (!location || !*location)
                return -EINVAL;
        s = calloc(1, sizeof(SqlStorage));
        if (!s)
                return -ENOMEM;
        s->base.ops = ops;
        s->driver = driver;
        s->opts = *opts;
        s->n_readers = MAX(opts->readers, 1u);
        pthread_mutex_init(&s->write_lock, NULL);
        pthread_mutex_init(&s->queue_lock, NULL);
        pthread_cond_init(&s->queue_cond, NULL);
        pthread_mutex_init(&s->readers_lock, NULL);
        pthread_cond_init(&s->readers_cond, NULL);
        s->object_ids = hashmap_new(&string_hash_ops);
        s->phase_ids = hashmap_new(&string_hash_ops);
        s->task_ids = hashmap_new(&string_hash_ops);
        s->readers = calloc(s->n_readers, sizeof(Conn));
        if (!s->object_ids || !s->phase_ids || !s->task_ids || !s->readers) {
                r = -ENOMEM;
                goto fail;
        }
        r = conn_open(&s->writer, driver, location, opts, true);
        if (r < 0)
                goto fail;
        for (unsigned i = 0; i < s->n_readers; i++) {
                r = conn_open(&s->readers[i], driver, location, opts, false);
                if (r < 0)
                        goto fail;
        }
        *ret = &s->base;
        return 0;

fail:
        sqlite_close(&s->base);
        return r;
}

static int sql_open_sqlite(const char *location, const StorageOptions *opts, Storage **ret) {
        return sql_open(&storage_sqlite_ops, &db_sqlite_driver, location, opts, ret);
}

/* The backends share everything but the driver they open. */
#define SQL_STORAGE_OPS(n, o)                                   \
        {                                                       \
                .name = n,                                      \
                .open = o,                                      \
                .migrate = sqlite_migrate,                      \
                .close = sqlite_close,                          \
                .ingest = sqlite_ingest,                        \
                .list_jobs = sqlite_list_jobs,                  \
                .get_job = sqlite_get_job,                      \
                .list_job_summaries = sqlite_list_job_summaries,\
                .list_objects = sqlite_list_objects,            \
                .list_nodes = sqlite_list_nodes,                \
                .list_packages = sqlite_list_packages,          \
                .get_run_figures = sqlite_get_run_figures,      \
                .list_app_mix = sqlite_list_app_mix,            \
                .prune = sqlite_prune,                          \
                .stats = sqlite_stats,                          \
                .check = sqlite_check,                          \
        }

const StorageOps storage_sqlite_ops = SQL_STORAGE_OPS("sqlite", sql_open_sqlite);

#if HAVE_LIBPQ
static int sql_open_postgresql(const char *location, const StorageOptions *opts, Storage **ret) {
        return sql_open(&storage_postgresql_ops, &db_postgresql_driver, location, opts, ret);
}

const StorageOps storage_postgresql_ops = SQL_STORAGE_OPS("postgresql", sql_open_postgresql);
#endif
