/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The batch parser alone: what it accepts, and for each kind of bad input
 * the error code and the field it names. */
#include <math.h>

#include "batch/batch-parse.h"
#include "batch/json-tree.h"
#include "tests.h"

#define HEADER                                                                          \
        "\"format\":\"lmk-batch\",\"version\":1,"                                       \
        "\"batch\":{\"node\":\"cn001\",\"boot_id\":\"b1\",\"seq\":17},"                 \
        "\"node\":{\"hostname\":\"cn001\",\"cpus\":48,\"cluster\":\"demo\"},"           \
        "\"interval\":{\"start\":1795550400.0,\"end\":1795550460.0},"                   \
        "\"sampling\":{\"event\":\"cpu-clock\",\"frequency_hz\":1,\"samples_lost\":3}"

#define ROW(fields) "{\"job\":\"4711\",\"user\":\"alice\",\"comm\":\"a.out\",\"object\":\"/bin/a\",\"kind\":\"exe\",\"samples\":5" fields "}"
/* A row whose fields give some of ROW's own: base holds the others (a
 * name given twice is refused). */
#define ROW_WITHOUT(base, fields) "{" base fields "}"

static const char good[] =
        "{" HEADER ","
        "\"jobs\":[{\"job\":\"4711\",\"user\":\"alice\",\"account\":\"p1\",\"partition\":\"batch\","
        "\"name\":\"lulesh\",\"nodes\":4,\"tasks\":192,\"notes\":{\"app\":\"lulesh\",\"size\":\"128\"},"
        "\"first_seen\":1795550401.2,\"last_seen\":1795550459.9,\"ended\":true}],"
        "\"rows\":[{\"job\":\"4711\",\"step\":\"0\",\"user\":\"alice\",\"comm\":\"lulesh2.0\","
        "\"object\":\"/opt/lulesh/lulesh2.0\",\"kind\":\"exe\",\"build_id\":\"5d1c0f\","
        "\"phase\":\"timestep/solve\",\"samples\":2051,\"cpu_time_ns\":null,\"cycles\":1000,"
        "\"instructions\":2500},"
        "{\"job\":null,\"step\":null,\"user\":\"root\",\"comm\":\"swapper\",\"object\":\"[idle]\","
        "\"kind\":\"idle\",\"build_id\":null,\"phase\":\"\",\"samples\":310}],"
        "\"markers\":[{\"job\":\"4711\",\"comm\":\"lulesh2.0\",\"phase\":\"inner\",\"state\":\"off-rate\"}],"
        "\"future_field\":{\"ignored\":[1,2,3]}}";

static Batch *parse_ok(const char *s) {
        BatchError err;
        Batch *b = NULL;
        int r = batch_parse(s, strlen(s), &b, &err);

        if (r < 0)
                test_fail("batch_parse failed: %d %s: %s\n%s", r, err.field, err.message, s);
        return b;
}

static void expect_error(const char *s, size_t len, int error, const char *field) {
        BatchError err;
        Batch *b = NULL;
        int r = batch_parse(s, len, &b, &err);

        if (r != -error)
                test_fail("expected -%d, got %d (%s: %s) for:\n%.2000s", error, r, err.field, err.message, s);
        if (field && !streq(err.field, field))
                test_fail("expected error in field \"%s\", got \"%s\" (%s)", field, err.field, err.message);
        ASSERT_NULL(b);
        ASSERT_TRUE(err.message[0] != '\0');
}

#define EXPECT_ERROR(s, error, field) expect_error((s), strlen(s), (error), (field))

TEST(good) {
        Batch *b = parse_ok(good);

        ASSERT_STREQ(b->node, "cn001");
        ASSERT_STREQ(b->boot_id, "b1");
        ASSERT_EQ(b->seq, 17);
        ASSERT_EQ(b->cpus, 48);
        ASSERT_STREQ(b->cluster, "demo");
        ASSERT_TRUE(b->start == 1795550400.0 && b->end == 1795550460.0);
        ASSERT_STREQ(b->event, "cpu-clock");
        ASSERT_TRUE(b->frequency_hz == 1.0);
        ASSERT_EQ(b->samples_lost, 3);

        ASSERT_EQ(b->n_jobs, 1);
        ASSERT_STREQ(b->jobs[0].job, "4711");
        ASSERT_STREQ(b->jobs[0].partition, "batch");
        ASSERT_EQ(b->jobs[0].nodes, 4);
        ASSERT_EQ(b->jobs[0].tasks, 192);
        ASSERT_TRUE(b->jobs[0].ended);
        ASSERT_NULL(b->jobs[0].cluster);
        ASSERT_EQ(b->jobs[0].n_notes, 2);
        ASSERT_STREQ(b->jobs[0].notes[1].key, "size");
        ASSERT_STREQ(b->jobs[0].notes[1].value, "128");

        ASSERT_EQ(b->n_rows, 2);
        ASSERT_STREQ(b->rows[0].phase, "timestep/solve");
        ASSERT_EQ(b->rows[0].kind, CODE_EXE);
        ASSERT_EQ(b->rows[0].samples, 2051);
        ASSERT_EQ(b->rows[0].cpu_time_ns, BATCH_NULL);
        ASSERT_EQ(b->rows[0].cycles, 1000);
        ASSERT_EQ(b->rows[0].instructions, 2500);
        ASSERT_NULL(b->rows[1].job);
        ASSERT_STREQ(b->rows[1].step, "");
        ASSERT_STREQ(b->rows[1].build_id, "");
        ASSERT_EQ(b->rows[1].kind, CODE_IDLE);
        ASSERT_EQ(b->total_samples, 2361);

        ASSERT_EQ(b->n_markers, 1);
        ASSERT_STREQ(b->markers[0].state, "off-rate");
        batch_free(b);
}

TEST(minimal) {
        /* No jobs, no markers, no counters: a node that was idle. */
        Batch *b = parse_ok("{" HEADER ",\"rows\":[]}");

        ASSERT_EQ(b->n_rows, 0);
        ASSERT_EQ(b->n_jobs, 0);
        ASSERT_EQ(b->total_samples, 0);
        batch_free(b);
}

#define NODE_WITH(installed)                                                            \
        "{\"format\":\"lmk-batch\",\"version\":1,"                                       \
        "\"batch\":{\"node\":\"cn001\",\"boot_id\":\"b1\",\"seq\":17},"                 \
        "\"node\":{\"cpus\":48,\"installed\":" installed "},"                               \
        "\"interval\":{\"start\":1795550400.0,\"end\":1795550460.0},"                   \
        "\"sampling\":{\"event\":\"cpu-clock\",\"frequency_hz\":1},\"rows\":[]}"

#define JOB_WITH(cpus) "{" HEADER ",\"jobs\":[{\"job\":\"7\",\"cpus_allocated\":" cpus "}],\"rows\":[]}"

/* sbatch --lmk=off and --lmk=nocounters (docs/slurm.md): an opted-out
 * job brings its samples in jobs[], and nothing of what it ran. */
#define OPTED(job, rows) "{" HEADER ",\"jobs\":[" job "],\"rows\":[" rows "]}"
#define ROW_OF(job) "{\"job\":\"" job "\",\"object\":\"/bin/x\",\"kind\":\"exe\",\"samples\":3}"
TEST(opted_out) {
        Batch *b = parse_ok(OPTED("{\"job\":\"7\",\"opted_out\":true,\"samples\":120,\"cpu_time_ns\":1200000000},"
                                  "{\"job\":\"8\",\"counters_released\":true}",
                                  ROW_OF("8")));

        ASSERT_TRUE(b->jobs[0].opted_out);
        ASSERT_EQ(b->jobs[0].samples, 120);
        ASSERT_FALSE(b->jobs[0].counters_released);
        ASSERT_FALSE(b->jobs[1].opted_out);
        ASSERT_EQ(b->jobs[1].samples, 0);
        ASSERT_TRUE(b->jobs[1].counters_released);
        batch_free(b);

        /* what the user asked lmk not to keep is refused, not stored */
        EXPECT_ERROR(OPTED("{\"job\":\"7\",\"opted_out\":true,\"samples\":1}", ROW_OF("8") "," ROW_OF("7")),
                     EINVAL, "rows[1].job");
        EXPECT_ERROR(OPTED("{\"job\":\"7\",\"opted_out\":true,\"cycles\":5}", ""), EINVAL, "jobs[0].opted_out");
        EXPECT_ERROR("{" HEADER ",\"jobs\":[{\"job\":\"7\",\"opted_out\":true}],\"rows\":[],"
                     "\"markers\":[{\"job\":\"7\",\"comm\":\"x\",\"phase\":\"p\",\"state\":\"off-rate\"}]}",
                     EINVAL, "markers[0].job");
        /* samples without rows are an opted-out job's only */
        EXPECT_ERROR(OPTED("{\"job\":\"7\",\"samples\":1}", ""), EINVAL, "jobs[0].samples");
        EXPECT_ERROR(OPTED("{\"job\":\"7\",\"opted_out\":1}", ""), EINVAL, "jobs[0].opted_out");
        EXPECT_ERROR(OPTED("{\"job\":\"7\",\"opted_out\":true,\"samples\":-1}", ""), EINVAL, "jobs[0].samples");
}

/* What the findings need: the job's CPUs on the node, what the node has. */
TEST(allocation_and_installed) {
        Batch *b = parse_ok(NODE_WITH("[{\"purpose\":\"blas\",\"family\":\"openblas\"},"
                                      "{\"purpose\":\"blas-reference\",\"family\":\"netlib\"}]"));

        ASSERT_TRUE(b->has_installed);
        ASSERT_EQ(b->n_installed, 2);
        ASSERT_STREQ(b->installed[1].family, "netlib");
        batch_free(b);
        b = parse_ok(NODE_WITH("[]"));
        ASSERT_TRUE(b->has_installed);
        ASSERT_EQ(b->n_installed, 0);
        batch_free(b);
        b = parse_ok(NODE_WITH("null"));
        ASSERT_FALSE(b->has_installed);
        batch_free(b);
        b = parse_ok("{" HEADER ",\"rows\":[]}");
        ASSERT_FALSE(b->has_installed);
        batch_free(b);

#define BAD_NODE(x, field) expect_error(NODE_WITH(x), strlen(NODE_WITH(x)), EINVAL, field)
        BAD_NODE("{}", "node.installed");
        BAD_NODE("[1]", "node.installed[0]");
        BAD_NODE("[{\"purpose\":\"blas\"}]", "node.installed[0].family");
        BAD_NODE("[{\"purpose\":\"BLAS\",\"family\":\"x\"}]", "node.installed[0].purpose");
        BAD_NODE("[{\"purpose\":\"blas\",\"family\":\"a/b\"}]", "node.installed[0].family");
        BAD_NODE("[{\"purpose\":\"blas\",\"family\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}]",
                 "node.installed[0].family");
#undef BAD_NODE

        b = parse_ok(JOB_WITH("48"));
        ASSERT_EQ(b->jobs[0].cpus_allocated, 48);
        batch_free(b);
        b = parse_ok(JOB_WITH("null"));
        ASSERT_EQ(b->jobs[0].cpus_allocated, BATCH_NULL);
        batch_free(b);
        expect_error(JOB_WITH("49"), strlen(JOB_WITH("49")), EINVAL, "jobs[0].cpus_allocated");
        expect_error(JOB_WITH("0"), strlen(JOB_WITH("0")), EINVAL, "jobs[0].cpus_allocated");
        expect_error(JOB_WITH("2.5"), strlen(JOB_WITH("2.5")), EINVAL, "jobs[0].cpus_allocated");
}

