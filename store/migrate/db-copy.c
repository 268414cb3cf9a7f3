/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "migrate/db-copy.h"
#include "macro.h"
#include "util.h"

#define FLUSH_BYTES_DEFAULT (4u << 20)
#define PROGRESS_INTERVAL_NS UINT64_C(1000000000)
/* How far two sums of a real column may differ (relative): the order of
 * addition differs between the databases. */
#define SUM_TOLERANCE 1e-9

/* The tables ingest writes first, for any batch: a target with a row in
 * one of them holds a store's data. */
static const char *const data_tables[] = { "nodes", "batches", "jobs", "objects" };

/* Key columns whose sums db_copy_verify compares, where the table exists. */
static const struct {
        const char *table, *column;
} key_sums[] = {
        { "jobs", "samples" },
        { "jobs", "cpu_seconds" },
        { "batches", "samples" },
        { "samples", "samples" },
        { "sample_packs", "samples" },
        { "job_objects", "samples" },
        { "function_days", "samples" },
        { "object_hours", "samples" },
        { "object_hours", "cpu_seconds" },
};

typedef struct Table {
        char *name;
        char **columns; /* in the target's order */
        size_t n_columns;
        char *identity; /* the target's identity column, or NULL */
} Table;

typedef struct Buf {
        char *data;
        size_t len, size;
} Buf;

static void pg_clearp(PGresult **p) {
        PQclear(*p);
}

static void sqlite3_finalizep(sqlite3_stmt **p) {
        sqlite3_finalize(*p);
}

static void strv_free(char **v, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
}

static void tables_free(Table *t, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(t[i].name);
                strv_free(t[i].columns, t[i].n_columns);
                free(t[i].identity);
        }
        free(t);
}

void db_copy_report_done(DbCopyReport *r) {
        for (size_t i = 0; i < r->n_tables; i++)
                free(r->tables[i].name);
        free(r->tables);
        free(r->sums);
        *r = (DbCopyReport) {};
}

_printf_(3, 4) static int fail(char **ret_why, int r, const char *format, ...) {
        va_list ap;
        char *s = NULL;

        va_start(ap, format);
        if (vasprintf(&s, format, ap) < 0)
                s = NULL;
        va_end(ap);
        /* libpq's messages end in a newline; the log adds its own. */
        if (s)
                s[strcspn(s, "\n")] = 0;
        free(*ret_why);
        *ret_why = s;
        return r;
}

static double seconds_since(uint64_t start_ns) {
        return (double) (now_ns(CLOCK_MONOTONIC) - start_ns) / 1e9;
}

/* Names come from both databases' catalogues; the lmk schema's are plain
 * lower-case identifiers, and accepting only those means they can be put
 * into SQL text quoted without escaping. */
static bool name_ok(const char *s) {
        if (!s || !*s || strlen(s) > 63 || !((*s >= 'a' && *s <= 'z') || *s == '_'))
                return false;
        for (; *s; s++)
                if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
                        return false;
        return true;
}

static int strv_push(char ***v, size_t *n, const char *s) {
        char **nv = realloc(*v, (*n + 1) * sizeof(char *));

        if (!nv)
                return -ENOMEM;
        *v = nv;
        if (!(nv[*n] = strdup(s)))
                return -ENOMEM;
        (*n)++;
        return 0;
}

static bool strv_contains(char **v, size_t n, const char *s) {
        for (size_t i = 0; i < n; i++)
                if (streq(v[i], s))
                        return true;
        return false;
}

/* ---- PostgreSQL ---- */

static int pg_query(PGconn *c, const char *sql, ExecStatusType want, PGresult **ret, char **ret_why) {
        PGresult *res = PQexec(c, sql);

        if (PQresultStatus(res) != want) {
                int r = fail(ret_why, PQstatus(c) == CONNECTION_OK ? -EIO : -ECONNRESET,
                             "PostgreSQL: %s", PQresultErrorMessage(res)[0] ? PQresultErrorMessage(res)
                                                                            : PQerrorMessage(c));
                PQclear(res);
                return r;
        }
        if (ret)
                *ret = res;
        else
                PQclear(res);
        return 0;
}

