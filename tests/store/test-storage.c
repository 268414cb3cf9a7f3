/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A backend through the storage interface, without HTTP: what goes in comes
 * out of the rollups, duplicates are stored once, migrations run once.
 * SQLite in a temporary file by default; PostgreSQL when started by
 * tests/lib/with-pgserver.py, which passes a fresh private server's URI in
 * LMK_TEST_PG_URI (store-storage-pg). */
#include <math.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db/db.h"
#include "db/sql/sample-pack.h"
#include "db/storage.h"
#include "tests.h"

static char dir[] = "/tmp/lmk-test-storage-XXXXXX";
static char sqlite_path[256];
/* --db as lmk-store takes it: the SQLite file or the PostgreSQL URI */
static const char *db;

static const StorageOptions opts = { .readers = 2, .busy_timeout_ms = 1000 };

static Storage *open_db(unsigned *ret_from) {
        const StorageOps *ops;
        const char *location;
        Storage *s = NULL;
        unsigned from = 99, to = 0;

        ASSERT_OK(storage_ops_for(db, &ops, &location));
        ASSERT_OK(ops->open(location, &opts, &s));
        ASSERT_OK(s->ops->migrate(s, &from, &to));
        ASSERT_TRUE(to >= 1);
        if (ret_from)
                *ret_from = from;
        return s;
}

/* A connection of its own to the database under test, beside the
 * storage's, for what the test reads and changes behind its back. A
 * writer: SQLite's folds the WAL back into the database when it closes,
 * which waits for the storage's readers (its busy timeout). */
static DbConn *connect_raw(bool writer) {
        const DbDriver *driver;
        const char *location;
        DbConn *c = NULL;

        ASSERT_OK(db_driver_for(db, &driver, &location));
        ASSERT_OK(driver->connect(location, &opts, writer, &c));
        return c;
}

static void exec_raw(const char *sql) {
        DbConn *c = connect_raw(true);
        int r = db_exec(c, sql);

        if (r < 0)
                test_fail("%s: %s (%s)", sql, strerror(-r), db_errmsg(c));
        c->driver->disconnect(c);
}

/* The one number a query gives. */
static double query_number(const char *sql) {
        DbConn *c = connect_raw(false);
        DbStmt *st;
        double v;
        int r;

        ASSERT_OK(db_prepare(c, sql, false, &st));
        r = db_step(st);
        if (r != 1)
                test_fail("%s: step gave %d (%s)", sql, r, db_errmsg(c));
        v = db_column_double(st, 0);
        ASSERT_EQ(db_step(st), 0);
        db_finalize(st);
        c->driver->disconnect(c);
        return v;
}

/* A batch of node with seq; cluster "c1"; rows as given. */
static Batch *make_batch(const char *node, int seq, double start, const char *rows, const char *jobs) {
        char buf[8192];
        BatchError err;
        Batch *b = NULL;

        snprintf(buf, sizeof(buf),
                 "{\"format\":\"lmk-batch\",\"version\":1,"
                 "\"batch\":{\"node\":\"%s\",\"boot_id\":\"boot\",\"seq\":%d},"
                 "\"node\":{\"cpus\":4,\"cluster\":\"c1\"},"
                 "\"interval\":{\"start\":%.1f,\"end\":%.1f},"
                 "\"sampling\":{\"event\":\"cpu-clock\",\"frequency_hz\":2},"
                 "\"jobs\":[%s],\"rows\":[%s],"
                 "\"markers\":[{\"job\":\"42\",\"comm\":\"app\",\"phase\":\"io\",\"state\":\"off-rate\"}]}",
                 node, seq, start, start + 60, jobs, rows);
        if (batch_parse(buf, strlen(buf), &b, &err) < 0)
                test_fail("%s: %s", err.field, err.message);
        return b;
}

#define JOB42 "{\"job\":\"42\",\"user\":\"alice\",\"name\":\"app\",\"notes\":{\"size\":\"big\"}}"
#define ROWS1                                                                                     \
        "{\"job\":\"42\",\"user\":\"alice\",\"comm\":\"app\",\"object\":\"/bin/app\",\"kind\":\"exe\"," \
        "\"phase\":\"solve\",\"samples\":60,\"cycles\":600,\"instructions\":1200},"              \
        "{\"job\":\"42\",\"user\":\"alice\",\"comm\":\"app\",\"object\":\"/lib/libm.so.6\",\"kind\":\"lib\"," \
        "\"phase\":\"solve\",\"samples\":30,\"cycles\":300,\"instructions\":300},"                \
        "{\"job\":\"42\",\"user\":\"alice\",\"comm\":\"app\",\"object\":\"[kernel]\",\"kind\":\"kernel\"," \
        "\"phase\":\"\",\"samples\":10},"                                                         \
        "{\"job\":null,\"user\":\"root\",\"comm\":\"swapper\",\"object\":\"[idle]\",\"kind\":\"idle\"," \
        "\"samples\":100}"

static const Share *find(const ShareList *l, const char *name) {
        for (size_t i = 0; i < l->n; i++)
                if (streq(l->items[i].name, name))
                        return &l->items[i];
        test_fail("no \"%s\" in list", name);
}

static int64_t count_rows(const char *table) {
        char sql[128];

        snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", table);
        return (int64_t) query_number(sql);
}

/* The raw rows stored for job (NULL: work outside jobs) from node's batch
 * seq, unpacked, as "path samples cpu_seconds cpu_time_ns cycles
 * instructions" lines (counters -1 for NULL). */
static void stored_rows(const char *node, int seq, const char *job, char *buf, size_t size) {
        /* the pack as hex: the drivers read text, and each database spells it its own way */
        const char *hex = db == sqlite_path ? "hex(p.packed)" : "encode(p.packed, 'hex')";
        DbConn *c = connect_raw(false);
        DbStmt *st, *obj;
        char sql[512];
        size_t len = 0;
        int n = 0, rc;

        snprintf(sql, sizeof(sql),
                 "SELECT %s, p.n_rows, p.samples FROM sample_packs p "
                 "JOIN nodes n ON n.id = p.node_id LEFT JOIN jobs j ON j.id = p.job_id "
                 "WHERE n.name = ? AND p.seq = ? AND p.boot_id = 'boot' AND %s",
                 hex, job ? "j.job = ?" : "p.job_id = 0");
        ASSERT_OK(db_prepare(c, sql, false, &st));
        ASSERT_OK(db_prepare(c, "SELECT path FROM objects WHERE id = ?", false, &obj));
        ASSERT_OK(db_bind_text(st, 1, node));
        ASSERT_OK(db_bind_int(st, 2, seq));
        if (job)
                ASSERT_OK(db_bind_text(st, 3, job));
        buf[0] = 0;
        while ((rc = db_step(st)) == 1) {
                const char *text = db_column_text(st, 0);
                size_t bytes = strlen(text) / 2, off = 0;
                uint8_t *p = malloc(bytes + 1);
                int64_t rows = 0, samples = 0;
                SampleRow row;
                int r;

                ASSERT_NOT_NULL(p);
                for (size_t i = 0; i < bytes; i++)
                        ASSERT_EQ(sscanf(text + 2 * i, "%2hhx", &p[i]), 1);
                n++;
                while ((r = sample_pack_next(p, bytes, &off, &row)) == 1) {
                        db_reset(obj);
                        ASSERT_OK(db_bind_int(obj, 1, row.object_id));
                        ASSERT_EQ(db_step(obj), 1);
                        len += (size_t) snprintf(buf + len, size - len,
                                                 "%s %" PRId64 " %g %" PRId64 " %" PRId64 " %" PRId64 "\n",
                                                 db_column_text(obj, 0), row.samples, row.cpu_seconds,
                                                 row.cpu_time_ns, row.cycles, row.instructions);
                        ASSERT_TRUE(len < size);
                        rows++;
                        samples += row.samples;
                }
                free(p);
                ASSERT_EQ(r, 0);
                /* the pack's own counts agree with what it holds */
                ASSERT_EQ(db_column_int(st, 1), rows);
                ASSERT_EQ(db_column_int(st, 2), samples);
        }
        ASSERT_EQ(rc, 0);
        ASSERT_TRUE(n <= 1); /* one pack per batch and job */
        db_finalize(obj);
        db_finalize(st);
        c->driver->disconnect(c);
}

