/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "events.h"
#include "macro.h"
#include "tests.h"

TEST(kind_by_name) {
        static const struct {
                const char *name;
                EventKind kind;
        } cases[] = {
                { "cycles", EVENT_KIND_CYCLES },
                { "cpu-cycles", EVENT_KIND_CYCLES },
                { "PAPI_TOT_CYC", EVENT_KIND_CYCLES },
                { "CPU_CLK_UNHALTED", EVENT_KIND_CYCLES },
                { "CPU_CLK_UNHALTED:THREAD_P", EVENT_KIND_CYCLES },
                { "skx::CPU_CLK_UNHALTED:THREAD_P:u", EVENT_KIND_CYCLES },
                { "cpu_clk_unhalted.thread", EVENT_KIND_CYCLES },
                { "perf::CYCLES", EVENT_KIND_CYCLES },
                { "perf::PERF_COUNT_HW_CPU_CYCLES:k=1", EVENT_KIND_CYCLES },
                { "CPU_CYCLES", EVENT_KIND_CYCLES },
                { "instructions", EVENT_KIND_INSTRUCTIONS },
                { "PAPI_TOT_INS", EVENT_KIND_INSTRUCTIONS },
                { "INST_RETIRED:ANY_P", EVENT_KIND_INSTRUCTIONS },
                { "inst_retired.any", EVENT_KIND_INSTRUCTIONS },
                { "INST_RETIRED", EVENT_KIND_INSTRUCTIONS },
                { "RETIRED_INSTRUCTIONS", EVENT_KIND_INSTRUCTIONS },
                { "amd64_fam17h::RETIRED_INSTRUCTIONS:u:k", EVENT_KIND_INSTRUCTIONS },
                /* reference cycles are not core cycles; a unit mask or a
                 * counter mask can make an instruction event count others */
                { "ref-cycles", EVENT_KIND_OTHER },
                { "CPU_CLK_UNHALTED:REF_TSC", EVENT_KIND_OTHER },
                { "INST_RETIRED:NOP", EVENT_KIND_OTHER },
                { "INST_RETIRED:ANY_P:c=1", EVENT_KIND_OTHER },
                { "INST_RETIRED:ANY_P:ANY", EVENT_KIND_OTHER },
                { "PAPI_REF_CYC", EVENT_KIND_OTHER },
                { "PAPI_L1_DCM", EVENT_KIND_OTHER },
                { "PAPI_TOT_CYCX", EVENT_KIND_OTHER },
                { "task-clock", EVENT_KIND_OTHER },
                { "r00c0", EVENT_KIND_OTHER },
                { "", EVENT_KIND_OTHER },
                { "::", EVENT_KIND_OTHER },
                { "cycles:", EVENT_KIND_OTHER },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                if (event_kind(cases[i].name) != cases[i].kind)
                        test_fail("event_kind(\"%s\") = %d, expected %d", cases[i].name,
                                  event_kind(cases[i].name), cases[i].kind);
}

static void expect_roles(const char *list, const char *want) {
        EventSpec ev[EVENT_MAX];
        char why[512], got[EVENT_MAX * (EVENT_ROLE_MAX + EVENT_NAME_MAX + 2)] = "";
        size_t n;

        if (event_list_parse(list, ev, &n, why, sizeof(why)) < 0)
                test_fail("\"%s\" refused: %s", list, why);
        for (size_t i = 0; i < n; i++)
                snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%.31s=%.127s", i ? "," : "", ev[i].role,
                         ev[i].name);
        if (!streq(got, want))
                test_fail("\"%s\" gave %s, expected %s", list, got, want);
}

TEST(roles) {
        expect_roles("cycles,instructions", "cycles=cycles,instructions=instructions");
        expect_roles("cycles=PAPI_TOT_CYC,instructions=PAPI_TOT_INS,PAPI_L1_DCM",
                     "cycles=PAPI_TOT_CYC,instructions=PAPI_TOT_INS,PAPI_L1_DCM=PAPI_L1_DCM");
        /* L1 misses are never instructions, whatever their place */
        expect_roles("PAPI_TOT_CYC,PAPI_L1_DCM", "cycles=PAPI_TOT_CYC,PAPI_L1_DCM=PAPI_L1_DCM");
        expect_roles("PAPI_L1_DCM,PAPI_TOT_INS", "PAPI_L1_DCM=PAPI_L1_DCM,instructions=PAPI_TOT_INS");
        expect_roles("task-clock,page-faults", "task-clock=task-clock,page-faults=page-faults");
        /* explicit roles stand software events in for the counters */
        expect_roles("cycles=task-clock,instructions=page-faults,cs",
                     "cycles=task-clock,instructions=page-faults,cs=cs");
        expect_roles("l1m=PAPI_L1_DCM,INST_RETIRED:ANY_P", "l1m=PAPI_L1_DCM,instructions=INST_RETIRED:ANY_P");
        expect_roles("user_ins=instructions:u,instructions", "user_ins=instructions:u,instructions=instructions");
        expect_roles("", "");
}

static void expect_refused(const char *list, int err, const char *want) {
        EventSpec ev[EVENT_MAX];
        char why[512] = "";
        size_t n = 99;
        int r;

        r = event_list_parse(list, ev, &n, why, sizeof(why));
        if (r != -err)
                test_fail("\"%s\": expected -%d, got %d (%s)", list, err, r, why);
        if (!strstr(why, want))
                test_fail("\"%s\": \"%s\" lacks \"%s\"", list, why, want);
        ASSERT_EQ(n, 99); /* written only on success */
}

TEST(refused) {
        expect_refused("cycles=PAPI_TOT_INS", EINVAL, "PAPI_TOT_INS counts instructions: write instructions=PAPI_TOT_INS");
        expect_refused("instructions=CPU_CLK_UNHALTED:THREAD_P,cycles=cycles", EINVAL,
                       "CPU_CLK_UNHALTED:THREAD_P counts cycles");
        expect_refused("cycles,PAPI_TOT_CYC", EEXIST, "cycles and PAPI_TOT_CYC both take the role cycles");
        expect_refused("cycles=task-clock,cycles", EEXIST, "task-clock and cycles both take the role cycles");
        expect_refused("x=cycles,x=instructions", EEXIST, "each role once");
        expect_refused("perf::PAGE-FAULTS", EINVAL, "a role for \"perf::PAGE-FAULTS\"");
        expect_refused("a,b,c,d,e", E2BIG, "at most 4 counters (\"e\" is one too many)");
        expect_refused("=x", EINVAL, "(\"=x\" is neither)");
        expect_refused("cycles,,instructions", EINVAL, "(\"\" is neither)");
        expect_refused("cycles,", EINVAL, "trailing comma");
        expect_refused("cy cles", EINVAL, "is neither");
        expect_refused("cycles=a=b", EINVAL, "is neither");
}

int main(void) {
        RUN(kind_by_name);
        RUN(roles);
        RUN(refused);
        return 0;
}
