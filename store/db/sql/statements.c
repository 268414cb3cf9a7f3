/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The SQL text of every prepared statement, in the subset SQLite and
 * PostgreSQL both understand (ON CONFLICT ... DO UPDATE, RETURNING, CASE,
 * coalesce, '?' placeholders, numbered where one is used twice), and what
 * PostgreSQL spells differently in stmt_sql_postgresql[]. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "migrations.h"
#include "db/sql/statements.h"

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

/* A named event's sums (schema/0015): what a batch adds to each, and
 * the guard; count_with_instructions ≤ count and needs none of its own. */
#define ADD_EVENT_SUMS(t)                                                               \
        ADD(t, "count") ", " ADD(t, "samples") ", " ADD(t, "cpu_time_ns") ", "          \
        ADD(t, "instructions") ", " ADD(t, "count_with_instructions")
#define FITS_EVENT_SUMS(t)                                                              \
        FITS(t, "count") " AND " FITS(t, "samples") " AND " FITS(t, "cpu_time_ns") " AND " \
        FITS(t, "instructions")
#define SQL_EVENT_UPSERT(table, key)                                                    \
        "INSERT INTO " table " (job_id, " key ", role_id, count, samples, cpu_time_ns, instructions, " \
        "count_with_instructions) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "                     \
        "ON CONFLICT (job_id, " key ", role_id) DO UPDATE SET " ADD_EVENT_SUMS(table) " " \
        "WHERE " FITS_EVENT_SUMS(table)
#define EVENT_SUM_COLUMNS(e)                                                            \
        e ".count, " e ".samples, " e ".cpu_time_ns, " e ".instructions, " e ".count_with_instructions"
/* A node type's row t, as read_node_type() reads it */
#define NODE_TYPE_COLUMNS "t.id, t.name, t.cpu_model, t.sockets, t.cores, t.threads, t.memory_gib, t.gpus"

/* Site-wide time per object in one grain's bucket (hour, day, week, four
 * weeks): the tables differ only in their name and their bucket's. */
#define SQL_OBJECT_SUM_UPSERT(table, bucket)                                                    \
        "INSERT INTO " table " (" bucket ", object_id, samples, cpu_seconds) VALUES (?, ?, ?, ?) " \
        "ON CONFLICT (" bucket ", object_id) DO UPDATE SET "                                    \
        ADD(table, "samples") ", " ADD(table, "cpu_seconds") " "                                \
        "WHERE " FITS(table, "samples")

/* A job's sums of one function (schema/0021), over its phases (key
 * "function_id") or per phase ("phase_id, function_id"). */
/* The site's time per function in one grain's bucket (schema/0024): the
 * site's, and per key and node type; the tables differ only in their name
 * and their bucket's. A fold (site-sums-fold.c) adds batches that were
 * acknowledged before: a sum that would pass int64 stays at its largest
 * value rather than refusing them (as function_users' samples do); no
 * site's samples or jobs come near it. */
#define ADD_CAPPED(t, c) c " = CASE WHEN " FITS(t, c) " THEN " t "." c " + excluded." c " ELSE " INT64_MAX_SQL " END"
#define FUNCTION_SUMS_SET(table)                                                                        \
        ADD_CAPPED(table, "samples") ", " ADD(table, "cpu_seconds") ", " ADD_NULLABLE(table, "cycles") ", " \
        ADD_NULLABLE(table, "instructions") ", " ADD_CAPPED(table, "jobs")
#define SQL_FUNCTION_SUM_UPSERT(table, bucket)                                                          \
        "INSERT INTO " table " (" bucket ", function_id, samples, cpu_seconds, cycles, instructions, jobs) " \
        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (" bucket ", function_id) DO UPDATE SET "              \
        FUNCTION_SUMS_SET(table)
#define SQL_FUNCTION_KEY_UPSERT(table, bucket)                                                          \
        "INSERT INTO " table " (mix_key, " bucket ", node_type_id, function_id, samples, cpu_seconds, "  \
        "cycles, instructions, jobs) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "                                \
        "ON CONFLICT (mix_key, " bucket ", node_type_id, function_id) DO UPDATE SET "                   \
        FUNCTION_SUMS_SET(table)
/* who ran a function (or in which application), first and last day */
#define SQL_FUNCTION_SPAN_UPSERT(table, who)                                                            \
        "INSERT INTO " table " (function_id, " who ", first_day, last_day, samples) VALUES (?, ?, ?, ?, ?) " \
        "ON CONFLICT (function_id, " who ") DO UPDATE SET "                                             \
        ADD_CAPPED(table, "samples") ", "                                                               \
        "first_day = CASE WHEN excluded.first_day < " table ".first_day THEN excluded.first_day "        \
        "ELSE " table ".first_day END, "                                                                \
        "last_day = CASE WHEN excluded.last_day > " table ".last_day THEN excluded.last_day "            \
        "ELSE " table ".last_day END"
#define SQL_FUNCTION_TOTAL_UPSERT(table, bucket)                                                        \
        "INSERT INTO " table " (" bucket ", samples, cpu_seconds) VALUES (?, ?, ?) "                     \
        "ON CONFLICT (" bucket ") DO UPDATE SET " ADD_CAPPED(table, "samples") ", " ADD(table, "cpu_seconds")
#define SQL_FUNCTION_SCOPE_UPSERT(table, bucket)                                                        \
        "INSERT INTO " table " (mix_key, " bucket ", node_type_id, samples, cpu_seconds) "               \
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT (mix_key, " bucket ", node_type_id) DO UPDATE SET "         \
        ADD_CAPPED(table, "samples") ", " ADD(table, "cpu_seconds")
#define SQL_FUNCTION_SUMS(table, bucket)                                                                \
        "SELECT function_id, samples, cpu_seconds, cycles, instructions, jobs "                          \
        "FROM " table " WHERE " bucket " >= ? AND " bucket " < ?"
/* every key's rows of a range, through the table's index by bucket (a
 * ranking narrowed to keys reads them through mix_keys, function-rank.c) */
#define SQL_FUNCTION_KEY_ALL(table, bucket)                                                             \
        "SELECT function_id, node_type_id, samples, cpu_seconds, cycles, instructions, jobs, mix_key "   \
        "FROM " table " WHERE " bucket " >= ? AND " bucket " < ?"
#define SQL_FUNCTION_TOTALS(table, bucket)                                                              \
        "SELECT samples, cpu_seconds FROM " table " WHERE " bucket " >= ? AND " bucket " < ?"

/* The file name of a path: rtrim() strips the trailing characters that are
 * not '/', leaving the directories, which replace() removes (they cannot
 * occur again after the last '/'). schema/sqlite/0006-job-app.sql spells the same. */
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
/* A batch's receipt (schema/0001, 0020): its key (node, boot id, spool,
 * seq) and its digest. */
#define BATCH_COLUMNS_PARAMS "?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16"
#define SQL_BATCH_INSERT(values)                                                                \
        "INSERT INTO batches (node_id, boot_id, seq, received_at, interval_start, "             \
        "interval_end, event, frequency_hz, samples_lost, n_rows, samples, "                    \
        "energy_joules, dram_joules, unattributed_joules, spool, digest) "                      \
        values " ON CONFLICT DO NOTHING"

