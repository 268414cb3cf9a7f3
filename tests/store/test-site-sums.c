/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The site's function sums of a batch, packed for function_sums_pending
 * (store/db/sql/site-sums.h): what goes in comes out, in key order; what
 * is not a whole value of this version is refused with -EBADMSG, never
 * read past its end; summing rows adds each key once, with names matched
 * across rows, and refuses a row whose sums would pass int64 without
 * changing anything. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "db/sql/site-sums.h"
#include "db/storage.h"
#include "tests.h"

#define DAY (20000 * INT64_C(86400))

static const size_t room[_SITE_PARTS] = { 8, 8, 8, 8, 8, 8 };

static void add(SiteSums *s, SitePart p, int64_t a, int64_t b, int64_t c, int64_t samples, double cpu,
                int64_t cycles, int64_t instructions, int64_t jobs) {
        BatchFunction f = { .samples = samples, .cycles = cycles, .instructions = instructions };
        Acc *x;

        ASSERT_OK(acc_add_function(&s->parts[p], a, b, c, &f, cpu, &x));
        x->jobs += jobs;
}

/* A batch's sums, keys added out of order. */
static void batch(SiteSums *s, const char *user, const char *app, int64_t samples) {
        int64_t u, a;

        ASSERT_OK(site_sums_init(s, DAY, room, 4));
        ASSERT_OK(site_sums_name(s, app, &a));
        ASSERT_OK(site_sums_name(s, user, &u));
        add(s, SITE_KEY, 900, 3, 0, samples, 0.5, 1000, STORAGE_NULL, 1);
        add(s, SITE_KEY, 7, 3, 2, 2 * samples, 1.25, STORAGE_NULL, STORAGE_NULL, 0);
        add(s, SITE_FUNCTION, 900, 0, 0, samples, 0.5, 1000, STORAGE_NULL, 1);
        add(s, SITE_FUNCTION, 7, 0, 0, 2 * samples, 1.25, STORAGE_NULL, STORAGE_NULL, 0);
        add(s, SITE_SCOPE, 3, 2, 0, 5 * samples, 3.0, STORAGE_NULL, STORAGE_NULL, 0);
        add(s, SITE_TOTAL, 0, 0, 0, 5 * samples, 3.0, STORAGE_NULL, STORAGE_NULL, 0);
        add(s, SITE_USER, 900, u, 0, samples, 0, STORAGE_NULL, STORAGE_NULL, 0);
        add(s, SITE_APP, 7, a, 0, 2 * samples, 0, STORAGE_NULL, STORAGE_NULL, 0);
        add(s, SITE_APP, 900, a, 0, samples, 0, STORAGE_NULL, STORAGE_NULL, 0);
}

static void encode(const SiteSums *s, uint8_t **p, size_t *len) {
        ASSERT_OK(site_sums_encode(s, p, len));
        ASSERT_TRUE(*len > 1);
}

TEST(round_trip) {
        _cleanup_(site_sums_done) SiteSums s = {};
        _cleanup_(site_sums_row_done) SiteSumsRow row = {};
        _cleanup_free_ uint8_t *p = NULL;
        const Acc *x;
        size_t len, n;

        batch(&s, "alice", "solver", 10);
        encode(&s, &p, &len);
        ASSERT_OK(site_sums_decode(p, len, &row));
        ASSERT_EQ(row.day, DAY);
        ASSERT_EQ(row.n_names, 2);
        ASSERT_STREQ(row.names[0], "solver");
        ASSERT_STREQ(row.names[1], "alice");
        x = site_sums_row_part(&row, SITE_KEY, &n);
        ASSERT_EQ(n, 2);
        /* in key order, whatever the order they were added in */
        ASSERT_EQ(x[0].a, 7);
        ASSERT_EQ(x[0].c, 2);
        ASSERT_EQ(x[0].samples, 20);
        ASSERT_TRUE(x[0].cpu_seconds == 1.25);
        ASSERT_EQ(x[0].cycles, STORAGE_NULL);
        ASSERT_EQ(x[0].jobs, 0);
        ASSERT_EQ(x[1].a, 900);
        ASSERT_EQ(x[1].cycles, 1000);
        ASSERT_EQ(x[1].instructions, STORAGE_NULL);
        ASSERT_EQ(x[1].jobs, 1);
        x = site_sums_row_part(&row, SITE_TOTAL, &n);
        ASSERT_EQ(n, 1);
        ASSERT_EQ(x[0].samples, 50);
        ASSERT_TRUE(x[0].cpu_seconds == 3.0);
        x = site_sums_row_part(&row, SITE_USER, &n);
        ASSERT_EQ(n, 1);
        ASSERT_EQ(x[0].b, 1);
        x = site_sums_row_part(&row, SITE_APP, &n);
        ASSERT_EQ(n, 2);
        ASSERT_EQ(x[1].a, 900);
        ASSERT_EQ(x[1].samples, 10);
}