TEST(not_json) {
        EXPECT_ERROR("", EBADMSG, "");
        EXPECT_ERROR("{", EBADMSG, "");
        EXPECT_ERROR("{\"format\":\"lmk-batch\",}", EBADMSG, "");
        EXPECT_ERROR("{'format':'lmk-batch'}", EBADMSG, "");
        EXPECT_ERROR("{" HEADER ",\"rows\":[]} trailing", EBADMSG, "");
        EXPECT_ERROR("{" HEADER ",\"rows\":[]}{}", EBADMSG, "");
        EXPECT_ERROR("{\"format\":\"\xff\xfe\"}", EINVAL, "format"); /* not UTF-8: names the field */
        EXPECT_ERROR("[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", EBADMSG, "");
        EXPECT_ERROR("[]", EINVAL, "");
        EXPECT_ERROR("\"lmk-batch\"", EINVAL, "");
}

/* The store reads I-JSON (RFC 7493): text json-c was lenient with is
 * refused whole, so nothing is stored other than as it was sent. */
TEST(strict_json) {
        static const char *const refused[] = {
                "\"samples\":NaN", "\"samples\":Infinity", "\"samples\":-Infinity",
                "\"samples\":01", "\"samples\":-01", "\"samples\":00", "\"samples\":1.", "\"samples\":-.5",
                "\"samples\":.5", "\"samples\":1e", "\"samples\":+1", "\"samples\":9223372036854775808",
                "\"samples\":-9223372036854775809", "\"samples\":1e309",
                "\"samples\":5,\"samples\":5",              /* a name twice */
                "\"samples\":5,'phase':\"x\"",             /* single quotes */
                "\"samples\":5,\"phase\":\"a\tb\"",        /* a raw control character */
                "\"samples\":5,\"phase\":\"a\\ud800\"",     /* an unpaired surrogate */
                "\"samples\":5,\"phase\":\"\\udc00a\"",
                "\"samples\":5,\"phase\":\"\\ud800\\u0041\"",
                "\"samples\":5,\"pha\\u0000se\":\"x\"",     /* NUL in a name */
        };

        for (size_t i = 0; i < ELEMENTSOF(refused); i++) {
                char buf[2048];

                snprintf(buf, sizeof(buf), "{%s,\"rows\":[{\"object\":\"/bin/a\",\"kind\":\"exe\",%s}]}", HEADER,
                         refused[i]);
                expect_error(buf, strlen(buf), EBADMSG, "");
        }
        /* and 64 members, two of them alike: still found (sorted, not pairwise) */
        {
                char buf[4096], *p = buf;

                p += sprintf(p, "{" HEADER ",\"rows\":[],\"x\":{");
                for (int i = 0; i < 64; i++)
                        p += sprintf(p, "%s\"k%d\":1", i ? "," : "", i == 63 ? 7 : i);
                strcpy(p, "}}");
                expect_error(buf, strlen(buf), EBADMSG, "");
        }
        /* a trailing NUL is not whitespace */
        {
                static const char s[] = "{" HEADER ",\"rows\":[]}";

                expect_error(s, sizeof(s), EBADMSG, "");
        }
        /* what is taken: a paired surrogate, -0, exponents, escapes */
        batch_free(parse_ok("{" HEADER ",\"rows\":[" ROW(",\"phase\":\"\\ud83d\\ude00 \\\" \\/ \\u00e9\",\"cycles\":-0"
                            ) "]}"));
}

TEST(embedded_nul) {
        static const char s[] = "{" HEADER ",\"rows\":[]}";
        char buf[sizeof(s) + 8];

        /* A raw NUL byte in the body is not JSON ... */
        memcpy(buf, s, sizeof(s));
        buf[20] = '\0';
        expect_error(buf, sizeof(s) - 1, EBADMSG, "");
        /* ... and an escaped one is not allowed in any string. */
        EXPECT_ERROR("{" HEADER ",\"rows\":[" ROW(",\"phase\":\"a\\u0000b\"") "]}", EINVAL, "rows[0].phase");
        EXPECT_ERROR("{" HEADER ",\"jobs\":[{\"job\":\"1\",\"notes\":{\"k\":\"v\\u0000\"}}],\"rows\":[]}",
                     EINVAL, "jobs[0].notes");
}

TEST(version) {
        EXPECT_ERROR("{\"format\":\"lmk-batch\",\"version\":4}", EPROTONOSUPPORT, "version");
        EXPECT_ERROR("{\"format\":\"lmk-batch\",\"version\":0}", EPROTONOSUPPORT, "version");
        EXPECT_ERROR("{\"format\":\"lmk-batch\",\"version\":\"1\"}", EINVAL, "version");
        EXPECT_ERROR("{\"format\":\"lmk-batch\",\"version\":1.0}", EINVAL, "version");
        EXPECT_ERROR("{\"format\":\"other\",\"version\":1}", EPROTONOSUPPORT, "format");
        EXPECT_ERROR("{\"version\":1}", EINVAL, "format");
}

TEST(missing) {
        EXPECT_ERROR("{\"format\":\"lmk-batch\",\"version\":1}", EINVAL, "batch");
        EXPECT_ERROR("{\"format\":\"lmk-batch\",\"version\":1,\"batch\":{\"node\":\"n\",\"boot_id\":\"b\"}}",
                     EINVAL, "batch.seq");
        EXPECT_ERROR("{" HEADER "}", EINVAL, "rows");
        EXPECT_ERROR("{" HEADER ",\"rows\":[{\"object\":\"/bin/a\",\"kind\":\"exe\"}]}", EINVAL, "rows[0].samples");
        EXPECT_ERROR("{" HEADER ",\"rows\":[" ROW("") ",{\"kind\":\"exe\",\"samples\":1}]}", EINVAL, "rows[1].object");
        EXPECT_ERROR("{" HEADER ",\"jobs\":[{\"user\":\"a\"}],\"rows\":[]}", EINVAL, "jobs[0].job");
        EXPECT_ERROR("{" HEADER ",\"markers\":[{\"phase\":\"p\"}],\"rows\":[]}", EINVAL, "markers[0].state");
}

TEST(types) {
        EXPECT_ERROR("{" HEADER ",\"rows\":{}}", EINVAL, "rows");
        EXPECT_ERROR("{" HEADER ",\"rows\":[1]}", EINVAL, "rows[0]");
        EXPECT_ERROR("{" HEADER ",\"rows\":[" ROW_WITHOUT("\"job\":\"4711\",\"user\":\"alice\",\"comm\":\"a.out\",\"object\":\"/bin/a\",\"kind\":\"exe\"", ",\"samples\":\"5\"") "]}", EINVAL, "rows[0].samples");
        EXPECT_ERROR("{" HEADER ",\"rows\":[" ROW_WITHOUT("\"job\":\"4711\",\"user\":\"alice\",\"comm\":\"a.out\",\"object\":\"/bin/a\",\"kind\":\"exe\"", ",\"samples\":5.5") "]}", EINVAL, "rows[0].samples");
        EXPECT_ERROR("{" HEADER ",\"rows\":[" ROW_WITHOUT("\"job\":\"4711\",\"user\":\"alice\",\"comm\":\"a.out\",\"object\":\"/bin/a\",\"kind\":\"exe\"", ",\"samples\":null") "]}", EINVAL, "rows[0].samples");
        EXPECT_ERROR("{" HEADER ",\"rows\":[" ROW_WITHOUT("\"job\":\"4711\",\"user\":\"alice\",\"comm\":\"a.out\",\"kind\":\"exe\",\"samples\":5", ",\"object\":[]") "]}", EINVAL, "rows[0].object");
        EXPECT_ERROR("{" HEADER ",\"rows\":[" ROW_WITHOUT("\"job\":\"4711\",\"user\":\"alice\",\"comm\":\"a.out\",\"kind\":\"exe\",\"samples\":5", ",\"object\":null") "]}", EINVAL, "rows[0].object");
        EXPECT_ERROR("{" HEADER ",\"rows\":[" ROW(",\"cycles\":true") "]}", EINVAL, "rows[0].cycles");
        EXPECT_ERROR("{" HEADER ",\"rows\":[" ROW_WITHOUT("\"user\":\"alice\",\"comm\":\"a.out\",\"object\":\"/bin/a\",\"kind\":\"exe\",\"samples\":5", ",\"job\":4711") "]}", EINVAL, "rows[0].job");
        EXPECT_ERROR("{" HEADER ",\"jobs\":[{\"job\":\"1\",\"ended\":\"no\"}],\"rows\":[]}", EINVAL, "jobs[0].ended");
        EXPECT_ERROR("{" HEADER ",\"jobs\":[{\"job\":\"1\",\"notes\":[]}],\"rows\":[]}", EINVAL, "jobs[0].notes");
        EXPECT_ERROR("{" HEADER ",\"jobs\":[{\"job\":\"1\",\"notes\":{\"a\":1}}],\"rows\":[]}", EINVAL, "jobs[0].notes");
        EXPECT_ERROR("{\"format\":\"lmk-batch\",\"version\":1,\"batch\":[]}", EINVAL, "batch");
}

/* Numbers the store could not keep as sent are not taken as JSON (an
 * integer beyond int64, a double beyond range, NaN): refused whole. */
TEST(ranges) {
        EXPECT_ERROR("{" HEADER ",\"rows\":[" ROW_WITHOUT("\"job\":\"4711\",\"user\":\"alice\",\"comm\":\"a.out\",\"object\":\"/bin/a\",\"kind\":\"exe\"", ",\"samples\":-1") "]}", EINVAL, "rows[0].samples");
        EXPECT_ERROR("{" HEADER ",\"rows\":[" ROW(",\"cycles\":-5") "]}", EINVAL, "rows[0].cycles");
        EXPECT_ERROR("{" HEADER ",\"rows\":[" ROW_WITHOUT("\"job\":\"4711\",\"user\":\"alice\",\"comm\":\"a.out\",\"object\":\"/bin/a\",\"kind\":\"exe\"", ",\"samples\":9007199254740993") "]}", EINVAL, "rows[0].samples");
        EXPECT_ERROR("{" HEADER ",\"rows\":[" ROW_WITHOUT("\"job\":\"4711\",\"user\":\"alice\",\"comm\":\"a.out\",\"object\":\"/bin/a\",\"kind\":\"exe\"", ",\"samples\":100000000000000000000000") "]}", EBADMSG, "");
        EXPECT_ERROR("{" HEADER ",\"rows\":[" ROW_WITHOUT("\"job\":\"4711\",\"user\":\"alice\",\"comm\":\"a.out\",\"object\":\"/bin/a\",\"samples\":5", ",\"kind\":\"dll\"") "]}", EINVAL, "rows[0].kind");
        EXPECT_ERROR("{" HEADER ",\"rows\":[" ROW_WITHOUT("\"job\":\"4711\",\"user\":\"alice\",\"object\":\"/bin/a\",\"kind\":\"exe\",\"samples\":5", ",\"comm\":\"0123456789abcdef\"") "]}", EINVAL, "rows[0].comm");
        EXPECT_ERROR("{" HEADER ",\"rows\":[" ROW(",\"build_id\":\"5D1C\"") "]}", EINVAL, "rows[0].build_id");
        EXPECT_ERROR("{" HEADER ",\"rows\":[" ROW_WITHOUT("\"job\":\"4711\",\"user\":\"alice\",\"comm\":\"a.out\",\"kind\":\"exe\",\"samples\":5", ",\"object\":\"\"") "]}", EINVAL, "rows[0].object");
        EXPECT_ERROR("{\"format\":\"lmk-batch\",\"version\":1,\"batch\":{\"node\":\"n\",\"boot_id\":\"b\",\"seq\":-1}}",
                     EINVAL, "batch.seq");
        EXPECT_ERROR("{\"format\":\"lmk-batch\",\"version\":1,\"batch\":{\"node\":\"\",\"boot_id\":\"b\",\"seq\":1}}",
                     EINVAL, "batch.node");
        EXPECT_ERROR("{\"format\":\"lmk-batch\",\"version\":1,\"batch\":{\"node\":\"n\",\"boot_id\":\"b\",\"seq\":1},"
                     "\"node\":{\"cpus\":0}}", EINVAL, "node.cpus");
        EXPECT_ERROR("{\"format\":\"lmk-batch\",\"version\":1,\"batch\":{\"node\":\"n\",\"boot_id\":\"b\",\"seq\":1},"
                     "\"node\":{\"cpus\":1},\"interval\":{\"start\":1795550460,\"end\":1795550400}}",
                     EINVAL, "interval.end");
        EXPECT_ERROR("{\"format\":\"lmk-batch\",\"version\":1,\"batch\":{\"node\":\"n\",\"boot_id\":\"b\",\"seq\":1},"
                     "\"node\":{\"cpus\":1},\"interval\":{\"start\":1795550400000,\"end\":1795550460000}}",
                     EINVAL, "interval.start");
        EXPECT_ERROR("{\"format\":\"lmk-batch\",\"version\":1,\"batch\":{\"node\":\"n\",\"boot_id\":\"b\",\"seq\":1},"
                     "\"node\":{\"cpus\":1},\"interval\":{\"start\":1795550400,\"end\":1795550460},"
                     "\"sampling\":{\"event\":\"cpu-clock\",\"frequency_hz\":0}}", EINVAL, "sampling.frequency_hz");
        EXPECT_ERROR("{\"format\":\"lmk-batch\",\"version\":1,\"batch\":{\"node\":\"n\",\"boot_id\":\"b\",\"seq\":1},"
                     "\"node\":{\"cpus\":1},\"interval\":{\"start\":1795550400,\"end\":1795550460},"
                     "\"sampling\":{\"event\":\"cpu-clock\",\"frequency_hz\":1e400}}", EBADMSG, "");
        EXPECT_ERROR("{\"format\":\"lmk-batch\",\"version\":1,\"batch\":{\"node\":\"n\",\"boot_id\":\"b\",\"seq\":1},"
                     "\"node\":{\"cpus\":1},\"interval\":{\"start\":NaN,\"end\":1795550460}}", EBADMSG, "");
}

