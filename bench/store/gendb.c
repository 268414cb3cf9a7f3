/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Generates a large lmk-store database for query benchmarks:
 *
 *   gendb PATH JOBS
 *
 * creates the schema through the storage backend (so it is the real one),
 * then writes JOBS jobs with their rollups (objects, phases, nodes, notes)
 * and a year of site-wide hours per object directly with SQL in one
 * transaction: going through ingest would take hours for a million jobs and
 * measure ingest, not queries. Job ids are "1" .. "JOBS", one year of them,
 * first seen in that order.
 *
 * The mix is skewed the way a site's is, so that the job list's filters
 * meet both small and large sets:
 *   - users: HEAVY_USERS users (user0 ...) own HEAVY_SHARE of the jobs
 *     (60,000 each of a million), the other users the rest;
 *   - accounts: each user charges a home account (user N: pN mod 100), one
 *     job in seven another one;
 *   - partitions: batch, large, gpu, debug, long, bigmem, from 55% down;
 *   - applications: half the jobs name theirs in an app= note, the others
 *     are known by their executable's file name, from the same APPS (the
 *     first ones far more common);
 *   - state: the jobs that would still run now are running (ended = 0,
 *     seen in the last 5 minutes), about one day's worth; all others ended;
 *   - CPU time: cores x elapsed x a utilisation from 5% to 100%.
 * The app column is written as ingest would write it (schema 0006). */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <time.h>

#include "db/sql/function-pack.h"
#include "db/storage.h"
#include "migrations.h"
#include "util.h"

#define N_USERS 500
#define HEAVY_USERS 5
#define HEAVY_SHARE 0.30
#define N_ACCOUNTS 100
#define N_NODES 2000
#define CPUS_PER_NODE 48
#define N_EXES 300
#define N_LIBS 1700
#define N_PHASES 40
/* functions per object: two named ones and "(other functions)"; a job
 * has those of its first FUNCTION_OBJECTS objects */
#define FUNCTIONS_PER_OBJECT 3
#define FUNCTION_OBJECTS 4
#define YEAR (365.0 * 86400)

static const char *const APPS[] = {
        "lammps", "gromacs", "vasp", "cp2k", "openfoam", "wrf", "namd", "quantum-espresso",
        "amber", "nwchem", "cesm", "python3", "julia", "matlab", "siesta", "abinit",
        "orca", "gaussian", "fluent", "star-ccm", "lulesh", "hpcg", "nek5000", "palabos",
        "su2", "bowtie2", "gatk", "samtools", "blast", "r", "tensorflow", "pytorch",
};
#define N_APPS (sizeof(APPS) / sizeof(APPS[0]))

static const char *const SUFFIXES[] = { "prod", "test", "relax", "scf", "md", "bench", "eq", "run" };
#define N_SUFFIXES (sizeof(SUFFIXES) / sizeof(SUFFIXES[0]))

static const struct {
        const char *name;
        unsigned percent;
} PARTITIONS[] = {
        { "batch", 55 }, { "large", 15 }, { "gpu", 12 }, { "debug", 10 }, { "long", 5 }, { "bigmem", 3 },
};

static void die(sqlite3 *db, const char *what) {
        fprintf(stderr, "%s: %s\n", what, sqlite3_errmsg(db));
        exit(EXIT_FAILURE);
}

static sqlite3_stmt *prepare(sqlite3 *db, const char *sql) {
        sqlite3_stmt *st;

        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
                die(db, sql);
        return st;
}

static void step(sqlite3 *db, sqlite3_stmt *st) {
        if (sqlite3_step(st) != SQLITE_DONE)
                die(db, sqlite3_sql(st));
        sqlite3_reset(st);
}

static uint64_t rng = 88172645463325252ULL;

static uint64_t next(void) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return rng;
}

static double uniform(void) {
        return (double) (next() >> 11) / (double) (UINT64_C(1) << 53);
}

/* 0 .. n-1, the first ones far more likely (about 1/(i+1)). */
static unsigned skewed(unsigned n) {
        return (unsigned) MIN((double) n - 1, floor(exp(uniform() * log((double) n + 1)) - 1));
}

