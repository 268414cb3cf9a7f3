/* SPDX-License-Identifier: GPL-2.0-or-later */
/* PostgreSQL's time partitions (docs/postgresql.md, "Time-partitioned
 * tables"): made ahead of the data, attached without blocking ingest, and
 * dropped whole when they fall out of their window (the raw ones out of
 * --keep-raw-days, object_hours' out of --keep-rollup-days). The
 * migrations make only the default partitions; this file makes the rest. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "db/sql/sql-internal.h"

#define DAY_SECONDS_I ((int64_t) 86400)
#define PERIOD_SECONDS_I ((int64_t) 2419200) /* object_periods' 28 days */
#define DAYS_BEHIND 1
#define DAYS_AHEAD 7

/* The advisory lock every store takes around partition changes, so that two
 * stores on one database never attach or drop the same partition at once
 * ("lmk-part" in ASCII). */
#define PARTITION_LOCK_KEY "7813439497436275316"

typedef struct PartTable {
        const char *parent;     /* the partitioned table */
        const char *deflt;      /* its default partition */
        const char *key;        /* the partition key, Unix seconds */
        int64_t span;           /* what one partition holds, seconds */
        bool rollup;            /* dropped with the rollup window (else the raw one) */
        bool legacy;            /* written no more: none made ahead, old ones still dropped */
} PartTable;

static const PartTable part_tables[_PARTITIONED_TABLE_MAX] = {
        [PARTITIONED_BATCHES] = { "batches", "batches_default", "interval_start", DAY_SECONDS_I, false },
        [PARTITIONED_SAMPLES] = { "samples", "samples_default", "bucket", DAY_SECONDS_I, false, true },
        [PARTITIONED_TIMELINE] = { "job_timeline_raw", "job_timeline_raw_default", "t", DAY_SECONDS_I, false },
        [PARTITIONED_OBJECT_HOURS] = { "object_hours", "object_hours_default", "bucket", PERIOD_SECONDS_I,
                                       true },
        [PARTITIONED_SAMPLE_PACKS] = { "sample_packs", "sample_packs_default", "bucket", DAY_SECONDS_I, false },
};

const char *partitioned_table_to_string(PartitionedTable t) {
        return t >= 0 && t < _PARTITIONED_TABLE_MAX ? part_tables[t].parent : NULL;
}

