/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "lmkd-config.h"
#include "tests.h"

TEST(defaults_and_file) {
        _cleanup_(config_done) LmkdConfig c;
        _cleanup_free_ char *err = NULL;

        config_init(&c);
        ASSERT_TRUE(c.frequency == 1);
        ASSERT_EQ(c.n_events, 2);
        ASSERT_NULL(c.metrics_listen);
        ASSERT_NOT_NULL(c.liblmk[0]);
        ASSERT_FALSE(c.liblmk_explicit); /* the default is not reported missing */
        ASSERT_STREQ(c.events[0].role, "cycles");
        ASSERT_OK(config_load_string(&c,
                "; lmkd.conf\n"
                "[sampling]\n"
                "frequency = 19\n"
                "event = cpu-clock\n"
                "jitter = 10 ; percent\n"
                "events = cycles=task-clock,instructions=page-faults,cs\n"
                "[store]\n"
                "url = https://store.example:8443\n"
                "ca_file = /etc/site/ca.pem\n"
                "push_interval = 300\n"
                "spool_max_mb = 64\n"
                "[node]\n"
                "cluster = supermuc\n"
                "metrics_listen = 9101\n"
                "[markers]\n"
                "liblmk = /opt/lmk/lib/liblmk.so.1\n"
                "[families]\n"
                "file = /etc/site/families.conf\n"
                "[inventory]\n"
                "module = /apps/modulefiles/Core,/apps/modulefiles/Compiler\n"
                "rpm = none\n", &err));
        ASSERT_TRUE(c.frequency == 19);
        ASSERT_EQ(c.event, SAMPLE_EVENT_CPU_CLOCK);
        ASSERT_TRUE(c.jitter > 0.099 && c.jitter < 0.101);
        ASSERT_EQ(c.n_events, 3);
        ASSERT_STREQ(c.events[1].name, "page-faults");
        ASSERT_STREQ(c.events[2].role, "cs");
        ASSERT_STREQ(c.store_url, "https://store.example:8443");
        ASSERT_STREQ(c.ca_file, "/etc/site/ca.pem");
        ASSERT_EQ(c.push_interval, 300);
        ASSERT_EQ(c.spool_max_bytes, 64 * 1024 * 1024);
        ASSERT_STREQ(c.cluster, "supermuc");
        ASSERT_STREQ(c.metrics_listen, "9101");
        ASSERT_TRUE(c.liblmk_explicit);
        ASSERT_STREQ(c.families_file, "/etc/site/families.conf");
        ASSERT_STREQ(c.inventory_roots[INVENTORY_MODULE][1], "/apps/modulefiles/Compiler");
        ASSERT_NULL(c.inventory_roots[INVENTORY_MODULE][2]);
        ASSERT_TRUE(c.inventory_off[INVENTORY_RPM]);
        ASSERT_NULL(c.inventory_roots[INVENTORY_DEBIAN]);
}

/* Without roles, each event takes the role of what it counts: L1 misses
 * after PAPI_TOT_CYC are not instructions. */
TEST(event_roles) {
        _cleanup_(config_done) LmkdConfig c;
        _cleanup_free_ char *err = NULL;
        const char *why;

        config_init(&c);
        ASSERT_OK(config_load_string(&c, "[sampling]\nevents = PAPI_TOT_CYC,PAPI_L1_DCM\n", &err));
        ASSERT_EQ(c.n_events, 2);
        ASSERT_STREQ(c.events[0].role, "cycles");
        ASSERT_STREQ(c.events[1].role, "PAPI_L1_DCM");
        ASSERT_OK(config_set(&c, "sampling", "events", "cycles=PAPI_TOT_CYC,instructions=PAPI_TOT_INS,PAPI_L1_DCM",
                             &why));
        ASSERT_EQ(c.n_events, 3);
        ASSERT_STREQ(c.events[1].role, "instructions");
        ASSERT_STREQ(c.events[1].name, "PAPI_TOT_INS");
        ASSERT_STREQ(c.events[2].role, "PAPI_L1_DCM");
        ASSERT_ERROR(config_set(&c, "sampling", "events", "instructions=PAPI_TOT_CYC", &why), EINVAL);
        ASSERT_NOT_NULL(strstr(why, "PAPI_TOT_CYC counts cycles"));
        ASSERT_EQ(c.n_events, 3); /* a refused list leaves the old one */
}