static const char *partition(void) {
        unsigned p = (unsigned) (next() % 100), sum = 0;

        for (size_t i = 0; i < sizeof(PARTITIONS) / sizeof(PARTITIONS[0]); i++) {
                sum += PARTITIONS[i].percent;
                if (p < sum)
                        return PARTITIONS[i].name;
        }
        return PARTITIONS[0].name;
}

static void exec(sqlite3 *db, const char *sql) {
        if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
                die(db, sql);
}

/* Site-wide samples per hour and object (object_hours, and object_days
 * from them) over the year: in each hour a third of the executables and
 * half of the libraries ran. */
static uint64_t object_hours(sqlite3 *db, double base, double now) {
        sqlite3_stmt *st = prepare(db, "INSERT INTO object_hours (bucket, object_id, samples, cpu_seconds) "
                                       "VALUES (?, ?, ?, ?)");
        int64_t first = (int64_t) base / 3600 * 3600;
        uint64_t rows = 0;

        for (int64_t bucket = first; bucket <= (int64_t) now; bucket += 3600)
                for (int o = 1; o <= N_EXES + N_LIBS; o++) {
                        int64_t n;

                        if (next() % 6 >= (o <= N_EXES ? 2u : 3u))
                                continue;
                        n = (int64_t) (1 + next() % 200000);
                        sqlite3_bind_int64(st, 1, bucket);
                        sqlite3_bind_int64(st, 2, o);
                        sqlite3_bind_int64(st, 3, n);
                        sqlite3_bind_double(st, 4, (double) n);
                        step(db, st);
                        rows++;
                }
        sqlite3_finalize(st);
        /* the days, as ingest keeps them beside the hours */
        exec(db, "INSERT INTO object_days (day, object_id, samples, cpu_seconds) "
                 "SELECT bucket - bucket % 86400, object_id, sum(samples), sum(cpu_seconds) "
                 "FROM object_hours GROUP BY 1, 2");
        exec(db, "INSERT INTO object_weeks (week, object_id, samples, cpu_seconds) "
                 "SELECT day - day % 604800, object_id, sum(samples), sum(cpu_seconds) "
                 "FROM object_days GROUP BY 1, 2");
        exec(db, "INSERT INTO object_periods (period, object_id, samples, cpu_seconds) "
                 "SELECT week - week % 2419200, object_id, sum(samples), sum(cpu_seconds) "
                 "FROM object_weeks GROUP BY 1, 2");
        return rows;
}

/* Names of libraries' functions as lmkd sends them, two per library: their
 * families (docs/kernels.md) are those of a site's libraries. */
static const char *const LIB_FUNCTIONS[][2] = {
        { "dgemm_kernel_HASWELL", "dgemm_itcopy_HASWELL" }, { "__memmove_avx_unaligned_erms", "_int_malloc" },
        { "__exp_fma", "__log_fma" }, { "mca_btl_vader_component_progress", "MPI_Allreduce" },
        { "n1fv_32_avx2", "t1fv_8_avx2" }, { "gomp_barrier_wait_end", "GOMP_parallel" },
        { "deflate_slow", "longest_match" }, { "H5D__chunk_lookup", "H5C__protect" },
        { "dtrsm_kernel_LN_HASWELL", "dgemv_t_HASWELL" }, { "zgemm_kernel_n_HASWELL", "daxpy_k_HASWELL" },
};
#define N_LIB_FUNCTIONS (sizeof(LIB_FUNCTIONS) / sizeof(LIB_FUNCTIONS[0]))