static int pg_exec(PGconn *c, const char *sql, char **ret_why) {
        return pg_query(c, sql, PGRES_COMMAND_OK, NULL, ret_why);
}

/* The first column of the first row of a query with one text parameter
 * (or none, if param is NULL), copied; NULL for SQL NULL or no row. */
static int pg_value(PGconn *c, const char *sql, const char *param, char **ret, char **ret_why) {
        _cleanup_(pg_clearp) PGresult *res = NULL;
        char *v = NULL;

        res = PQexecParams(c, sql, param ? 1 : 0, NULL, param ? &param : NULL, NULL, NULL, 0);
        if (PQresultStatus(res) != PGRES_TUPLES_OK)
                return fail(ret_why, -EIO, "PostgreSQL: %s", PQresultErrorMessage(res));
        if (PQntuples(res) > 0 && !PQgetisnull(res, 0, 0) && !(v = strdup(PQgetvalue(res, 0, 0))))
                return -ENOMEM;
        *ret = v;
        return 0;
}

static int pg_tables(PGconn *c, Table **ret, size_t *ret_n, char **ret_why) {
        _cleanup_(pg_clearp) PGresult *res = NULL;
        Table *t = NULL;
        size_t n = 0;
        int r;

        /* A partitioned table is one logical table: its partitions are storage. */
        r = pg_query(c,
                     "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                     "WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition "
                     "AND c.relname <> 'schema_version' ORDER BY c.relname COLLATE \"C\"",
                     PGRES_TUPLES_OK, &res, ret_why);
        if (r < 0)
                return r;
        t = calloc(PQntuples(res) + 1, sizeof(Table));
        if (!t)
                return -ENOMEM;
        for (int i = 0; i < PQntuples(res); i++) {
                _cleanup_(pg_clearp) PGresult *cols = NULL;
                _cleanup_free_ char *quoted = NULL;
                const char *name = PQgetvalue(res, i, 0);

                if (!name_ok(name)) {
                        r = fail(ret_why, -EINVAL, "PostgreSQL table \"%s\" is not of lmk's schema", name);
                        goto fail;
                }
                t[n].name = strdup(name);
                if (!t[n].name || asprintf(&quoted, "\"%s\"", name) < 0) {
                        r = -ENOMEM;
                        goto fail;
                }
                n++;
                cols = PQexecParams(c,
                                    "SELECT attname, attidentity <> '' FROM pg_attribute WHERE attrelid = $1::regclass "
                                    "AND attnum > 0 AND NOT attisdropped ORDER BY attnum",
                                    1, NULL, (const char *const[]) { quoted }, NULL, NULL, 0);
                if (PQresultStatus(cols) != PGRES_TUPLES_OK) {
                        r = fail(ret_why, -EIO, "PostgreSQL: %s", PQresultErrorMessage(cols));
                        goto fail;
                }
                for (int j = 0; j < PQntuples(cols); j++) {
                        const char *col = PQgetvalue(cols, j, 0);

                        if (!name_ok(col)) {
                                r = fail(ret_why, -EINVAL, "PostgreSQL column %s.\"%s\" is not of lmk's schema",
                                         name, col);
                                goto fail;
                        }
                        r = strv_push(&t[n - 1].columns, &t[n - 1].n_columns, col);
                        if (r < 0)
                                goto fail;
                        if (streq(PQgetvalue(cols, j, 1), "t") && !t[n - 1].identity &&
                            !(t[n - 1].identity = strdup(col))) {
                                r = -ENOMEM;
                                goto fail;
                        }
                }
        }
        *ret = t;
        *ret_n = n;
        return 0;
fail:
        tables_free(t, n);
        return r;
}

/* ---- SQLite ---- */

static int sqlite_fail(sqlite3 *db, char **ret_why, const char *what) {
        return fail(ret_why, -EIO, "SQLite: %s: %s", what, sqlite3_errmsg(db));
}