TEST(ingest_and_summary) {
        Storage *s = open_db(NULL);
        Batch *b1 = make_batch("n1", 1, 1795550400, ROWS1, JOB42);
        Batch *b2 = make_batch("n2", 1, 1795550460, ROWS1, "");
        IngestResult res;
        BatchError err;
        JobSummary js;
        const Share *x;

        ASSERT_OK(s->ops->ingest(s, b1, 1795550500, &res, &err));
        ASSERT_FALSE(res.duplicate);
        ASSERT_EQ(res.rows, 4);
        /* The same batch again, twice: stored once. */
        ASSERT_OK(s->ops->ingest(s, b1, 1795550501, &res, &err));
        ASSERT_TRUE(res.duplicate);
        ASSERT_OK(s->ops->ingest(s, b1, 1795550502, &res, &err));
        ASSERT_TRUE(res.duplicate);
        /* Another node, same seq: a different batch. */
        ASSERT_OK(s->ops->ingest(s, b2, 1795550503, &res, &err));
        ASSERT_FALSE(res.duplicate);
        ASSERT_EQ(count_rows("batches"), 2);

        /* The raw rows: per batch a pack of the job's and one of the work
         * outside jobs, each row as sent, CPU seconds at 2 Hz. */
        {
                char got[1024];

                ASSERT_EQ(count_rows("sample_packs"), 4);
                stored_rows("n1", 1, "42", got, sizeof(got));
                ASSERT_STREQ(got, "/bin/app 60 30 -1 600 1200\n/lib/libm.so.6 30 15 -1 300 300\n[kernel] 10 5 -1 -1 -1\n");
                stored_rows("n2", 1, "42", got, sizeof(got));
                ASSERT_STREQ(got, "/bin/app 60 30 -1 600 1200\n/lib/libm.so.6 30 15 -1 300 300\n[kernel] 10 5 -1 -1 -1\n");
                stored_rows("n1", 1, NULL, got, sizeof(got));
                ASSERT_STREQ(got, "[idle] 100 50 -1 -1 -1\n");
                ASSERT_EQ(count_rows("samples"), 0); /* written no more */
        }

        ASSERT_OK(s->ops->get_job(s, "42", NULL, NULL, &js));
        ASSERT_STREQ(js.info.user, "alice");
        ASSERT_STREQ(js.info.cluster, "c1");
        ASSERT_EQ(js.info.samples, 200);
        ASSERT_TRUE(fabs(js.info.cpu_seconds - 100.0) < 1e-9); /* 200 samples at 2 Hz */
        ASSERT_EQ(js.info.cycles, 1800);
        ASSERT_EQ(js.info.instructions, 3000);
        ASSERT_EQ(js.info.cpu_time_ns, STORAGE_NULL);
        ASSERT_EQ(js.info.n_nodes, 2);
        ASSERT_EQ(js.nodes.n, 2);
        ASSERT_EQ(find(&js.nodes, "n1")->samples, 100);

        ASSERT_EQ(find(&js.kinds, "exe")->samples, 120);
        ASSERT_EQ(find(&js.kinds, "lib")->samples, 60);
        ASSERT_EQ(find(&js.kinds, "kernel")->samples, 20);
        ASSERT_EQ(js.kinds.n, 3); /* idle was system work, not the job's */

        ASSERT_EQ(js.objects.n, 3);
        ASSERT_STREQ(js.objects.items[0].name, "/bin/app"); /* largest first */
        x = find(&js.objects, "/lib/libm.so.6");
        ASSERT_EQ(x->samples, 60);
        ASSERT_EQ(x->cycles, 600);
        ASSERT_EQ(x->instructions, 600);
        ASSERT_EQ(find(&js.objects, "[kernel]")->cycles, STORAGE_NULL);

        ASSERT_EQ(find(&js.phases, "solve")->samples, 180);
        ASSERT_EQ(find(&js.phases, "")->samples, 20);
        ASSERT_EQ(js.n_notes, 1);
        ASSERT_STREQ(js.notes[0].value, "big");
        ASSERT_EQ(js.n_markers, 1);
        ASSERT_EQ(js.markers[0].batches, 2);
        job_summary_free(&js);

        ASSERT_ERROR(s->ops->get_job(s, "43", NULL, NULL, &js), ENOENT);
        ASSERT_ERROR(s->ops->get_job(s, "42", "other", NULL, &js), ENOENT);

        batch_free(b1);
        batch_free(b2);
        s->ops->close(s);
}

TEST(lists) {
        Storage *s = open_db(NULL);
        JobFilter jf = { .since = INT64_MIN, .until = INT64_MAX, .limit = 10 };
        ObjectFilter of = { .since = 1795550400 - 7200, .until = 1795550400 + 7200, .kind = -1, .limit = 10 };
        JobList jl;
        ObjectList ol;
        NodeList nl;

        ASSERT_OK(s->ops->list_jobs(s, &jf, &jl));
        ASSERT_EQ(jl.n, 1);
        ASSERT_STREQ(jl.items[0].job, "42");
        ASSERT_EQ(jl.items[0].samples, 200);
        ASSERT_FALSE(jl.more);
        job_list_free(&jl);

        jf.user = "bob";
        ASSERT_OK(s->ops->list_jobs(s, &jf, &jl));
        ASSERT_EQ(jl.n, 0);
        job_list_free(&jl);
        jf.user = "alice";
        jf.since = 1795550400 + 3600;
        ASSERT_OK(s->ops->list_jobs(s, &jf, &jl));
        ASSERT_EQ(jl.n, 0);
        job_list_free(&jl);

        ASSERT_OK(s->ops->list_objects(s, &of, &ol));
        ASSERT_EQ(ol.total_samples, 400);
        ASSERT_EQ(ol.objects.n, 4);
        ASSERT_STREQ(ol.objects.items[0].name, "[idle]");
        ASSERT_EQ(ol.objects.items[0].samples, 200);
        object_list_free(&ol);
        of.kind = CODE_LIB;
        ASSERT_OK(s->ops->list_objects(s, &of, &ol));
        ASSERT_EQ(ol.objects.n, 1);
        ASSERT_STREQ(ol.objects.items[0].name, "/lib/libm.so.6");
        object_list_free(&ol);
        of.kind = -1;
        of.since = 1795550400 + 7200;
        ASSERT_OK(s->ops->list_objects(s, &of, &ol));
        ASSERT_EQ(ol.objects.n, 0);
        ASSERT_EQ(ol.total_samples, 0);
        object_list_free(&ol);

        ASSERT_OK(s->ops->list_nodes(s, &nl));
        ASSERT_EQ(nl.n, 2);
        ASSERT_STREQ(nl.items[0].name, "n1");
        ASSERT_EQ(nl.items[0].batches, 1);
        ASSERT_EQ(nl.items[0].samples, 200);
        ASSERT_EQ(nl.items[0].cpus, 4);
        node_list_free(&nl);
        s->ops->close(s);
}