/* The functions of every object (schema/0021). */
static void functions(sqlite3 *db) {
        sqlite3_stmt *st = prepare(db, "INSERT INTO functions (id, object_id, name, file_offset, entry) VALUES (?, ?, ?, -1, 0)");
        char name[128];

        for (int o = 1; o <= N_EXES + N_LIBS; o++)
                for (int k = 0; k < FUNCTIONS_PER_OBJECT; k++) {
                        if (k == FUNCTIONS_PER_OBJECT - 1)
                                name[0] = 0; /* the other functions */
                        else if (o <= N_EXES)
                                snprintf(name, sizeof(name), "%s_%s_%d", APPS[o % N_APPS], k ? "force" : "solve", o);
                        else
                                snprintf(name, sizeof(name), "%s", LIB_FUNCTIONS[o % N_LIB_FUNCTIONS][k]);
                        sqlite3_bind_int64(st, 1, (int64_t) (o - 1) * FUNCTIONS_PER_OBJECT + k + 1);
                        sqlite3_bind_int64(st, 2, o);
                        sqlite3_bind_text(st, 3, name, -1, SQLITE_TRANSIENT);
                        step(db, st);
                }
        sqlite3_finalize(st);
}

/* The site's sums per function (schema/0024) from the jobs' functions,
 * as the migration that made them fills them in: the migration's own SQL,
 * run again over the tables it makes. */
static void function_rollups(sqlite3 *db) {
        static const char *const tables[] = {
                "function_days", "function_weeks", "function_key_days", "function_key_weeks", "function_users",
                "function_apps", "function_total_days", "function_total_weeks", "function_scope_days",
                "function_scope_weeks",
        };
        char sql[128];

        for (unsigned i = 0; i < schema_migrations_count; i++) {
                if (!streq(schema_migrations[i].name, "0024-function-rollups"))
                        continue;
                for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
                        snprintf(sql, sizeof(sql), "DROP TABLE %s", tables[t]);
                        exec(db, sql);
                }
                exec(db, schema_migrations[i].sql);
                return;
        }
        fprintf(stderr, "gendb: no migration 0024-function-rollups\n");
        exit(EXIT_FAILURE);
}

/* The application mix (schema/0013) as ingest keeps it: each job's key,
 * its run on its first day, its samples split between its first and last
 * day (a job here runs at most a day and ten minutes). */
static void app_mix(sqlite3 *db) {
        exec(db, "UPDATE jobs SET app_object = (SELECT jo.object_id FROM job_objects jo "
                 "WHERE jo.job_id = jobs.id AND jo.object_id <= " STRINGIFY(N_EXES) " "
                 "ORDER BY jo.samples DESC LIMIT 1) "
                 "WHERE NOT EXISTS (SELECT 1 FROM job_notes n WHERE n.job_id = jobs.id AND n.note_key = 'app')");
        exec(db, "INSERT OR IGNORE INTO mix_keys (app, app_object, user_name, account, partition_name) "
                 "SELECT DISTINCT coalesce(app, ''), coalesce(app_object, 0), coalesce(user_name, ''), "
                 "coalesce(account, ''), coalesce(partition_name, '') FROM jobs");
        exec(db, "UPDATE jobs SET mix_day = CAST(first_seen / 86400 AS INTEGER) * 86400, mix_key = (SELECT k.id "
                 "FROM mix_keys k WHERE k.app = coalesce(jobs.app, '') AND k.app_object = coalesce(jobs.app_object, 0) "
                 "AND k.user_name = jobs.user_name AND k.account = jobs.account "
                 "AND k.partition_name = jobs.partition_name)");
        exec(db, "INSERT INTO app_days (day, mix_key, samples, cpu_seconds, runs) "
                 "SELECT day, mix_key, sum(n), sum(n), sum(runs) FROM ("
                 "SELECT mix_day AS day, mix_key, samples / 2 AS n, 1 AS runs FROM jobs UNION ALL "
                 "SELECT CAST(last_seen / 86400 AS INTEGER) * 86400, mix_key, samples - samples / 2, 0 FROM jobs) "
                 "GROUP BY day, mix_key");
        exec(db, "INSERT INTO app_dim_days (dim, day, value, app_object, samples, cpu_seconds, runs) "
                 "SELECT x.dim, d.day, CASE x.dim WHEN 0 THEN k.app WHEN 1 THEN k.user_name WHEN 2 THEN k.account "
                 "ELSE k.partition_name END, CASE x.dim WHEN 0 THEN k.app_object ELSE 0 END, "
                 "sum(d.samples), sum(d.cpu_seconds), sum(d.runs) "
                 "FROM app_days d JOIN mix_keys k ON k.id = d.mix_key, "
                 "(SELECT 0 AS dim UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3) x GROUP BY 1, 2, 3, 4");
}

