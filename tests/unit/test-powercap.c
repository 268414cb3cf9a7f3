/* SPDX-License-Identifier: GPL-2.0-or-later */
/* RAPL through powercap against a fake /sys/class/powercap: the zones
 * taken and left out, the joules between reads, a counter's wrap, reads
 * that fail. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <sys/stat.h>

#include "powercap.h"
#include "tests.h"

#define PKG_MAX UINT64_C(262143328850)
#define DRAM_MAX UINT64_C(65712999613)

static char dir[] = "/tmp/lmk-test-powercap.XXXXXX";

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

static void zone(const char *d, const char *name, uint64_t max, uint64_t energy) {
        char rel[256];

        snprintf(rel, sizeof(rel), "%s/name", d);
        put(rel, "%s\n", name);
        snprintf(rel, sizeof(rel), "%s/max_energy_range_uj", d);
        put(rel, "%" PRIu64 "\n", max);
        snprintf(rel, sizeof(rel), "%s/energy_uj", d);
        put(rel, "%" PRIu64 "\n", energy);
}

static void energy(const char *d, uint64_t uj) {
        char rel[256];

        snprintf(rel, sizeof(rel), "%s/energy_uj", d);
        put(rel, "%" PRIu64 "\n", uj);
}

static bool near(double a, double b) {
        return fabs(a - b) < 1e-9;
}

#define ASSERT_NEAR(a, b)                                                               \
        do {                                                                            \
                double _a_ = (a), _b_ = (b);                                            \
                if (!near(_a_, _b_))                                                    \
                        test_fail("%s == %s: %.9f != %.9f", #a, #b, _a_, _b_);          \
        } while (0)

TEST(zones_reads_and_a_wrap) {
        _cleanup_(powercap_freep) Powercap *p = NULL;

        /* package 0 one joule before its counter wraps; its DRAM; package 1;
         * and what is left out: a core zone, psys, the MMIO copy of package 0 */
        zone("intel-rapl:0", "package-0", PKG_MAX, PKG_MAX - 1000000);
        zone("intel-rapl:0:0", "dram", DRAM_MAX, 5000);
        zone("intel-rapl:0:1", "core", PKG_MAX, 1);
        zone("intel-rapl:1", "package-1", PKG_MAX, 100);
        zone("intel-rapl:2", "psys", PKG_MAX, 1);
        zone("intel-rapl-mmio:0", "package-0", PKG_MAX, 1);
        put("intel-rapl:3/name", "package-3\n"); /* no counter: left out */

        ASSERT_OK(powercap_open(dir, &p));
        ASSERT_EQ(p->n, 3);
        ASSERT_STREQ(p->zones[0].name, "package-0");
        ASSERT_STREQ(p->zones[0].kind, "package");
        ASSERT_STREQ(p->zones[1].name, "package-0/dram");
        ASSERT_STREQ(p->zones[1].kind, "dram");
        ASSERT_STREQ(p->zones[2].name, "package-1");
        ASSERT_NEAR(powercap_joules(p), 0);

        /* the wrap: 1 J to the top, 2 J from 0 */
        energy("intel-rapl:0", 2000000);
        energy("intel-rapl:0:0", 7000);
        energy("intel-rapl:1", 250100);
        ASSERT_NEAR(powercap_read(p), 3.0 + 0.002 + 0.25);
        ASSERT_EQ(p->zones[0].wraps, 1);
        ASSERT_NEAR(p->zones[0].joules, 3.0);
        ASSERT_NEAR(p->zones[1].joules, 0.002);
        ASSERT_NEAR(p->zones[2].joules, 0.25);

        /* nothing used, nothing counted */
        ASSERT_NEAR(powercap_read(p), 0);

        /* a zone that reads garbage or beyond its range adds nothing and
         * is read from where it was next time */
        energy("intel-rapl:0", 2500000);
        put("intel-rapl:0:0/energy_uj", "x\n");
        energy("intel-rapl:1", PKG_MAX + 1);
        ASSERT_NEAR(powercap_read(p), 0.5);
        ASSERT_EQ(p->zones[1].bad_reads, 1);
        ASSERT_EQ(p->zones[2].bad_reads, 1);
        energy("intel-rapl:0:0", 9000);
        energy("intel-rapl:1", 1250100);
        ASSERT_NEAR(powercap_read(p), 0.002 + 1.0);
        ASSERT_NEAR(p->zones[0].joules, 3.5);
        ASSERT_NEAR(p->zones[1].joules, 0.004);
        ASSERT_NEAR(p->zones[2].joules, 1.25);
        ASSERT_NEAR(powercap_joules(p), 3.5 + 0.004 + 1.25);

        /* a new interval; the totals since the start stay */
        powercap_reset(p);
        ASSERT_NEAR(powercap_joules(p), 0);
        ASSERT_NEAR(p->zones[0].joules_total, 3.5);
        energy("intel-rapl:0:0", 4000); /* DRAM wraps too: 65712.999613 - 0.009 + 0.004 J */
        ASSERT_NEAR(powercap_read(p), (double) (DRAM_MAX - 9000 + 4000) / 1e6);
        ASSERT_EQ(p->zones[1].wraps, 1);
}

TEST(none) {
        char path[PATH_MAX];
        Powercap *p = NULL;

        snprintf(path, sizeof(path), "%s/nothing-here", dir);
        ASSERT_ERROR(powercap_open(path, &p), ENOENT);
        ASSERT_TRUE(mkdir(path, 0755) == 0);
        ASSERT_ERROR(powercap_open(path, &p), ENOENT);
        snprintf(path, sizeof(path), "%s/nothing-here/intel-rapl:0", dir);
        ASSERT_TRUE(mkdir(path, 0755) == 0);
        snprintf(path, sizeof(path), "%s/nothing-here", dir);
        ASSERT_ERROR(powercap_open(path, &p), ENOENT);
        ASSERT_NULL(p);
}

int main(void) {
        char cmd[PATH_MAX + 16];

        ASSERT_NOT_NULL(mkdtemp(dir));
        RUN(zones_reads_and_a_wrap);
        RUN(none);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        ASSERT_EQ(system(cmd), 0);
        return 0;
}