TEST(clusters) {
        Storage *s = open_db(NULL);
        static const char other[] =
                "{\"format\":\"lmk-batch\",\"version\":1,\"batch\":{\"node\":\"x1\",\"boot_id\":\"b\",\"seq\":0},"
                "\"node\":{\"cpus\":1,\"cluster\":\"c2\"},\"interval\":{\"start\":1795550400,\"end\":1795550460},"
                "\"sampling\":{\"event\":\"cpu-clock\",\"frequency_hz\":1},"
                "\"rows\":[{\"job\":\"42\",\"object\":\"/bin/other\",\"kind\":\"exe\",\"samples\":7}]}";
        BatchError err;
        Batch *b;
        IngestResult res;
        JobSummary js;

        ASSERT_OK(batch_parse(other, strlen(other), &b, &err));
        ASSERT_OK(s->ops->ingest(s, b, 1795550500, &res, &err));
        ASSERT_ERROR(s->ops->get_job(s, "42", NULL, NULL, &js), ENOTUNIQ);
        ASSERT_OK(s->ops->get_job(s, "42", "c2", NULL, &js));
        ASSERT_EQ(js.info.samples, 7);
        ASSERT_NULL(js.info.user);
        job_summary_free(&js);
        /* A person sees only the ids they may see: alice's job 42 is hers
         * whatever other clusters have a 42; bob's answer is the same for
         * ids that exist and ids that do not, but for the refusals' count. */
        ASSERT_OK(s->ops->get_job(s, "42", NULL, &(JobViewer) { .user = "alice" }, &js));
        ASSERT_STREQ(js.info.user, "alice");
        job_summary_free(&js);
        ASSERT_ERROR(s->ops->get_job(s, "42", NULL, &(JobViewer) { .user = "bob" }, &js), EACCES);
        ASSERT_ERROR(s->ops->get_job(s, "42", "c2", &(JobViewer) { .user = "bob" }, &js), EACCES);
        ASSERT_ERROR(s->ops->get_job(s, "4242", NULL, &(JobViewer) { .user = "bob" }, &js), ENOENT);
        batch_free(b);
        s->ops->close(s);
}

/* Many threads push the same batches in different orders, as retrying nodes
 * do: batches that meet in one group transaction, duplicates included, are
 * each stored exactly once. */
#define RACE_THREADS 6
#define RACE_BATCHES 60

static Storage *race_storage;
static Batch *race_batches[RACE_BATCHES];
static int race_stored[RACE_THREADS];

static void *race(void *arg) {
        int t = (int) (intptr_t) arg;

        for (int i = 0; i < RACE_BATCHES; i++) {
                int k = (i * (t + 1) * 7 + t) % RACE_BATCHES;
                IngestResult res;
                BatchError err;

                if (race_storage->ops->ingest(race_storage, race_batches[k], 1795550500, &res, &err) < 0)
                        abort();
                if (!res.duplicate)
                        race_stored[t]++;
        }
        return NULL;
}

TEST(concurrent_retries) {
        pthread_t threads[RACE_THREADS];
        JobSummary js;
        int stored = 0;
        int64_t batches_before = count_rows("batches");

        race_storage = open_db(NULL);
        for (int i = 0; i < RACE_BATCHES; i++) {
                char rows[256];

                snprintf(rows, sizeof(rows), "{\"job\":\"77\",\"object\":\"/bin/race%d\",\"kind\":\"exe\","
                                             "\"samples\":%d}", i % 7, i + 1);
                race_batches[i] = make_batch("racer", i, 1795550400 + 60 * i, rows, "");
        }
        for (int t = 0; t < RACE_THREADS; t++)
                ASSERT_EQ(pthread_create(&threads[t], NULL, race, (void *) (intptr_t) t), 0);
        for (int t = 0; t < RACE_THREADS; t++) {
                pthread_join(threads[t], NULL);
                stored += race_stored[t];
        }
        ASSERT_EQ(stored, RACE_BATCHES);
        ASSERT_OK(race_storage->ops->get_job(race_storage, "77", NULL, NULL, &js));
        ASSERT_EQ(js.info.samples, RACE_BATCHES * (RACE_BATCHES + 1) / 2);
        ASSERT_EQ(js.objects.n, 7);
        job_summary_free(&js);
        ASSERT_EQ(count_rows("batches"), batches_before + RACE_BATCHES);
        for (int i = 0; i < RACE_BATCHES; i++)
                batch_free(race_batches[i]);
        race_storage->ops->close(race_storage);
}

/* Threads of several nodes push batches with functions of one job, one
 * object and one function at once: batches that meet in one group
 * transaction each add to the same pack (schema/0025), so that every
 * batch's samples count, over the phases and in the phase. */
#define FN_THREADS 6
#define FN_BATCHES 20

static Storage *fn_storage;

static void *push_functions(void *arg) {
        int t = (int) (intptr_t) arg;

        for (int i = 0; i < FN_BATCHES; i++) {
                int samples = t * FN_BATCHES + i + 1;
                char buf[2048], node[16];
                IngestResult res;
                BatchError err;
                Batch *b = NULL;

                snprintf(node, sizeof(node), "fn%d", t);
                snprintf(buf, sizeof(buf),
                         "{\"format\":\"lmk-batch\",\"version\":2,"
                         "\"batch\":{\"node\":\"%s\",\"boot_id\":\"boot\",\"seq\":%d},"
                         "\"node\":{\"cpus\":4,\"cluster\":\"c1\"},"
                         "\"interval\":{\"start\":%d,\"end\":%d},"
                         "\"sampling\":{\"event\":\"cpu-clock\",\"frequency_hz\":2},"
                         "\"jobs\":[],\"markers\":[],"
                         "\"rows\":[{\"job\":\"88\",\"step\":\"0\",\"user\":\"alice\",\"comm\":\"app\","
                         "\"object\":\"/bin/fn\",\"kind\":\"exe\",\"phase\":\"solve\",\"samples\":%d}],"
                         "\"functions\":[{\"job\":\"88\",\"step\":\"0\",\"object\":\"/bin/fn\","
                         "\"phase\":\"solve\",\"function\":\"hot\",\"samples\":%d}]}",
                         node, i, 1795550400 + 60 * i, 1795550460 + 60 * i, samples, samples);
                if (batch_parse(buf, strlen(buf), &b, &err) < 0)
                        test_fail("%s: %s", err.field, err.message);
                if (fn_storage->ops->ingest(fn_storage, b, 1795550500, &res, &err) < 0 || res.duplicate)
                        abort();
                batch_free(b);
        }
        return NULL;
}

TEST(concurrent_functions) {
        pthread_t threads[FN_THREADS];
        StoredJob info;
        FunctionList l;

        fn_storage = open_db(NULL);
        for (int t = 0; t < FN_THREADS; t++)
                ASSERT_EQ(pthread_create(&threads[t], NULL, push_functions, (void *) (intptr_t) t), 0);
        for (int t = 0; t < FN_THREADS; t++)
                pthread_join(threads[t], NULL);
        for (int per_phase = 0; per_phase < 2; per_phase++) {
                ASSERT_OK(fn_storage->ops->get_job_functions(fn_storage, "88", NULL, NULL, per_phase, 10, &info, &l));
                ASSERT_EQ(l.n, 1);
                ASSERT_STREQ(l.items[0].name, "hot");
                ASSERT_EQ(l.items[0].samples, FN_THREADS * FN_BATCHES * (FN_THREADS * FN_BATCHES + 1) / 2);
                ASSERT_TRUE(l.items[0].cpu_seconds == (double) l.items[0].samples / 2);
                if (per_phase)
                        ASSERT_STREQ(l.items[0].phase, "solve");
                function_list_free(&l);
                stored_job_free(&info);
        }
        fn_storage->ops->close(fn_storage);
}