static int sqlite_strings(sqlite3 *db, const char *sql, const char *param, char ***ret, size_t *ret_n,
                          char **ret_why) {
        _cleanup_(sqlite3_finalizep) sqlite3_stmt *st = NULL;
        char **v = NULL;
        size_t n = 0;
        int rc, r;

        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
                return sqlite_fail(db, ret_why, sql);
        if (param && sqlite3_bind_text(st, 1, param, -1, SQLITE_STATIC) != SQLITE_OK)
                return sqlite_fail(db, ret_why, sql);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                const char *s = (const char *) sqlite3_column_text(st, 0);

                r = strv_push(&v, &n, s ?: "");
                if (r < 0) {
                        strv_free(v, n);
                        return r;
                }
        }
        if (rc != SQLITE_DONE) {
                strv_free(v, n);
                return sqlite_fail(db, ret_why, sql);
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

static int sqlite_double(sqlite3 *db, const char *sql, double *ret, char **ret_why) {
        _cleanup_(sqlite3_finalizep) sqlite3_stmt *st = NULL;

        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW)
                return sqlite_fail(db, ret_why, sql);
        *ret = sqlite3_column_double(st, 0);
        return 0;
}

/* The source's tables must be the target's, with the same columns, by name:
 * a difference means the two schemas are not the same version after all, or
 * one was changed by hand, and a copy would lose or invent data. */
static int match_tables(sqlite3 *src, const Table *t, size_t n, char **ret_why) {
        char **names = NULL;
        size_t n_names = 0;
        int r;

        r = sqlite_strings(src,
                           "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' "
                           "ESCAPE '\\' AND name <> 'schema_version' ORDER BY name",
                           NULL, &names, &n_names, ret_why);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n_names && r >= 0; i++) {
                bool found = false;

                for (size_t j = 0; j < n && !found; j++)
                        found = streq(t[j].name, names[i]);
                if (!found)
                        r = fail(ret_why, -EPROTO, "Table %s is in the SQLite store but not in PostgreSQL", names[i]);
        }
        for (size_t j = 0; j < n && r >= 0; j++) {
                char **cols = NULL;
                size_t n_cols = 0;

                if (!strv_contains(names, n_names, t[j].name)) {
                        r = fail(ret_why, -EPROTO, "Table %s is in PostgreSQL but not in the SQLite store", t[j].name);
                        break;
                }
                r = sqlite_strings(src, "SELECT name FROM pragma_table_info(?)", t[j].name, &cols, &n_cols, ret_why);
                if (r < 0)
                        break;
                for (size_t k = 0; k < t[j].n_columns && r >= 0; k++)
                        if (!strv_contains(cols, n_cols, t[j].columns[k]))
                                r = fail(ret_why, -EPROTO, "Column %s.%s is in PostgreSQL but not in the SQLite store",
                                         t[j].name, t[j].columns[k]);
                for (size_t k = 0; k < n_cols && r >= 0; k++)
                        if (!strv_contains(t[j].columns, t[j].n_columns, cols[k]))
                                r = fail(ret_why, -EPROTO, "Column %s.%s is in the SQLite store but not in PostgreSQL",
                                         t[j].name, cols[k]);
                strv_free(cols, n_cols);
        }
        strv_free(names, n_names);
        return r;
}

/* ---- COPY's text format ---- */

static int buf_reserve(Buf *b, size_t more) {
        size_t want;
        char *p;

        if (b->size - b->len >= more)
                return 0;
        want = MAX(b->size * 2, b->len + more + 4096);
        p = realloc(b->data, want);
        if (!p)
                return -ENOMEM;
        b->data = p;
        b->size = want;
        return 0;
}

static int buf_printf(Buf *b, const char *format, ...) _printf_(2, 3);
static int buf_printf(Buf *b, const char *format, ...) {
        va_list ap;
        int n, r;

        r = buf_reserve(b, 64);
        if (r < 0)
                return r;
        va_start(ap, format);
        n = vsnprintf(b->data + b->len, b->size - b->len, format, ap);
        va_end(ap);
        if (n < 0 || (size_t) n >= b->size - b->len)
                return -EOVERFLOW;
        b->len += (size_t) n;
        return 0;
}

