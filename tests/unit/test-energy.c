/* SPDX-License-Identifier: GPL-2.0-or-later */
/* How the node's energy goes to its jobs (daemon/energy.h), against a
 * fake powercap tree: all of it to a job alone, split by samples between
 * several, equally without samples, to nobody without jobs; the node's
 * energy is the jobs' and the unattributed part together. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <sys/stat.h>

#include "energy.h"
#include "tests.h"

#define MAX_UJ UINT64_C(262143328850)

static char dir[] = "/tmp/lmk-test-energy.XXXXXX";
static uint64_t package_uj = 1000, dram_uj = 0;

static void put(const char *rel, const char *fmt, ...) {
        char path[PATH_MAX];
        va_list ap;
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, rel);
        for (char *p = path + strlen(dir) + 1; (p = strchr(p, '/')); p++) {
                *p = '\0';
                ASSERT_TRUE(mkdir(path, 0755) == 0 || errno == EEXIST);
                *p = '/';
        }
        f = fopen(path, "we");
        ASSERT_NOT_NULL(f);
        va_start(ap, fmt);
        vfprintf(f, fmt, ap);
        va_end(ap);
        ASSERT_EQ(fclose(f), 0);
}

/* The node uses joules: 9/10 in the package, 1/10 in DRAM. */
static void use(double joules) {
        package_uj = (package_uj + (uint64_t) llround(joules * 0.9e6)) % MAX_UJ;
        dram_uj = (dram_uj + (uint64_t) llround(joules * 0.1e6)) % MAX_UJ;
        put("intel-rapl:0/energy_uj", "%" PRIu64 "\n", package_uj);
        put("intel-rapl:0:0/energy_uj", "%" PRIu64 "\n", dram_uj);
}

static Job *job(JobTable *t, const char *id, JobNoticeEvent ev) {
        JobNotice n = { .event = ev };

        job_info_init(&n.info);
        snprintf(n.info.job, sizeof(n.info.job), "%s", id);
        jobs_apply_notice(t, &n, 100.0);
        return jobs_get(t, id);
}

#define ASSERT_NEAR(a, b)                                                               \
        do {                                                                            \
                double _a_ = (a), _b_ = (b);                                            \
                if (fabs(_a_ - _b_) > 1e-6)                                             \
                        test_fail("%s == %s: %.9f != %.9f", #a, #b, _a_, _b_);          \
        } while (0)

TEST(split) {
        Energy e;
        JobTable t;
        Job *a, *b, *c;
        char why[512];

        put("intel-rapl:0/name", "package-0\n");
        put("intel-rapl:0/max_energy_range_uj", "%" PRIu64 "\n", MAX_UJ);
        put("intel-rapl:0:0/name", "dram\n");
        put("intel-rapl:0:0/max_energy_range_uj", "%" PRIu64 "\n", MAX_UJ);
        use(0);
        ASSERT_OK(energy_open(&e, dir, why, sizeof(why)));
        ASSERT_NOT_NULL(e.powercap);
        if (!strstr(why, "RAPL through powercap under ") || !strstr(why, "2 zones (package-0, package-0/dram)"))
                test_fail("why: %s", why);
        ASSERT_OK(jobs_init(&t));

        /* no job: nobody's */
        use(10);
        energy_account(&e, &t);
        ASSERT_NEAR(e.unattributed_joules, 10);

        /* a job alone, even without samples, gets everything */
        a = job(&t, "1", JOB_NOTICE_START);
        a->seen = false;
        use(20);
        energy_account(&e, &t);
        ASSERT_NEAR(a->energy_joules, 20);
        ASSERT_NEAR(a->energy_alone_joules, 20);
        ASSERT_TRUE(a->seen); /* it was on the node: it is in the batch */

        /* two jobs: split by their samples since the last read */
        b = job(&t, "2", JOB_NOTICE_START);
        a->samples += 30;
        b->samples += 10;
        use(40);
        energy_account(&e, &t);
        ASSERT_NEAR(a->energy_joules, 20 + 30);
        ASSERT_NEAR(b->energy_joules, 10);
        ASSERT_NEAR(a->energy_alone_joules, 20);
        ASSERT_NEAR(b->energy_alone_joules, 0);

        /* no samples since: equally */
        use(8);
        energy_account(&e, &t);
        ASSERT_NEAR(a->energy_joules, 54);
        ASSERT_NEAR(b->energy_joules, 14);

        /* a job that ended but still had samples since the last read gets
         * its part; one that ended without any gets nothing more */
        c = job(&t, "3", JOB_NOTICE_START);
        c->samples += 2;
        b->samples += 2;
        (void) job(&t, "3", JOB_NOTICE_END);
        (void) job(&t, "1", JOB_NOTICE_END);
        use(4);
        energy_account(&e, &t);
        ASSERT_NEAR(a->energy_joules, 54);
        ASSERT_NEAR(b->energy_joules, 16);
        ASSERT_NEAR(c->energy_joules, 2);
        ASSERT_NEAR(b->energy_alone_joules, 0);

        /* the node's is the jobs' and nobody's: 10 + 20 + 40 + 8 + 4 */
        ASSERT_NEAR(powercap_joules(e.powercap), 82);
        ASSERT_NEAR(e.powercap->zones[0].joules, 82 * 0.9);
        ASSERT_NEAR(e.powercap->zones[1].joules, 82 * 0.1);
        ASSERT_NEAR(a->energy_joules + b->energy_joules + c->energy_joules + e.unattributed_joules, 82);

        /* a new interval: the ended jobs are forgotten, the rest start from 0 */
        jobs_end_interval(&t);
        energy_reset(&e, &t);
        ASSERT_NULL(jobs_get(&t, "1"));
        ASSERT_NEAR(b->energy_joules, 0);
        ASSERT_NEAR(e.unattributed_joules, 0);
        ASSERT_NEAR(e.unattributed_total, 10);
        ASSERT_NEAR(powercap_joules(e.powercap), 0);
        use(5);
        energy_account(&e, &t);
        ASSERT_NEAR(b->energy_joules, 5);
        ASSERT_NEAR(b->energy_alone_joules, 5);

        jobs_done(&t);
        energy_done(&e);
}

TEST(unavailable) {
        char path[PATH_MAX], why[512];
        Energy e;

        snprintf(path, sizeof(path), "%s/none", dir);
        ASSERT_OK(energy_open(&e, path, why, sizeof(why)));
        ASSERT_NULL(e.powercap);
        if (!strstr(why, "unavailable (no powercap zones under ") || !strstr(why, "/none, "))
                test_fail("why: %s", why);
        energy_account(&e, NULL); /* nothing to read, nothing to give */
        energy_done(&e);
}

int main(void) {
        char cmd[PATH_MAX + 16];

        ASSERT_NOT_NULL(mkdtemp(dir));
        RUN(split);
        RUN(unavailable);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        ASSERT_EQ(system(cmd), 0);
        return 0;
}