TEST(oversized_strings) {
        char *s, *p;
        size_t n = 5000;

        /* A 5000-byte object path: longer than the 4096 allowed. */
        s = malloc(n + 1024);
        ASSERT_NOT_NULL(s);
        p = stpcpy(s, "{" HEADER ",\"rows\":[{\"object\":\"/");
        memset(p, 'x', n);
        p += n;
        strcpy(p, "\",\"kind\":\"lib\",\"samples\":1}]}");
        EXPECT_ERROR(s, EINVAL, "rows[0].object");
        free(s);
}

TEST(too_many_rows) {
        static const char row[] = "{\"object\":\"o\",\"kind\":\"lib\",\"samples\":1},";
        size_t n = BATCH_MAX_ROWS + 1;
        char *s = malloc(n * (sizeof(row) - 1) + 1024), *p;
        Batch *b;

        ASSERT_NOT_NULL(s);
        p = stpcpy(s, "{" HEADER ",\"rows\":[");
        for (size_t i = 0; i < n; i++)
                p = stpcpy(p, row);
        strcpy(p - 1, "]}");
        EXPECT_ERROR(s, E2BIG, "rows");

        /* One fewer is fine. */
        p = strrchr(s, '{');
        strcpy(p - 1, "]}");
        b = parse_ok(s);
        ASSERT_EQ(b->n_rows, BATCH_MAX_ROWS);
        ASSERT_EQ(b->total_samples, BATCH_MAX_ROWS);
        batch_free(b);
        free(s);
}

#define RANK(fields) "{\"job\":\"4711\",\"rank\":1,\"samples\":5,\"comm_samples\":2,\"first\":1795550401.5," \
                     "\"last\":1795550459.5" fields "}"
#define RANK_WITHOUT(base, fields) "{" base fields "}"

TEST(ranks) {
        Batch *b = parse_ok("{" HEADER ",\"rows\":[" ROW("") "," ROW("") "],\"ranks\":["
                            RANK(",\"step\":\"0\",\"phase\":\"solve\"") "," RANK_WITHOUT("\"job\":\"4711\",\"samples\":5,\"comm_samples\":2,\"first\":1795550401.5,\"last\":1795550459.5", ",\"rank\":0") "]}");

        ASSERT_EQ(b->n_ranks, 2);
        ASSERT_STREQ(b->ranks[0].job, "4711");
        ASSERT_STREQ(b->ranks[0].step, "0");
        ASSERT_STREQ(b->ranks[0].phase, "solve");
        ASSERT_EQ(b->ranks[0].rank, 1);
        ASSERT_EQ(b->ranks[0].samples, 5);
        ASSERT_EQ(b->ranks[0].comm_samples, 2);
        ASSERT_TRUE(b->ranks[0].first == 1795550401.5 && b->ranks[0].last == 1795550459.5);
        /* absent step and phase are "", as in rows */
        ASSERT_STREQ(b->ranks[1].step, "");
        ASSERT_STREQ(b->ranks[1].phase, "");
        ASSERT_EQ(b->ranks[1].rank, 0);
        batch_free(b);

        /* ranks[] is optional, and may be null or empty */
        b = parse_ok("{" HEADER ",\"rows\":[],\"ranks\":null}");
        ASSERT_EQ(b->n_ranks, 0);
        batch_free(b);
        b = parse_ok("{" HEADER ",\"rows\":[],\"ranks\":[]}");
        ASSERT_EQ(b->n_ranks, 0);
        batch_free(b);

        EXPECT_ERROR("{" HEADER ",\"rows\":[" ROW("") "],\"ranks\":{}}", EINVAL, "ranks");
        EXPECT_ERROR("{" HEADER ",\"rows\":[" ROW("") "],\"ranks\":[5]}", EINVAL, "ranks[0]");
        EXPECT_ERROR("{" HEADER ",\"rows\":[" ROW("") "],\"ranks\":[" RANK_WITHOUT("\"rank\":1,\"samples\":5,\"comm_samples\":2,\"first\":1795550401.5,\"last\":1795550459.5", ",\"job\":null") "]}", EINVAL, "ranks[0].job");
        EXPECT_ERROR("{" HEADER ",\"rows\":[" ROW("") "],\"ranks\":[" RANK_WITHOUT("\"job\":\"4711\",\"samples\":5,\"comm_samples\":2,\"first\":1795550401.5,\"last\":1795550459.5", ",\"rank\":-1") "]}", EINVAL,
                     "ranks[0].rank");
        EXPECT_ERROR("{" HEADER ",\"rows\":[" ROW("") "],\"ranks\":[" RANK_WITHOUT("\"job\":\"4711\",\"samples\":5,\"comm_samples\":2,\"first\":1795550401.5,\"last\":1795550459.5", ",\"rank\":2147483647") "]}", EINVAL,
                     "ranks[0].rank");
        EXPECT_ERROR("{" HEADER ",\"rows\":[" ROW("") "],\"ranks\":[" RANK_WITHOUT("\"job\":\"4711\",\"samples\":5,\"comm_samples\":2,\"first\":1795550401.5,\"last\":1795550459.5", ",\"rank\":1.0") "]}", EINVAL,
                     "ranks[0].rank");
        EXPECT_ERROR("{" HEADER ",\"rows\":[" ROW("") "],\"ranks\":[" RANK_WITHOUT("\"job\":\"4711\",\"rank\":1,\"samples\":5,\"first\":1795550401.5,\"last\":1795550459.5", ",\"comm_samples\":6") "]}", EINVAL,
                     "ranks[0].comm_samples");
        EXPECT_ERROR("{" HEADER ",\"rows\":[" ROW("") "],\"ranks\":[" RANK(",\"step\":\"\"") "]}", EINVAL,
                     "ranks[0].step");
        EXPECT_ERROR("{" HEADER ",\"rows\":[" ROW("") "],\"ranks\":[" RANK_WITHOUT("\"job\":\"4711\",\"rank\":1,\"samples\":5,\"comm_samples\":2,\"first\":1795550401.5", ",\"last\":1795550400.5") "]}", EINVAL,
                     "ranks[0].last");
        EXPECT_ERROR("{" HEADER ",\"rows\":[" ROW("") "],\"ranks\":[{\"job\":\"4711\",\"rank\":1,\"samples\":5,"
                     "\"comm_samples\":2,\"first\":1795550401.5}]}", EINVAL, "ranks[0].last");
        /* 48 CPUs at 1 Hz for 60 s: at most 2 x 2,880 samples in one row */
        EXPECT_ERROR("{" HEADER ",\"rows\":[" ROW("") "],\"ranks\":[" RANK_WITHOUT("\"job\":\"4711\",\"rank\":1,\"comm_samples\":2,\"first\":1795550401.5,\"last\":1795550459.5", ",\"samples\":5761") "]}", EINVAL,
                     "ranks[0].samples");
        /* more samples of ranks than of jobs in rows: system work does not count */
        EXPECT_ERROR("{" HEADER ",\"rows\":[" ROW("") ",{\"object\":\"[idle]\",\"kind\":\"idle\",\"samples\":9}],"
                     "\"ranks\":[" RANK("") "," RANK("") "]}", EINVAL, "ranks");
}

TEST(too_many_ranks) {
        static const char rank[] = "{\"job\":\"1\",\"rank\":0,\"samples\":0,\"comm_samples\":0,"
                                   "\"first\":1795550401,\"last\":1795550401},";
        size_t n = BATCH_MAX_RANKS + 1;
        char *s = malloc(n * (sizeof(rank) - 1) + 1024), *p;
        Batch *b;

        ASSERT_NOT_NULL(s);
        p = stpcpy(s, "{" HEADER ",\"rows\":[],\"ranks\":[");
        for (size_t i = 0; i < n; i++)
                p = stpcpy(p, rank);
        strcpy(p - 1, "]}");
        EXPECT_ERROR(s, E2BIG, "ranks");

        p = strrchr(s, '{');
        strcpy(p - 1, "]}");
        b = parse_ok(s);
        ASSERT_EQ(b->n_ranks, BATCH_MAX_RANKS);
        batch_free(b);
        free(s);
}

TEST(sql_is_data) {
        Batch *b = parse_ok("{" HEADER ",\"rows\":[" ROW_WITHOUT("\"job\":\"4711\",\"user\":\"alice\",\"comm\":\"a.out\",\"kind\":\"exe\",\"samples\":5", ",\"object\":\"/x'); DROP TABLE jobs; --\","
                            "\"phase\":\"\\\"; DELETE FROM samples\"") "]}");

        ASSERT_STREQ(b->rows[0].object, "/x'); DROP TABLE jobs; --");
        ASSERT_STREQ(b->rows[0].phase, "\"; DELETE FROM samples");
        batch_free(b);
}

/* Every kind of string a batch holds, each with every ill-formed UTF-8 form
 * of table 3-7: refused, naming the field and the byte offset. %s is where
 * the bad bytes go (after one good byte, so the offset is 1). */