/* One field of COPY's text format: \N for NULL; in text, backslash, tab,
 * newline and carriage return escaped, as they would end the field or the
 * row; blobs as bytea's hex (\\x…, the backslash itself escaped). */
static int append_field(Buf *b, sqlite3_stmt *st, int i) {
        static const char hex[] = "0123456789abcdef";
        const unsigned char *s;
        double d;
        int n, r;

        switch (sqlite3_column_type(st, i)) {
        case SQLITE_NULL:
                return buf_printf(b, "\\N");
        case SQLITE_INTEGER:
                return buf_printf(b, "%lld", (long long) sqlite3_column_int64(st, i));
        case SQLITE_FLOAT:
                /* 17 significant digits: the same double on the other side. */
                d = sqlite3_column_double(st, i);
                if (isnan(d))
                        return buf_printf(b, "NaN");
                if (isinf(d))
                        return buf_printf(b, d > 0 ? "Infinity" : "-Infinity");
                return buf_printf(b, "%.17g", d);
        case SQLITE_BLOB:
                s = sqlite3_column_blob(st, i);
                n = sqlite3_column_bytes(st, i);
                r = buf_reserve(b, 3 + 2 * (size_t) n);
                if (r < 0)
                        return r;
                b->data[b->len++] = '\\';
                b->data[b->len++] = '\\';
                b->data[b->len++] = 'x';
                for (int k = 0; k < n; k++) {
                        b->data[b->len++] = hex[s[k] >> 4];
                        b->data[b->len++] = hex[s[k] & 15];
                }
                return 0;
        default:
                s = sqlite3_column_text(st, i);
                n = sqlite3_column_bytes(st, i);
                if (!s)
                        return -ENOMEM;
                r = buf_reserve(b, 2 * (size_t) n);
                if (r < 0)
                        return r;
                for (int k = 0; k < n; k++) {
                        char c = (char) s[k];

                        switch (c) {
                        case 0:
                                return -EILSEQ; /* PostgreSQL's text cannot hold it */
                        case '\\':
                        case '\t':
                        case '\n':
                        case '\r':
                                b->data[b->len++] = '\\';
                                b->data[b->len++] = c == '\\' ? '\\' : c == '\t' ? 't' : c == '\n' ? 'n' : 'r';
                                break;
                        default:
                                b->data[b->len++] = c;
                        }
                }
                return 0;
        }
}

static int copy_put(PGconn *dst, Buf *b, char **ret_why) {
        if (b->len > 0 && PQputCopyData(dst, b->data, (int) b->len) != 1)
                return fail(ret_why, -ECONNRESET, "PostgreSQL: %s", PQerrorMessage(dst));
        b->len = 0;
        return 0;
}

/* Ends a COPY that failed on our side, so that the connection can roll back. */
static void copy_abort(PGconn *dst, const char *why) {
        PGresult *res;

        (void) PQputCopyEnd(dst, why);
        while ((res = PQgetResult(dst)))
                PQclear(res);
}