TEST(migrations_once) {
        unsigned from = 99;
        Storage *s = open_db(&from);

        /* The database exists since the first test: nothing left to apply. */
        ASSERT_TRUE(from >= 1);
        ASSERT_EQ(count_rows("schema_version"), from);
        s->ops->close(s);
}

/* Every table's sums together, as one number per table, to compare before
 * and after a refused batch: summed as floats, which cannot overflow (what
 * SQLite's total() does, spelled so that PostgreSQL takes it too). */
#define TOTAL(x) "coalesce(sum(CAST(" x " AS DOUBLE PRECISION)), 0)"
#define SUMS_SQL                                                                                \
        "SELECT (SELECT " TOTAL("samples") " + " TOTAL("samples_lost") " + " TOTAL("batches") " FROM nodes) + " \
        "(SELECT " TOTAL("samples") " + " TOTAL("cycles") " + " TOTAL("cpu_time_ns") " + "       \
        TOTAL("instructions") " FROM jobs) + "                                                  \
        "(SELECT " TOTAL("samples") " + " TOTAL("n_rows") " FROM sample_packs) + "            \
        "(SELECT " TOTAL("samples") " + " TOTAL("cycles") " FROM job_objects) + "                \
        "(SELECT " TOTAL("samples") " + " TOTAL("cycles") " FROM job_phases) + "                 \
        "(SELECT " TOTAL("samples") " FROM job_nodes) + (SELECT " TOTAL("samples") " FROM object_hours) + " \
        "(SELECT " TOTAL("samples") " FROM object_days) + (SELECT " TOTAL("samples") " FROM object_weeks) + " \
        "(SELECT " TOTAL("samples") " FROM object_periods) + "                                   \
        "(SELECT " TOTAL("samples") " FROM job_timeline) + (SELECT count(*) FROM batches)"

/* The storage layer guards every stored sum itself, whatever the parser let
 * through: batches are built in range, then pushed past it by hand. Each sum
 * kind (samples, each counter) through each owner (a job's sums, and the
 * site-wide hour of system work's samples) overflows with the second batch,
 * which is refused whole with -EOVERFLOW. System work's counters are summed
 * nowhere (its raw rows are kept as they came, packed): both batches are
 * stored. */
TEST(stored_sums_overflow) {
        static const char *const rows[] = {
                "{\"job\":\"77\",\"object\":\"/bin/o\",\"kind\":\"exe\",\"samples\":1,\"cycles\":1}",
                "{\"job\":null,\"object\":\"/bin/o\",\"kind\":\"exe\",\"samples\":1,\"cycles\":1}",
        };
        Storage *s = open_db(NULL);
        int seq = 100;

        for (size_t k = 0; k < ELEMENTSOF(rows); k++)
                for (int which = 0; which < 4; which++) {
                        Batch *b1 = make_batch("ov", seq++, 1795550400 + 29 * 86400.0 * (double) k + 7200 * which, rows[k], "");
                        /* System work's samples from a second node: only the
                         * site-wide hour of the object holds both. Each row
                         * kind in its own four weeks: the site-wide week
                         * and period of the object hold every round's. */
                        Batch *b2 = make_batch(k == 1 && which == 0 ? "ov2" : "ov", seq++, 1795550400 + 29 * 86400.0 * (double) k + 7200 * which, rows[k], "");
                        int64_t half = INT64_MAX / 2 + 1;
                        IngestResult res;
                        BatchError err = {};
                        double before;

                        for (Batch *b = b1; b; b = b == b1 ? b2 : NULL) {
                                BatchRow *r = &b->rows[0];

                                if (which == 0) {
                                        r->samples = half;
                                        b->total_samples = half;
                                        b->total_cpu_seconds = (double) half / b->frequency_hz;
                                } else
                                        *(which == 1 ? &r->cycles : which == 2 ? &r->cpu_time_ns : &r->instructions) = half;
                        }
                        ASSERT_OK(s->ops->ingest(s, b1, 1795550500, &res, &err));
                        before = query_number(SUMS_SQL);
                        if (k == 1 && which > 0) {
                                char got[256], want[256];

                                ASSERT_OK(s->ops->ingest(s, b2, 1795550500, &res, &err));
                                ASSERT_FALSE(res.duplicate);
                                snprintf(want, sizeof(want), "/bin/o 1 0.5 %" PRId64 " %" PRId64 " %" PRId64 "\n",
                                         which == 2 ? half : -1, which == 1 ? half : 1, which == 3 ? half : -1);
                                stored_rows("ov", seq - 1, NULL, got, sizeof(got));
                                ASSERT_STREQ(got, want);
                        } else {
                                ASSERT_ERROR(s->ops->ingest(s, b2, 1795550500, &res, &err), EOVERFLOW);
                                if (!strstr(err.message, "overflow") || strncmp(err.field, "rows", 4) != 0)
                                        test_fail("row kind %zu, sum %d: %s: %s", k, which, err.field, err.message);
                                ASSERT_TRUE(query_number(SUMS_SQL) == before);
                        }
                        batch_free(b1);
                        batch_free(b2);
                        /* The node's sums would overflow next: a fresh node
                         * per round keeps the sum under test the first. */
                        s->ops->close(s);
                        s = open_db(NULL);
                        exec_raw("UPDATE nodes SET samples = 0 WHERE name = 'ov'");
                }
        s->ops->close(s);
}

static bool same_str(const char *a, const char *b) {
        return a == b || (a && b && streq(a, b));
}

static void assert_same_shares(const ShareList *a, const ShareList *b, const char *what) {
        if (a->n != b->n)
                test_fail("%s: %zu and %zu entries", what, a->n, b->n);
        for (size_t i = 0; i < a->n; i++) {
                const Share *x = &a->items[i], *y = &b->items[i];

                if (!same_str(x->name, y->name) || !same_str(x->kind, y->kind) ||
                    !same_str(x->build_id, y->build_id) || !same_str(x->installed, y->installed) ||
                    x->samples != y->samples || x->cpu_seconds != y->cpu_seconds ||
                    x->cpu_time_ns != y->cpu_time_ns || x->cycles != y->cycles ||
                    x->instructions != y->instructions || x->cpus_alloc != y->cpus_alloc ||
                    !(x->first_seen == y->first_seen || (isnan(x->first_seen) && isnan(y->first_seen))) ||
                    !(x->last_seen == y->last_seen || (isnan(x->last_seen) && isnan(y->last_seen))))
                        test_fail("%s[%zu]: %s and %s differ", what, i, x->name, y->name);
        }
}

static int64_t s2_row = -1;

static bool want_s2(int64_t row_id, int64_t revision, void *userdata) {
        (*(int *) userdata)++;
        ASSERT_EQ(revision, 1);
        return row_id == s2_row;
}

/* The summaries the findings read for many jobs at once are those get_job
 * gives one by one (without phases, notes and ranks), for jobs of several
 * objects, nodes, counters known and not, and markers. */