TEST(empty) {
        static const size_t none[_SITE_PARTS] = {};
        _cleanup_(site_sums_done) SiteSums s = {};
        _cleanup_(site_sums_row_done) SiteSumsRow row = {};
        _cleanup_free_ uint8_t *p = NULL;
        size_t len;

        ASSERT_OK(site_sums_init(&s, 0, none, 0));
        ASSERT_OK(site_sums_encode(&s, &p, &len));
        ASSERT_OK(site_sums_decode(p, len, &row));
        for (SitePart k = 0; k < _SITE_PARTS; k++)
                ASSERT_EQ(row.n[k], 0);
}

/* Every cut of a value, every byte of it changed to each of a few values,
 * and bytes past its end: -EBADMSG, or (a change that still makes a
 * value) a decoded row; never a crash or a read past the end (ASan). */
TEST(damaged) {
        static const uint8_t values[] = { 0x00, 0x01, 0x7f, 0x80, 0xff };
        _cleanup_(site_sums_done) SiteSums s = {};
        _cleanup_free_ uint8_t *p = NULL, *longer = NULL;
        SiteSumsRow row;
        size_t len;

        batch(&s, "alice", "solver", 10);
        encode(&s, &p, &len);
        for (size_t cut = 0; cut < len; cut++) {
                uint8_t *copy = malloc(MAX(cut, (size_t) 1));

                ASSERT_NOT_NULL(copy);
                memcpy(copy, p, cut);
                ASSERT_EQ(site_sums_decode(copy, cut, &row), -EBADMSG);
                ASSERT_NULL(row.items);
                ASSERT_NULL(row.names);
                free(copy);
        }
        for (size_t i = 0; i < len; i++)
                for (size_t v = 0; v < ELEMENTSOF(values); v++) {
                        uint8_t old = p[i];
                        int r;

                        p[i] = values[v];
                        r = site_sums_decode(p, len, &row);
                        ASSERT_TRUE(r == 0 || r == -EBADMSG);
                        site_sums_row_done(&row);
                        p[i] = old;
                }
        longer = malloc(len + 1);
        ASSERT_NOT_NULL(longer);
        memcpy(longer, p, len);
        longer[len] = 0;
        ASSERT_EQ(site_sums_decode(longer, len + 1, &row), -EBADMSG);
        /* another version */
        p[0] = SITE_SUMS_VERSION + 1;
        ASSERT_EQ(site_sums_decode(p, len, &row), -EBADMSG);
}

/* Hand-made values the decoder must refuse: a name index past the names,
 * keys out of order, a CPU time that is not finite, a day off midnight. */