static const struct {
        const char *tmpl, *field;
} string_fields[] = {
        { "{\"format\":\"lmk-batch\",\"version\":1,\"batch\":{\"node\":\"a%s\",\"boot_id\":\"b\",\"seq\":1}}", "batch.node" },
        { "{\"format\":\"lmk-batch\",\"version\":1,\"batch\":{\"node\":\"n\",\"boot_id\":\"a%s\",\"seq\":1}}", "batch.boot_id" },
        { "{" HEADER ",\"jobs\":[{\"job\":\"a%s\"}],\"rows\":[]}", "jobs[0].job" },
        { "{" HEADER ",\"jobs\":[{\"job\":\"1\",\"user\":\"a%s\"}],\"rows\":[]}", "jobs[0].user" },
        { "{" HEADER ",\"jobs\":[{\"job\":\"1\",\"account\":\"a%s\"}],\"rows\":[]}", "jobs[0].account" },
        { "{" HEADER ",\"jobs\":[{\"job\":\"1\",\"partition\":\"a%s\"}],\"rows\":[]}", "jobs[0].partition" },
        { "{" HEADER ",\"jobs\":[{\"job\":\"1\",\"name\":\"a%s\"}],\"rows\":[]}", "jobs[0].name" },
        { "{" HEADER ",\"jobs\":[{\"job\":\"1\",\"notes\":{\"k\":\"a%s\"}}],\"rows\":[]}", "jobs[0].notes" },
        { "{" HEADER ",\"jobs\":[{\"job\":\"1\",\"notes\":{\"a%s\":\"v\"}}],\"rows\":[]}", "jobs[0].notes" },
        { "{" HEADER ",\"rows\":[" ROW_WITHOUT("\"job\":\"4711\",\"user\":\"alice\",\"comm\":\"a.out\",\"kind\":\"exe\",\"samples\":5", ",\"object\":\"a%s\"") "]}", "rows[0].object" },
        { "{" HEADER ",\"rows\":[" ROW(",\"phase\":\"a%s\"") "]}", "rows[0].phase" },
        { "{" HEADER ",\"rows\":[" ROW_WITHOUT("\"job\":\"4711\",\"user\":\"alice\",\"object\":\"/bin/a\",\"kind\":\"exe\",\"samples\":5", ",\"comm\":\"a%s\"") "]}", "rows[0].comm" },
        { "{" HEADER ",\"rows\":[" ROW_WITHOUT("\"job\":\"4711\",\"comm\":\"a.out\",\"object\":\"/bin/a\",\"kind\":\"exe\",\"samples\":5", ",\"user\":\"a%s\"") "]}", "rows[0].user" },
        { "{" HEADER ",\"rows\":[" ROW(",\"step\":\"a%s\"") "]}", "rows[0].step" },
        { "{" HEADER ",\"rows\":[],\"markers\":[{\"phase\":\"a%s\",\"state\":\"off-rate\"}]}", "markers[0].phase" },
        { "{" HEADER ",\"rows\":[],\"markers\":[{\"phase\":\"p\",\"state\":\"a%s\"}]}", "markers[0].state" },
};

static const char *const ill_formed[] = {
        "\xc0\xaf",             /* overlong '/' */
        "\xc1\xbf",             /* overlong */
        "\xe0\x80\xaf",         /* overlong, 3 bytes */
        "\xf0\x80\x80\xaf",     /* overlong, 4 bytes */
        "\xed\xa0\x80",         /* surrogate U+D800 */
        "\xed\xbf\xbf",         /* surrogate U+DFFF */
        "\xf4\x90\x80\x80",     /* above U+10FFFF */
        "\xf5\x80\x80\x80",     /* F5 lead */
        "\xff",
        "\x80",                 /* lone continuation */
        "\xe2\x82",             /* truncated */
};

TEST(utf8_every_string) {
        for (size_t i = 0; i < ELEMENTSOF(string_fields); i++)
                for (size_t k = 0; k < ELEMENTSOF(ill_formed); k++) {
                        char buf[2048];
                        BatchError err;
                        Batch *b = NULL;
                        const char *at = strstr(string_fields[i].tmpl, "%s");

                        /* Spliced by hand: a format from a table cannot be checked. */
                        snprintf(buf, sizeof(buf), "%.*s%s%s", (int) (at - string_fields[i].tmpl),
                                 string_fields[i].tmpl, ill_formed[k], at + 2);
                        if (batch_parse(buf, strlen(buf), &b, &err) != -EINVAL ||
                            !streq(err.field, string_fields[i].field) || !strstr(err.message, "UTF-8 at byte 1"))
                                test_fail("%s with form %zu: %s: %s", string_fields[i].field, k, err.field, err.message);
                }
        /* Well-formed: every row of table 3-7 at its edges. */
        batch_free(parse_ok("{" HEADER ",\"rows\":[" ROW(",\"phase\":\"\xc2\x80\xdf\xbf\xe0\xa0\x80\xed\x9f\xbf"
                            "\xee\x80\x80\xf0\x90\x80\x80\xf4\x8f\xbf\xbf\"") "]}"));
}

TEST(control_in_identifiers) {
        EXPECT_ERROR("{" HEADER ",\"jobs\":[{\"job\":\"47\\u000a11\"}],\"rows\":[]}", EINVAL, "jobs[0].job");
        EXPECT_ERROR("{" HEADER ",\"rows\":[" ROW_WITHOUT("\"job\":\"4711\",\"comm\":\"a.out\",\"object\":\"/bin/a\",\"kind\":\"exe\",\"samples\":5", ",\"user\":\"a\\u007f\"") "]}", EINVAL, "rows[0].user");
        EXPECT_ERROR("{" HEADER ",\"jobs\":[{\"job\":\"1\",\"notes\":{\"a\\tb\":\"v\"}}],\"rows\":[]}", EINVAL, "jobs[0].notes");
        /* free text keeps them */
        batch_free(parse_ok("{" HEADER ",\"rows\":[" ROW_WITHOUT("\"job\":\"4711\",\"user\":\"alice\",\"object\":\"/bin/a\",\"kind\":\"exe\",\"samples\":5", ",\"phase\":\"a\\tb\",\"comm\":\"x\\ny\"") "]}"));
}

#define SAMPLING(hz) "\"sampling\":{\"event\":\"cpu-clock\",\"frequency_hz\":" hz "}"
#define HEAD(cpus, end, hz)                                                                     \
        "{\"format\":\"lmk-batch\",\"version\":1,\"batch\":{\"node\":\"n\",\"boot_id\":\"b\",\"seq\":1}," \
        "\"node\":{\"cpus\":" cpus "},\"interval\":{\"start\":1795550400,\"end\":" end "}," SAMPLING(hz)

TEST(limits) {
        /* 4 CPUs, 10 s, 2 Hz: at most 2 x 4 x 2 x 10 = 160 samples a row */
        batch_free(parse_ok(HEAD("4", "1795550410", "2") ",\"rows\":[" ROW_WITHOUT("\"job\":\"4711\",\"user\":\"alice\",\"comm\":\"a.out\",\"object\":\"/bin/a\",\"kind\":\"exe\"", ",\"samples\":160") "]}"));
        EXPECT_ERROR(HEAD("4", "1795550410", "2") ",\"rows\":[" ROW_WITHOUT("\"job\":\"4711\",\"user\":\"alice\",\"comm\":\"a.out\",\"object\":\"/bin/a\",\"kind\":\"exe\"", ",\"samples\":161") "]}", EINVAL, "rows[0].samples");
        /* a zero-length interval counts as 1 s */
        batch_free(parse_ok(HEAD("4", "1795550400", "2") ",\"rows\":[" ROW_WITHOUT("\"job\":\"4711\",\"user\":\"alice\",\"comm\":\"a.out\",\"object\":\"/bin/a\",\"kind\":\"exe\"", ",\"samples\":16") "]}"));
        EXPECT_ERROR(HEAD("4", "1795550400", "2") ",\"rows\":[" ROW_WITHOUT("\"job\":\"4711\",\"user\":\"alice\",\"comm\":\"a.out\",\"object\":\"/bin/a\",\"kind\":\"exe\"", ",\"samples\":17") "]}", EINVAL, "rows[0].samples");
        batch_free(parse_ok(HEAD("4", "1795550410", "2") ",\"rows\":[" ROW(",\"cpu_time_ns\":80000000000,"
                            "\"cycles\":800000000000,\"instructions\":8000000000000") "]}"));
        EXPECT_ERROR(HEAD("4", "1795550410", "2") ",\"rows\":[" ROW(",\"cpu_time_ns\":80000000001") "]}", EINVAL, "rows[0].cpu_time_ns");
        EXPECT_ERROR(HEAD("4", "1795550410", "2") ",\"rows\":[" ROW(",\"cycles\":800000000001") "]}", EINVAL, "rows[0].cycles");
        EXPECT_ERROR(HEAD("4", "1795550410", "2") ",\"rows\":[" ROW(",\"instructions\":8000000000001") "]}", EINVAL, "rows[0].instructions");
        EXPECT_ERROR("{\"format\":\"lmk-batch\",\"version\":1,\"batch\":{\"node\":\"n\",\"boot_id\":\"b\",\"seq\":1},"
                     "\"node\":{\"cpus\":4},\"interval\":{\"start\":1795550400,\"end\":1795550410},"
                     "\"sampling\":{\"event\":\"e\",\"frequency_hz\":2,\"samples_lost\":161},\"rows\":[]}",
                     EINVAL, "sampling.samples_lost");
        /* frequencies and intervals no node produces */
        EXPECT_ERROR(HEAD("4", "1795550410", "1e-300") ",\"rows\":[]}", EINVAL, "sampling.frequency_hz");
        EXPECT_ERROR(HEAD("4", "1795550410", "0.0009") ",\"rows\":[]}", EINVAL, "sampling.frequency_hz");
        EXPECT_ERROR(HEAD("4", "1795550410", "100001") ",\"rows\":[]}", EINVAL, "sampling.frequency_hz");
        batch_free(parse_ok(HEAD("4", "1795550410", "0.001") ",\"rows\":[]}"));
        batch_free(parse_ok(HEAD("4", "1795550410", "100000") ",\"rows\":[]}"));
        batch_free(parse_ok(HEAD("4", "1795723200", "1") ",\"rows\":[]}"));
        EXPECT_ERROR(HEAD("4", "1795723201", "1") ",\"rows\":[]}", EINVAL, "interval.end");
}

TEST(batch_sums) {
        /* 1,100 rows of 2^53 on a node that may report that much: the sum
         * of each kind wraps at row 1023 and is refused there. */
        static const char *const fields[] = { "samples", "cpu_time_ns", "cycles", "instructions" };

        for (size_t f = 0; f < ELEMENTSOF(fields); f++) {
                size_t n = 1100;
                char *s = malloc(n * 128 + 1024), *p, field[32];

                ASSERT_NOT_NULL(s);
                p = stpcpy(s, HEAD("1048576", "1795636800", "100000") ",\"rows\":[");
                for (size_t i = 0; i < n; i++)
                        p += f == 0 ? sprintf(p, "%s{\"object\":\"o\",\"kind\":\"lib\",\"samples\":9007199254740992}",
                                              i ? "," : "")
                                    : sprintf(p, "%s{\"object\":\"o\",\"kind\":\"lib\",\"samples\":1,\"%s\":9007199254740992}",
                                              i ? "," : "", fields[f]);
                strcpy(p, "]}");
                snprintf(field, sizeof(field), "rows[1023].%s", fields[f]);
                EXPECT_ERROR(s, EINVAL, field);
                free(s);
        }
}

/* What lmkd measures beyond samples: which event fills which role, named
 * events per row and job, burst rates, the node type and energy. */
#define COUNTERS                                                                                        \
        "\"counters\":[{\"role\":\"cycles\",\"event\":\"PAPI_TOT_CYC\",\"source\":\"papi\",\"available\":true,"  \
        "\"total\":5,\"in_windows\":4,\"in_gaps\":1,\"running_fraction\":1.0},"                        \
        "{\"role\":\"instructions\",\"event\":\"PAPI_TOT_INS\",\"source\":\"papi\",\"available\":true},"  \
        "{\"role\":\"PAPI_L1_DCM\",\"event\":\"PAPI_L1_DCM\",\"source\":\"papi\",\"available\":true},"     \
        "{\"role\":\"flops\",\"event\":\"FP_ARITH:SCALAR_DOUBLE\",\"source\":\"pfm\",\"available\":false,"  \
        "\"error\":\"perf_event_open: the counter is in use by another tool\"}]"