TEST(summaries_as_get_job) {
        static const char jobs[] =
                "{\"job\":\"s1\",\"user\":\"ann\",\"cpus_allocated\":4},"
                "{\"job\":\"s2\",\"user\":\"ann\"},{\"job\":\"s3\",\"user\":\"ann\"}";
        static const char rows[] =
                "{\"job\":\"s1\",\"object\":\"/bin/a\",\"kind\":\"exe\",\"samples\":7,\"cycles\":70},"
                "{\"job\":\"s1\",\"object\":\"/lib/b.so\",\"kind\":\"lib\",\"samples\":9},"
                "{\"job\":\"s1\",\"object\":\"/lib/c.so\",\"kind\":\"lib\",\"samples\":9,\"cycles\":5},"
                "{\"job\":\"s1\",\"object\":\"[kernel]\",\"kind\":\"kernel\",\"samples\":2},"
                "{\"job\":\"s2\",\"object\":\"/bin/a\",\"kind\":\"exe\",\"samples\":3,\"instructions\":8}";
        Batch *b1 = make_batch("sn1", 1, 1795550400, rows, jobs), *b2 = make_batch("sn2", 1, 1795550400, rows, jobs);
        JobFilter f = { .user = "ann", .since = INT64_MIN, .until = INT64_MAX, .limit = 10 };
        Storage *s = open_db(NULL);
        JobSummaryList l = {};
        IngestResult res;
        BatchError err;
        int seen = 0;

        ASSERT_OK(s->ops->ingest(s, b1, 1795550500, &res, &err));
        ASSERT_OK(s->ops->ingest(s, b2, 1795550500, &res, &err));
        ASSERT_OK(s->ops->list_job_summaries(s, &f, NULL, NULL, &l));
        ASSERT_EQ(l.n, 3);
        ASSERT_EQ(l.n_jobs, 3);
        ASSERT_FALSE(l.more);
        for (size_t i = 0; i < l.n; i++) {
                const JobSummary *x = &l.items[i];
                JobSummary y;

                ASSERT_OK(s->ops->get_job(s, x->info.job, x->info.cluster, NULL, &y));
                ASSERT_EQ(x->info.samples, y.info.samples);
                ASSERT_EQ(x->info.n_nodes, y.info.n_nodes);
                ASSERT_TRUE(same_str(x->info.app, y.info.app));
                assert_same_shares(&x->kinds, &y.kinds, "kinds");
                assert_same_shares(&x->objects, &y.objects, "objects");
                assert_same_shares(&x->nodes, &y.nodes, "nodes");
                ASSERT_EQ(x->n_markers, y.n_markers);
                for (size_t k = 0; k < x->n_markers; k++) {
                        ASSERT_STREQ(x->markers[k].phase, y.markers[k].phase);
                        ASSERT_EQ(x->markers[k].batches, y.markers[k].batches);
                }
                ASSERT_EQ(x->n_notes + x->n_ranks + x->phases.n, 0);
                ASSERT_EQ(x->info.row_id, y.info.row_id);
                if (streq(x->info.job, "s2"))
                        s2_row = x->info.row_id;
                job_summary_free(&y);
        }
        ASSERT_EQ(l.items[0].objects.n, 4); /* s1: both libraries, 18 samples each, by name */
        ASSERT_STREQ(l.items[0].objects.items[0].name, "/lib/b.so");
        job_summary_list_free(&l);

        /* only the jobs wanted, asked with their revisions */
        ASSERT_OK(s->ops->list_job_summaries(s, &f, want_s2, &seen, &l));
        ASSERT_EQ(seen, 3);
        ASSERT_EQ(l.n, 1);
        ASSERT_EQ(l.n_jobs, 3);
        ASSERT_STREQ(l.items[0].info.job, "s2");
        ASSERT_EQ(l.items[0].info.revision, 1); /* stored, then changed by the second batch */
        ASSERT_EQ(l.items[0].objects.n, 1);
        job_summary_list_free(&l);

        /* a page of one, and what is beyond it */
        f.limit = 1;
        f.offset = 1;
        ASSERT_OK(s->ops->list_job_summaries(s, &f, NULL, NULL, &l));
        ASSERT_EQ(l.n, 1);
        ASSERT_TRUE(l.more);
        ASSERT_EQ(l.items[0].n_markers, 0);
        job_summary_list_free(&l);
        batch_free(b1);
        batch_free(b2);
        s->ops->close(s);
}

/* An object's day holds its hours: two batches in two hours of one day from
 * two nodes fit every sum but the day's, and the second is refused whole. */
TEST(day_sums_overflow) {
        static const char row[] = "{\"job\":null,\"object\":\"/bin/d\",\"kind\":\"exe\",\"samples\":1}";
        /* 00:00 UTC of a day, then 05:00 */
        double day = 1795478400;
        Batch *b1 = make_batch("d1", 1, day, row, ""), *b2 = make_batch("d2", 1, day + 5 * 3600, row, "");
        Storage *s = open_db(NULL);
        int64_t half = INT64_MAX / 2 + 1;
        IngestResult res;
        BatchError err = {};
        double before;

        for (Batch *b = b1; b; b = b == b1 ? b2 : NULL) {
                b->rows[0].samples = half;
                b->total_samples = half;
                b->total_cpu_seconds = (double) half / b->frequency_hz;
        }
        ASSERT_OK(s->ops->ingest(s, b1, 1795550500, &res, &err));
        before = query_number(SUMS_SQL);
        ASSERT_ERROR(s->ops->ingest(s, b2, 1795550500, &res, &err), EOVERFLOW);
        if (!strstr(err.message, "in that day would overflow") || !streq(err.field, "rows"))
                test_fail("%s: %s", err.field, err.message);
        ASSERT_TRUE(query_number(SUMS_SQL) == before);
        batch_free(b1);
        batch_free(b2);
        s->ops->close(s);
}

/* Rollup rows are written many at once (up to ROWS_MAX a statement): a
 * sum that would overflow in the first statement of a batch's, or in a
 * later one, refuses the batch whole all the same. 100 objects of system
 * work from two nodes in one hour: only the site-wide hour of the hot one
 * holds both halves. */
TEST(many_rows_overflow) {
        static const size_t hot[] = { 5, 70 };
        Storage *s = open_db(NULL);
        int64_t half = INT64_MAX / 2 + 1;

        for (size_t round = 0; round < ELEMENTSOF(hot); round++) {
                char rows[8192], node[2][16];
                size_t len = 0;
                Batch *b[2];
                IngestResult res;
                BatchError err = {};
                double before;

                for (size_t k = 0; k < 100; k++)
                        len += (size_t) snprintf(rows + len, sizeof(rows) - len,
                                                 "%s{\"job\":null,\"object\":\"/bin/m%zu-%zu\",\"kind\":\"exe\","
                                                 "\"samples\":1}", k ? "," : "", round, k);
                ASSERT_TRUE(len < sizeof(rows));
                for (int n = 0; n < 2; n++) {
                        snprintf(node[n], sizeof(node[n]), "m%zu-%d", round, n);
                        b[n] = make_batch(node[n], 1, 1795478400 + 86400.0 * (double) round, rows, "");
                        ASSERT_EQ(b[n]->n_rows, 100);
                        b[n]->rows[hot[round]].samples = half;
                        b[n]->total_samples = half + 99;
                        b[n]->total_cpu_seconds = (double) b[n]->total_samples / b[n]->frequency_hz;
                }
                ASSERT_OK(s->ops->ingest(s, b[0], 1795550500, &res, &err));
                before = query_number(SUMS_SQL);
                ASSERT_ERROR(s->ops->ingest(s, b[1], 1795550500, &res, &err), EOVERFLOW);
                if (!strstr(err.message, "site-wide samples of an object in that hour") || !streq(err.field, "rows"))
                        test_fail("object %zu: %s: %s", hot[round], err.field, err.message);
                ASSERT_TRUE(query_number(SUMS_SQL) == before);
                batch_free(b[0]);
                batch_free(b[1]);
        }
        s->ops->close(s);
}

