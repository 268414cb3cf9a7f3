/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lmk-store migrate: opens both ends, checks that the copy is safe to make,
 * then hands over to db-copy.c and reports. Nothing here writes to the
 * source; the target is written only when it holds no store's data. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"
#include "migrate/migrate.h"

#if HAVE_LIBPQ
#include "migrate/db-copy.h"
#include "db/db.h"
#include "migrations.h"
#include "db/storage.h"
#endif

static void help(void) {
        printf("lmk-store migrate --from sqlite:PATH --to postgresql://USER@HOST/DB\n\n"
               "Copies a whole SQLite store into an empty PostgreSQL database, then checks the\n"
               "copy. Stop lmk-store first; start it on the new database afterwards.\n\n"
               "  -h --help          Show this help\n"
               "     --from DB       The SQLite store: sqlite:PATH or PATH (opened read-only)\n"
               "     --to DB         The PostgreSQL database: a postgresql:// or postgres:// URI\n"
               "                     or a libpq keyword string (\"host=... dbname=...\"); the\n"
               "                     password from ~/.pgpass or PGPASSFILE, never the command line\n"
               "\nSee lmk-store(8).\n");
}

#if HAVE_LIBPQ

DEFINE_TRIVIAL_CLEANUP_FUNC(sqlite3 *, sqlite3_close);
DEFINE_TRIVIAL_CLEANUP_FUNC(PGconn *, PQfinish);
DEFINE_TRIVIAL_CLEANUP_FUNC(PGresult *, PQclear);

/* A postgresql:// or postgres:// URI or a libpq keyword string, as --db
 * takes them (store/db/db.c). */
static bool is_postgresql(const char *s) {
        const DbDriver *driver;
        const char *location;

        return db_driver_for(s, &driver, &location) >= 0 && driver == &db_postgresql_driver;
}

static const char *file_type(mode_t m) {
        return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" :
               S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device" : "not a regular file";
}

/* The source, read-only and checked before SQLite touches it: SQLite would
 * block opening a FIFO, and would take any other file for an empty
 * database. Inside a read transaction, so every table is copied from the
 * same snapshot even if a store still writes to it. */
static int open_source(const char *path, sqlite3 **ret) {
        _cleanup_(sqlite3_closep) sqlite3 *db = NULL;
        _cleanup_close_ int fd = -EBADF;
        char magic[16];
        struct stat st;
        ssize_t n;

        fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return log_error_errno(errno, "Failed to open source %s: %m", path);
        if (fstat(fd, &st) < 0)
                return log_error_errno(errno, "Failed to stat source %s: %m", path);
        if (!S_ISREG(st.st_mode))
                return log_error_errno(-EINVAL, "Source %s is %s, not an lmk-store database.", path,
                                       file_type(st.st_mode));
        n = read(fd, magic, sizeof(magic));
        if (n < 0)
                return log_error_errno(errno, "Failed to read source %s: %m", path);
        if (n != (ssize_t) sizeof(magic) || memcmp(magic, "SQLite format 3", sizeof(magic)) != 0)
                return log_error_errno(-EINVAL, "Source %s is not an SQLite database.", path);

        /* SQLITE_OPEN_READONLY is the URI's mode=ro. */
        if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
                return log_error_errno(-EIO, "Failed to open source %s: %s", path,
                                       db ? sqlite3_errmsg(db) : "out of memory");
        (void) sqlite3_busy_timeout(db, 5000);
        if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
                return log_error_errno(-EIO, "Failed to read source %s: %s", path, sqlite3_errmsg(db));
        *ret = TAKE_PTR(db);
        return 0;
}

/* The source must be at the newest schema this binary knows: the target is
 * made by this binary's migrations, and the tables must match. */