#define NODE_TYPE                                                                                       \
        "\"type\":{\"cpu_model\":\"Intel(R) Xeon(R) Platinum 8480+\",\"sockets\":2,\"cores\":112,"       \
        "\"threads\":224,\"memory_bytes\":540623196160,\"gpus\":[{\"vendor\":\"NVIDIA\",\"vendor_id\":\"10de\"," \
        "\"device_id\":\"2330\",\"name\":\"GH100 [H100 SXM5 80GB]\",\"count\":4}],\"gpus_other\":0,"     \
        "\"kernel\":\"6.1.0-18-amd64\"}"
#define ENERGY                                                                                          \
        "\"energy\":{\"source\":\"powercap\",\"joules\":30000.5,\"unattributed_joules\":100,"            \
        "\"zones\":[{\"zone\":\"package-0\",\"kind\":\"package\",\"joules\":14000.25},"                  \
        "{\"zone\":\"package-0/dram\",\"kind\":\"dram\",\"joules\":1000},"                               \
        "{\"zone\":\"package-1\",\"kind\":\"package\",\"joules\":14000.25},"                             \
        "{\"zone\":\"package-1/dram\",\"kind\":\"dram\",\"joules\":1000}]}"
#define MEASURED(counters, type, energy, jobs, rows)                                                    \
        "{\"format\":\"lmk-batch\",\"version\":1,\"batch\":{\"node\":\"cn001\",\"boot_id\":\"b1\",\"seq\":17}," \
        "\"node\":{\"cpus\":224" type "},\"interval\":{\"start\":1795550400.0,\"end\":1795550460.0},"   \
        "\"sampling\":{\"event\":\"cpu-clock\",\"frequency_hz\":1}" counters energy                     \
        ",\"jobs\":[" jobs "],\"rows\":[" rows "]}"
#define MROW(fields) "{\"job\":\"4711\",\"object\":\"/bin/a\",\"kind\":\"exe\",\"samples\":100,\"cycles\":9000,\"instructions\":18000" fields "}"
#define MJOB(fields) "{\"job\":\"4711\"" fields "}"

TEST(measured) {
        Batch *b = parse_ok(MEASURED("," COUNTERS, "," NODE_TYPE, "," ENERGY,
                MJOB(",\"cpu_time_ns\":100000000000,\"cycles\":300000000000,\"instructions\":600000000000,"
                     "\"ipc\":2.0,\"events\":{\"PAPI_L1_DCM\":1000,\"flops\":null},\"energy_joules\":29900.5,"
                     "\"energy_alone_joules\":29000"),
                MROW(",\"events\":{\"PAPI_L1_DCM\":70,\"flops\":null},\"multiplexed_samples\":3,"
                     "\"burst\":{\"samples\":6,\"window_ns\":6000000,\"per_second\":{\"cycles\":2.5e9,"
                     "\"instructions\":5e9,\"PAPI_L1_DCM\":1e6,\"flops\":null},\"ipc\":2.0}") ","
                MROW(",\"events\":{\"PAPI_L1_DCM\":30}")));
        const BatchRow *r = &b->rows[0];
        int l1 = batch_role_index(b, "PAPI_L1_DCM"), flops = batch_role_index(b, "flops"),
            cyc = batch_role_index(b, "cycles");

        ASSERT_EQ(b->n_counters, 4);
        ASSERT_EQ(b->n_roles, 4);
        ASSERT_STREQ(b->counters[0].event, "PAPI_TOT_CYC");
        ASSERT_TRUE(b->counters[0].available);
        ASSERT_FALSE(b->counters[3].available);
        ASSERT_STREQ(b->counters[3].error, "perf_event_open: the counter is in use by another tool");
        ASSERT_TRUE(l1 >= 0 && flops >= 0 && cyc >= 0);

        ASSERT_EQ(r->multiplexed_samples, 3);
        ASSERT_NOT_NULL(r->events);
        ASSERT_EQ(r->events->count[l1], 70);
        ASSERT_EQ(r->events->count[flops], BATCH_NULL);
        ASSERT_EQ(b->total_events[l1], 100);
        ASSERT_EQ(b->total_events[flops], 0);
        ASSERT_NOT_NULL(r->burst);
        ASSERT_EQ(r->burst->samples, 6);
        ASSERT_EQ(r->burst->window_ns, 6000000);
        ASSERT_TRUE(r->burst->per_second[cyc] == 2.5e9);
        ASSERT_TRUE(r->burst->counts[cyc] == 15e6);
        ASSERT_TRUE(r->burst->counts[l1] == 6000);
        ASSERT_TRUE(isnan(r->burst->per_second[flops]));
        ASSERT_NULL(b->rows[1].burst);
        ASSERT_EQ(b->rows[1].multiplexed_samples, 0);

        ASSERT_EQ(b->jobs[0].cpu_time_ns, 100000000000);
        ASSERT_EQ(b->jobs[0].cycles, 300000000000);
        ASSERT_EQ(b->jobs[0].events->count[l1], 1000);
        ASSERT_TRUE(b->jobs[0].energy_joules == 29900.5);
        ASSERT_TRUE(b->jobs[0].energy_alone_joules == 29000);

        ASSERT_NOT_NULL(b->node_type);
        ASSERT_STREQ(b->node_type->cpu_model, "Intel(R) Xeon(R) Platinum 8480+");
        ASSERT_EQ(b->node_type->sockets, 2);
        ASSERT_EQ(b->node_type->cores, 112);
        ASSERT_EQ(b->node_type->threads, 224);
        ASSERT_EQ(b->node_type->memory_bytes, 540623196160);
        ASSERT_EQ(b->node_type->n_gpus, 1);
        ASSERT_STREQ(b->node_type->gpus[0].name, "GH100 [H100 SXM5 80GB]");
        ASSERT_EQ(b->node_type->gpus[0].count, 4);
        ASSERT_STREQ(b->node_type->kernel, "6.1.0-18-amd64");

        ASSERT_NOT_NULL(b->energy);
        ASSERT_STREQ(b->energy->source, "powercap");
        ASSERT_TRUE(b->energy->joules == 30000.5);
        ASSERT_TRUE(b->energy->unattributed_joules == 100);
        ASSERT_EQ(b->energy->n_zones, 4);
        ASSERT_STREQ(b->energy->zones[1].zone, "package-0/dram");
        ASSERT_STREQ(b->energy->zones[1].kind, "dram");
        batch_free(b);

        /* all optional: without counters[], the roles come from the rows;
         * an unknown node type is nulls */
        b = parse_ok(MEASURED("", ",\"type\":{\"cpu_model\":null,\"sockets\":null,\"gpus\":[]}", "",
                              MJOB(",\"energy_joules\":null"),
                              MROW(",\"events\":{\"l1m\":5},\"burst\":{\"samples\":3,\"window_ns\":0,\"per_second\":{}}")));
        ASSERT_EQ(b->n_roles, 1);
        ASSERT_STREQ(b->roles[0], "l1m");
        ASSERT_EQ(b->rows[0].events->count[0], 5);
        ASSERT_NULL(b->node_type->cpu_model);
        ASSERT_EQ(b->node_type->sockets, BATCH_NULL);
        ASSERT_EQ(b->node_type->n_gpus, 0);
        ASSERT_NULL(b->energy);
        ASSERT_TRUE(isnan(b->jobs[0].energy_joules));
        ASSERT_NULL(b->jobs[0].events);
        batch_free(b);
}