#define SQL_JOB_BATCH_UPSERT(max)                                                               \
        "INSERT INTO job_timeline (job_id, grain, node_id, t, seconds, samples, cpu_seconds) "  \
        "VALUES (?, 0, ?, ?, ?, ?, ?) "                                                         \
        "ON CONFLICT (job_id, grain, node_id, t) DO UPDATE SET "                                \
        "seconds = " max "(job_timeline.seconds, excluded.seconds), "                           \
        ADD("job_timeline", "samples") ", " ADD("job_timeline", "cpu_seconds") " "              \
        "WHERE " FITS("job_timeline", "samples")
/* The job's app: its app= note, else the file name of its top executable
 * (then app_object), else the command with the most samples (app_object
 * -1): when none of its executables had a sample (all its time in
 * libraries) or the top one is a bystander, with under a tenth of that
 * command's samples and another name (slurmstepd's two samples in a BLAS
 * driver's job). An executable whose name the command starts (comm
 * "python3", /usr/bin/python3.11) is never a bystander. In floating
 * point, so that counts near the limit do not overflow. schema/0013.
 * Written only when it changed, so its index is left alone. */
#define SQL_JOB_APP(is_not)                                                                                     \
        "WITH c AS (SELECT t.comm, sum(s.samples * 1.0) AS samples FROM job_tasks s JOIN tasks t ON t.id = s.task_id " \
        "WHERE s.job_id = ?1 GROUP BY t.comm ORDER BY 2 DESC, t.comm LIMIT 1), "                               \
        "e AS (SELECT x.id, x.name FROM (SELECT o.id, o.path, jo.samples, " SQL_FILE_NAME("o.path") " AS name " \
        "FROM job_objects jo JOIN objects o ON o.id = jo.object_id WHERE jo.job_id = ?1 AND o.kind = 'exe') x " \
        "LEFT JOIN c ON TRUE WHERE c.comm IS NULL OR x.samples * 10.0 >= c.samples "                              \
        "OR substr(x.name, 1, length(c.comm)) = c.comm ORDER BY x.samples DESC, x.path LIMIT 1) "               \
        "UPDATE jobs SET app = a.app, app_object = a.object FROM (SELECT b.app, "                               \
        "CASE WHEN b.note IS NOT NULL THEN NULL WHEN b.exe IS NOT NULL THEN b.exe "                             \
        "WHEN b.app IS NOT NULL THEN -1 END AS object FROM (SELECT n.note, e.id AS exe, "                       \
        "coalesce(n.note, e.name, c.comm) AS app "                                                              \
        "FROM (SELECT (SELECT nullif(note_value, '') FROM job_notes "                                           \
        "WHERE job_id = ?1 AND note_key = 'app') AS note) n LEFT JOIN e ON TRUE LEFT JOIN c ON TRUE) b) AS a "  \
        "WHERE jobs.id = ?1 AND (jobs.app " is_not " a.app OR jobs.app_object " is_not " a.object)"
/* what was counted under a key that no longer holds */
#define SQL_APP_DAY_TAKE(max)                                                                                   \
        "UPDATE app_days SET samples = " max "(samples - ?3, 0), cpu_seconds = " max "(cpu_seconds - ?4, 0), "  \
        "runs = " max "(runs - ?5, 0) WHERE day = ?1 AND mix_key = ?2"
#define SQL_APP_DIM_UPSERT(day, sums)                                                                   \
        "INSERT INTO app_dim_days (dim, day, value, app_object, samples, cpu_seconds, runs) "           \
        "SELECT " MIX_DIM_COLUMNS(day) ", " sums " FROM mix_keys k, " MIX_DIMS " x WHERE k.id = ?2 "    \
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
/* A mix key k: its id and what it names, as read_mix_key() reads them */
#define MIX_KEY_COLUMNS "k.id, k.app, k.app_object, k.user_name, k.account, k.partition_name"
/* The mix key job j's columns name, if there is one yet */
#define SQL_MIX_KEY_OF(j)                                                                               \
        "LEFT JOIN mix_keys k ON k.app = coalesce(" j ".app, '') "                                      \
        "AND k.app_object = coalesce(" j ".app_object, 0) AND k.user_name = coalesce(" j ".user_name, '') " \
        "AND k.account = coalesce(" j ".account, '') AND k.partition_name = coalesce(" j ".partition_name, '')"
/* the job last seen longest before ?1 (and ties by id) */
#define SQL_EXPIRE_JOB_NEXT(guard) \
        "SELECT id FROM jobs WHERE live = 0 AND last_seen < ?1 " guard "ORDER BY last_seen, id LIMIT 1"
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
        "GROUP BY n.name, jn.cpus_alloc, k ORDER BY n.name, k"
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
#define POSTGRESQL_MIX_SUMS "CAST(?3 AS BIGINT), CAST(?4 AS DOUBLE PRECISION), CAST(?5 AS BIGINT)"