static int check_source_schema(sqlite3 *db, const char *path) {
        sqlite3_stmt *st = NULL;
        unsigned current = 0;
        int rc, r = 0;

        rc = sqlite3_prepare_v2(db, "SELECT version, name FROM schema_version ORDER BY version", -1, &st, NULL);
        if (rc != SQLITE_OK) {
                const char *e = sqlite3_errmsg(db);

                if (strstr(e, "no such table"))
                        return log_error_errno(-EINVAL, "Source %s is an SQLite database but not an lmk-store "
                                               "one (it has no schema_version table).", path);
                return log_error_errno(-EIO, "Failed to read the schema version of %s: %s", path, e);
        }
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                int64_t v = sqlite3_column_int64(st, 0);
                const char *name = (const char *) sqlite3_column_text(st, 1);

                if (v != (int64_t) current + 1 || v > (int64_t) schema_migrations_count || !name ||
                    !streq(name, schema_migrations[v - 1].name)) {
                        r = log_error_errno(-EPROTO, "Source %s has a schema this lmk-store does not know "
                                            "(version %" PRId64 ", newer or from another branch): use the "
                                            "lmk-store that wrote it.", path, v);
                        break;
                }
                current = (unsigned) v;
        }
        if (r == 0 && rc != SQLITE_DONE)
                r = log_error_errno(-EIO, "Failed to read the schema version of %s: %s", path, sqlite3_errmsg(db));
        sqlite3_finalize(st);
        if (r < 0)
                return r;
        if (current != schema_migrations_count)
                return log_error_errno(-EPROTO, "Source %s has schema version %u, this lmk-store's is %u: start "
                                       "this lmk-store on it once (--db %s) so that it migrates it, stop it, "
                                       "then run migrate again.", path, current, schema_migrations_count, path);
        return 0;
}

/* Where the target is, for messages: never the URI, which may hold a password. */
static void describe_target(PGconn *c, char *buf, size_t size) {
        snprintf(buf, size, "database %s on %s", PQdb(c) ?: "?", PQhost(c) ?: "?");
}

static int connect_target(const char *to, PGconn **ret, char *what, size_t what_size) {
        _cleanup_(PQfinishp) PGconn *c = NULL;
        _cleanup_(PQclearp) PGresult *res = NULL;
        const char *enc;

        c = PQconnectdb(to);
        if (!c)
                return log_oom();
        describe_target(c, what, what_size);
        if (PQstatus(c) != CONNECTION_OK) {
                const char *e = PQerrorMessage(c);

                return log_error_errno(-ECONNREFUSED, "Failed to connect to target %s: %.*s", what,
                                       (int) strcspn(e, "\n"), e);
        }
        describe_target(c, what, what_size);
        if (PQsetClientEncoding(c, "UTF8") != 0)
                return log_error_errno(-EIO, "Failed to set the client encoding on %s: %s", what, PQerrorMessage(c));
        /* The store's text is UTF-8; another server encoding would refuse
         * or transcode some of it. */
        enc = PQparameterStatus(c, "server_encoding");
        if (!enc || !streq(enc, "UTF8"))
                return log_error_errno(-EINVAL, "Target %s has encoding %s: lmk-store needs UTF8 (createdb -T "
                                       "template0 -E UTF8 --locale=C).", what, enc ?: "?");
        res = PQexec(c, "SELECT datcollate FROM pg_database WHERE datname = current_database() "
                        "AND datcollate NOT IN ('C', 'POSIX', 'C.UTF-8', 'C.utf8')");
        if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1)
                log_warning("Target %s sorts text by %s: the store's lists will sort differently from "
                            "SQLite's byte order (docs/postgresql.md).", what, PQgetvalue(res, 0, 0));
        *ret = TAKE_PTR(c);
        return 0;
}

/* Creates or completes the target's schema the way `lmk-store --db TARGET`
 * does at start-up: the store's own open and migrate, under its advisory
 * lock. Returns 1 when done, 0 when this lmk-store has no PostgreSQL
 * backend (the target must then be migrated already; checked after). */
