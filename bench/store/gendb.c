/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Generates a large lmk-store database for query benchmarks:
 *
 *   gendb PATH JOBS
 *
 * creates the schema through the storage backend (so it is the real one),
 * then writes JOBS jobs with their rollups (objects, phases, nodes, notes)
 * directly with SQL in one transaction: going through ingest would take
 * hours for a million jobs and measure ingest, not queries. Job ids are
 * "1" .. "JOBS". */
#include <sqlite3.h>
#include <stdio.h>
#include <time.h>

#include "storage.h"
#include "util.h"

#define N_USERS 500
#define N_NODES 2000
#define N_EXES 300
#define N_LIBS 1700
#define N_PHASES 40

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

int main(int argc, char **argv) {
        const StorageOptions opts = { .readers = 1, .busy_timeout_ms = 1000 };
        sqlite3_stmt *job, *jo, *jp, *jn, *note;
        Storage *s = NULL;
        uint64_t jobs, t0 = now_ns(CLOCK_MONOTONIC), rows = 0;
        double base = (double) time(NULL) - 365.0 * 86400;
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
        sqlite3_exec(db, "PRAGMA synchronous = OFF; PRAGMA cache_size = -1048576; BEGIN", NULL, NULL, NULL);

        for (int i = 1; i <= N_NODES; i++) {
                snprintf(buf, sizeof(buf),
                         "INSERT INTO nodes (id, name, cluster, cpus, boot_id, last_seq, first_seen, last_seen, "
                         "last_push, batches) VALUES (%d, 'cn%05d', 'bench', 48, 'boot', 0, %.0f, %.0f, %.0f, 0)",
                         i, i, base, base, base);
                if (sqlite3_exec(db, buf, NULL, NULL, NULL) != SQLITE_OK)
                        die(db, "nodes");
        }
        for (int i = 1; i <= N_EXES + N_LIBS; i++) {
                snprintf(buf, sizeof(buf), "INSERT INTO objects (id, path, kind, build_id) VALUES "
                                           "(%d, '%s/%d/%s', '%s', '')",
                         i, i <= N_EXES ? "/apps" : "/usr/lib/x86_64-linux-gnu/pkg", i,
                         i <= N_EXES ? "bin/app" : "libthing.so.1", i <= N_EXES ? "exe" : "lib");
                if (sqlite3_exec(db, buf, NULL, NULL, NULL) != SQLITE_OK)
                        die(db, "objects");
        }
        for (int i = 1; i <= N_PHASES; i++) {
                snprintf(buf, sizeof(buf), "INSERT INTO phases (id, path) VALUES (%d, 'phase%d/step%d')",
                         i, i / 5, i);
                if (sqlite3_exec(db, buf, NULL, NULL, NULL) != SQLITE_OK)
                        die(db, "phases");
        }

        job = prepare(db, "INSERT INTO jobs (id, cluster, job, user_name, account, partition_name, name, "
                          "nodes_alloc, tasks, ended, first_seen, last_seen, samples, cpu_seconds) "
                          "VALUES (?, 'bench', ?, ?, ?, 'batch', 'app', ?, ?, 1, ?, ?, ?, ?)");
        jo = prepare(db, "INSERT INTO job_objects VALUES (?, ?, ?, ?, NULL, NULL, NULL)");
        jp = prepare(db, "INSERT INTO job_phases VALUES (?, ?, ?, ?, NULL, NULL, NULL)");
        jn = prepare(db, "INSERT INTO job_nodes VALUES (?, ?, ?, ?, ?)");
        note = prepare(db, "INSERT INTO job_notes VALUES (?, 'app', 'bench')");

        for (uint64_t id = 1; id <= jobs; id++) {
                unsigned n_nodes = 1 + next() % 4, n_objects = 8 + next() % 10, n_phases = next() % 6;
                double first = base + (double) id * (365.0 * 86400 / (double) jobs), last = first + 600 + next() % 86400;
                uint64_t node0 = 1 + next() % (N_NODES - 4), exe = 1 + next() % N_EXES, lib0 = next() % (N_LIBS - 20);
                int64_t total = 0, per;
                char user[32], account[32];

                snprintf(buf, sizeof(buf), "%" PRIu64, id);
                snprintf(user, sizeof(user), "user%" PRIu64, next() % N_USERS);
                snprintf(account, sizeof(account), "p%" PRIu64, next() % 100);
                per = (int64_t) (100 + next() % 5000);
                for (unsigned k = 0; k < n_objects; k++) {
                        int64_t n = per >> (k / 2);

                        sqlite3_bind_int64(jo, 1, (int64_t) id);
                        sqlite3_bind_int64(jo, 2, (int64_t) (k == 0 ? exe : N_EXES + 1 + lib0 + k));
                        sqlite3_bind_int64(jo, 3, n);
                        sqlite3_bind_double(jo, 4, (double) n);
                        step(db, jo);
                        total += n;
                        rows++;
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
                        sqlite3_bind_int64(jn, 2, (int64_t) (node0 + k));
                        sqlite3_bind_int64(jn, 3, total / n_nodes);
                        sqlite3_bind_double(jn, 4, first);
                        sqlite3_bind_double(jn, 5, last);
                        step(db, jn);
                        rows++;
                }
                sqlite3_bind_int64(note, 1, (int64_t) id);
                step(db, note);

                sqlite3_bind_int64(job, 1, (int64_t) id);
                sqlite3_bind_text(job, 2, buf, -1, SQLITE_TRANSIENT);
                sqlite3_bind_text(job, 3, user, -1, SQLITE_TRANSIENT);
                sqlite3_bind_text(job, 4, account, -1, SQLITE_TRANSIENT);
                sqlite3_bind_int64(job, 5, n_nodes);
                sqlite3_bind_int64(job, 6, n_nodes * 48);
                sqlite3_bind_double(job, 7, first);
                sqlite3_bind_double(job, 8, last);
                sqlite3_bind_int64(job, 9, total);
                sqlite3_bind_double(job, 10, (double) total);
                step(db, job);
                rows += 2;
        }
        sqlite3_finalize(job);
        sqlite3_finalize(jo);
        sqlite3_finalize(jp);
        sqlite3_finalize(jn);
        sqlite3_finalize(note);
        if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
                die(db, "commit");
        sqlite3_close(db);
        printf("gendb: %" PRIu64 " jobs, %" PRIu64 " rows in %.1f s\n", jobs, rows,
               (double) (now_ns(CLOCK_MONOTONIC) - t0) / 1e9);
        return EXIT_SUCCESS;
}