static const char *const stmt_sql[_STMT_MAX] = {
        [STMT_NODE_UPSERT] =
                "INSERT INTO nodes (name, hostname, cluster, cpus, boot_id, last_seq, first_seen, "
                "last_seen, last_push, batches, samples, samples_lost, node_type_id, memory_bytes, kernel) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?) "
                "ON CONFLICT (name) DO UPDATE SET hostname = excluded.hostname, "
                /* the type as the last batch that sent one said */
                "node_type_id = coalesce(excluded.node_type_id, nodes.node_type_id), "
                "memory_bytes = CASE WHEN excluded.node_type_id IS NULL THEN nodes.memory_bytes "
                "ELSE excluded.memory_bytes END, "
                "kernel = CASE WHEN excluded.node_type_id IS NULL THEN nodes.kernel ELSE excluded.kernel END, "
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
        /* a batch whose key was stored before inserts no row (batches'
         * key): a retry or other content, STMT_BATCH_SAME tells which */
        [STMT_BATCH_INSERT] = SQL_BATCH_INSERT("VALUES (" BATCH_COLUMNS_PARAMS ")"),
        /* 1: stored with this digest, or before digests were kept
         * (schema/0020); 0: with another; NULL: not stored */
        [STMT_BATCH_SAME] =
                "SELECT max(CASE WHEN digest IS NULL OR digest = ? THEN 1 ELSE 0 END) FROM batches "
                "WHERE node_id = ? AND boot_id = ? AND spool = ? AND seq = ?",
        [STMT_JOB_UPSERT] =
                "INSERT INTO jobs (job, cluster, user_name, account, partition_name, name, "
                "nodes_alloc, tasks, ended, first_seen, last_seen, samples, cpu_seconds, "
                "cpu_time_ns, cycles, instructions, metadata_conflicts, node_type_id, energy_joules, "
                "energy_alone_joules, exact_cpu_time_ns, exact_cycles, exact_instructions, opted_out, "
                "counters_released, live) "
                /* a new job is live (schema/0018): out of the job list's indexes */
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1) "
                "ON CONFLICT (job, cluster) DO UPDATE SET "
                /* what its user asked, once any node said so (schema/0023) */
                "opted_out = CASE WHEN excluded.opted_out > jobs.opted_out THEN excluded.opted_out "
                "ELSE jobs.opted_out END, "
                "counters_released = CASE WHEN excluded.counters_released > jobs.counters_released "
                "THEN excluded.counters_released ELSE jobs.counters_released END, "
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
                ADD("jobs", "samples") ", " ADD("jobs", "cpu_seconds") ", " ADD_COUNTERS("jobs") ", "
                /* the type its nodes told; 0 once two told different ones */
                "node_type_id = CASE WHEN excluded.node_type_id IS NULL THEN jobs.node_type_id "
                "WHEN jobs.node_type_id IS NULL OR jobs.node_type_id = excluded.node_type_id "
                "THEN excluded.node_type_id ELSE 0 END, "
                ADD_NULLABLE("jobs", "energy_joules") ", " ADD_NULLABLE("jobs", "energy_alone_joules") ", "
                ADD_NULLABLE("jobs", "exact_cpu_time_ns") ", " ADD_NULLABLE("jobs", "exact_cycles") ", "
                ADD_NULLABLE("jobs", "exact_instructions") " "
                "WHERE " FITS_COUNTERS("jobs") " AND " FITS("jobs", "exact_cpu_time_ns") " AND "
                FITS("jobs", "exact_cycles") " AND " FITS("jobs", "exact_instructions") " "
                "RETURNING id, job",
        /* live jobs whose last batch ended before ?1 join the job list's
         * indexes (schema/0018): found through jobs_live */
        [STMT_JOBS_SETTLE] = "UPDATE jobs SET live = 0 WHERE live = 1 AND last_seen < ?",
        [STMT_NOTE_UPSERT] =
                "INSERT INTO job_notes (job_id, note_key, note_value) VALUES (?, ?, ?) "
                "ON CONFLICT (job_id, note_key) DO NOTHING",
        [STMT_OBJECT_SELECT] = "SELECT id FROM objects WHERE path = ? AND kind = ? AND build_id = ?",
        [STMT_OBJECT_INSERT] = "INSERT INTO objects (path, kind, build_id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING RETURNING id",
        [STMT_PHASE_SELECT] = "SELECT id FROM phases WHERE path = ?",
        [STMT_PHASE_INSERT] = "INSERT INTO phases (path) VALUES (?) ON CONFLICT DO NOTHING RETURNING id",
        [STMT_TASK_SELECT] = "SELECT id FROM tasks WHERE step = ? AND user_name = ? AND comm = ?",
        [STMT_TASK_INSERT] = "INSERT INTO tasks (step, user_name, comm) VALUES (?, ?, ?) ON CONFLICT DO NOTHING RETURNING id",
        /* a batch is stored once (batches' key): its packs are new */
        [STMT_SAMPLE_PACK_INSERT] =
                "INSERT INTO sample_packs (job_id, bucket, node_id, boot_id, spool, seq, n_rows, samples, packed) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [STMT_JOB_TASK_UPSERT] =
                "INSERT INTO job_tasks (job_id, task_id, samples) VALUES (?, ?, ?) "
                "ON CONFLICT (job_id, task_id) DO UPDATE SET " ADD("job_tasks", "samples") " "
                "WHERE " FITS("job_tasks", "samples"),
        [STMT_JOB_OBJECT_UPSERT] =
                "INSERT INTO job_objects (job_id, object_id, samples, cpu_seconds, cpu_time_ns, "
                "cycles, instructions, multiplexed_samples) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (job_id, object_id) DO UPDATE SET "
                ADD("job_objects", "samples") ", " ADD("job_objects", "cpu_seconds") ", "
                ADD_COUNTERS("job_objects") ", " ADD("job_objects", "multiplexed_samples") " "
                "WHERE " FITS_COUNTERS("job_objects"),
        [STMT_JOB_PHASE_UPSERT] =
                "INSERT INTO job_phases (job_id, phase_id, samples, cpu_seconds, cpu_time_ns, "
                "cycles, instructions, multiplexed_samples) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (job_id, phase_id) DO UPDATE SET "
                ADD("job_phases", "samples") ", " ADD("job_phases", "cpu_seconds") ", "
                ADD_COUNTERS("job_phases") ", " ADD("job_phases", "multiplexed_samples") " "
                "WHERE " FITS_COUNTERS("job_phases"),
        [STMT_JOB_NODE_UPSERT] =
                "INSERT INTO job_nodes (job_id, node_id, samples, first_seen, last_seen, cpu_seconds, cpus_alloc, "
                "node_type_id, energy_joules, energy_alone_joules) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (job_id, node_id) DO UPDATE SET " ADD("job_nodes", "samples") ", "
                ADD("job_nodes", "cpu_seconds") ", "
                "node_type_id = coalesce(excluded.node_type_id, job_nodes.node_type_id), "
                ADD_NULLABLE("job_nodes", "energy_joules") ", " ADD_NULLABLE("job_nodes", "energy_alone_joules") ", "
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
        [STMT_OBJECT_HOUR_UPSERT] = SQL_OBJECT_SUM_UPSERT("object_hours", "bucket"),
        [STMT_OBJECT_WEEK_UPSERT] = SQL_OBJECT_SUM_UPSERT("object_weeks", "week"),
        [STMT_OBJECT_PERIOD_UPSERT] = SQL_OBJECT_SUM_UPSERT("object_periods", "period"),
        [STMT_OBJECT_DAY_UPSERT] = SQL_OBJECT_SUM_UPSERT("object_days", "day"),
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
        /* many objects at once (conn_write_rows()): (id, bucket) pairs */
        [STMT_OBJECT_LAST_SEEN] =
                "UPDATE objects SET last_seen = v.column2 FROM (VALUES (CAST(? AS BIGINT), CAST(? AS BIGINT))) AS v "
                "WHERE objects.id = v.column1 AND (objects.last_seen IS NULL OR objects.last_seen < v.column2)",
        /* what is stored of the batch's jobs (conn_read_rows()): (place,
         * job, cluster) in, the place with the job's row out */
        [STMT_JOBS_CURRENT] =
                "SELECT v.column1, j.id, j.user_name, j.account, j.partition_name, j.name, j.nodes_alloc, j.tasks, "
                "j.samples, j.cpu_seconds, j.cpu_time_ns, j.cycles, j.instructions, j.energy_joules, "
                "j.energy_alone_joules, j.exact_cpu_time_ns, j.exact_cycles, j.exact_instructions, "
                /* whether its app= note names it already (STMT_JOB_APP) */
                "CASE WHEN j.app_object IS NULL AND j.app = (SELECT nullif(n.note_value, '') FROM job_notes n "
                "WHERE n.job_id = j.id AND n.note_key = 'app') THEN 1 ELSE 0 END "
                "FROM (VALUES (CAST(? AS BIGINT), ?, ?)) AS v JOIN jobs j ON j.job = v.column2 AND j.cluster = v.column3",
        [STMT_JOB_NAMED_CLUSTER] = "SELECT cluster FROM jobs WHERE job = ? AND cluster <> '' LIMIT 2",
        /* one job at a time: many at once, an UPDATE ... FROM (VALUES ...),
         * is planned as a scan of jobs by PostgreSQL on a young table */
        [STMT_JOB_ADOPT] =
                "UPDATE jobs SET cluster = ?2 WHERE job = ?1 AND cluster = '' "
                "AND NOT EXISTS (SELECT 1 FROM jobs WHERE job = ?1 AND cluster = ?2)",
        /* (place, job id, key) in, the place with the stored value out */
        [STMT_NOTES_CURRENT] =
                "SELECT v.column1, n.note_value FROM (VALUES (CAST(? AS BIGINT), CAST(? AS BIGINT), ?)) AS v "
                "JOIN job_notes n ON n.job_id = v.column2 AND n.note_key = v.column3",
        [STMT_JOB_APP] = SQL_JOB_APP("IS NOT"),
        /* the application mix (schema/0013): the key a job's time is
         * counted under, and the key its columns name now */
        [STMT_JOB_MIX] = "SELECT j.mix_key, j.mix_day, " MIX_KEY_COLUMNS " FROM jobs j " SQL_MIX_KEY_OF("j")
                         " WHERE j.id = ?",
        /* the same of many jobs at once (conn_read_rows()): (place, id)
         * pairs, answered with the place */
        [STMT_JOB_MIXES] =
                "SELECT v.column1, j.mix_key, j.mix_day, " MIX_KEY_COLUMNS " FROM (VALUES (CAST(? AS BIGINT), "
                "CAST(? AS BIGINT))) AS v JOIN jobs j ON j.id = v.column2 " SQL_MIX_KEY_OF("j"),
        [STMT_MIX_KEY_INSERT] =
                "INSERT INTO mix_keys (app, app_object, user_name, account, partition_name) "
                "SELECT coalesce(app, ''), coalesce(app_object, 0), coalesce(user_name, ''), coalesce(account, ''), "
                "coalesce(partition_name, '') FROM jobs WHERE id = ? ON CONFLICT DO NOTHING "
                "RETURNING id, app, app_object, user_name, account, partition_name",
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
        [STMT_APP_DIM_UPSERT] = SQL_APP_DIM_UPSERT("?1", "?3, ?4, ?5"),
        /* the rows of many keys at once (conn_write_rows()), summed per row */
        [STMT_APP_DIM_ROW_UPSERT] =
                "INSERT INTO app_dim_days (dim, day, value, app_object, samples, cpu_seconds, runs) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (dim, day, value, app_object) DO UPDATE SET "
                ADD("app_dim_days", "samples") ", " ADD("app_dim_days", "cpu_seconds") ", "
                ADD("app_dim_days", "runs") " "
                "WHERE " FITS("app_dim_days", "samples") " AND " FITS("app_dim_days", "runs"),
        [STMT_APP_DIM_TAKE] = SQL_APP_DIM_TAKE("max", "?1"),
        [STMT_APP_DIM_PRUNE] = SQL_APP_DIM_PRUNE("?1"),
        /* what lmkd measures beyond samples (schema/0015) */
        [STMT_NODE_TYPE_SELECT] = "SELECT id FROM node_types WHERE name = ?",
        [STMT_NODE_TYPE_INSERT] =
                "INSERT INTO node_types (name, cpu_model, sockets, cores, threads, memory_gib, gpus) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id",
        [STMT_ROLE_SELECT] = "SELECT id FROM event_roles WHERE name = ?",
        [STMT_ROLE_INSERT] = "INSERT INTO event_roles (name) VALUES (?) ON CONFLICT DO NOTHING RETURNING id",
        /* written again only when the event became available */
        [STMT_JOB_COUNTER_UPSERT] =
                "INSERT INTO job_counters (job_id, role_id, event, available) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (job_id, role_id, event) DO UPDATE SET available = 1 "
                "WHERE job_counters.available = 0 AND excluded.available = 1",
        [STMT_JOB_OBJECT_EVENT_UPSERT] = SQL_EVENT_UPSERT("job_object_events", "object_id"),
        [STMT_JOB_PHASE_EVENT_UPSERT] = SQL_EVENT_UPSERT("job_phase_events", "phase_id"),
        [STMT_JOB_EVENT_UPSERT] =
                "INSERT INTO job_events (job_id, role_id, count, samples, cpu_time_ns, instructions, "
                "count_with_instructions, exact_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (job_id, role_id) DO UPDATE SET " ADD_EVENT_SUMS("job_events") ", "
                ADD_NULLABLE("job_events", "exact_count") " "
                "WHERE " FITS_EVENT_SUMS("job_events") " AND " FITS("job_events", "exact_count"),
        [STMT_JOB_EVENT_SUMS] = "SELECT count, exact_count FROM job_events WHERE job_id = ? AND role_id = ?",
        [STMT_JOB_BURST_UPSERT] =
                "INSERT INTO job_bursts (job_id, object_id, phase_id, role_id, bursts, window_ns, count) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (job_id, object_id, phase_id, role_id) DO UPDATE SET "
                ADD("job_bursts", "bursts") ", " ADD("job_bursts", "window_ns") ", " ADD("job_bursts", "count") " "
                "WHERE " FITS("job_bursts", "bursts") " AND " FITS("job_bursts", "window_ns"),
        /* functions (schema/0021) */
        [STMT_FUNCTION_SELECT] =
                "SELECT id FROM functions WHERE object_id = ? AND name = ? AND file_offset = ? AND entry = ?",
        [STMT_FUNCTION_INSERT] =
                "INSERT INTO functions (object_id, name, file_offset, entry) VALUES (?, ?, ?, ?) "
                "ON CONFLICT DO NOTHING "
                "RETURNING id",
        /* many at once (conn_write_rows()) */
        /* the stored packs of a batch's (place, job, object)s
         * (conn_read_rows()): answered with the place */
        [STMT_JOB_FUNCTION_PACKS_READ] =
                "SELECT v.column1, p.packed "
                "FROM (VALUES (CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT))) AS v "
                "JOIN job_function_packs p ON p.job_id = v.column2 AND p.object_id = v.column3",
        /* the packs merged in memory (function-pack.h): the sums are
         * checked there, the row replaced */
        [STMT_JOB_FUNCTION_PACK_UPSERT] =
                "INSERT INTO job_function_packs (job_id, object_id, packed) VALUES (?, ?, ?) "
                "ON CONFLICT (job_id, object_id) DO UPDATE SET packed = excluded.packed",
        /* a batch's site function sums, packed (schema/0027, site-sums.h),
         * and the fold's: the oldest rows, those folded, one that does not
         * decode set aside, whether any are left */
        [STMT_FUNCTION_SUMS_PENDING_INSERT] = "INSERT INTO function_sums_pending (body) VALUES (?)",
        [STMT_FUNCTION_SUMS_PENDING_TAKE] =
                "SELECT id, body FROM function_sums_pending WHERE id > 0 ORDER BY id LIMIT ?",
        [STMT_FUNCTION_SUMS_PENDING_DELETE] =
                "DELETE FROM function_sums_pending WHERE id IN (VALUES (CAST(? AS BIGINT)))",
        [STMT_FUNCTION_SUMS_PENDING_SET_ASIDE] = "UPDATE function_sums_pending SET id = -id WHERE id = ?",
        [STMT_FUNCTION_SUMS_PENDING_ANY] =
                "SELECT count(*) FROM (SELECT 1 FROM function_sums_pending WHERE id > 0 LIMIT 1) AS x",
        [STMT_FUNCTION_DAY_UPSERT] = SQL_FUNCTION_SUM_UPSERT("function_days", "day"),
        [STMT_FUNCTION_WEEK_UPSERT] = SQL_FUNCTION_SUM_UPSERT("function_weeks", "week"),
        [STMT_FUNCTION_KEY_DAY_UPSERT] = SQL_FUNCTION_KEY_UPSERT("function_key_days", "day"),
        [STMT_FUNCTION_KEY_WEEK_UPSERT] = SQL_FUNCTION_KEY_UPSERT("function_key_weeks", "week"),
        [STMT_FUNCTION_USER_UPSERT] = SQL_FUNCTION_SPAN_UPSERT("function_users", "user_name"),
        [STMT_FUNCTION_APP_UPSERT] = SQL_FUNCTION_SPAN_UPSERT("function_apps", "app"),
        [STMT_FUNCTION_TOTAL_DAY_UPSERT] = SQL_FUNCTION_TOTAL_UPSERT("function_total_days", "day"),
        [STMT_FUNCTION_TOTAL_WEEK_UPSERT] = SQL_FUNCTION_TOTAL_UPSERT("function_total_weeks", "week"),
        [STMT_FUNCTION_SCOPE_DAY_UPSERT] = SQL_FUNCTION_SCOPE_UPSERT("function_scope_days", "day"),
        [STMT_FUNCTION_SCOPE_WEEK_UPSERT] = SQL_FUNCTION_SCOPE_UPSERT("function_scope_weeks", "week"),
        /* retention: raw detail older than the horizon, in small steps */
        [STMT_PRUNE_MARK_GET] =
                "SELECT (SELECT value FROM retention WHERE name = 'prune_jobs_seen'), "
                "(SELECT value FROM retention WHERE name = 'prune_jobs_id')",
        [STMT_PRUNE_MARK_SET] =
                "UPDATE retention SET value = CAST(CASE name WHEN 'prune_jobs_seen' THEN ?1 ELSE ?2 END AS DOUBLE PRECISION) "
                "WHERE name IN ('prune_jobs_seen', 'prune_jobs_id')",
        /* after the mark in the order of (last_seen, id): the index gives
         * last_seen's order, ties are sorted among themselves */
        [STMT_PRUNE_JOBS] =
                "SELECT id, last_seen FROM jobs WHERE live = 0 AND last_seen >= ?1 AND last_seen < ?3 "
                "AND (last_seen > ?1 OR id > ?2) ORDER BY last_seen, id LIMIT ?4",
        [STMT_PRUNE_JOB_TIMELINE] = "DELETE FROM job_timeline WHERE job_id = ? AND grain = 0",
        /* the raw rows, packed (schema/0017) and from before that */