TEST(refused) {
        /* version, day 0, no names, FUNCTION: 0 entries, KEY 0, SCOPE 0,
         * TOTAL 0, USER: 1 entry (function 1, name 0 of none, samples 1),
         * APP 0 */
        static const uint8_t bad_name[] = { 1, 0, 0, 0, 0, 0, 0, 1, 1, 0, 1, 0 };
        /* FUNCTION: two entries, function 5 then 5 again */
        static const uint8_t twice[] = { 1, 0, 0, 2,
                                         5, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                         5, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                         0, 0, 0, 0, 0 };
        /* TOTAL: one entry, CPU seconds +Inf */
        static const uint8_t infinite[] = { 1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0xf0, 0x7f, 0, 0 };
        /* day 1 */
        static const uint8_t off_midnight[] = { 1, 1, 0, 0, 0, 0, 0, 0, 0 };
        /* the same as off_midnight, with day 0: a value */
        static const uint8_t fine[] = { 1, 0, 0, 0, 0, 0, 0, 0, 0 };
        SiteSumsRow row;

        ASSERT_EQ(site_sums_decode(bad_name, sizeof(bad_name), &row), -EBADMSG);
        ASSERT_EQ(site_sums_decode(twice, sizeof(twice), &row), -EBADMSG);
        ASSERT_EQ(site_sums_decode(infinite, sizeof(infinite), &row), -EBADMSG);
        ASSERT_EQ(site_sums_decode(off_midnight, sizeof(off_midnight), &row), -EBADMSG);
        ASSERT_OK(site_sums_decode(fine, sizeof(fine), &row));
        site_sums_row_done(&row);
}

static void decode_batch(const char *user, const char *app, int64_t samples, SiteSumsRow *ret) {
        _cleanup_(site_sums_done) SiteSums s = {};
        _cleanup_free_ uint8_t *p = NULL;
        size_t len;

        batch(&s, user, app, samples);
        encode(&s, &p, &len);
        ASSERT_OK(site_sums_decode(p, len, ret));
}

TEST(sum) {
        _cleanup_(site_sums_done) SiteSums sum = {};
        SiteSumsRow one, two, huge;
        const Acc *x;
        int64_t i;

        decode_batch("alice", "solver", 10, &one);
        /* another user: names differ in the two rows' order */
        decode_batch("bob", "solver", 1, &two);
        ASSERT_OK(site_sums_init(&sum, DAY, room, 4));
        ASSERT_OK(site_sums_add(&sum, &one));
        ASSERT_OK(site_sums_add(&sum, &two));
        ASSERT_EQ(sum.parts[SITE_KEY].n, 2);
        x = acc_find(&sum.parts[SITE_KEY], 900, 3, 0);
        ASSERT_NOT_NULL(x);
        ASSERT_EQ(x->samples, 11);
        ASSERT_EQ(x->jobs, 2);
        ASSERT_EQ(x->cycles, 2000);
        ASSERT_EQ(x->instructions, STORAGE_NULL);
        ASSERT_TRUE(x->cpu_seconds == 1.0);
        x = acc_find(&sum.parts[SITE_TOTAL], 0, 0, 0);
        ASSERT_EQ(x->samples, 55);
        ASSERT_EQ(sum.n_names, 3);
        ASSERT_OK(site_sums_name(&sum, "bob", &i));
        ASSERT_EQ(acc_find(&sum.parts[SITE_USER], 900, i, 0)->samples, 1);
        ASSERT_OK(site_sums_name(&sum, "alice", &i));
        ASSERT_EQ(acc_find(&sum.parts[SITE_USER], 900, i, 0)->samples, 10);
        ASSERT_OK(site_sums_name(&sum, "solver", &i));
        ASSERT_EQ(acc_find(&sum.parts[SITE_APP], 7, i, 0)->samples, 22);

        /* a row whose samples would take a sum past int64: refused whole */
        decode_batch("alice", "solver", INT64_MAX / 5, &huge);
        ASSERT_EQ(site_sums_add(&sum, &huge), -EOVERFLOW);
        ASSERT_EQ(acc_find(&sum.parts[SITE_KEY], 900, 3, 0)->samples, 11);
        ASSERT_EQ(acc_find(&sum.parts[SITE_FUNCTION], 900, 0, 0)->samples, 11);
        ASSERT_EQ(acc_find(&sum.parts[SITE_TOTAL], 0, 0, 0)->samples, 55);
        site_sums_row_done(&one);
        site_sums_row_done(&two);
        site_sums_row_done(&huge);
}

int main(void) {
        RUN(round_trip);
        RUN(empty);
        RUN(damaged);
        RUN(refused);
        RUN(sum);
        return 0;
}
