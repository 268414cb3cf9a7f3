/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Two runs paired item by item (store/analysis/compare.h), on summaries
 * written out here: which items pair, which sides are unknown, the order,
 * and the verdict on a phase of twice the time beside one unchanged. */
#include <math.h>

#include "analysis/compare.h"
#include "tests.h"

#define HZ 10.0

static Share share(const char *name, const char *kind, int64_t samples) {
        return (Share) {
                .name = (char *) name,
                .kind = (char *) kind,
                .samples = samples,
                .cpu_seconds = (double) samples / HZ,
                .cycles = STORAGE_NULL,
                .instructions = STORAGE_NULL,
        };
}

static FunctionShare function(const char *object, const char *name, int64_t offset, bool other,
                              int64_t samples) {
        return (FunctionShare) {
                .object = (char *) object,
                .kind = (char *) "exe",
                .name = (char *) name,
                .offset = offset,
                .other = other,
                .samples = samples,
                .cpu_seconds = (double) samples / HZ,
                .cycles = STORAGE_NULL,
                .instructions = STORAGE_NULL,
        };
}

static void set_total(JobSummary *js, int64_t samples) {
        js->info.samples = samples;
        js->info.cpu_seconds = (double) samples / HZ;
}

static const CompareRow *find(const CompareRows *rows, const char *dimension, const char *name,
                              const char *object, int64_t offset) {
        for (size_t i = 0; i < rows->n; i++) {
                const CompareRow *x = &rows->items[i];

                if (streq(x->dimension->name, dimension) &&
                    (name ? x->id.name && streq(x->id.name, name) : !x->id.name) &&
                    (object ? x->id.object && streq(x->id.object, object) : !x->id.object) &&
                    x->id.offset == offset)
                        return x;
        }
        test_fail("no %s row %s (%s, %" PRId64 ")", dimension, name ?: "(null)", object ?: "-", offset);
}

static size_t count(const CompareRows *rows, const char *dimension) {
        size_t n = 0;

        for (size_t i = 0; i < rows->n; i++)
                n += streq(rows->items[i].dimension->name, dimension);
        return n;
}

/* A: solve 4000, io 2000, unmarked 2000 samples; B: the same with io
 * twice as long. */
TEST(doubled_phase) {
        Share pa[] = { share("timestep/solve", NULL, 4000), share("timestep/io", NULL, 2000), share("", NULL, 2000) };
        Share pb[] = { share("timestep/solve", NULL, 4000), share("timestep/io", NULL, 4000), share("", NULL, 2000) };
        JobSummary a = { .phases = { pa, ELEMENTSOF(pa) } }, b = { .phases = { pb, ELEMENTSOF(pb) } };
        CompareRows rows = {};
        const CompareRow *io, *solve;

        set_total(&a, 8000);
        set_total(&b, 10000);
        ASSERT_OK(compare_runs(&a, &b, &rows));
        ASSERT_EQ(count(&rows, "phase"), 3);
        io = find(&rows, "phase", "timestep/io", NULL, STORAGE_NULL);
        solve = find(&rows, "phase", "timestep/solve", NULL, STORAGE_NULL);
        ASSERT_TRUE(io->a.known && io->b.known);
        ASSERT_TRUE(fabs(io->cpu_ratio.value - 2) < 1e-9);
        ASSERT_TRUE(io->cpu_ratio.low < 2 && io->cpu_ratio.high > 2 && io->cpu_ratio.low > 1.8);
        ASSERT_TRUE(fabs(io->cpu_difference.value - 200) < 1e-9);
        ASSERT_TRUE(estimate_excludes(io->cpu_difference, 0));
        /* the same time is no difference, though a smaller share of B */
        ASSERT_TRUE(fabs(solve->cpu_difference.value) < 1e-9);
        ASSERT_FALSE(estimate_excludes(solve->cpu_difference, 0));
        ASSERT_TRUE(estimate_excludes(solve->share_difference, 0));
        ASSERT_TRUE(solve->cpu_ratio.low < 1 && solve->cpu_ratio.high > 1);
        /* each side's CPU time interval is its share's, in its run's time */
        ASSERT_TRUE(io->a.cpu_seconds.low < 200 && io->a.cpu_seconds.high > 200);
        ASSERT_TRUE(fabs(io->b.cpu_seconds.high - 400 - (io->b.share.high - 0.4) * 1000) < 1e-9);
        /* the largest first: solve and io (400 s in B) before unmarked, by name between them */
        ASSERT_STREQ(rows.items[0].id.name, "timestep/io");
        ASSERT_STREQ(rows.items[1].id.name, "timestep/solve");
        ASSERT_STREQ(rows.items[2].id.name, "");
        compare_rows_free(&rows);
        ASSERT_EQ(rows.n, 0);
}