static int copy_table(sqlite3 *src, PGconn *dst, const Table *t, const DbCopyOptions *o, DbCopyTable *out,
                      char **ret_why) {
        _cleanup_(sqlite3_finalizep) sqlite3_stmt *st = NULL;
        _cleanup_free_ char *select = NULL, *copy = NULL;
        _cleanup_(pg_clearp) PGresult *res = NULL;
        size_t flush = o->flush_bytes ?: FLUSH_BYTES_DEFAULT;
        uint64_t start = now_ns(CLOCK_MONOTONIC), last = start, rows = 0;
        Buf cols = {}, b = {};
        int rc, r;

        for (size_t i = 0; i < t->n_columns; i++) {
                r = buf_printf(&cols, "%s\"%s\"", i > 0 ? ", " : "", t->columns[i]);
                if (r < 0) {
                        free(cols.data);
                        return r;
                }
        }
        r = asprintf(&select, "SELECT %s FROM \"%s\"", cols.data ?: "", t->name) < 0 ||
                            asprintf(&copy, "COPY \"%s\" (%s) FROM STDIN", t->name, cols.data ?: "") < 0
                    ? -ENOMEM
                    : 0;
        free(cols.data);
        if (r < 0)
                return r;
        if (sqlite3_prepare_v2(src, select, -1, &st, NULL) != SQLITE_OK)
                return sqlite_fail(src, ret_why, select);
        r = pg_query(dst, copy, PGRES_COPY_IN, &res, ret_why);
        if (r < 0)
                return r;
        PQclear(TAKE_PTR(res));

        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                for (size_t i = 0; i < t->n_columns; i++) {
                        if (i > 0)
                                r = buf_printf(&b, "\t");
                        if (r >= 0)
                                r = append_field(&b, st, (int) i);
                        if (r == -EILSEQ) {
                                r = fail(ret_why, r, "%s.%s, row %" PRIu64 ": text with a NUL byte, which "
                                         "PostgreSQL cannot store", t->name, t->columns[i], rows + 1);
                                goto abort;
                        }
                        if (r < 0)
                                goto abort;
                }
                r = buf_printf(&b, "\n");
                if (r < 0)
                        goto abort;
                if (b.len >= flush && (r = copy_put(dst, &b, ret_why)) < 0)
                        goto abort;
                rows++;
                if (o->progress && rows % 4096 == 0 && now_ns(CLOCK_MONOTONIC) - last >= PROGRESS_INTERVAL_NS) {
                        last = now_ns(CLOCK_MONOTONIC);
                        o->progress(t->name, rows, seconds_since(start), false, o->userdata);
                }
        }
        if (rc != SQLITE_DONE) {
                r = sqlite_fail(src, ret_why, select);
                goto abort;
        }
        r = copy_put(dst, &b, ret_why);
        if (r < 0)
                goto abort;
        free(TAKE_PTR(b.data));
        if (PQputCopyEnd(dst, NULL) != 1)
                return fail(ret_why, -ECONNRESET, "PostgreSQL: %s", PQerrorMessage(dst));
        res = PQgetResult(dst);
        if (PQresultStatus(res) != PGRES_COMMAND_OK)
                r = fail(ret_why, -EIO, "PostgreSQL, copying %s: %s", t->name, PQresultErrorMessage(res));
        else if (strtoull(PQcmdTuples(res), NULL, 10) != rows)
                r = fail(ret_why, -EBADMSG, "PostgreSQL took %s rows of %s, %" PRIu64 " were sent",
                         PQcmdTuples(res), t->name, rows);
        PQclear(TAKE_PTR(res));
        while ((res = PQgetResult(dst)))
                PQclear(TAKE_PTR(res));
        if (r < 0)
                return r;

        out->rows = rows;
        out->seconds = seconds_since(start);
        if (o->progress)
                o->progress(t->name, rows, out->seconds, true, o->userdata);
        return 0;

abort:
        free(b.data);
        copy_abort(dst, "lmk-store migrate stopped the copy");
        return r;
}

/* ---- the whole copy ---- */

int db_copy_target_has_data(PGconn *dst, char **ret_why) {
        char held[128] = "";

        for (size_t i = 0; i < ELEMENTSOF(data_tables); i++) {
                _cleanup_free_ char *quoted = NULL, *exists = NULL, *sql = NULL, *any = NULL;
                int r;

                if (asprintf(&quoted, "\"%s\"", data_tables[i]) < 0)
                        return -ENOMEM;
                r = pg_value(dst, "SELECT to_regclass($1)", quoted, &exists, ret_why);
                if (r < 0)
                        return r;
                if (!exists)
                        continue;
                if (asprintf(&sql, "SELECT 1 FROM %s LIMIT 1", quoted) < 0)
                        return -ENOMEM;
                r = pg_value(dst, sql, NULL, &any, ret_why);
                if (r < 0)
                        return r;
                if (any)
                        snprintf(held + strlen(held), sizeof(held) - strlen(held), "%s%s", held[0] ? ", " : "",
                                 data_tables[i]);
        }
        if (!held[0])
                return 0;
        fail(ret_why, 0, "it already holds %s", held);
        return 1;
}