static int migrate_target_schema(const char *to, const char *what) {
        StorageOptions opts = { .readers = 1, .busy_timeout_ms = 5000 };
        const StorageOps *ops;
        const char *location;
        Storage *s = NULL;
        unsigned from, version;
        int r;

                r = storage_ops_for(to, &ops, &location);
        if (r == -EPROTONOSUPPORT || (r >= 0 && streq(ops->name, "sqlite")))
                return 0;
        if (r < 0)
                return log_error_errno(r, "Failed to pick the backend for the target: %m");
        r = ops->open(location, &opts, &s);
        if (r < 0)
                return log_error_errno(r, "Failed to open target %s: %m", what);
        r = ops->migrate(s, &from, &version);
        ops->close(s);
        if (r == -EPROTO)
                return log_error_errno(r, "Target %s has a schema this lmk-store does not know.", what);
        if (r < 0)
                return log_error_errno(r, "Failed to create the schema on target %s: %m", what);
        if (from != version)
                log_info("Migrated target %s from schema version %u to %u.", what, from, version);
        return 1;
}

/* The backends' migrations carry the same numbers and names
 * (tests/store/test-schema-parity.py), so the target must hold exactly the
 * source's versions. */
static int check_target_schema(PGconn *c, const char *what, bool could_migrate) {
        _cleanup_(PQclearp) PGresult *res = NULL;
        unsigned current = 0;

        res = PQexec(c, "SELECT to_regclass('schema_version') IS NOT NULL");
        if (PQresultStatus(res) != PGRES_TUPLES_OK)
                return log_error_errno(-EIO, "Failed to read target %s: %s", what, PQresultErrorMessage(res));
        if (!streq(PQgetvalue(res, 0, 0), "t")) {
                if (could_migrate)
                        return log_error_errno(-EPROTO, "Target %s has no schema_version table after "
                                               "migrating it.", what);
                return log_error_errno(-EOPNOTSUPP, "Target %s has no lmk schema, and this lmk-store cannot "
                                       "create it (it has no PostgreSQL backend): apply schema/postgresql/*.sql "
                                       "and their schema_version rows first.", what);
        }
        PQclear(res);
        res = PQexec(c, "SELECT version, name FROM schema_version ORDER BY version");
        if (PQresultStatus(res) != PGRES_TUPLES_OK)
                return log_error_errno(-EIO, "Failed to read the schema version of target %s: %s", what,
                                       PQresultErrorMessage(res));
        for (int i = 0; i < PQntuples(res); i++) {
                const char *name = PQgetvalue(res, i, 1);
                uint64_t v = strtoull(PQgetvalue(res, i, 0), NULL, 10);

                if (v != current + 1 || v > schema_migrations_count || !streq(name, schema_migrations[v - 1].name))
                        return log_error_errno(-EPROTO, "Target %s has a schema this lmk-store does not know "
                                               "(version %s %s).", what, PQgetvalue(res, i, 0), name);
                current = (unsigned) v;
        }
        if (current != schema_migrations_count)
                return log_error_errno(-EPROTO, "Target %s has schema version %u, this lmk-store's is %u.", what,
                                       current, schema_migrations_count);
        return 0;
}

static void progress(const char *table, uint64_t rows, double seconds, bool done, void *userdata) {
        double rate = seconds > 0 ? (double) rows / seconds : 0;

        if (done)
                log_info("%s: %" PRIu64 " rows in %.1f s (%.0f rows/s).", table, rows, seconds, rate);
        else
                log_info("%s: %" PRIu64 " rows so far, %.0f rows/s.", table, rows, rate);
}