TEST(measured_refused) {
#define BAD(c, t, e, j, r, field) \
        expect_error(MEASURED(c, t, e, j, r), strlen(MEASURED(c, t, e, j, r)), EINVAL, field)
        /* counters[] */
        BAD(",\"counters\":[{\"role\":\"a b\",\"event\":\"x\"}]", "", "", "", "", "counters[0].role");
        BAD(",\"counters\":[{\"role\":\"x\",\"event\":\"e\"},{\"role\":\"x\",\"event\":\"f\"}]", "", "", "", "",
            "counters[1].role");
        BAD(",\"counters\":[{\"role\":\"x\"}]", "", "", "", "", "counters[0].event");
        BAD(",\"counters\":[{\"role\":\"x\",\"event\":\"e\\u0001\"}]", "", "", "", "", "counters[0].event");
        expect_error(MEASURED(",\"counters\":[{},{},{},{},{},{},{},{},{}]", "", "", "", ""),
                     strlen(MEASURED(",\"counters\":[{},{},{},{},{},{},{},{},{}]", "", "", "", "")), E2BIG,
                     "counters");
        /* events */
        BAD("," COUNTERS, "", "", "", MROW(",\"events\":{\"other\":1}"), "rows[0].events");
        BAD("," COUNTERS, "", "", "", MROW(",\"events\":{\"cycles\":1}"), "rows[0].events");
        BAD("", "", "", "", MROW(",\"events\":{\"a\":1,\"b\":1,\"c\":1,\"d\":1,\"e\":1,\"f\":1,\"g\":1,\"h\":1,\"i\":1}"),
            "rows[0].events");
        BAD("", "", "", "", MROW(",\"events\":{\"a\":1}") "," MROW(",\"events\":{\"b\":1,\"c\":1,\"d\":1,\"e\":1,"
            "\"f\":1,\"g\":1,\"h\":1,\"i\":1}"), "rows[1].events");
        BAD("", "", "", "", MROW(",\"events\":{\"a\":-1}"), "rows[0].events");
        BAD("", "", "", "", MROW(",\"events\":{\"a\":1.5}"), "rows[0].events");
        BAD("", "", "", "", MROW(",\"events\":{\"a\":\"1\"}"), "rows[0].events");
        BAD("", "", "", "", MROW(",\"events\":[1]"), "rows[0].events");
        BAD("", "", "", "", MROW(",\"events\":{\"a:b\":1}"), "rows[0].events");
        /* 224 CPUs x 1e10 cycles/s x 64 events a cycle x 60 s x 2 is more than 2^53 */
        batch_free(parse_ok(MEASURED("", "", "", "", MROW(",\"events\":{\"a\":9007199254740992}"))));
        BAD("", "", "", "", MROW(",\"events\":{\"a\":9007199254740993}"), "rows[0].events");
        /* 4 CPUs x 1e10 x 64 x 10 s x 2 */
        batch_free(parse_ok(HEAD("4", "1795550410", "2") ",\"rows\":[" ROW(",\"events\":{\"a\":51200000000000}") "]}"));
        EXPECT_ERROR(HEAD("4", "1795550410", "2") ",\"rows\":[" ROW(",\"events\":{\"a\":51200000000001}") "]}",
                     EINVAL, "rows[0].events");
        BAD("", "", "", "", MROW(",\"multiplexed_samples\":101"), "rows[0].multiplexed_samples");
        BAD("," COUNTERS, "", "", MJOB(",\"events\":{\"nope\":1}"), "", "jobs[0].events");
        /* bursts */
        BAD("", "", "", "", MROW(",\"burst\":{\"samples\":0,\"window_ns\":0,\"per_second\":{}}"), "rows[0].burst.samples");
        BAD("", "", "", "", MROW(",\"burst\":{\"samples\":1,\"per_second\":{}}"), "rows[0].burst.window_ns");
        BAD("", "", "", "", MROW(",\"burst\":{\"samples\":1,\"window_ns\":1}"), "rows[0].burst.per_second");
        BAD("", "", "", "", MROW(",\"burst\":{\"samples\":1,\"window_ns\":1,\"per_second\":{\"c\":-1}}"),
            "rows[0].burst.per_second");
        BAD("", "", "", "", MROW(",\"burst\":{\"samples\":1,\"window_ns\":1,\"per_second\":{\"c\":1e300}}"),
            "rows[0].burst.per_second");
        BAD("", "", "", "", MROW(",\"burst\":{\"samples\":1,\"window_ns\":1,\"per_second\":{\"c\":\"x\"}}"),
            "rows[0].burst.per_second");
        BAD("," COUNTERS, "", "", "", MROW(",\"burst\":{\"samples\":1,\"window_ns\":1,\"per_second\":{\"c\":1}}"),
            "rows[0].burst.per_second");
        /* 224 CPUs x 1 Hz x 60 s x 2 x 3 */
        batch_free(parse_ok(MEASURED("", "", "", "", MROW(",\"burst\":{\"samples\":80640,\"window_ns\":0,\"per_second\":{}}"))));
        BAD("", "", "", "", MROW(",\"burst\":{\"samples\":80641,\"window_ns\":0,\"per_second\":{}}"), "rows[0].burst.samples");
        BAD("", "", "", "", MROW(",\"burst\":[]"), "rows[0].burst");
        /* node.type */
        BAD("", ",\"type\":[]", "", "", "", "node.type");
        BAD("", ",\"type\":{\"threads\":4,\"cores\":5}", "", "", "", "node.type.cores");
        BAD("", ",\"type\":{\"cores\":4,\"sockets\":5}", "", "", "", "node.type.sockets");
        BAD("", ",\"type\":{\"threads\":0}", "", "", "", "node.type.threads");
        BAD("", ",\"type\":{\"memory_bytes\":0}", "", "", "", "node.type.memory_bytes");
        BAD("", ",\"type\":{\"cpu_model\":\"\"}", "", "", "", "node.type.cpu_model");
        BAD("", ",\"type\":{\"cpu_model\":\"a\\nb\"}", "", "", "", "node.type.cpu_model");
        BAD("", ",\"type\":{\"kernel\":\"\\u0000\"}", "", "", "", "node.type.kernel");
        BAD("", ",\"type\":{\"gpus\":[{\"vendor\":\"NVIDIA\",\"vendor_id\":\"10DE\",\"count\":1}]}", "", "", "",
            "node.type.gpus[0].vendor_id");
        BAD("", ",\"type\":{\"gpus\":[{\"vendor\":\"NVIDIA\",\"vendor_id\":\"10de\",\"device_id\":\"xyzw\",\"count\":1}]}",
            "", "", "", "node.type.gpus[0].device_id");
        BAD("", ",\"type\":{\"gpus\":[{\"vendor\":\"NVIDIA\",\"vendor_id\":\"10de\",\"count\":0}]}", "", "", "",
            "node.type.gpus[0].count");
        BAD("", ",\"type\":{\"gpus\":[{\"vendor_id\":\"10de\",\"count\":1}]}", "", "", "", "node.type.gpus[0].vendor");
        BAD("", ",\"type\":{\"gpus\":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]}", "", "", "", "node.type.gpus");
        /* energy */
        BAD("", "", ",\"energy\":{\"joules\":1}", "", "", "energy.source");
        BAD("", "", ",\"energy\":{\"source\":\"powercap\"}", "", "", "energy.joules");
        BAD("", "", ",\"energy\":{\"source\":\"powercap\",\"joules\":-1}", "", "", "energy.joules");
        /* 100 kW x 60 s x 2 */
        batch_free(parse_ok(MEASURED("", "", ",\"energy\":{\"source\":\"p\",\"joules\":12000000}", "", "")));
        BAD("", "", ",\"energy\":{\"source\":\"p\",\"joules\":12000001}", "", "", "energy.joules");
        BAD("", "", ",\"energy\":{\"source\":\"p\",\"joules\":5,\"unattributed_joules\":6}", "", "",
            "energy.unattributed_joules");
        BAD("", "", ",\"energy\":{\"source\":\"p\",\"joules\":5,\"zones\":[{\"zone\":\"package-0\",\"kind\":\"package\","
            "\"joules\":4}]}", "", "", "energy.joules");
        BAD("", "", ",\"energy\":{\"source\":\"p\",\"joules\":5,\"zones\":[{\"zone\":\"package-0\",\"joules\":5}]}",
            "", "", "energy.zones[0].kind");
        BAD("", "", "", MJOB(",\"energy_joules\":5"), "", "jobs[0].energy_joules");
        BAD("", "", ",\"energy\":{\"source\":\"p\",\"joules\":5}", MJOB(",\"energy_joules\":4,\"energy_alone_joules\":4.5"),
            "", "jobs[0].energy_alone_joules");
        BAD("", "", ",\"energy\":{\"source\":\"p\",\"joules\":5}", MJOB(",\"energy_alone_joules\":4"), "",
            "jobs[0].energy_alone_joules");
        BAD("", "", ",\"energy\":{\"source\":\"p\",\"joules\":5}", MJOB(",\"energy_joules\":3") ","
            MJOB(",\"energy_joules\":3"), "", "jobs");
        batch_free(parse_ok(MEASURED("", "", ",\"energy\":{\"source\":\"p\",\"joules\":6}",
                                     MJOB(",\"energy_joules\":3") "," MJOB(",\"energy_joules\":3"), "")));
#undef BAD
}

#define SPOOL_BATCH(spool)                                                              \
        "{\"format\":\"lmk-batch\",\"version\":1,"                                       \
        "\"batch\":{\"node\":\"cn001\",\"boot_id\":\"b1\"" spool ",\"seq\":17},"        \
        "\"node\":{\"cpus\":48},"                                                        \
        "\"interval\":{\"start\":1795550400.0,\"end\":1795550460.0},"                   \
        "\"sampling\":{\"event\":\"cpu-clock\",\"frequency_hz\":1},\"rows\":[]}"

/* batch.spool, part of the batch's key: absent or null from an older lmkd,
 * else exactly 32 lower-case hex digits; and the digest of the text. */
TEST(spool_and_digest) {
        static const uint8_t empty_sha256[BATCH_DIGEST_SIZE] = {
                0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24,
                0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b, 0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55,
        };
        const char *a = SPOOL_BATCH(",\"spool\":\"0123456789abcdef0123456789abcdef\""),
                   *b = SPOOL_BATCH(",\"spool\":\"0123456789abcdef0123456789abcdee\"");
        uint8_t d[BATCH_DIGEST_SIZE];
        Batch *x, *y;

        batch_digest("", 0, d);
        ASSERT_TRUE(memcmp(d, empty_sha256, sizeof(d)) == 0);

        x = parse_ok(SPOOL_BATCH(""));
        ASSERT_NULL(x->spool);
        batch_free(x);
        x = parse_ok(SPOOL_BATCH(",\"spool\":null"));
        ASSERT_NULL(x->spool);
        batch_free(x);

        x = parse_ok(a);
        y = parse_ok(b);
        ASSERT_STREQ(x->spool, "0123456789abcdef0123456789abcdef");
        batch_digest(a, strlen(a), d);
        ASSERT_TRUE(memcmp(x->digest, d, sizeof(d)) == 0);
        /* one byte apart: other content */
        ASSERT_TRUE(memcmp(x->digest, y->digest, sizeof(d)) != 0);
        batch_free(x);
        batch_free(y);

        EXPECT_ERROR(SPOOL_BATCH(",\"spool\":\"0123456789ABCDEF0123456789abcdef\""), EINVAL, "batch.spool");
        EXPECT_ERROR(SPOOL_BATCH(",\"spool\":\"0123456789abcdef0123456789abcde\""), EINVAL, "batch.spool");
        EXPECT_ERROR(SPOOL_BATCH(",\"spool\":\"0123456789abcdef0123456789abcdef0\""), EINVAL, "batch.spool");
        EXPECT_ERROR(SPOOL_BATCH(",\"spool\":\"0123456789abcdef-123456789abcdef\""), EINVAL, "batch.spool");
        EXPECT_ERROR(SPOOL_BATCH(",\"spool\":\"\""), EINVAL, "batch.spool");
        EXPECT_ERROR(SPOOL_BATCH(",\"spool\":17"), EINVAL, "batch.spool");
}

/* Version 2: functions[] (docs/batch-format.md). A node of 4 CPUs at
 * 10 Hz for 60 s: at most 4800 samples per row. */
#define HEADER2(version)                                                                \
        "\"format\":\"lmk-batch\",\"version\":" version ","                             \
        "\"batch\":{\"node\":\"cn001\",\"boot_id\":\"b1\",\"seq\":17},"                 \
        "\"node\":{\"cpus\":4},"                                                        \
        "\"interval\":{\"start\":1795550400.0,\"end\":1795550460.0},"                   \
        "\"sampling\":{\"event\":\"cpu-clock\",\"frequency_hz\":10}"
#define FROW(job, step, object, kind, build_id, phase, samples)                                         \
        "{\"job\":" job ",\"step\":" step ",\"user\":\"alice\",\"comm\":\"app\",\"object\":\"" object    \
        "\",\"kind\":\"" kind "\",\"build_id\":" build_id ",\"phase\":\"" phase "\",\"samples\":" samples "}"
/* the rows every functions[] below refers to: the executable in two phases
 * (two rows of other commands in one), a library, the kernel, system work */
#define FROWS                                                                                   \
        "\"rows\":["                                                                            \
        FROW("\"7\"", "\"0\"", "/opt/app", "exe", "\"ab12\"", "solve", "60") ","               \
        FROW("\"7\"", "\"0\"", "/opt/app", "exe", "\"ab12\"", "solve", "40") ","               \
        FROW("\"7\"", "\"0\"", "/opt/app", "exe", "\"ab12\"", "", "10") ","                    \
        FROW("\"7\"", "\"0\"", "/lib/libm.so.6", "lib", "null", "solve", "30") ","             \
        FROW("\"7\"", "\"0\"", "[kernel]", "kernel", "null", "solve", "5") ","                 \
        FROW("null", "null", "/usr/sbin/sshd", "exe", "\"cd34\"", "", "3") "]"
#define FN(job, object, build_id, phase, what, samples)                                                \
        "{\"job\":" job ",\"step\":\"0\",\"object\":\"" object "\",\"build_id\":" build_id ",\"phase\":\"" \
        phase "\"," what ",\"samples\":" samples "}"
#define APP_FN(what, samples) FN("\"7\"", "/opt/app", "\"ab12\"", "solve", what, samples)
#define V2(functions) "{" HEADER2("2") "," FROWS ",\"functions\":[" functions "]}"