/* Rows in a table of an otherwise empty target were put there by the
 * migrations (retention's watermarks): the source's own replace them. */
static int clear_seeded(PGconn *dst, const Table *t, DbCopyTable *out, char **ret_why) {
        _cleanup_(pg_clearp) PGresult *res = NULL;
        _cleanup_free_ char *sql = NULL;
        int r;

        if (asprintf(&sql, "DELETE FROM \"%s\"", t->name) < 0)
                return -ENOMEM;
        r = pg_query(dst, sql, PGRES_COMMAND_OK, &res, ret_why);
        if (r < 0)
                return r;
        out->replaced = strtoull(PQcmdTuples(res), NULL, 10);
        return 0;
}

static int set_identity(PGconn *dst, const Table *t, char **ret_why) {
        _cleanup_free_ char *sql = NULL;

        /* setval(…, NULL) of an empty table leaves the sequence at its start. */
        if (asprintf(&sql, "SELECT setval(pg_get_serial_sequence('\"%s\"', '%s'), max(\"%s\")) FROM \"%s\"",
                     t->name, t->identity, t->identity, t->name) < 0)
                return -ENOMEM;
        return pg_query(dst, sql, PGRES_TUPLES_OK, NULL, ret_why);
}

static int copy_all(sqlite3 *src, PGconn *dst, const Table *t, size_t n, const DbCopyOptions *o,
                    DbCopyReport *report, char **ret_why) {
        _cleanup_free_ char *lock = NULL;
        Buf names = {};
        int r;

        /* EXCLUSIVE: others may read, nobody writes; a second migrate or a
         * store started on the target waits, then finds the data. */
        for (size_t i = 0; i < n; i++) {
                r = buf_printf(&names, "%s\"%s\"", i > 0 ? ", " : "", t[i].name);
                if (r < 0) {
                        free(names.data);
                        return r;
                }
        }
        r = asprintf(&lock, "LOCK TABLE %s IN EXCLUSIVE MODE", names.data ?: "") < 0 ? -ENOMEM : 0;
        free(names.data);
        if (r < 0)
                return r;
        if (n > 0 && (r = pg_exec(dst, lock, ret_why)) < 0)
                return r;
        r = db_copy_target_has_data(dst, ret_why);
        if (r < 0)
                return r;
        if (r > 0)
                return -EEXIST;

        for (size_t i = 0; i < n; i++) {
                DbCopyTable *out = &report->tables[report->n_tables];

                if (!(out->name = strdup(t[i].name)))
                        return -ENOMEM;
                report->n_tables++;
                r = clear_seeded(dst, &t[i], out, ret_why);
                if (r < 0)
                        return r;
                r = copy_table(src, dst, &t[i], o, out, ret_why);
                if (r < 0)
                        return r;
                report->rows += out->rows;
                if (t[i].identity && (r = set_identity(dst, &t[i], ret_why)) < 0)
                        return r;
        }
        return 0;
}

int db_copy(sqlite3 *src, PGconn *dst, const DbCopyOptions *o, DbCopyReport *ret, char **ret_why) {
        DbCopyReport report = {};
        uint64_t start = now_ns(CLOCK_MONOTONIC);
        Table *t = NULL;
        size_t n = 0;
        int r;

        r = pg_tables(dst, &t, &n, ret_why);
        if (r < 0)
                return r;
        r = match_tables(src, t, n, ret_why);
        if (r < 0)
                goto finish;
        report.tables = calloc(n + 1, sizeof(DbCopyTable));
        if (!report.tables) {
                r = -ENOMEM;
                goto finish;
        }

        /* One transaction for all tables: a copy that fails half-way leaves
         * nothing behind, so the target stays empty and the copy can simply
         * be run again, and no store started on the target early ever sees
         * half a store. */
        r = pg_exec(dst, "BEGIN", ret_why);
        if (r < 0)
                goto finish;
        r = copy_all(src, dst, t, n, o, &report, ret_why);
        if (r >= 0)
                r = pg_exec(dst, "COMMIT", ret_why);
        if (r < 0) {
                PQclear(PQexec(dst, "ROLLBACK"));
                goto finish;
        }
        /* The planner's statistics, else the first queries plan for empty tables. */
        r = pg_exec(dst, "ANALYZE", ret_why);
        if (r < 0)
                goto finish;
        report.seconds = seconds_since(start);
        *ret = report;
        report = (DbCopyReport) {};
finish:
        db_copy_report_done(&report);
        tables_free(t, n);
        return r;
}

