/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "energy.h"
#include "util.h"

int energy_open(Energy *e, const char *root, char *why, size_t why_size) {
        const char *where = root ?: "/sys/class/powercap";
        char names[256] = "";
        int r;

        *e = (Energy) {};
        r = powercap_open(root, &e->powercap);
        if (r == -ENOMEM)
                return r;
        if (r >= 0) {
                for (size_t i = 0; i < e->powercap->n; i++)
                        snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "",
                                 e->powercap->zones[i].name);
                snprintf(why, why_size, "RAPL through powercap under %s, %zu zone%s (%s)", where, e->powercap->n,
                         e->powercap->n == 1 ? "" : "s", names);
                return 0;
        }
        /* the perf power PMU counts the same RAPL counters: where it is
         * there without powercap, say so rather than "none" */
        snprintf(why, why_size, "unavailable (%s under %s, %s)",
                 r == -EACCES ? "powercap zones not readable (lmkd needs root)" : "no powercap zones", where,
                 access("/sys/bus/event_source/devices/power", F_OK) == 0
                         ? "and lmkd does not read the perf power PMU that is there"
                         : "no perf power PMU");
        return 0;
}

void energy_done(Energy *e) {
        e->powercap = powercap_free(e->powercap);
}

void energy_account(Energy *e, JobTable *t) {
        uint64_t weight = 0;
        size_t on = 0;
        double joules;
        Job *j;
        size_t i;

        if (!e->powercap)
                return;
        joules = powercap_read(e->powercap);
        HASHMAP_FOREACH(j, t->jobs, i)
                if (!j->ended || j->samples > j->energy_mark) {
                        on++;
                        weight += j->samples - j->energy_mark;
                }
        if (on == 0) {
                e->unattributed_joules += joules;
                e->unattributed_total += joules;
        }
        HASHMAP_FOREACH(j, t->jobs, i) {
                uint64_t w = j->samples - j->energy_mark;
                double share;

                j->energy_mark = j->samples;
                if (j->ended && w == 0)
                        continue;
                if (on == 1) {
                        j->energy_alone_joules += joules;
                        share = joules;
                } else
                        share = weight > 0 ? joules * (double) w / (double) weight : joules / (double) on;
                j->energy_joules += share;
                if (share > 0)
                        j->seen = true;
        }
}

void energy_reset(Energy *e, JobTable *t) {
        Job *j;
        size_t i;

        if (!e->powercap)
                return;
        powercap_reset(e->powercap);
        e->unattributed_joules = 0;
        HASHMAP_FOREACH(j, t->jobs, i)
                j->energy_joules = j->energy_alone_joules = 0;
}