static void print_summary(const DbCopyReport *r, const char *from, const char *what) {
        printf("Copied %zu tables, %" PRIu64 " rows, from %s to %s in %.1f s:\n", r->n_tables, r->rows, from,
               what, r->seconds);
        for (size_t i = 0; i < r->n_tables; i++) {
                printf("  %-20s %12" PRIu64 " rows", r->tables[i].name, r->tables[i].rows);
                if (r->tables[i].replaced > 0)
                        printf(" (replacing %" PRIu64 " the migrations had put there)", r->tables[i].replaced);
                printf("\n");
        }
        printf("Verified: every table's row count is the same on both sides");
        for (size_t i = 0; i < r->n_sums; i++)
                printf("; %s.%s %.17g", r->sums[i].table, r->sums[i].column, r->sums[i].target);
        printf(".\n");
}

static int run(const char *from, const char *to) {
        _cleanup_(sqlite3_closep) sqlite3 *src = NULL;
        _cleanup_(PQfinishp) PGconn *dst = NULL;
        _cleanup_free_ char *why = NULL;
        _cleanup_(db_copy_report_done) DbCopyReport report = {};
        DbCopyOptions o = { .progress = progress };
        char what[512];
        int r, migrated;

        if (strncmp(from, "sqlite:", 7) == 0)
                from += 7;
        if (!is_postgresql(to))
                return log_error_errno(-EINVAL, "--to %s is not a PostgreSQL database (postgresql://… or "
                                       "\"host=… dbname=…\").", to);

        r = open_source(from, &src);
        if (r < 0)
                return r;
        r = check_source_schema(src, from);
        if (r < 0)
                return r;
        r = connect_target(to, &dst, what, sizeof(what));
        if (r < 0)
                return r;

        /* Before the migrations touch it: a store's database at an older
         * schema is somebody's data too. */
        r = db_copy_target_has_data(dst, &why);
        if (r < 0)
                return log_error_errno(r, "Failed to read target %s: %s", what, why ?: strerror(-r));
        if (r > 0)
                return log_error_errno(-EEXIST, "Target %s is not empty: %s. migrate copies only into an empty "
                                       "database and never overwrites data it did not write.", what, why);
        migrated = migrate_target_schema(to, what);
        if (migrated < 0)
                return migrated;
        r = check_target_schema(dst, what, migrated > 0);
        if (r < 0)
                return r;

        log_info("Copying %s to %s.", from, what);
        r = db_copy(src, dst, &o, &report, &why);
        if (r == -EEXIST)
                return log_error_errno(r, "Target %s is not empty: %s. migrate copies only into an empty "
                                       "database and never overwrites data it did not write.", what, why);
        if (r < 0)
                return log_error_errno(r, "Failed to copy %s to %s, nothing was kept: %s", from, what,
                                       why ?: strerror(-r));
        r = db_copy_verify(src, dst, &report, &why);
        if (r < 0)
                return log_error_errno(r, "The copy in %s differs from %s: %s", what, from, why ?: strerror(-r));
        print_summary(&report, from, what);
        return 0;
}

#endif

int migrate_main(int argc, char **argv) {
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "from", required_argument, NULL, 'f' },
                { "to", required_argument, NULL, 't' },
                {}
        };
        const char *from = NULL, *to = NULL;
        int opt;

        opterr = 0;
        while ((opt = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (opt) {
                case 'h':
                        help();
                        return EXIT_SUCCESS;
                case 'f':
                        from = optarg;
                        break;
                case 't':
                        to = optarg;
                        break;
                default:
                        log_error("Unknown option or missing argument: %s", argv[optind - 1]);
                        return EXIT_FAILURE;
                }
        if (optind < argc) {
                log_error("Unexpected argument: %s", argv[optind]);
                return EXIT_FAILURE;
        }
        if (!from || !to) {
                log_error("migrate needs --from sqlite:PATH and --to postgresql://… (see --help).");
                return EXIT_FAILURE;
        }
#if HAVE_LIBPQ
        return run(from, to) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
#else
        log_error_errno(-EOPNOTSUPP, "This lmk-store was built without libpq: it cannot write to PostgreSQL.");
        return EXIT_FAILURE;
#endif
}