static int64_t floor_div(int64_t a, int64_t b) {
        return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* parent_pYYYYMMDD, after the UTC day the partition starts on. */
static int partition_name(const PartTable *t, int64_t start, char *buf, size_t size) {
        time_t tt = (time_t) start;
        struct tm tm;
        int n;

        if (!gmtime_r(&tt, &tm))
                return -EOVERFLOW;
        n = snprintf(buf, size, "%s_p%04d%02d%02d", t->parent, tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
        return n > 0 && (size_t) n < size ? 0 : -ENAMETOOLONG;
}

/* The start of the partition named name of t, from its name; -EINVAL for
 * a partition this file did not name: another name, or a day on which no
 * partition of t starts (an admin's own under a name like ours). */
static int partition_start(const PartTable *t, const char *name, int64_t *ret) {
        size_t n = strlen(t->parent);
        struct tm tm = {};
        int64_t start;
        int y, m, d;
        char tail;

        if (strncmp(name, t->parent, n) != 0 || strncmp(name + n, "_p", 2) != 0 ||
            sscanf(name + n + 2, "%4d%2d%2d%c", &y, &m, &d, &tail) != 3 || strlen(name + n + 2) != 8)
                return -EINVAL;
        tm.tm_year = y - 1900;
        tm.tm_mon = m - 1;
        tm.tm_mday = d;
        start = (int64_t) timegm(&tm);
        /* timegm() normalized a day that does not exist (Feb 30) */
        if (tm.tm_year != y - 1900 || tm.tm_mon != m - 1 || tm.tm_mday != d ||
            floor_div(start, t->span) * t->span != start)
                return -EINVAL;
        *ret = start;
        return 0;
}

/* One row of one column of an ad-hoc query: 1 with the integer, 0 without
 * a row (or a NULL). */
static int query_int(Conn *c, const char *sql, int64_t *ret) {
        DbStmt *st;
        int r = db_prepare(c->db, sql, false, &st);

        if (r < 0)
                return r;
        r = db_step(st);
        if (r == 1) {
                if (db_column_null(st, 0))
                        r = 0;
                else
                        *ret = db_column_int(st, 0);
        }
        db_finalize(st);
        return r;
}

/* The transaction a partition change runs in: alone among the writers
 * (db_begin_write(): a row stored beside a partition being made may find
 * it half-made), the stores' advisory lock, and a short lock timeout, so
 * that a change waiting for a busy table gives up (tried again on the
 * next pass) rather than queue ingest behind it. */
static int change_begin(Conn *c) {
        int r = db_begin_write(c->db);

        if (r >= 0)
                r = conn_exec(c, "SELECT pg_advisory_xact_lock(" PARTITION_LOCK_KEY "); "
                              "SET LOCAL lock_timeout = '1s'");
        return r;
}

static int change_end(Conn *c, int r) {
        if (r >= 0)
                r = conn_exec(c, "COMMIT");
        if (r < 0 && db_in_transaction(c->db))
                (void) conn_exec(c, "ROLLBACK");
        return r;
}

static int exists(Conn *c, const char *name, bool *ret) {
        char sql[256];
        int64_t v = 0;
        int r;

        /* names are ours: letters, digits and '_' */
        snprintf(sql, sizeof(sql), "SELECT CASE WHEN to_regclass('%s') IS NULL THEN 0 ELSE 1 END", name);
        r = query_int(c, sql, &v);
        if (r < 0)
                return r;
        *ret = r == 1 && v == 1;
        return 0;
}

/* Makes t's partition [start, start + span) unless it is there: a table of
 * the parent's shape, attached (SHARE UPDATE EXCLUSIVE on the parent, so
 * ingest into other partitions goes on). Rows of the range already in the
 * default partition move into it first. 1: made, 0: it was there. */
static int partition_make(Conn *c, const PartTable *t, int64_t start, PartitionResult *res) {
        char name[96], sql[1024];
        int64_t end = start + t->span;
        bool there = false;
        int r;

        r = partition_name(t, start, name, sizeof(name));
        if (r < 0)
                return r;
        r = change_begin(c);
        if (r >= 0)
                r = exists(c, name, &there);
        if (r < 0 || there)
                return change_end(c, r);

        snprintf(sql, sizeof(sql),
                 "CREATE TABLE %s (LIKE %s INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES); "
                 "SAVEPOINT attach",
                 name, t->parent);
        r = conn_exec(c, sql);
        if (r >= 0) {
                snprintf(sql, sizeof(sql), "ALTER TABLE %s ATTACH PARTITION %s FOR VALUES FROM (%" PRId64
                         ") TO (%" PRId64 ")", t->parent, name, start, end);
                r = conn_exec(c, sql);
                if (r == -EEXIST) {
                        /* the default partition holds rows of the range
                         * (a node's clock far off, a store down longer than
                         * the days ahead, data copied from SQLite) */
                        char move[1024];
                        int64_t moved = 0;

                        snprintf(move, sizeof(move),
                                 "ROLLBACK TO SAVEPOINT attach; "
                                 "INSERT INTO %s SELECT * FROM %s WHERE %s >= %" PRId64 " AND %s < %" PRId64 "; "
                                 "DELETE FROM %s WHERE %s >= %" PRId64 " AND %s < %" PRId64,
                                 name, t->deflt, t->key, start, t->key, end, t->deflt, t->key, start, t->key, end);
                        r = conn_exec(c, move);
                        if (r >= 0)
                                r = conn_exec(c, sql);
                        if (r >= 0) {
                                char count[256];

                                snprintf(count, sizeof(count), "SELECT count(*) FROM %s", name);
                                if (query_int(c, count, &moved) == 1)
                                        res->moved_rows += (uint64_t) moved;
                                log_info("Partitions: moved %" PRId64 " rows of %s from %s into %s.", moved,
                                         t->parent, t->deflt, name);
                        }
                }
        }
        if (r < 0)
                log_warning_errno(r, "Partitions: failed to make %s (%s): %m; %s. Trying again on the next pass.",
                                  name, t->parent, db_errmsg(c->db));
        r = change_end(c, r);
        if (r < 0)
                return r;
        log_debug("Partitions: made %s for [%" PRId64 ", %" PRId64 ").", name, start, end);
        res->created++;
        return 1;
}

/* Drops t's partitions wholly before `before`, those it made itself
 * (partition_start()) and no others. */
static int partitions_drop(Conn *c, const PartTable *t, int64_t before, PartitionResult *res) {
        enum { MAX_DROP = 64 };
        char sql[512], names[MAX_DROP][96];
        size_t n = 0;
        DbStmt *st;
        int r, rc;

        snprintf(sql, sizeof(sql),
                 "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
                 "WHERE i.inhparent = '%s'::regclass ORDER BY c.relname", t->parent);
        r = db_prepare(c->db, sql, false, &st);
        if (r < 0)
                return r;
        while (n < MAX_DROP && (rc = db_step(st)) == 1) {
                const char *name = db_column_text(st, 0);
                int64_t start;

                if (name && partition_start(t, name, &start) >= 0 && start + t->span <= before &&
                    strlen(name) < sizeof(names[0]))
                        snprintf(names[n++], sizeof(names[0]), "%s", name);
        }
        db_finalize(st);
        if (n < MAX_DROP && rc < 0)
                return rc;

        for (size_t i = 0; i < n; i++) {
                int64_t rows = 0;

                r = change_begin(c);
                snprintf(sql, sizeof(sql), "SELECT count(*) FROM %.95s", names[i]);
                if (r >= 0 && (r = query_int(c, sql, &rows)) >= 0) {
                        /* DROP needs the parent's ACCESS EXCLUSIVE lock:
                         * the lock timeout keeps ingest from queueing long */
                        snprintf(sql, sizeof(sql), "DROP TABLE %.95s", names[i]);
                        r = conn_exec(c, sql);
                }
                r = change_end(c, r);
                if (r < 0) {
                        log_warning_errno(r, "Partitions: failed to drop %s: %m; %s. Trying again on the next pass.",
                                          names[i], db_errmsg(c->db));
                        return r;
                }
                log_info("Partitions: dropped %s (%" PRId64 " rows), older than the %s window.", names[i], rows,
                         t->rollup ? "rollup" : "raw");
                res->dropped++;
                res->dropped_rows += (uint64_t) rows;
        }
        return 0;
}

static int partitions_count(Conn *c, PartitionedTable i, PartitionResult *res) {
        const PartTable *t = &part_tables[i];
        char sql[512];
        int64_t v = 0;
        int r;

        snprintf(sql, sizeof(sql),
                 "SELECT count(*) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
                 "WHERE i.inhparent = '%s'::regclass AND c.relname <> '%s'", t->parent, t->deflt);
        r = query_int(c, sql, &v);
        if (r < 0)
                return r;
        res->partitions[i] = (uint64_t) v;
        snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", t->deflt);
        r = query_int(c, sql, &v);
        if (r < 0)
                return r;
        res->default_rows[i] = (uint64_t) v;
        return 0;
}

int sql_partitions(Storage *base, int64_t now, int64_t raw_before, int64_t rollup_before, PartitionResult *ret) {
        SqlStorage *s = (SqlStorage *) base;
        Conn *c = &s->writer;
        int r = 0;

        *ret = (PartitionResult) {};
        if (s->driver->dialect != DB_DIALECT_POSTGRESQL)
                return -EOPNOTSUPP;

        pthread_mutex_lock(&s->write_lock);
        for (PartitionedTable i = 0; i < _PARTITIONED_TABLE_MAX && r >= 0; i++) {
                const PartTable *t = &part_tables[i];
                int64_t first = floor_div(now, t->span) * t->span, last;
                int64_t before = t->rollup ? rollup_before : raw_before;

                if (t->span == DAY_SECONDS_I) {
                        last = first + DAYS_AHEAD * t->span;
                        first -= DAYS_BEHIND * t->span;
                } else
                        last = first + t->span; /* the current and the next period */
                for (int64_t start = first; !t->legacy && start <= last; start += t->span) {
                        int k = partition_make(c, t, start, ret);

                        if (k < 0) {
                                ret->failures++;
                                if (k == -ECONNRESET || k == -ECONNREFUSED)
                                        r = k;
                                break; /* a busy table: the later days wait for the next pass */
                        }
                }
                if (r >= 0 && before > 0) {
                        int k = partitions_drop(c, t, before, ret);

                        if (k < 0) {
                                ret->failures++;
                                if (k == -ECONNRESET || k == -ECONNREFUSED)
                                        r = k;
                        }
                }
                if (r >= 0)
                        r = partitions_count(c, i, ret);
        }
        pthread_mutex_unlock(&s->write_lock);
        return r;
}