/* Items in one run only; an item neither run sampled; a truncated list. */
TEST(one_sided) {
        Share ka[] = { share("exe", NULL, 90), share("idle", NULL, 10) };
        Share kb[] = { share("exe", NULL, 100), share("idle", NULL, 0) };
        Share oa[] = { share("/bin/old", "exe", 60), share("/lib/libc.so.6", "lib", 30) };
        Share ob[] = { share("/bin/new", "exe", 70), share("/lib/libc.so.6", "lib", 30) };
        JobSummary a = { .kinds = { ka, 2 }, .objects = { oa, 2 } }, b = { .kinds = { kb, 2 }, .objects = { ob, 2 } };
        CompareRows rows = {};
        const CompareRow *x;

        set_total(&a, 100);
        set_total(&b, 100);
        ASSERT_OK(compare_runs(&a, &b, &rows));
        /* kinds first, then objects; idle stays (A had some) */
        ASSERT_EQ(rows.n, 5);
        ASSERT_STREQ(rows.items[0].dimension->name, "kind");
        ASSERT_STREQ(rows.items[2].dimension->name, "object");
        x = find(&rows, "kind", "idle", NULL, STORAGE_NULL);
        ASSERT_TRUE(x->b.known && x->b.item.samples == 0 && x->b.share.low == 0);
        ASSERT_TRUE(estimate_excludes(x->cpu_difference, 0) && x->cpu_difference.value < 0);
        x = find(&rows, "object", "/bin/new", NULL, STORAGE_NULL);
        ASSERT_STREQ(x->id.kind, "exe");
        ASSERT_TRUE(x->a.known && x->a.item.samples == 0 && x->b.item.samples == 70);
        ASSERT_TRUE(isnan(x->cpu_ratio.value) && isnan(x->cpu_ratio.high));
        ASSERT_TRUE(estimate_excludes(x->cpu_difference, 0));
        compare_rows_free(&rows);

        /* A lists only its largest objects: one it does not list is not known */
        a.objects_truncated = true;
        ASSERT_OK(compare_runs(&a, &b, &rows));
        x = find(&rows, "object", "/bin/new", NULL, STORAGE_NULL);
        ASSERT_FALSE(x->a.known);
        ASSERT_TRUE(x->b.known);
        x = find(&rows, "object", "/lib/libc.so.6", NULL, STORAGE_NULL);
        ASSERT_TRUE(x->a.known && x->b.known);
        ASSERT_FALSE(estimate_excludes(x->cpu_difference, 0));
        compare_rows_free(&rows);
}

/* Functions pair by object and name; one name under two build ids (two
 * entries) is summed; unnamed ones by offset; "other" per object. */
TEST(functions) {
        FunctionShare fa[] = {
                function("/bin/app", "solve", STORAGE_NULL, false, 300),
                function("/bin/app", "solve", STORAGE_NULL, false, 100),
                function("/bin/app", NULL, 0x21000, false, 50),
                function("/bin/app", NULL, STORAGE_NULL, true, 20),
                function("/bin/tool", "solve", STORAGE_NULL, false, 10),
        };
        FunctionShare fb[] = {
                function("/bin/app", "solve", STORAGE_NULL, false, 400),
                function("/bin/app", NULL, 0x22000, false, 50),
                function("/bin/app", NULL, STORAGE_NULL, true, 20),
        };
        JobSummary a = { .functions = { fa, ELEMENTSOF(fa), false } }, b = { .functions = { fb, ELEMENTSOF(fb), true } };
        CompareRows rows = {};
        const CompareRow *x;

        set_total(&a, 1000);
        set_total(&b, 1000);
        ASSERT_OK(compare_runs(&a, &b, &rows));
        ASSERT_EQ(count(&rows, "function"), 5);
        x = find(&rows, "function", "solve", "/bin/app", STORAGE_NULL);
        ASSERT_EQ(x->a.item.samples, 400);
        ASSERT_EQ(x->b.item.samples, 400);
        ASSERT_FALSE(estimate_excludes(x->cpu_difference, 0));
        ASSERT_STREQ(x->id.kind, "exe");
        x = find(&rows, "function", NULL, "/bin/app", 0x22000);
        ASSERT_TRUE(x->a.known && x->a.item.samples == 0 && x->b.item.samples == 50);
        x = find(&rows, "function", NULL, "/bin/app", STORAGE_NULL);
        ASSERT_TRUE(x->id.other && x->a.item.samples == 20 && x->b.item.samples == 20);
        /* B's list is truncated: what only A has is not known in B */
        x = find(&rows, "function", "solve", "/bin/tool", STORAGE_NULL);
        ASSERT_TRUE(x->a.known && !x->b.known);
        x = find(&rows, "function", NULL, "/bin/app", 0x21000);
        ASSERT_FALSE(x->b.known);
        compare_rows_free(&rows);
}

/* A run without samples, and an item of more samples than its run
 * (which storage never gives): no division by zero, no share beyond 1. */
TEST(edges) {
        Share pa[] = { share("p", NULL, 5) };
        JobSummary a = { .phases = { pa, 1 } }, b = {};
        CompareRows rows = {};
        const CompareRow *x;

        set_total(&a, 5);
        ASSERT_OK(compare_runs(&a, &b, &rows));
        ASSERT_EQ(rows.n, 1);
        x = &rows.items[0];
        ASSERT_TRUE(x->a.known && x->b.known && x->b.item.samples == 0);
        ASSERT_TRUE(x->b.share.high <= 1 && x->b.cpu_seconds.high == 0);
        ASSERT_TRUE(fabs(x->cpu_difference.value + 0.5) < 1e-9 && x->cpu_ratio.value == 0);
        compare_rows_free(&rows);
        set_total(&a, 4);
        ASSERT_OK(compare_runs(&a, &b, &rows));
        ASSERT_TRUE(rows.items[0].a.share.share == 1 && rows.items[0].a.share.high <= 1);
        compare_rows_free(&rows);
        ASSERT_OK(compare_runs(&b, &b, &rows));
        ASSERT_EQ(rows.n, 0);
        compare_rows_free(&rows);
}

int main(void) {
        RUN(doubled_phase);
        RUN(one_sided);
        RUN(functions);
        RUN(edges);
        return 0;
}