/* ---- verification ---- */

static int count_rows(sqlite3 *src, PGconn *dst, const char *table, uint64_t *ret_src, uint64_t *ret_dst,
                      char **ret_why) {
        _cleanup_free_ char *sql = NULL, *v = NULL;
        double s;
        int r;

        if (asprintf(&sql, "SELECT count(*) FROM \"%s\"", table) < 0)
                return -ENOMEM;
        r = sqlite_double(src, sql, &s, ret_why);
        if (r < 0)
                return r;
        r = pg_value(dst, sql, NULL, &v, ret_why);
        if (r < 0)
                return r;
        *ret_src = (uint64_t) s;
        r = safe_atou64(v ?: "", 10, ret_dst);
        return r < 0 ? fail(ret_why, -EIO, "PostgreSQL counted \"%s\" rows of %s", v ?: "", table) : 0;
}

static bool sums_equal(double a, double b) {
        return a == b || fabs(a - b) <= SUM_TOLERANCE * MAX(fabs(a), fabs(b));
}

int db_copy_verify(sqlite3 *src, PGconn *dst, DbCopyReport *report, char **ret_why) {
        int r;

        for (size_t i = 0; i < report->n_tables; i++) {
                uint64_t a, b;

                r = count_rows(src, dst, report->tables[i].name, &a, &b, ret_why);
                if (r < 0)
                        return r;
                if (a != b)
                        return fail(ret_why, -EBADMSG, "%s has %" PRIu64 " rows in SQLite but %" PRIu64
                                    " in PostgreSQL", report->tables[i].name, a, b);
        }

        free(report->sums);
        report->n_sums = 0;
        report->sums = calloc(ELEMENTSOF(key_sums), sizeof(DbCopySum));
        if (!report->sums)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(key_sums); i++) {
                _cleanup_free_ char *lite = NULL, *pg = NULL, *v = NULL;
                DbCopySum *s = &report->sums[report->n_sums];
                bool copied = false;

                for (size_t j = 0; j < report->n_tables && !copied; j++)
                        copied = streq(report->tables[j].name, key_sums[i].table);
                if (!copied)
                        continue;
                if (asprintf(&lite, "SELECT total(\"%s\") FROM \"%s\"", key_sums[i].column, key_sums[i].table) < 0 ||
                    asprintf(&pg, "SELECT coalesce(sum(\"%s\"), 0)::float8 FROM \"%s\"", key_sums[i].column,
                             key_sums[i].table) < 0)
                        return -ENOMEM;
                *s = (DbCopySum) { .table = key_sums[i].table, .column = key_sums[i].column };
                r = sqlite_double(src, lite, &s->source, ret_why);
                if (r < 0)
                        return r;
                r = pg_value(dst, pg, NULL, &v, ret_why);
                if (r < 0)
                        return r;
                r = safe_atod(v ?: "", &s->target);
                if (r < 0)
                        return fail(ret_why, -EIO, "PostgreSQL summed %s.%s to \"%s\"", s->table, s->column, v ?: "");
                report->n_sums++;
                if (!sums_equal(s->source, s->target))
                        return fail(ret_why, -EBADMSG, "%s.%s sums to %.17g in SQLite but %.17g in PostgreSQL",
                                    s->table, s->column, s->source, s->target);
        }
        return 0;
}