/* The writer's WAL is checkpointed beside it (store/db/sqlite/wal-checkpoint.c):
 * after some 16 MiB went to the WAL, the database file fills, with no
 * checkpoint in the writer's commits (SQLite's own is off, and the
 * writer's limit is far off); closing the store folds the WAL back in. */
TEST(wal_checkpointed_beside) {
        char path[300], wal[310], rows[8192];
        unsigned from = 99, to = 0;
        Storage *s = NULL;
        struct stat st;
        int seq = 0;

        snprintf(path, sizeof(path), "%s/wal.db", dir);
        snprintf(wal, sizeof(wal), "%s-wal", path);
        ASSERT_OK(storage_sqlite_ops.open(path, &opts, &s));
        ASSERT_OK(s->ops->migrate(s, &from, &to));
        while (stat(wal, &st) == 0 && st.st_size < 20 << 20) {
                size_t len = 0;
                IngestResult res;
                BatchError err;
                Batch *b;

                seq++;
                for (int k = 0; k < 60; k++)
                        len += (size_t) snprintf(rows + len, sizeof(rows) - len,
                                                 "%s{\"job\":\"w%d\",\"object\":\"/lib/w%d-%d.so\",\"kind\":\"lib\","
                                                 "\"samples\":1}", k ? "," : "", seq % 10, seq, k);
                b = make_batch("w1", seq, 1795550400 + 60.0 * seq, rows, "");
                ASSERT_OK(s->ops->ingest(s, b, 1795550500, &res, &err));
                batch_free(b);
                ASSERT_TRUE(seq < 100000);
        }
        for (int i = 0; i < 200 && (stat(path, &st) < 0 || st.st_size < 1 << 20); i++)
                usleep(50 * 1000);
        if (st.st_size < 1 << 20)
                test_fail("the database file holds %lld bytes after %d batches: no checkpoint",
                          (long long) st.st_size, seq);
        s->ops->close(s);
        ASSERT_TRUE(stat(wal, &st) < 0 || st.st_size == 0);
        unlink(path);
}

/* A job's metadata keeps its first claim; a different later claim is
 * counted, the same claim again (another node of the job, a resend) is not. */
TEST(metadata_first_claim) {
        Storage *s = open_db(NULL);
        static const char row[] = "{\"job\":\"4711\",\"object\":\"/bin/a\",\"kind\":\"exe\",\"samples\":5}";
        static const char alice[] = "{\"job\":\"4711\",\"user\":\"alice\",\"name\":\"lulesh\",\"nodes\":2,"
                                    "\"notes\":{\"app\":\"lulesh\"}}";
        static const char evil[] = "{\"job\":\"4711\",\"user\":\"mallory\",\"name\":\"x\",\"ended\":true}";
        static const char evil_note[] = "{\"job\":\"4711\",\"notes\":{\"app\":\"other\"}}";
        Batch *b[] = {
                make_batch("mA", 1, 1795550400, row, alice),
                make_batch("mB", 1, 1795550400, row, alice),
                make_batch("mA", 2, 1795550460, row, alice),
                make_batch("mB", 2, 1795550460, row, "{\"job\":\"4711\"}"),
                make_batch("mX", 1, 1795550460, row, evil),
                make_batch("mY", 1, 1795550460, row, evil_note),
        };
        uint64_t want[] = { 0, 0, 0, 0, 1, 1 };
        IngestResult res;
        BatchError err;
        JobSummary js;

        for (size_t i = 0; i < ELEMENTSOF(b); i++) {
                ASSERT_OK(s->ops->ingest(s, b[i], 1795550500, &res, &err));
                ASSERT_EQ(res.metadata_conflicts, want[i]);
                batch_free(b[i]);
        }
        ASSERT_TRUE(strstr(res.conflict, "4711") && strstr(res.conflict, "notes"));
        ASSERT_OK(s->ops->get_job(s, "4711", "c1", NULL, &js));
        ASSERT_STREQ(js.info.user, "alice");
        ASSERT_STREQ(js.info.name, "lulesh");
        ASSERT_EQ(js.info.nodes_alloc, 2);
        ASSERT_STREQ(js.notes[0].value, "lulesh");
        ASSERT_EQ(js.info.metadata_conflicts, 2);
        ASSERT_EQ(js.info.samples, 30);
        job_summary_free(&js);
        s->ops->close(s);
}

/* The job list's answer, jobs and count, as one line per job. */
static void list_text(Storage *s, const JobFilter *f, char *buf, size_t size) {
        JobFilter jf = *f;
        size_t len = 0;
        JobList jl;

        jf.count = true;
        ASSERT_OK(s->ops->list_jobs(s, &jf, &jl));
        len += (size_t) snprintf(buf + len, size - len, "total %" PRIu64 "%s\n", jl.total, jl.more ? " more" : "");
        for (size_t i = 0; i < jl.n; i++) {
                len += (size_t) snprintf(buf + len, size - len, "%s %s %" PRId64 "\n", jl.items[i].job,
                                         jl.items[i].user ?: "-", jl.items[i].samples);
                ASSERT_TRUE(len < size);
        }
        job_list_free(&jl);
}

/* Running jobs are live (schema/0018): outside the job list's indexes
 * until some minutes after their last batch. A job of this hour stays
 * live; one of days ago is settled by the writer after its group. The
 * list, its filters, orders and pages, and its count are the same
 * whichever jobs are live. */