TEST(functions) {
        Batch *b = parse_ok(V2(APP_FN("\"function\":\"solve_kernel<double, 3>\",\"cycles\":1000,\"instructions\":2000", "70") ","
                               APP_FN("\"function\":null,\"offset\":135168", "20") ","
                               APP_FN("\"other\":true", "10") ","
                               FN("\"7\"", "/lib/libm.so.6", "null", "solve", "\"function\":\"__sin_fma\"", "30") ","
                               "{\"job\":null,\"step\":null,\"object\":\"/usr/sbin/sshd\",\"build_id\":\"cd34\","
                               "\"function\":\"main\",\"samples\":3}"));

        ASSERT_EQ(b->version, 2);
        ASSERT_EQ(b->n_functions, 5);
        ASSERT_STREQ(b->functions[0].function, "solve_kernel<double, 3>");
        ASSERT_EQ(b->functions[0].offset, BATCH_NULL);
        ASSERT_FALSE(b->functions[0].other);
        ASSERT_EQ(b->functions[0].samples, 70);
        ASSERT_EQ(b->functions[0].cycles, 1000);
        ASSERT_EQ(b->functions[0].instructions, 2000);
        ASSERT_EQ(b->functions[0].row, 0);      /* the first of its two rows */
        ASSERT_NULL(b->functions[1].function);
        ASSERT_EQ(b->functions[1].offset, 135168);
        ASSERT_EQ(b->functions[1].cycles, BATCH_NULL);
        ASSERT_TRUE(b->functions[2].other);
        ASSERT_EQ(b->functions[2].offset, BATCH_NULL);
        ASSERT_STREQ(b->functions[3].build_id, "");
        ASSERT_EQ(b->functions[3].row, 3);
        ASSERT_NULL(b->functions[4].job);
        ASSERT_STREQ(b->functions[4].step, "");
        ASSERT_STREQ(b->functions[4].phase, "");
        ASSERT_EQ(b->functions[4].row, 5);
        ASSERT_EQ(b->functions[0].kind, CODE_EXE);
        ASSERT_EQ(b->functions[3].kind, CODE_LIB);
        ASSERT_EQ(b->total_function_cycles, 1000);
        ASSERT_EQ(b->total_function_instructions, 2000);
        ASSERT_FALSE(b->functions[1].entry);
        batch_free(b);

        /* a function's start from the unwind table: any offset, with entry */
        b = parse_ok(V2(APP_FN("\"offset\":135175,\"entry\":true", "20") ","
                        APP_FN("\"offset\":0,\"entry\":true", "1") ","
                        APP_FN("\"offset\":8192,\"entry\":false", "2") ","
                        APP_FN("\"offset\":8192,\"entry\":true", "3")));
        ASSERT_EQ(b->functions[0].offset, 135175);
        ASSERT_TRUE(b->functions[0].entry);
        ASSERT_EQ(b->functions[1].offset, 0);
        ASSERT_TRUE(b->functions[1].entry);
        ASSERT_FALSE(b->functions[2].entry);
        ASSERT_TRUE(b->functions[3].entry);
        batch_free(b);

        /* none at all, or an empty list */
        b = parse_ok("{" HEADER2("2") "," FROWS "}");
        ASSERT_EQ(b->n_functions, 0);
        batch_free(b);
        b = parse_ok(V2(""));
        ASSERT_EQ(b->n_functions, 0);
        batch_free(b);
        /* version 1 knows no functions[]: an unknown member, even a broken one */
        b = parse_ok("{" HEADER2("1") "," FROWS ",\"functions\":[{\"bad\":1}]}");
        ASSERT_EQ(b->version, 1);
        ASSERT_EQ(b->n_functions, 0);
        batch_free(b);
}

/* An executable rebuilt in place during the interval: two builds of one
 * path, each function of its own build, and "other" over both, which
 * names none. Samples are held to the path's rows. */
#define REBUILT_ROWS                                                                            \
        "\"rows\":["                                                                            \
        FROW("\"7\"", "\"0\"", "/opt/app", "exe", "\"ab12\"", "solve", "60") ","               \
        FROW("\"7\"", "\"0\"", "/opt/app", "exe", "\"cd34\"", "solve", "40") "]"
#define REBUILT(functions) "{" HEADER2("2") "," REBUILT_ROWS ",\"functions\":[" functions "]}"

TEST(functions_rebuilt) {
        Batch *b = parse_ok(REBUILT(FN("\"7\"", "/opt/app", "\"cd34\"", "solve", "\"function\":\"g\"", "30") ","
                                    FN("\"7\"", "/opt/app", "\"ab12\"", "solve", "\"function\":\"f\"", "50") ","
                                    FN("\"7\"", "/opt/app", "null", "solve", "\"other\":true", "20")));

        ASSERT_EQ(b->functions[0].row, 1);
        ASSERT_EQ(b->functions[1].row, 0);
        ASSERT_STREQ(b->functions[2].build_id, "");
        ASSERT_EQ(b->functions[2].row, 0);
        ASSERT_EQ(b->functions[2].kind, CODE_EXE);
        batch_free(b);
        /* 50 + 30 + 21 > 60 + 40 */
        EXPECT_ERROR(REBUILT(FN("\"7\"", "/opt/app", "\"cd34\"", "solve", "\"function\":\"g\"", "30") ","
                             FN("\"7\"", "/opt/app", "\"ab12\"", "solve", "\"function\":\"f\"", "50") ","
                             FN("\"7\"", "/opt/app", "null", "solve", "\"other\":true", "21")),
                     EINVAL, "functions[2].samples");
        /* an unnamed offset needs its build */
        EXPECT_ERROR(REBUILT(FN("\"7\"", "/opt/app", "null", "solve", "\"offset\":0", "1")), EINVAL,
                     "functions[0].build_id");
}

TEST(functions_refused) {
        /* exactly one of a name, an offset, other */
        EXPECT_ERROR(V2(APP_FN("\"function\":null", "1")), EINVAL, "functions[0].function");
        EXPECT_ERROR(V2(APP_FN("\"other\":false", "1")), EINVAL, "functions[0].function");
        EXPECT_ERROR(V2(APP_FN("\"function\":\"f\",\"offset\":4096", "1")), EINVAL, "functions[0].offset");
        EXPECT_ERROR(V2(APP_FN("\"function\":\"f\",\"other\":true", "1")), EINVAL, "functions[0].other");
        EXPECT_ERROR(V2(APP_FN("\"offset\":4096,\"other\":true", "1")), EINVAL, "functions[0].offset");
        /* offsets: pages, within 2^53, with the build-id that names them */
        EXPECT_ERROR(V2(APP_FN("\"offset\":4097", "1")), EINVAL, "functions[0].offset");
        EXPECT_ERROR(V2(APP_FN("\"offset\":4097,\"entry\":false", "1")), EINVAL, "functions[0].offset");
        /* entry: a boolean, of an offset (so with its build-id) */
        EXPECT_ERROR(V2(APP_FN("\"offset\":4097,\"entry\":1", "1")), EINVAL, "functions[0].entry");
        EXPECT_ERROR(V2(APP_FN("\"offset\":4097,\"entry\":\"true\"", "1")), EINVAL, "functions[0].entry");
        EXPECT_ERROR(V2(APP_FN("\"function\":\"f\",\"entry\":true", "1")), EINVAL, "functions[0].entry");
        EXPECT_ERROR(V2(APP_FN("\"other\":true,\"entry\":true", "1")), EINVAL, "functions[0].entry");
        EXPECT_ERROR(V2(APP_FN("\"offset\":null,\"entry\":true", "1")), EINVAL, "functions[0].entry");
        EXPECT_ERROR(V2(APP_FN("\"offset\":-1,\"entry\":true", "1")), EINVAL, "functions[0].offset");
        EXPECT_ERROR(V2(APP_FN("\"offset\":9007199254740993,\"entry\":true", "1")), EINVAL, "functions[0].offset");
        EXPECT_ERROR(V2(FN("\"7\"", "/lib/libm.so.6", "null", "solve", "\"offset\":4097,\"entry\":true", "1")),
                     EINVAL, "functions[0].build_id");
        EXPECT_ERROR(V2(APP_FN("\"offset\":-4096", "1")), EINVAL, "functions[0].offset");
        EXPECT_ERROR(V2(APP_FN("\"offset\":9007199254745088", "1")), EINVAL, "functions[0].offset");
        EXPECT_ERROR(V2(APP_FN("\"offset\":4096.0", "1")), EINVAL, "functions[0].offset");
        EXPECT_ERROR(V2(FN("\"7\"", "/lib/libm.so.6", "null", "solve", "\"offset\":4096", "1")), EINVAL,
                     "functions[0].build_id");
        /* names: 1-1024 bytes of UTF-8 without control characters */
        EXPECT_ERROR(V2(APP_FN("\"function\":\"\"", "1")), EINVAL, "functions[0].function");
        EXPECT_ERROR(V2(APP_FN("\"function\":\"a\\nb\"", "1")), EINVAL, "functions[0].function");
        EXPECT_ERROR(V2(APP_FN("\"function\":\"a\\u0000b\"", "1")), EINVAL, "functions[0].function");
        EXPECT_ERROR(V2(APP_FN("\"function\":\"\xc0\xaf\"", "1")), EINVAL, "functions[0].function");
        EXPECT_ERROR(V2(APP_FN("\"function\":7", "1")), EINVAL, "functions[0].function");
        EXPECT_ERROR(V2(APP_FN("\"other\":1", "1")), EINVAL, "functions[0].other");
        {
                char name[1026], buf[4096];

                memset(name, 'f', 1025);
                name[1025] = '\0';
                snprintf(buf, sizeof(buf), V2(APP_FN("\"function\":\"%s\"", "1")), name);
                expect_error(buf, strlen(buf), EINVAL, "functions[0].function");
                name[1024] = '\0';
                snprintf(buf, sizeof(buf), V2(APP_FN("\"function\":\"%s\"", "1")), name);
                batch_free(parse_ok(buf));
        }
        /* each breaks down samples of rows[]: its key must be there ... */
        EXPECT_ERROR(V2(FN("\"8\"", "/opt/app", "\"ab12\"", "solve", "\"function\":\"f\"", "1")), EINVAL,
                     "functions[0]");
        EXPECT_ERROR(V2(FN("\"7\"", "/opt/app", "\"ab13\"", "solve", "\"function\":\"f\"", "1")), EINVAL,
                     "functions[0].build_id");
        EXPECT_ERROR(V2(FN("\"7\"", "/opt/app", "\"ab12\"", "init", "\"function\":\"f\"", "1")), EINVAL,
                     "functions[0]");
        EXPECT_ERROR(V2(FN("null", "/opt/app", "\"ab12\"", "solve", "\"function\":\"f\"", "1")), EINVAL,
                     "functions[0]");
        EXPECT_ERROR(V2("{\"job\":\"7\",\"step\":\"1\",\"object\":\"/opt/app\",\"build_id\":\"ab12\","
                        "\"phase\":\"solve\",\"function\":\"f\",\"samples\":1}"), EINVAL, "functions[0]");
        /* ... of an executable or a library ... */
        EXPECT_ERROR(V2(FN("\"7\"", "[kernel]", "null", "solve", "\"function\":\"schedule\"", "1")), EINVAL,
                     "functions[0].object");
        /* ... and its functions hold at most its rows' samples (100 of two rows) */
        batch_free(parse_ok(V2(APP_FN("\"function\":\"f\"", "60") "," APP_FN("\"other\":true", "40"))));
        EXPECT_ERROR(V2(APP_FN("\"function\":\"f\"", "60") "," APP_FN("\"other\":true", "41")), EINVAL,
                     "functions[1].samples");
        EXPECT_ERROR(V2(FN("\"7\"", "/opt/app", "\"ab12\"", "", "\"function\":\"f\"", "11")), EINVAL,
                     "functions[0].samples");
        /* counters as in rows: within the per-row maxima (2 x 4 CPUs x 60 s x 10 Hz samples) */
        EXPECT_ERROR(V2(APP_FN("\"function\":\"f\"", "4801")), EINVAL, "functions[0].samples");
        EXPECT_ERROR(V2(APP_FN("\"function\":\"f\"", "-1")), EINVAL, "functions[0].samples");
        EXPECT_ERROR(V2(APP_FN("\"function\":\"f\",\"cycles\":-1", "1")), EINVAL, "functions[0].cycles");
        EXPECT_ERROR(V2(APP_FN("\"function\":\"f\",\"cycles\":4800000000001", "1")), EINVAL, "functions[0].cycles");
        EXPECT_ERROR(V2(APP_FN("\"function\":\"f\",\"instructions\":1.5", "1")), EINVAL,
                     "functions[0].instructions");
        EXPECT_ERROR(V2(APP_FN("\"function\":\"f\",\"events\":{\"cycles\":1}", "1")), EINVAL, "functions[0].events");
        EXPECT_ERROR(V2(APP_FN("\"function\":\"f\",\"events\":[]", "1")), EINVAL, "functions[0].events");
        EXPECT_ERROR("{" HEADER2("2") "," FROWS ",\"functions\":{}}", EINVAL, "functions");
        EXPECT_ERROR(V2("1"), EINVAL, "functions[0]");
        EXPECT_ERROR(V2("{\"job\":\"7\",\"function\":\"f\",\"samples\":1}"), EINVAL, "functions[0].object");
        EXPECT_ERROR(V2(APP_FN("\"function\":\"f\"", "null")), EINVAL, "functions[0].samples");
}