int main(int argc, char **argv) {
        const StorageOptions opts = { .readers = 1, .busy_timeout_ms = 1000 };
        sqlite3_stmt *job, *jo, *jp, *jn, *note, *jf, *pack;
        JobFunctionSums sums = {};
        Storage *s = NULL;
        uint64_t jobs, t0 = now_ns(CLOCK_MONOTONIC), rows = 0, running = 0, hours;
        double now = (double) time(NULL), base = now - YEAR;
        sqlite3 *db;
        char buf[256];

        if (argc != 3 || safe_atou64(argv[2], 10, &jobs) < 0 || jobs == 0) {
                fprintf(stderr, "Usage: gendb PATH JOBS\n");
                return EXIT_FAILURE;
        }
        if (storage_sqlite_ops.open(argv[1], &opts, &s) < 0 || s->ops->migrate(s, NULL, NULL) < 0) {
                fprintf(stderr, "Failed to create %s\n", argv[1]);
                return EXIT_FAILURE;
        }
        s->ops->close(s);

        if (sqlite3_open(argv[1], &db) != SQLITE_OK)
                die(db, "open");
        exec(db, "PRAGMA synchronous = OFF; PRAGMA cache_size = -1048576; BEGIN");

        for (int i = 1; i <= N_NODES; i++) {
                snprintf(buf, sizeof(buf),
                         "INSERT INTO nodes (id, name, hostname, cluster, cpus, boot_id, last_seq, first_seen, "
                         "last_seen, last_push, batches) VALUES (%d, 'cn%05d', 'cn%05d', 'bench', %d, 'boot', 0, "
                         "%.0f, %.0f, %.0f, 0)",
                         i, i, i, CPUS_PER_NODE, base, now - (double) (next() % 300), now - (double) (next() % 300));
                exec(db, buf);
        }
        for (int i = 1; i <= N_EXES + N_LIBS; i++) {
                if (i <= N_EXES)
                        snprintf(buf, sizeof(buf), "INSERT INTO objects (id, path, kind, build_id) VALUES "
                                                   "(%d, '/sw/%s/%d/bin/%s', 'exe', '')",
                                 i, APPS[i % N_APPS], i, APPS[i % N_APPS]);
                else
                        snprintf(buf, sizeof(buf), "INSERT INTO objects (id, path, kind, build_id) VALUES "
                                                   "(%d, '/usr/lib/x86_64-linux-gnu/pkg/%d/libthing.so.1', 'lib', '')",
                                 i, i);
                exec(db, buf);
        }
        for (int i = 1; i <= N_PHASES; i++) {
                snprintf(buf, sizeof(buf), "INSERT INTO phases (id, path) VALUES (%d, 'phase%d/step%d')",
                         i, i / 5, i);
                exec(db, buf);
        }

        job = prepare(db, "INSERT INTO jobs (id, cluster, job, user_name, account, partition_name, name, "
                          "nodes_alloc, tasks, ended, first_seen, last_seen, samples, cpu_seconds, app) "
                          "VALUES (?, 'bench', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
        jo = prepare(db, "INSERT INTO job_objects (job_id, object_id, samples, cpu_seconds) VALUES (?, ?, ?, ?)");
        jp = prepare(db, "INSERT INTO job_phases (job_id, phase_id, samples, cpu_seconds) VALUES (?, ?, ?, ?)");
        jn = prepare(db, "INSERT INTO job_nodes (job_id, node_id, samples, first_seen, last_seen, cpu_seconds, "
                         "cpus_alloc) VALUES (?, ?, ?, ?, ?, ?, ?)");
        note = prepare(db, "INSERT INTO job_notes (job_id, note_key, note_value) VALUES (?, 'app', ?)");
        /* each job's functions: packed per object (schema/0025), and as
         * rows of a temporary job_functions, what the site's sums are
         * computed from (function_rollups()) */
        exec(db, "CREATE TEMPORARY TABLE job_functions (job_id INTEGER NOT NULL, function_id INTEGER NOT NULL, "
                 "samples INTEGER NOT NULL, cpu_seconds DOUBLE PRECISION NOT NULL, cycles INTEGER, "
                 "instructions INTEGER)");
        jf = prepare(db, "INSERT INTO job_functions (job_id, function_id, samples, cpu_seconds) VALUES (?, ?, ?, ?)");
        pack = prepare(db, "INSERT INTO job_function_packs (job_id, object_id, packed) VALUES (?, ?, ?)");
        functions(db);

        for (uint64_t id = 1; id <= jobs; id++) {
                unsigned n_nodes = 1 + next() % 4, n_objects = 8 + next() % 10, n_phases = next() % 6;
                unsigned user_no = uniform() < HEAVY_SHARE ? next() % HEAVY_USERS
                                                            : HEAVY_USERS + next() % (N_USERS - HEAVY_USERS);
                unsigned app_no = skewed(N_APPS);
                double first = base + (double) id * (YEAR / (double) jobs), last = first + 600 + next() % 86400;
                /* an executable of the job's application */
                uint64_t exe = app_no + N_APPS * (next() % (N_EXES / N_APPS)), lib0 = next() % (N_LIBS - 20);
                double util = 0.05 + 0.95 * uniform();
                bool ended = last <= now, noted = next() % 2;
                int64_t total = 0, per;
                char user[32], account[32], name[64];

                if (exe == 0)
                        exe = N_APPS;
                if (!ended) {
                        last = now - (double) (next() % 300);
                        running++;
                }
                snprintf(buf, sizeof(buf), "%" PRIu64, id);
                snprintf(user, sizeof(user), "user%u", user_no);
                snprintf(account, sizeof(account), "p%u", next() % 7 ? user_no % N_ACCOUNTS
                                                                     : (unsigned) (next() % N_ACCOUNTS));
                snprintf(name, sizeof(name), "%s-%s", APPS[app_no], SUFFIXES[next() % N_SUFFIXES]);
                /* the objects' samples halve every two objects: about 4 x per in all */
                per = MAX((int64_t) ((last - first) * n_nodes * CPUS_PER_NODE * util / 4), 1);
                for (unsigned k = 0; k < n_objects; k++) {
                        int64_t n = MAX(per >> (k / 2), 1);

                        sqlite3_bind_int64(jo, 1, (int64_t) id);
                        sqlite3_bind_int64(jo, 2, (int64_t) (k == 0 ? exe : N_EXES + 1 + lib0 + k));
                        sqlite3_bind_int64(jo, 3, n);
                        sqlite3_bind_double(jo, 4, (double) n);
                        step(db, jo);
                        total += n;
                        rows++;
                        /* the object's functions: half, a quarter, the rest */
                        sums.n = 0;
                        for (unsigned fk = 0; k < FUNCTION_OBJECTS && fk < FUNCTIONS_PER_OBJECT; fk++) {
                                uint64_t object = k == 0 ? exe : N_EXES + 1 + lib0 + k;
                                int64_t part = fk == 0 ? n / 2 : fk == 1 ? n / 4 : n - n / 2 - n / 4;
                                JobFunctionSum x = { 0, (int64_t) ((object - 1) * FUNCTIONS_PER_OBJECT + fk + 1), part,
                                                     (double) part, STORAGE_NULL, STORAGE_NULL };

                                sqlite3_bind_int64(jf, 1, (int64_t) id);
                                sqlite3_bind_int64(jf, 2, x.function_id);
                                sqlite3_bind_int64(jf, 3, part);
                                sqlite3_bind_double(jf, 4, (double) part);
                                step(db, jf);
                                if (function_sums_append(&sums, &x) < 0) {
                                        fprintf(stderr, "gendb: out of memory\n");
                                        exit(EXIT_FAILURE);
                                }
                        }
                        if (sums.n > 0) {
                                uint64_t object = k == 0 ? exe : N_EXES + 1 + lib0 + k;
                                uint8_t *packed;
                                size_t len;

                                if (function_pack_encode(&sums, &packed, &len) < 0) {
                                        fprintf(stderr, "gendb: out of memory\n");
                                        exit(EXIT_FAILURE);
                                }
                                sqlite3_bind_int64(pack, 1, (int64_t) id);
                                sqlite3_bind_int64(pack, 2, (int64_t) object);
                                sqlite3_bind_blob(pack, 3, packed, (int) len, SQLITE_TRANSIENT);
                                step(db, pack);
                                free(packed);
                                rows++;
                        }
                }
                for (unsigned k = 0; k < n_phases; k++) {
                        sqlite3_bind_int64(jp, 1, (int64_t) id);
                        sqlite3_bind_int64(jp, 2, 1 + (int64_t) ((id + k) % N_PHASES));
                        sqlite3_bind_int64(jp, 3, total / (n_phases + 1));
                        sqlite3_bind_double(jp, 4, (double) (total / (n_phases + 1)));
                        step(db, jp);
                        rows++;
                }
                for (unsigned k = 0; k < n_nodes; k++) {
                        sqlite3_bind_int64(jn, 1, (int64_t) id);
                        sqlite3_bind_int64(jn, 2, (int64_t) (1 + (id * 7 + k) % N_NODES));
                        sqlite3_bind_int64(jn, 3, total / n_nodes);
                        sqlite3_bind_double(jn, 4, first);
                        sqlite3_bind_double(jn, 5, last);
                        sqlite3_bind_double(jn, 6, (double) (total / n_nodes));
                        sqlite3_bind_int64(jn, 7, CPUS_PER_NODE);
                        step(db, jn);
                        rows++;
                }
                if (noted) {
                        sqlite3_bind_int64(note, 1, (int64_t) id);
                        sqlite3_bind_text(note, 2, APPS[app_no], -1, SQLITE_STATIC);
                        step(db, note);
                        rows++;
                }

                sqlite3_bind_int64(job, 1, (int64_t) id);
                sqlite3_bind_text(job, 2, buf, -1, SQLITE_TRANSIENT);
                sqlite3_bind_text(job, 3, user, -1, SQLITE_TRANSIENT);
                sqlite3_bind_text(job, 4, account, -1, SQLITE_TRANSIENT);
                sqlite3_bind_text(job, 5, partition(), -1, SQLITE_STATIC);
                sqlite3_bind_text(job, 6, name, -1, SQLITE_TRANSIENT);
                sqlite3_bind_int64(job, 7, n_nodes);
                sqlite3_bind_int64(job, 8, n_nodes * CPUS_PER_NODE);
                sqlite3_bind_int(job, 9, ended);
                sqlite3_bind_double(job, 10, first);
                sqlite3_bind_double(job, 11, last);
                sqlite3_bind_int64(job, 12, total);
                sqlite3_bind_double(job, 13, (double) total);
                /* the note, else the executable's file name: both are APPS[app_no] */
                sqlite3_bind_text(job, 14, APPS[app_no], -1, SQLITE_STATIC);
                step(db, job);
                rows++;
        }
        sqlite3_finalize(job);
        sqlite3_finalize(jo);
        sqlite3_finalize(jp);
        sqlite3_finalize(jn);
        sqlite3_finalize(note);
        sqlite3_finalize(jf);
        sqlite3_finalize(pack);
        function_sums_done(&sums);
        app_mix(db);
        function_rollups(db);
        hours = object_hours(db, base, now);
        rows += hours;
        exec(db, "COMMIT");
        sqlite3_close(db);
        printf("gendb: %" PRIu64 " jobs (%" PRIu64 " running), %" PRIu64 " rows (%" PRIu64
               " object hours) in %.1f s\n",
               jobs, running, rows, hours, (double) (now_ns(CLOCK_MONOTONIC) - t0) / 1e9);
        return EXIT_SUCCESS;
}