TEST(live_jobs) {
        static const char *const users[] = { "lv-ann", "lv-ben", "lv-ann", "lv-cy", "lv-ann", "lv-ben" };
        static const JobSort sorts[] = { JOB_SORT_LAST_SEEN, JOB_SORT_FIRST_SEEN, JOB_SORT_CPU_SECONDS };
        char *const lead_accounts[] = { (char *) "lv-acct1", NULL };
        Storage *s = open_db(NULL);
        double now = (double) time(NULL);
        char before[6][8192], after[8192];
        JobFilter filters[6];
        size_t n = 0;

        for (int k = 0; k < 6; k++) {
                char rows[256], jobs[256];
                IngestResult res;
                BatchError err;
                Batch *b;

                /* the odd jobs of this hour, the even ones of days ago: the
                 * first, L0, settled after the first group */
                double start = k % 2 ? now - 600.0 + k : now - 86400.0 * (k + 2);

                snprintf(rows, sizeof(rows), "{\"job\":\"L%d\",\"object\":\"/bin/l\",\"kind\":\"exe\",\"samples\":%d}", k,
                         10 + k * 7 % 5);
                snprintf(jobs, sizeof(jobs), "{\"job\":\"L%d\",\"user\":\"%s\",\"account\":\"lv-acct%d\"}", k, users[k],
                         k % 3);
                b = make_batch("live", k + 1, start, rows, jobs);
                ASSERT_OK(s->ops->ingest(s, b, (int64_t) now, &res, &err));
                batch_free(b);
        }
        ASSERT_TRUE(query_number("SELECT count(*) FROM jobs WHERE job LIKE 'L%' AND live = 1") >= 1);
        ASSERT_TRUE(query_number("SELECT count(*) FROM jobs WHERE job LIKE 'L%' AND live = 0") >= 1);

        filters[n++] = (JobFilter) { .since = INT64_MIN, .until = INT64_MAX, .limit = 10 };
        filters[n++] = (JobFilter) { .user = "lv-ann", .since = INT64_MIN, .until = INT64_MAX, .limit = 2 };
        filters[n++] = (JobFilter) { .since = (int64_t) now - 3600, .until = INT64_MAX, .limit = 10 };
        filters[n++] = (JobFilter) { .account = "lv-acct1", .since = INT64_MIN, .until = INT64_MAX, .limit = 10,
                                     .ascending = true };
        filters[n++] = (JobFilter) { .since = INT64_MIN, .until = INT64_MAX, .limit = 2, .offset = 3 };
        filters[n++] = (JobFilter) { .since = INT64_MIN, .until = INT64_MAX, .limit = 10, .viewer = "lv-ann",
                                     .viewer_accounts = lead_accounts };
        for (size_t sort = 0; sort < ELEMENTSOF(sorts); sort++) {
                for (size_t i = 0; i < n; i++) {
                        filters[i].sort = sorts[sort];
                        list_text(s, &filters[i], before[i], sizeof(before[i]));
                }
                /* every job live, then none: the same answers */
                for (int live = 1; live >= 0; live--) {
                        char sql[96];

                        snprintf(sql, sizeof(sql), "UPDATE jobs SET live = %d", live);
                        exec_raw(sql);
                        for (size_t i = 0; i < n; i++) {
                                list_text(s, &filters[i], after, sizeof(after));
                                if (!streq(before[i], after))
                                        test_fail("sort %zu, filter %zu, all live = %d:\n%s\nagainst\n%s", sort, i,
                                                  live, after, before[i]);
                        }
                }
        }
        /* the first answers, to see that they hold what was pushed */
        list_text(s, &filters[1], after, sizeof(after));
        if (strncmp(after, "total 3 more\nL", 14) != 0 || !strstr(after, " lv-ann "))
                test_fail("lv-ann's jobs, two of three:\n%s", after);
        s->ops->close(s);
}

/* Every job's rows beside its jobs row, and work outside jobs (job 0). */
static int64_t orphan_rows(void) {
        static const char *const tables[] = {
                "sample_packs", "samples", "job_tasks", "job_objects", "job_phases", "job_nodes", "job_notes",
                "job_markers", "job_ranks", "job_timeline", "job_counters", "job_object_events",
                "job_phase_events", "job_events", "job_bursts",
        };
        int64_t n = 0;

        for (size_t i = 0; i < ELEMENTSOF(tables); i++) {
                char sql[256];

                snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s WHERE job_id <> 0 AND job_id NOT IN "
                         "(SELECT id FROM jobs)", tables[i]);
                n += (int64_t) query_number(sql);
        }
        return n;
}

/* prune_jobs steps until no job before the horizon is left; the jobs deleted. */
static uint64_t prune_jobs_all(Storage *s, int64_t before, unsigned max_rows) {
        PruneResult p = { .more = true };
        uint64_t jobs = 0;

        for (int steps = 0; p.more; steps++) {
                ASSERT_TRUE(steps < 1000);
                ASSERT_OK(s->ops->prune_jobs(s, before, max_rows, &p));
                jobs += p.jobs;
        }
        return jobs;
}

/* The job window: jobs last seen before the horizon go, the oldest first,
 * with all their rows, in steps as small as asked for, and nothing else
 * goes. The newest job goes only once a newer one is stored on SQLite,
 * which would give its id to the next job. */
TEST(prune_jobs) {
        static const char rows[] =
                "{\"job\":\"%s\",\"object\":\"/bin/p\",\"kind\":\"exe\",\"phase\":\"x\",\"samples\":3},"
                "{\"job\":\"%s\",\"object\":\"/lib/p.so\",\"kind\":\"lib\",\"samples\":2}";
        static const struct {
                const char *job;
                double start;
        } jobs[] = { { "p-old1", 1700000000 }, { "p-old2", 1700003600 }, { "p-young", 1795550400 } };
        const int64_t before = 1700100000;
        Storage *s = open_db(NULL);
        bool sqlite = streq(s->ops->name, "sqlite");
        int64_t jobs_before = count_rows("jobs");
        double rollups = query_number("SELECT " TOTAL("samples") " FROM object_hours");
        IngestResult res;
        BatchError err;
        JobSummary js;
        int seq = 1;

        for (size_t i = 0; i < ELEMENTSOF(jobs); i++) {
                char r[512], j[128];
                Batch *b;

                snprintf(r, sizeof(r), rows, jobs[i].job, jobs[i].job);
                snprintf(j, sizeof(j), "{\"job\":\"%s\",\"user\":\"pat\",\"notes\":{\"k\":\"v\"}}", jobs[i].job);
                b = make_batch("pn", seq++, jobs[i].start, r, j);
                ASSERT_OK(s->ops->ingest(s, b, 1795550500, &res, &err));
                batch_free(b);
        }
        /* A step of one row: the oldest job's jobs row, so it has left
         * every answer, and its other rows are still there, taken up again
         * after a restart. */
        {
                PruneResult p;

                ASSERT_OK(s->ops->prune_jobs(s, before, 1, &p));
                ASSERT_EQ(p.jobs, 1);
                ASSERT_TRUE(p.more);
        }
        ASSERT_ERROR(s->ops->get_job(s, "p-old1", NULL, NULL, &js), ENOENT);
        ASSERT_OK(s->ops->get_job(s, "p-old2", NULL, NULL, &js));
        job_summary_free(&js);
        ASSERT_TRUE(orphan_rows() > 0);
        ASSERT_EQ(count_rows("retention WHERE name = 'expire_job_left'"), 1);
        s->ops->close(s);
        s = open_db(NULL);
        /* steps of two rows: a job takes several */
        ASSERT_EQ(prune_jobs_all(s, before, 2), 1);
        ASSERT_ERROR(s->ops->get_job(s, "p-old1", NULL, NULL, &js), ENOENT);
        ASSERT_ERROR(s->ops->get_job(s, "p-old2", NULL, NULL, &js), ENOENT);
        ASSERT_OK(s->ops->get_job(s, "p-young", NULL, NULL, &js));
        ASSERT_EQ(js.info.samples, 5);
        ASSERT_EQ(js.objects.n, 2);
        ASSERT_EQ(js.n_notes, 1);
        job_summary_free(&js);
        ASSERT_EQ(count_rows("jobs"), jobs_before + 1);
        ASSERT_EQ(orphan_rows(), 0);
        ASSERT_EQ(count_rows("retention WHERE name = 'expire_job_left'"), 0);
        /* the site-wide rollups keep the deleted jobs' time */
        ASSERT_TRUE(query_number("SELECT " TOTAL("samples") " FROM object_hours") == rollups + 15);

        /* an old job stored last */
        {
                char r[512];
                Batch *b;

                snprintf(r, sizeof(r), rows, "p-late", "p-late");
                b = make_batch("pn", seq++, 1700000000, r, "");
                ASSERT_OK(s->ops->ingest(s, b, 1795550500, &res, &err));
                batch_free(b);
        }
        ASSERT_EQ(prune_jobs_all(s, before, 5000), sqlite ? 0 : 1);
        if (sqlite) {
                char r[512];
                Batch *b;

                snprintf(r, sizeof(r), rows, "p-next", "p-next");
                b = make_batch("pn", seq++, 1795550400, r, "");
                ASSERT_OK(s->ops->ingest(s, b, 1795550500, &res, &err));
                batch_free(b);
                ASSERT_EQ(prune_jobs_all(s, before, 5000), 1);
        }
        ASSERT_ERROR(s->ops->get_job(s, "p-late", NULL, NULL, &js), ENOENT);
        ASSERT_EQ(orphan_rows(), 0);
        s->ops->close(s);
}