#define PRUNE_RAW(job, idle, table)                                                                     \
        [job##_BUCKET] = "SELECT min(bucket) FROM " table " WHERE job_id = ?",                          \
        [job] = "DELETE FROM " table " WHERE job_id = ? AND bucket = ?",                                \
        [idle##_NEXT] = "SELECT bucket, node_id FROM " table " WHERE job_id = 0 AND bucket < ? "        \
                        "ORDER BY bucket, node_id LIMIT 1",                                             \
        [idle] = "DELETE FROM " table " WHERE job_id = 0 AND bucket = ? AND node_id = ?"
        PRUNE_RAW(STMT_PRUNE_JOB_PACKS, STMT_PRUNE_IDLE_PACKS, "sample_packs"),
        PRUNE_RAW(STMT_PRUNE_JOB_SAMPLES, STMT_PRUNE_IDLE_SAMPLES, "samples"),
#undef PRUNE_RAW
        /* a spool's sequence numbers grow with time; two spools' do not
         * say which batch is older */
        [STMT_PRUNE_BATCH_GROUP] =
                "SELECT node_id, boot_id, spool FROM batches WHERE (node_id, boot_id, spool) > (?, ?, ?) "
                "ORDER BY node_id, boot_id, spool LIMIT 1",
        [STMT_PRUNE_BATCH_SEQS] =
                "SELECT seq, received_at FROM batches WHERE node_id = ? AND boot_id = ? AND spool = ? "
                "ORDER BY seq LIMIT ?",
        [STMT_PRUNE_BATCHES] = "DELETE FROM batches WHERE node_id = ? AND boot_id = ? AND spool = ? AND seq <= ?",
#define PRUNE_ROLLUP(id, table, col)                                                     \
        [id##_NEXT] = "SELECT min(" col ") FROM " table " WHERE " col " < ?",           \
        [id] = "DELETE FROM " table " WHERE " col " = ?"
        PRUNE_ROLLUP(STMT_PRUNE_OBJECT_HOURS, "object_hours", "bucket"),
        PRUNE_ROLLUP(STMT_PRUNE_OBJECT_DAYS, "object_days", "day"),
        PRUNE_ROLLUP(STMT_PRUNE_OBJECT_WEEKS, "object_weeks", "week"),
        PRUNE_ROLLUP(STMT_PRUNE_OBJECT_PERIODS, "object_periods", "period"),
        PRUNE_ROLLUP(STMT_PRUNE_APP_DAYS, "app_days", "day"),
        PRUNE_ROLLUP(STMT_PRUNE_APP_DIM_DAYS, "app_dim_days", "day"),
        PRUNE_ROLLUP(STMT_PRUNE_FUNCTION_DAYS, "function_days", "day"),
        PRUNE_ROLLUP(STMT_PRUNE_FUNCTION_WEEKS, "function_weeks", "week"),
        PRUNE_ROLLUP(STMT_PRUNE_FUNCTION_SCOPE_DAYS, "function_scope_days", "day"),
        PRUNE_ROLLUP(STMT_PRUNE_FUNCTION_SCOPE_WEEKS, "function_scope_weeks", "week"),
        PRUNE_ROLLUP(STMT_PRUNE_FUNCTION_KEY_DAYS, "function_key_days", "day"),
        PRUNE_ROLLUP(STMT_PRUNE_FUNCTION_KEY_WEEKS, "function_key_weeks", "week"),
        PRUNE_ROLLUP(STMT_PRUNE_FUNCTION_TOTAL_DAYS, "function_total_days", "day"),
        PRUNE_ROLLUP(STMT_PRUNE_FUNCTION_TOTAL_WEEKS, "function_total_weeks", "week"),
#undef PRUNE_ROLLUP
        /* retention of per-job summaries (store/db/sql/prune.c). SQLite gives
         * a new row the largest id + 1, so the newest job is never the
         * first to go: its id would pass to the next job while its other
         * rows were still being deleted. PostgreSQL's ids are never
         * handed out twice (STMT_EXPIRE_JOB_NEXT in stmt_sql_postgresql). */
        [STMT_EXPIRE_JOB_NEXT] = SQL_EXPIRE_JOB_NEXT("AND id < (SELECT max(id) FROM jobs) "),
        [STMT_EXPIRE_JOB] = "DELETE FROM jobs WHERE id = ?",
        [STMT_EXPIRE_LEFT_GET] = "SELECT value FROM retention WHERE name = 'expire_job_left'",
        [STMT_EXPIRE_LEFT_SET] =
                "INSERT INTO retention (name, value) VALUES ('expire_job_left', CAST(? AS DOUBLE PRECISION)) "
                "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        [STMT_EXPIRE_LEFT_CLEAR] = "DELETE FROM retention WHERE name = 'expire_job_left'",
        /* at most ?2 rows of job ?1, the first by the table's key */
#define EXPIRE_ROWS(id, table, key)                                                                     \
        [id] = "DELETE FROM " table " WHERE job_id = ?1 AND (" key ") IN "                              \
               "(SELECT " key " FROM " table " WHERE job_id = ?1 ORDER BY " key " LIMIT ?2)"
        EXPIRE_ROWS(STMT_EXPIRE_JOB_OBJECTS, "job_objects", "object_id"),
        EXPIRE_ROWS(STMT_EXPIRE_JOB_PHASES, "job_phases", "phase_id"),
        EXPIRE_ROWS(STMT_EXPIRE_JOB_NODES, "job_nodes", "node_id"),
        EXPIRE_ROWS(STMT_EXPIRE_JOB_NOTES, "job_notes", "note_key"),
        EXPIRE_ROWS(STMT_EXPIRE_JOB_MARKERS, "job_markers", "comm, phase, state"),
        EXPIRE_ROWS(STMT_EXPIRE_JOB_RANKS, "job_ranks", "step, rank, phase_id"),
        EXPIRE_ROWS(STMT_EXPIRE_JOB_TIMELINE, "job_timeline", "grain, node_id, t"),
        EXPIRE_ROWS(STMT_EXPIRE_JOB_COUNTERS, "job_counters", "role_id, event"),
        EXPIRE_ROWS(STMT_EXPIRE_JOB_OBJECT_EVENTS, "job_object_events", "object_id, role_id"),
        EXPIRE_ROWS(STMT_EXPIRE_JOB_PHASE_EVENTS, "job_phase_events", "phase_id, role_id"),
        EXPIRE_ROWS(STMT_EXPIRE_JOB_EVENTS, "job_events", "role_id"),
        EXPIRE_ROWS(STMT_EXPIRE_JOB_BURSTS, "job_bursts", "object_id, phase_id, role_id"),
        EXPIRE_ROWS(STMT_EXPIRE_JOB_TASKS, "job_tasks", "task_id"),
        EXPIRE_ROWS(STMT_EXPIRE_JOB_FUNCTION_PACKS, "job_function_packs", "object_id"),
#undef EXPIRE_ROWS

        /* every cluster's job of the id: those the viewer may not see are
         * skipped (sql_get_job()) */
        [STMT_JOB_FIND] = "SELECT " JOB_COLUMNS " FROM jobs j WHERE j.job = ?",
        [STMT_JOB_FIND_CLUSTER] = "SELECT " JOB_COLUMNS " FROM jobs j WHERE j.job = ? AND j.cluster = ?",
        [STMT_JOB_KINDS] =
                "SELECT o.kind, sum(jo.samples), sum(jo.cpu_seconds), sum(jo.cpu_time_ns), "
                "sum(jo.cycles), sum(jo.instructions), sum(jo.multiplexed_samples) "
                "FROM job_objects jo JOIN objects o ON o.id = jo.object_id WHERE jo.job_id = ? "
                "GROUP BY o.kind ORDER BY 2 DESC, 1",
        [STMT_JOB_OBJECTS] =
                "SELECT o.path, o.kind, o.build_id, jo.samples, jo.cpu_seconds, jo.cpu_time_ns, "
                "jo.cycles, jo.instructions, jo.multiplexed_samples "
                "FROM job_objects jo JOIN objects o ON o.id = jo.object_id WHERE jo.job_id = ? "
                "ORDER BY jo.samples DESC, o.path LIMIT ?",
        [STMT_JOB_PHASES] =
                "SELECT p.path, jp.samples, jp.cpu_seconds, jp.cpu_time_ns, jp.cycles, jp.instructions, "
                "jp.multiplexed_samples "
                "FROM job_phases jp JOIN phases p ON p.id = jp.phase_id WHERE jp.job_id = ? "
                "ORDER BY jp.samples DESC, p.path",
        [STMT_JOB_NODES] =
                "SELECT n.name, jn.samples, jn.first_seen, jn.last_seen, jn.cpu_seconds, jn.cpus_alloc, n.installed, "
                "t.name, jn.energy_joules, jn.energy_alone_joules "
                "FROM job_nodes jn JOIN nodes n ON n.id = jn.node_id "
                "LEFT JOIN node_types t ON t.id = jn.node_type_id WHERE jn.job_id = ? "
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
        /* what lmkd measures beyond samples (store/db/sql/job-measured.c) */
        [STMT_JOB_NODE_TYPE] =
                "SELECT " NODE_TYPE_COLUMNS " FROM jobs j JOIN node_types t ON t.id = j.node_type_id WHERE j.id = ?",
        /* cycles and instructions first, as lmkd's -e names them */
        [STMT_JOB_COUNTERS] =
                "SELECT r.name, c.event, c.available FROM job_counters c JOIN event_roles r ON r.id = c.role_id "
                "WHERE c.job_id = ? ORDER BY CASE r.name WHEN 'cycles' THEN 0 WHEN 'instructions' THEN 1 ELSE 2 END, "
                "r.name, c.event",
        [STMT_JOB_EVENTS] =
                "SELECT NULL, r.name, " EVENT_SUM_COLUMNS("e") ", e.exact_count FROM job_events e "
                "JOIN event_roles r ON r.id = e.role_id WHERE e.job_id = ? ORDER BY r.name",
        /* in the order of the job's objects and phases */
        [STMT_JOB_OBJECT_EVENTS] =
                "SELECT o.path, r.name, " EVENT_SUM_COLUMNS("e") " FROM job_object_events e "
                "JOIN objects o ON o.id = e.object_id JOIN event_roles r ON r.id = e.role_id "
                "JOIN job_objects jo ON jo.job_id = e.job_id AND jo.object_id = e.object_id "
                "WHERE e.job_id = ? ORDER BY jo.samples DESC, o.path, o.id, r.name LIMIT ?",
        [STMT_JOB_PHASE_EVENTS] =
                "SELECT p.path, r.name, " EVENT_SUM_COLUMNS("e") " FROM job_phase_events e "
                "JOIN phases p ON p.id = e.phase_id JOIN event_roles r ON r.id = e.role_id "
                "JOIN job_phases jp ON jp.job_id = e.job_id AND jp.phase_id = e.phase_id "
                "WHERE e.job_id = ? ORDER BY jp.samples DESC, p.path, r.name LIMIT ?",
        /* the busiest objects' locations first, each location's roles together */
        [STMT_JOB_BURSTS] =
                "SELECT o.path, p.path, r.name, b.bursts, b.window_ns, b.count FROM job_bursts b "
                "JOIN objects o ON o.id = b.object_id JOIN phases p ON p.id = b.phase_id "
                "JOIN event_roles r ON r.id = b.role_id "
                "JOIN job_objects jo ON jo.job_id = b.job_id AND jo.object_id = b.object_id "
                "WHERE b.job_id = ? ORDER BY jo.samples DESC, o.path, o.id, p.path, r.name LIMIT ?",
        /* the job's function sums, packed (store/db/sql/job-functions.c) */
        [STMT_JOB_FUNCTION_PACKS] = "SELECT packed FROM job_function_packs WHERE job_id = ? ORDER BY object_id",
        /* sums decoded from packs, named (conn_read_rows()): (place,
         * function, samples, cpu_seconds, cycles, instructions), answered
         * with FUNCTION_COLUMNS, then what job-functions.c orders them by
         * as FUNCTION_ORDER says (f.name, o.id) and the place */
        [STMT_FUNCTION_ROWS] =
                "SELECT " FUNCTION_COLUMNS("x") ", f.name, o.id, x.place FROM (SELECT v.column1 AS place, "
                "v.column2 AS function_id, v.column3 AS samples, v.column4 AS cpu_seconds, v.column5 AS cycles, "
                "v.column6 AS instructions FROM (VALUES (CAST(? AS BIGINT), CAST(? AS BIGINT), "
                "CAST(? AS BIGINT), CAST(? AS DOUBLE PRECISION), CAST(? AS BIGINT), CAST(? AS BIGINT))) AS v) "
                "AS x " FUNCTION_JOINS("x"),
        /* per phase, with the phase's samples in the job (job -1: none),
         * what their shares are of */
        [STMT_PHASE_FUNCTION_ROWS] =
                "SELECT " FUNCTION_COLUMNS("x") ", p.path, coalesce(jp.samples, 0), f.name, o.id, x.place "
                "FROM (SELECT v.column1 AS place, v.column2 AS function_id, v.column3 AS samples, "
                "v.column4 AS cpu_seconds, v.column5 AS cycles, v.column6 AS instructions, v.column7 AS job_id, "
                "v.column8 AS phase_id FROM (VALUES (CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT), "
                "CAST(? AS DOUBLE PRECISION), CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT), "
                "CAST(? AS BIGINT))) AS v) AS x "
                FUNCTION_JOINS("x") "JOIN phases p ON p.id = x.phase_id "
                "LEFT JOIN job_phases jp ON jp.job_id = x.job_id AND jp.phase_id = x.phase_id",
        /* summed by list_objects, see there */
        [STMT_OBJECT_HOURS] =
                "SELECT object_id, samples, cpu_seconds FROM object_hours WHERE bucket >= ? AND bucket < ?",
        [STMT_OBJECT_DAYS] =
                "SELECT object_id, samples, cpu_seconds FROM object_days WHERE day >= ? AND day < ?",
        [STMT_OBJECT_IDS_OF_KIND] = "SELECT id FROM objects WHERE kind = ?",
        [STMT_FUNCTION_DAYS] = SQL_FUNCTION_SUMS("function_days", "day"),
        /* a range's sums per function in one answer, named (what
         * PostgreSQL's function-rank.c reads, see there): its edge days
         * [?1, ?2) and [?3, ?4), its weeks [?5, ?6) */
        [STMT_FUNCTION_SITE_SUMS] =
                "SELECT s.function_id, s.samples, s.cpu_seconds, s.cycles, s.instructions, s.jobs, "
                "o.path, o.kind, o.build_id, f.name, f.file_offset, n.name FROM ("
                "SELECT function_id, CAST(sum(samples) AS BIGINT) AS samples, sum(cpu_seconds) AS cpu_seconds, "
                "sum(cycles) AS cycles, sum(instructions) AS instructions, CAST(sum(jobs) AS BIGINT) AS jobs FROM ("
                "SELECT function_id, samples, cpu_seconds, cycles, instructions, jobs FROM function_days "
                "WHERE (day >= ?1 AND day < ?2) OR (day >= ?3 AND day < ?4) UNION ALL "
                "SELECT function_id, samples, cpu_seconds, cycles, instructions, jobs FROM function_weeks "
                "WHERE week >= ?5 AND week < ?6) x GROUP BY function_id) s "
                "JOIN functions f ON f.id = s.function_id JOIN objects o ON o.id = f.object_id "
                "LEFT JOIN function_names n ON f.name = '' AND f.file_offset >= 0 AND n.build_id = o.build_id "
                "AND n.file_offset = f.file_offset AND n.entry = f.entry",
        [STMT_FUNCTION_WEEKS] = SQL_FUNCTION_SUMS("function_weeks", "week"),
        [STMT_FUNCTION_KEY_DAYS_ALL] = SQL_FUNCTION_KEY_ALL("function_key_days", "day"),
        [STMT_FUNCTION_KEY_WEEKS_ALL] = SQL_FUNCTION_KEY_ALL("function_key_weeks", "week"),
        [STMT_FUNCTION_TOTAL_DAYS] = SQL_FUNCTION_TOTALS("function_total_days", "day"),
        [STMT_FUNCTION_TOTAL_WEEKS] = SQL_FUNCTION_TOTALS("function_total_weeks", "week"),
        [STMT_FUNCTION_SCOPE_DAYS_ALL] =
                "SELECT node_type_id, samples, cpu_seconds, mix_key FROM function_scope_days WHERE day >= ? AND day < ?",
        [STMT_FUNCTION_SCOPE_WEEKS_ALL] =
                "SELECT node_type_id, samples, cpu_seconds, mix_key FROM function_scope_weeks WHERE week >= ? "
                "AND week < ?",
        [STMT_FUNCTION_IDS_OF_PATH] =
                "SELECT f.id FROM objects o JOIN functions f ON f.object_id = o.id WHERE o.path = ?",
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
                "SELECT n.name, n.hostname, n.cluster, n.boot_id, n.cpus, n.last_seq, n.batches, n.samples, "
                "n.samples_lost, n.first_seen, n.last_seen, n.last_push, " NODE_TYPE_COLUMNS ", n.kernel, "
                "n.memory_bytes FROM nodes n LEFT JOIN node_types t ON t.id = n.node_type_id ORDER BY n.name",
        /* scaling across runs: a job's size note, top executable, the
         * most CPUs of its nodes (the node type's stand-in where none is
         * known) and allocated CPUs */
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
        [STMT_TICKET_PRUNE] = "DELETE FROM used_tickets WHERE expires < ?",
        /* changes one row the first time, none after */
        [STMT_TICKET_USE] = "INSERT INTO used_tickets (nonce, expires) VALUES (?, ?) ON CONFLICT (nonce) DO NOTHING",
        /* unnamed functions that no lookup has named yet, of any build or
         * of one (store/db/sql/function-names.c) */
        [STMT_UNNAMED_BUILDS] =
                "SELECT DISTINCT o.build_id FROM functions f JOIN objects o ON o.id = f.object_id "
                "WHERE f.name = '' AND f.file_offset >= 0 AND o.build_id > ? AND " NOT_NAMED
                " ORDER BY o.build_id LIMIT ?",
        [STMT_UNNAMED_FUNCTIONS] =
                "SELECT DISTINCT f.file_offset, f.entry FROM functions f JOIN objects o ON o.id = f.object_id "
                "WHERE o.build_id = ? AND f.name = '' AND f.file_offset >= 0 AND " NOT_NAMED
                " ORDER BY f.file_offset, f.entry LIMIT ?",
        [STMT_FUNCTION_NAME_PUT] =
                "INSERT INTO function_names (build_id, file_offset, entry, name) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (build_id, file_offset, entry) DO NOTHING",
};

/* What PostgreSQL spells differently; NULL: as stmt_sql[]. */
static const char *const stmt_sql_postgresql[_STMT_MAX] = {
        /* batches' key holds interval_start (the partitions'), which the
         * batch's key does not: one of the same key is looked for in every
         * partition. The writer holds the node's lock (write-queue.c), so
         * no other writer stores a batch of the node meanwhile. */
        [STMT_BATCH_INSERT] = SQL_BATCH_INSERT(
                "SELECT " BATCH_COLUMNS_PARAMS " WHERE NOT EXISTS (SELECT 1 FROM batches "
                "WHERE node_id = ?1 AND boot_id = ?2 AND spool = ?15 AND seq = ?3)"),
        [STMT_EXPIRE_JOB_NEXT] = SQL_EXPIRE_JOB_NEXT(""),
        [STMT_NODE_INSTALLED] = SQL_NODE_INSTALLED("IS DISTINCT FROM"),
        [STMT_JOB_BATCH_UPSERT] = SQL_JOB_BATCH_UPSERT("greatest"),
        [STMT_JOB_APP] = SQL_JOB_APP("IS DISTINCT FROM"),
        [STMT_APP_DAY_TAKE] = SQL_APP_DAY_TAKE("greatest"),
        [STMT_APP_DIM_UPSERT] = SQL_APP_DIM_UPSERT(POSTGRESQL_DAY, POSTGRESQL_MIX_SUMS),
        [STMT_APP_DIM_TAKE] = SQL_APP_DIM_TAKE("greatest", POSTGRESQL_DAY),
        [STMT_APP_DIM_PRUNE] = SQL_APP_DIM_PRUNE(POSTGRESQL_DAY),
        [STMT_JOB_TIMELINE] = SQL_JOB_TIMELINE("greatest", "least", "CAST(trunc((t.t - ?2) / ?3) AS BIGINT)"),
        [STMT_SUMMARY_JOBS] = SQL_SUMMARY_JOBS(POSTGRESQL_IDS, POSTGRESQL_ID),
        [STMT_SUMMARY_OBJECTS] = SQL_SUMMARY_OBJECTS(POSTGRESQL_IDS, POSTGRESQL_ID),
        [STMT_SUMMARY_NODES] = SQL_SUMMARY_NODES(POSTGRESQL_IDS, POSTGRESQL_ID),
        [STMT_SUMMARY_MARKERS] = SQL_SUMMARY_MARKERS(POSTGRESQL_IDS, POSTGRESQL_ID),
};

const char *stmt_text(DbDialect dialect, Stmt id) {
        if (dialect == DB_DIALECT_POSTGRESQL && stmt_sql_postgresql[id])
                return stmt_sql_postgresql[id];
        return stmt_sql[id];
}

bool stmt_changes_shared(Stmt id) {
        switch (id) {
        case STMT_OBJECT_INSERT:
        case STMT_PHASE_INSERT:
        case STMT_TASK_INSERT:
        case STMT_ROLE_INSERT:
        case STMT_NODE_TYPE_INSERT:
        case STMT_FUNCTION_INSERT:
        case STMT_PACKAGE_INSERT:
        case STMT_PACKAGE_FILE_INSERT:
        case STMT_MIX_KEY_INSERT:
        case STMT_OBJECT_HOUR_UPSERT:
        case STMT_OBJECT_DAY_UPSERT:
        case STMT_OBJECT_WEEK_UPSERT:
        case STMT_OBJECT_PERIOD_UPSERT:
        case STMT_OBJECT_LAST_SEEN:
        case STMT_APP_DAY_UPSERT:
        case STMT_APP_DAY_TAKE:
        case STMT_APP_DAY_PRUNE:
        case STMT_APP_DIM_UPSERT:
        case STMT_APP_DIM_ROW_UPSERT:
        case STMT_APP_DIM_TAKE:
        case STMT_APP_DIM_PRUNE:
        case STMT_FUNCTION_DAY_UPSERT:
        case STMT_FUNCTION_WEEK_UPSERT:
        case STMT_FUNCTION_SCOPE_DAY_UPSERT:
        case STMT_FUNCTION_SCOPE_WEEK_UPSERT:
        case STMT_FUNCTION_KEY_DAY_UPSERT:
        case STMT_FUNCTION_KEY_WEEK_UPSERT:
        case STMT_FUNCTION_USER_UPSERT:
        case STMT_FUNCTION_APP_UPSERT:
        case STMT_FUNCTION_TOTAL_DAY_UPSERT:
        case STMT_FUNCTION_TOTAL_WEEK_UPSERT:
        /* retention's, which runs alone: there the site lock is not taken */
        case STMT_PRUNE_OBJECT_HOURS:
        case STMT_PRUNE_OBJECT_DAYS:
        case STMT_PRUNE_OBJECT_WEEKS:
        case STMT_PRUNE_OBJECT_PERIODS:
        case STMT_PRUNE_APP_DAYS:
        case STMT_PRUNE_APP_DIM_DAYS:
        case STMT_PRUNE_FUNCTION_DAYS:
        case STMT_PRUNE_FUNCTION_WEEKS:
        case STMT_PRUNE_FUNCTION_SCOPE_DAYS:
        case STMT_PRUNE_FUNCTION_SCOPE_WEEKS:
        case STMT_PRUNE_FUNCTION_KEY_DAYS:
        case STMT_PRUNE_FUNCTION_KEY_WEEKS:
        case STMT_PRUNE_FUNCTION_TOTAL_DAYS:
        case STMT_PRUNE_FUNCTION_TOTAL_WEEKS:
                return true;
        default:
                return false;
        }
}

int stmt_text_rows(const char *sql, size_t rows, char **ret, unsigned *ret_cols) {
        const char *tuple = strstr(sql, "VALUES ("), *end;
        size_t head, len, tail;
        unsigned cols = 0;
        int depth = 0;
        char *out, *p;

        if (!tuple || rows == 0)
                return -EINVAL;
        tuple += strlen("VALUES ");
        /* to the tuple's own ')': it may hold a CAST(… AS …) */
        for (end = tuple;; end++) {
                if (!*end)
                        return -EINVAL;
                depth += *end == '(';
                depth -= *end == ')';
                cols += *end == '?';
                if (depth == 0)
                        break;
        }
        /* a parameter outside the tuple would be bound in the wrong place */
        if (cols == 0 || memchr(sql, '?', (size_t) (tuple - sql)) || strchr(end, '?'))
                return -EINVAL;
        head = (size_t) (tuple - sql);
        len = (size_t) (end + 1 - tuple);
        tail = strlen(end + 1);
        out = malloc(head + rows * (len + 2) + tail + 1);
        if (!out)
                return -ENOMEM;
        p = mempcpy(out, sql, head);
        for (size_t i = 0; i < rows; i++) {
                if (i > 0)
                        p = mempcpy(p, ", ", 2);
                p = mempcpy(p, tuple, len);
        }
        memcpy(p, end + 1, tail + 1);
        *ret = out;
        *ret_cols = cols;
        return 0;
}

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
                /* Ingest looks up a batch's few keys, many at once with
                 * (VALUES ...) joins. Their generic plans are made on the
                 * first batches, when the tables are young: with hash joins
                 * allowed, the planner then hashes a seq scan of jobs or
                 * job_notes for each batch from then on, for as long as the
                 * plan is cached (until autovacuum analyzes the table). An
                 * index nested loop is right for any size. */
                .ingest_setup = "SELECT set_config('enable_hashjoin', 'off', true), "
                                "set_config('enable_mergejoin', 'off', true)",
                /* the two-key form: apart from the one-key locks above
                 * ("lmk" in ASCII; the keys are LOCK_STRIPES wide, the
                 * site lock is the next one) */
                .ingest_lock_keys = "SELECT pg_advisory_xact_lock(7105899, k) FROM unnest(CAST(? AS integer[])) AS k",
                .ingest_lock_site = "SELECT pg_advisory_xact_lock(7105899, 4096)",
                .schema_version_table = SCHEMA_VERSION_TABLE("BIGINT"),
                .migrations = schema_postgresql_migrations,
                .n_migrations = &schema_postgresql_migrations_count,
        },
#endif
};

const SqlDialect *sql_dialect(DbDialect d) {
        return &sql_dialects[d];
}