TEST(errors_name_line_and_key) {
        static const struct {
                const char *text, *want;
        } cases[] = {
                { "[sampling]\nfrequency = 0\n", "line 2: [sampling] frequency = 0: invalid value" },
                { "[sampling]\nfrequency = 1e9\n", "invalid value" },
                { "[sampling]\nfrequency = 12abc\n", "invalid value" },
                { "\n\n[sampling]\nfrequncy = 5\n", "line 4: [sampling] frequncy = 5: unknown key" },
                { "[store]\nurl = ftp://x\n", "http:// or https://" },
                { "[store]\npush_interval = -1\n", "invalid value" },
                { "[store]\nca_file =\n", "line 2: [store] ca_file = : invalid value, expected a file's path" },
                { "[sampling]\nevents = a,b,c,d,e\n", "at most 4" },
                { "[sampling]\nevents = cycles=x,cycles=y\n", "each role once" },
                { "[sampling]\nevents = cycles,PAPI_TOT_CYC\n", "cycles and PAPI_TOT_CYC both take the role cycles" },
                { "[sampling]\nevents = cycles=PAPI_TOT_INS\n", "invalid value, expected an event that counts cycles "
                  "in the role cycles (PAPI_TOT_INS counts instructions: write instructions=PAPI_TOT_INS)" },
                { "[sampling]\nevents = =x\n", "EVENT or ROLE=EVENT" },
                { "[sampling\nfrequency = 1\n", "line 1: malformed" },
                { "frequency\n", "line 1: malformed" },
                { "frequency = 3\n", "line 1: [] frequency = 3: unknown key" },
                { "[inventory]\nmodule = modulefiles\n", "line 2: [inventory] module = modulefiles: invalid value" },
                { "[inventory]\nrpms = /var/lib/rpm\n", "unknown key" },
                { "[node]\nmetrics_listen = node7:9101\n", "line 2: [node] metrics_listen = node7:9101: invalid "
                  "value, expected PORT (on 127.0.0.1)" },
                { "[node]\nmetrics_listen = 99999\n", "invalid value" },
                { "[families]\nfile = families.conf\n", "line 2: [families] file = families.conf: invalid value, "
                  "expected an absolute path" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(config_done) LmkdConfig c;
                _cleanup_free_ char *err = NULL;

                config_init(&c);
                ASSERT_ERROR(config_load_string(&c, cases[i].text, &err), EINVAL);
                ASSERT_NOT_NULL(err);
                if (!strstr(err, cases[i].want))
                        test_fail("config \"%s\": error \"%s\" lacks \"%s\"", cases[i].text, err, cases[i].want);
                ASSERT_TRUE(c.frequency == 1); /* a bad value leaves the old one */
        }
}

/* The lmkd.conf the packages install: as shipped (all commented) and with
 * every default switched on, it loads and changes nothing that matters. */
static void check_example(const char *path) {
        _cleanup_free_ char *text = NULL, *err = NULL, *on = NULL;
        _cleanup_(config_done) LmkdConfig c;
        FILE *f = fopen(path, "re");
        size_t n;

        ASSERT_NOT_NULL(f);
        text = calloc(1, 65536);
        ASSERT_NOT_NULL(text);
        n = fread(text, 1, 65535, f);
        fclose(f);
        ASSERT_TRUE(n > 0);
        config_init(&c);
        ASSERT_OK(config_load_string(&c, text, &err));
        ASSERT_NULL(c.store_url);
        ASSERT_NULL(c.ca_file);
        on = test_example_uncommented(path);
        ASSERT_NOT_NULL(on);
        ASSERT_TRUE(strstr(on, "\nfrequency = 1") != NULL);
        if (config_load_string(&c, on, &err) < 0)
                test_fail("%s with its defaults switched on: %s", path, err);
        ASSERT_TRUE(c.frequency == 1);
        ASSERT_EQ(c.push_interval, 60);
        ASSERT_EQ(c.spool_max_bytes, 256 * 1024 * 1024);
        ASSERT_EQ(c.inventory_interval, 86400);
        ASSERT_EQ(c.functions, 64);
        ASSERT_STREQ(c.ca_file, "/etc/lmk/site-ca.pem");
}

/* The default that lmkd --help states for an option: the word after
 * "default" (and a colon) in the option's entry. */
static const char *help_default(const char *option, char *buf, size_t size) {
        const char *entry = strstr(config_help_text, option), *end, *d;
        size_t n;

        if (!entry)
                test_fail("lmkd --help has no %s", option);
        /* the entry ends where the next option's line begins */
        end = strstr(entry + strlen(option), "\n  -") ?: entry + strlen(entry);
        d = strstr(entry, "default");
        if (!d || d > end)
                test_fail("lmkd --help states no default for %s", option);
        d += strlen("default");
        d += strspn(d, ": \n");
        n = strcspn(d, "):; \n");
        snprintf(buf, size, "%.*s", (int) n, d);
        return buf;
}

/* lmkd --help says what config_init() sets: a default changed in one place
 * only fails here. */
TEST(help_states_the_defaults) {
        _cleanup_(config_done) LmkdConfig c;
        char buf[256], want[256];

        config_init(&c);
#define CHECK_DEFAULT(option, ...)                                                              \
        do {                                                                                    \
                snprintf(want, sizeof(want), __VA_ARGS__);                                      \
                if (!streq(help_default(option, buf, sizeof(buf)), want))                       \
                        test_fail("lmkd --help: %s defaults to \"%s\", config_init() to \"%s\"",  \
                                  option, buf, want);                                           \
        } while (0)
        CHECK_DEFAULT("--frequency", "%g", c.frequency);
        CHECK_DEFAULT("--event ", "%s", c.event == SAMPLE_EVENT_AUTO ? "auto" : "?");
        CHECK_DEFAULT("--events", "%s,%s", c.events[0].name, c.events[1].name);
        ASSERT_EQ(c.n_events, 2);
        CHECK_DEFAULT("--job-counters", "%s", c.job_counters ? "yes" : "no");
        CHECK_DEFAULT("--functions", "%u", c.functions);
        CHECK_DEFAULT("--exact-counters", "%s", c.exact_counters ? "yes" : "no");
        CHECK_DEFAULT("--burst", "%g", c.burst);
        CHECK_DEFAULT("--poll-ms", "%u", c.poll_ms);
        CHECK_DEFAULT("--push-interval", "%u", c.push_interval);
        CHECK_DEFAULT("--liblmk", "%s", c.liblmk[0]);
#undef CHECK_DEFAULT
}

int main(int argc, char **argv) {
        RUN(defaults_and_file);
        RUN(event_roles);
        RUN(errors_name_line_and_key);
        RUN(help_states_the_defaults);
        if (argc > 1)
                check_example(argv[1]);
        return 0;
}