/* A batch of version 2 on cluster "prof": job jid of user's, with a row
 * and its functions in /bin/app, one in phase "solve". */
static Batch *profile_batch(const char *node, double start, const char *jid, const char *user, int solve,
                            int other) {
        char buf[4096];
        BatchError err;
        Batch *b = NULL;

        snprintf(buf, sizeof(buf),
                 "{\"format\":\"lmk-batch\",\"version\":2,"
                 "\"batch\":{\"node\":\"%s\",\"boot_id\":\"boot\",\"seq\":1},"
                 "\"node\":{\"cpus\":4,\"cluster\":\"prof\"},"
                 "\"interval\":{\"start\":%.1f,\"end\":%.1f},"
                 "\"sampling\":{\"event\":\"cpu-clock\",\"frequency_hz\":2},"
                 "\"jobs\":[{\"job\":\"%s\",\"user\":\"%s\"}],"
                 "\"rows\":[{\"job\":\"%s\",\"step\":\"0\",\"user\":\"%s\",\"comm\":\"app\",\"object\":\"/bin/app\","
                 "\"kind\":\"exe\",\"build_id\":\"ab\",\"phase\":\"solve\",\"samples\":%d},"
                 "{\"job\":\"%s\",\"step\":\"0\",\"user\":\"%s\",\"comm\":\"app\",\"object\":\"/bin/app\","
                 "\"kind\":\"exe\",\"build_id\":\"ab\",\"phase\":\"\",\"samples\":%d}],"
                 "\"functions\":[{\"job\":\"%s\",\"step\":\"0\",\"object\":\"/bin/app\",\"build_id\":\"ab\","
                 "\"phase\":\"solve\",\"function\":\"solve\",\"samples\":%d},"
                 "{\"job\":\"%s\",\"step\":\"0\",\"object\":\"/bin/app\",\"build_id\":\"ab\","
                 "\"phase\":\"\",\"function\":\"%s_only\",\"samples\":%d}],"
                 "\"markers\":[]}",
                 node, start, start + 60, jid, user, jid, user, solve, jid, user, other, jid, solve, jid, jid,
                 other);
        if (batch_parse(buf, strlen(buf), &b, &err) < 0)
                test_fail("%s: %s", err.field, err.message);
        return b;
}

static const FunctionShare *find_function(const FunctionList *l, const char *name, const char *phase) {
        for (size_t i = 0; i < l->n; i++)
                if (streq(l->items[i].name, name) && (!phase || streq(l->items[i].phase, phase)))
                        return &l->items[i];
        test_fail("no function %s in phase %s", name, phase ?: "(any)");
}

/* get_profile: the functions of the jobs a filter finds, summed, of the
 * most recently seen jobs when there are more, per phase or not. */
TEST(profile) {
        Storage *s = open_db(NULL);
        Batch *b[] = {
                profile_batch("p1", 1795560000, "501", "alice", 40, 10),
                profile_batch("p2", 1795563600, "502", "alice", 20, 6),
                profile_batch("p3", 1795567200, "503", "bob", 8, 2),
        };
        JobFilter f = { .cluster = "prof", .since = INT64_MIN, .until = INT64_MAX, .limit = 100 };
        IngestResult res;
        BatchError err;
        SiteProfile p;

        for (size_t i = 0; i < ELEMENTSOF(b); i++)
                ASSERT_OK(s->ops->ingest(s, b[i], 1795570000, &res, &err));

        ASSERT_OK(s->ops->get_profile(s, &f, false, 100, &p));
        ASSERT_EQ(p.jobs, 3);
        ASSERT_FALSE(p.jobs_truncated || p.functions.truncated);
        ASSERT_EQ(p.functions.n, 4);
        /* summed over the jobs, the most samples first */
        ASSERT_STREQ(p.functions.items[0].name, "solve");
        ASSERT_EQ(p.functions.items[0].samples, 68);
        ASSERT_TRUE(p.functions.items[0].cpu_seconds == 34);
        ASSERT_STREQ(p.functions.items[0].object, "/bin/app");
        ASSERT_STREQ(p.functions.items[0].build_id, "ab");
        ASSERT_NULL(p.functions.items[0].phase);
        ASSERT_EQ(find_function(&p.functions, "503_only", NULL)->samples, 2);
        site_profile_free(&p);

        /* per phase */
        ASSERT_OK(s->ops->get_profile(s, &f, true, 100, &p));
        ASSERT_EQ(p.functions.n, 4);
        ASSERT_EQ(find_function(&p.functions, "solve", "solve")->samples, 68);
        ASSERT_STREQ(find_function(&p.functions, "501_only", NULL)->phase, "");
        site_profile_free(&p);

        /* the jobs seen last first: 503, then 502 */
        f.limit = 2;
        ASSERT_OK(s->ops->get_profile(s, &f, false, 100, &p));
        ASSERT_EQ(p.jobs, 2);
        ASSERT_TRUE(p.jobs_truncated);
        ASSERT_EQ(find_function(&p.functions, "solve", NULL)->samples, 28);
        ASSERT_EQ(p.functions.n, 3);
        site_profile_free(&p);

        /* fewer functions than there are */
        f.limit = 100;
        ASSERT_OK(s->ops->get_profile(s, &f, false, 1, &p));
        ASSERT_EQ(p.functions.n, 1);
        ASSERT_TRUE(p.functions.truncated);
        site_profile_free(&p);

        /* a person: their own jobs */
        f.viewer = "bob";
        ASSERT_OK(s->ops->get_profile(s, &f, false, 100, &p));
        ASSERT_EQ(p.jobs, 1);
        ASSERT_EQ(p.functions.n, 2);
        ASSERT_EQ(find_function(&p.functions, "solve", NULL)->samples, 8);
        site_profile_free(&p);
        f.viewer = NULL;

        /* a range without jobs */
        f.since = 1795570000;
        ASSERT_OK(s->ops->get_profile(s, &f, true, 100, &p));
        ASSERT_EQ(p.jobs, 0);
        ASSERT_EQ(p.functions.n, 0);
        site_profile_free(&p);

        for (size_t i = 0; i < ELEMENTSOF(b); i++)
                batch_free(b[i]);
        s->ops->close(s);
}

int main(void) {
        unsigned from = 99;
        Storage *s;

        db = getenv("LMK_TEST_PG_URI");
        if (!db) {
                ASSERT_NOT_NULL(mkdtemp(dir));
                snprintf(sqlite_path, sizeof(sqlite_path), "%s/lmk.db", dir);
                db = sqlite_path;
        }
        s = open_db(&from);
        ASSERT_EQ(from, 0);
        fprintf(stderr, "backend: %s\n", s->ops->name);
        s->ops->close(s);

        RUN(ingest_and_summary);
        RUN(lists);
        RUN(clusters);
        RUN(concurrent_retries);
        RUN(concurrent_functions);
        RUN(migrations_once);
        RUN(stored_sums_overflow);
        RUN(day_sums_overflow);
        RUN(many_rows_overflow);
        RUN(summaries_as_get_job);
        RUN(metadata_first_claim);
        RUN(prune_jobs);
        RUN(live_jobs);
        RUN(profile);
        if (db == sqlite_path)
                RUN(wal_checkpointed_beside);

        if (db == sqlite_path) {
                unlink(sqlite_path);
                rmdir(dir);
        }
        return 0;
}