/* Version 3: an entry names its rows[] entry by index and takes its (job,
 * step, object, phase) and build from it, or no build with build_id null
 * (an "other" over several builds). What version 2 spells out is parsed
 * to the same entries. */
#define V3(functions) "{" HEADER2("3") "," FROWS ",\"functions\":[" functions "]}"
#define RFN(row, what, samples) "{\"row\":" row "," what ",\"samples\":" samples "}"

static void assert_same_functions(const Batch *x, const Batch *y) {
        ASSERT_EQ(x->n_functions, y->n_functions);
        for (size_t i = 0; i < x->n_functions; i++) {
                const BatchFunction *f = &x->functions[i], *g = &y->functions[i];

                ASSERT_EQ(strcmp_null(f->job, g->job), 0);
                ASSERT_STREQ(f->step, g->step);
                ASSERT_STREQ(f->object, g->object);
                ASSERT_STREQ(f->build_id, g->build_id);
                ASSERT_STREQ(f->phase, g->phase);
                ASSERT_EQ(strcmp_null(f->function, g->function), 0);
                ASSERT_EQ(f->offset, g->offset);
                ASSERT_EQ(f->entry, g->entry);
                ASSERT_EQ(f->other, g->other);
                ASSERT_EQ(f->samples, g->samples);
                ASSERT_EQ(f->cycles, g->cycles);
                ASSERT_EQ(f->instructions, g->instructions);
                ASSERT_EQ(f->row, g->row);
                ASSERT_EQ(f->kind, g->kind);
        }
}

TEST(functions_v3) {
        Batch *v2 = parse_ok(V2(APP_FN("\"function\":\"solve_kernel<double, 3>\",\"cycles\":1000", "70") ","
                                APP_FN("\"offset\":135175,\"entry\":true", "20") ","
                                FN("\"7\"", "/opt/app", "null", "solve", "\"other\":true", "10") ","
                                FN("\"7\"", "/lib/libm.so.6", "null", "solve", "\"function\":\"__sin_fma\"", "30") ","
                                "{\"job\":null,\"step\":null,\"object\":\"/usr/sbin/sshd\",\"build_id\":\"cd34\","
                                "\"function\":\"main\",\"samples\":3}"));
        /* the second row of the group names it as well as the first */
        Batch *v3 = parse_ok(V3(RFN("1", "\"function\":\"solve_kernel<double, 3>\",\"cycles\":1000", "70") ","
                                RFN("0", "\"offset\":135175,\"entry\":true", "20") ","
                                RFN("1", "\"build_id\":null,\"other\":true", "10") ","
                                RFN("3", "\"function\":\"__sin_fma\"", "30") ","
                                RFN("5", "\"function\":\"main\"", "3")));

        ASSERT_EQ(v3->version, 3);
        ASSERT_EQ(v3->functions[0].row, 0);
        ASSERT_STREQ(v3->functions[0].build_id, "ab12");
        ASSERT_STREQ(v3->functions[2].build_id, "");
        assert_same_functions(v2, v3);
        batch_free(v2);
        batch_free(v3);

        /* the rows' rules hold: kind, samples, build for an offset */
        EXPECT_ERROR(V3(RFN("4", "\"function\":\"schedule\"", "1")), EINVAL, "functions[0].object");
        EXPECT_ERROR(V3(RFN("0", "\"function\":\"f\"", "60") "," RFN("1", "\"other\":true", "41")), EINVAL,
                     "functions[1].samples");
        EXPECT_ERROR(V3(RFN("3", "\"offset\":4096", "1")), EINVAL, "functions[0].build_id");
        EXPECT_ERROR(V3(RFN("0", "\"build_id\":null,\"offset\":4096", "1")), EINVAL, "functions[0].build_id");
        /* row: an index of rows[] */
        EXPECT_ERROR(V3(RFN("6", "\"function\":\"f\"", "1")), EINVAL, "functions[0].row");
        EXPECT_ERROR(V3(RFN("-1", "\"function\":\"f\"", "1")), EINVAL, "functions[0].row");
        EXPECT_ERROR(V3(RFN("0.5", "\"function\":\"f\"", "1")), EINVAL, "functions[0].row");
        EXPECT_ERROR(V3(RFN("\"0\"", "\"function\":\"f\"", "1")), EINVAL, "functions[0].row");
        EXPECT_ERROR(V3(RFN("null", "\"function\":\"f\"", "1")), EINVAL, "functions[0].row");
        EXPECT_ERROR(V3("{\"function\":\"f\",\"samples\":1}"), EINVAL, "functions[0].row");
        EXPECT_ERROR("{" HEADER2("3") ",\"rows\":[],\"functions\":[" RFN("0", "\"function\":\"f\"", "1") "]}",
                     EINVAL, "functions[0].row");
        /* one way to say it: not the row's strings as well, no other build */
        EXPECT_ERROR(V3(RFN("0", "\"job\":\"7\",\"function\":\"f\"", "1")), EINVAL, "functions[0].job");
        EXPECT_ERROR(V3(RFN("0", "\"step\":null,\"function\":\"f\"", "1")), EINVAL, "functions[0].step");
        EXPECT_ERROR(V3(RFN("0", "\"object\":\"/opt/app\",\"function\":\"f\"", "1")), EINVAL,
                     "functions[0].object");
        EXPECT_ERROR(V3(RFN("0", "\"phase\":\"solve\",\"function\":\"f\"", "1")), EINVAL, "functions[0].phase");
        EXPECT_ERROR(V3(RFN("0", "\"build_id\":\"ab12\",\"function\":\"f\"", "1")), EINVAL,
                     "functions[0].build_id");
        /* and version 2 may not name a row */
        EXPECT_ERROR(V2("{\"row\":0,\"job\":\"7\",\"step\":\"0\",\"object\":\"/opt/app\",\"phase\":\"solve\","
                        "\"function\":\"f\",\"samples\":1}"), EINVAL, "functions[0].row");
}

/* The functions' counters add up within an int64, each at most the per-row
 * maximum: a node of 2^20 CPUs for two days has a maximum near 2^53. */
TEST(functions_sums) {
        static const char head[] =
                "{\"format\":\"lmk-batch\",\"version\":2,\"batch\":{\"node\":\"n\",\"boot_id\":\"b\",\"seq\":1},"
                "\"node\":{\"cpus\":1048576},\"interval\":{\"start\":1795550400,\"end\":1795723200},"
                "\"sampling\":{\"event\":\"cpu-clock\",\"frequency_hz\":1},\"rows\":[{\"job\":\"1\",\"object\":\"/a\","
                "\"kind\":\"exe\",\"samples\":1}],\"functions\":[";
        static const char fn[] = "{\"job\":\"1\",\"object\":\"/a\",\"other\":true,\"samples\":0,"
                                 "\"cycles\":9007199254740992},";
        size_t n = 1025;
        char *s = malloc(sizeof(head) + n * sizeof(fn) + 8), *p;

        ASSERT_NOT_NULL(s);
        p = stpcpy(s, head);
        for (size_t i = 0; i < n; i++)
                p = stpcpy(p, fn);
        strcpy(p - 1, "]}");
        /* 1024 x 2^53 = 2^63 is one too many */
        EXPECT_ERROR(s, EINVAL, "functions[1023].cycles");
        free(s);
}

TEST(too_many_functions) {
        static const char fn[] = "{\"job\":\"7\",\"object\":\"/opt/app\",\"build_id\":\"ab12\",\"phase\":\"solve\","
                                 "\"other\":true,\"step\":\"0\",\"samples\":0},";
        size_t n = BATCH_MAX_FUNCTIONS + 1;
        char *s = malloc(n * (sizeof(fn) - 1) + 4096), *p;
        Batch *b;

        ASSERT_NOT_NULL(s);
        p = stpcpy(s, "{" HEADER2("2") "," FROWS ",\"functions\":[");
        for (size_t i = 0; i < n; i++)
                p = stpcpy(p, fn);
        strcpy(p - 1, "]}");
        EXPECT_ERROR(s, E2BIG, "functions");
        /* one fewer is taken */
        strcpy(p - sizeof(fn), "]}");
        b = parse_ok(s);
        ASSERT_EQ(b->n_functions, BATCH_MAX_FUNCTIONS);
        batch_free(b);
        free(s);
}

/* json_object_bind() looks for a key from the name after the last match
 * on, then from the start: each member finds its name whatever the order,
 * with names left out and unknown members between them. */
TEST(json_bind_orders) {
        static const char *const names[] = { "a", "b", "c", "d", "e" };
        static const struct {
                const char *json;
                int want[5];    /* the value bound to each name, 0: none */
        } cases[] = {
                { "{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5}", { 1, 2, 3, 4, 5 } },
                { "{\"e\":5,\"d\":4,\"c\":3,\"b\":2,\"a\":1}", { 1, 2, 3, 4, 5 } },
                { "{\"a\":1,\"c\":3,\"e\":5}", { 1, 0, 3, 0, 5 } },
                { "{\"d\":4,\"x\":9,\"b\":2,\"e\":5,\"a\":1}", { 1, 2, 0, 4, 5 } },
                { "{\"c\":3,\"a\":1,\"b\":2}", { 1, 2, 3, 0, 0 } },
                { "{\"x\":9,\"y\":8}", { 0, 0, 0, 0, 0 } },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                Arena *arena = arena_new(4096);
                const JsonValue *o, *v[ELEMENTSOF(names)];
                JsonError err;

                ASSERT_TRUE(arena);
                ASSERT_OK(json_parse(arena, cases[i].json, strlen(cases[i].json), 8, &o, &err));
                json_object_bind(o, names, ELEMENTSOF(names), v);
                for (size_t k = 0; k < ELEMENTSOF(names); k++) {
                        if (cases[i].want[k] == 0)
                                ASSERT_NULL(v[k]);
                        else {
                                ASSERT_TRUE(v[k]);
                                ASSERT_EQ((int) json_number(v[k]), cases[i].want[k]);
                        }
                }
                arena_free(arena);
        }
}

int main(void) {
        RUN(json_bind_orders);
        RUN(utf8_every_string);
        RUN(control_in_identifiers);
        RUN(limits);
        RUN(batch_sums);
        RUN(allocation_and_installed);
        RUN(opted_out);
        RUN(good);
        RUN(measured);
        RUN(measured_refused);
        RUN(minimal);
        RUN(not_json);
        RUN(strict_json);
        RUN(embedded_nul);
        RUN(version);
        RUN(missing);
        RUN(types);
        RUN(ranges);
        RUN(oversized_strings);
        RUN(too_many_rows);
        RUN(ranks);
        RUN(too_many_ranks);
        RUN(sql_is_data);
        RUN(spool_and_digest);
        RUN(functions);
        RUN(functions_rebuilt);
        RUN(functions_refused);
        RUN(functions_v3);
        RUN(functions_sums);
        RUN(too_many_functions);
        return 0;
}
