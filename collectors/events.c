/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#if HAVE_PAPI
#include <papi.h>
#endif
#include "events-pfm.h"
#include "events.h"
#include "macro.h"

static const struct {
        const char *name;
        uint32_t type;
        uint64_t config;
} perf_names[] = {
        { "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
        { "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
        { "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
        { "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
        { "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
        { "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
        { "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
        { "branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
        { "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
        { "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
        { "stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
        { "stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
        { "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
        { "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
        { "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
        { "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
        { "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
        { "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
        { "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
        { "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
        { "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
        { "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
        { "alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS },
        { "emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS },
};

static bool valid_role(const char *s, size_t n) {
        if (n == 0 || n >= EVENT_ROLE_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!isalnum((unsigned char) s[i]) && s[i] != '_' && s[i] != '-')
                        return false;
        return true;
}

static bool valid_name(const char *s, size_t n) {
        if (n == 0 || n >= EVENT_NAME_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!isgraph((unsigned char) s[i]) || s[i] == ',' || s[i] == '=')
                        return false;
        return true;
}

/* Event names (perf's, PAPI's, and libpfm4's across Intel, AMD and Arm
 * PMUs) that count core cycles or retired instructions, with the unit
 * masks that keep them so. libpfm4 compares names without case. */
static const struct {
        const char *base;
        EventKind kind;
        const char *umasks; /* allowed unit masks, separated by '|'; NULL: none */
} known_kinds[] = {
        { "cycles", EVENT_KIND_CYCLES, NULL },
        { "cpu-cycles", EVENT_KIND_CYCLES, NULL },
        { "PAPI_TOT_CYC", EVENT_KIND_CYCLES, NULL },
        { "PERF_COUNT_HW_CPU_CYCLES", EVENT_KIND_CYCLES, NULL },
        { "CPU_CLK_UNHALTED", EVENT_KIND_CYCLES, "THREAD|THREAD_P|THREAD_ANY|CORE|CORE_P" },
        { "CPU_CLK_THREAD_UNHALTED", EVENT_KIND_CYCLES, "THREAD_P" },
        { "UNHALTED_CORE_CYCLES", EVENT_KIND_CYCLES, NULL },
        { "CYCLES_NOT_IN_HALT", EVENT_KIND_CYCLES, NULL },
        { "LS_NOT_HALTED_CYC", EVENT_KIND_CYCLES, NULL },
        { "CPU_CYCLES", EVENT_KIND_CYCLES, NULL },
        { "instructions", EVENT_KIND_INSTRUCTIONS, NULL },
        { "PAPI_TOT_INS", EVENT_KIND_INSTRUCTIONS, NULL },
        { "PERF_COUNT_HW_INSTRUCTIONS", EVENT_KIND_INSTRUCTIONS, NULL },
        { "INST_RETIRED", EVENT_KIND_INSTRUCTIONS, "ANY|ANY_P|PREC_DIST" },
        { "INSTRUCTION_RETIRED", EVENT_KIND_INSTRUCTIONS, NULL },
        { "INSTRUCTIONS_RETIRED", EVENT_KIND_INSTRUCTIONS, NULL },
        { "RETIRED_INSTRUCTIONS", EVENT_KIND_INSTRUCTIONS, NULL },
        { "EX_RET_INSTR", EVENT_KIND_INSTRUCTIONS, NULL },
};

static bool word_in(const char *w, size_t n, const char *list) {
        for (const char *p = list; p && *p;) {
                size_t len = strcspn(p, "|");

                if (len == n && strncasecmp(p, w, n) == 0)
                        return true;
                p += len;
                p += *p == '|';
        }
        return false;
}

/* A privilege filter: u, k or h, optionally =0 or =1. */
static bool privilege_modifier(const char *w, size_t n) {
        return (n == 1 || (n == 3 && w[1] == '=' && (w[2] == '0' || w[2] == '1'))) && strchr("ukh", w[0]);
}

EventKind event_kind(const char *name) {
        const char *p = name, *colons = strstr(name, "::");
        size_t base;

        if (colons)
                p = colons + 2;
        /* perf writes unit masks after '.' (cpu_clk_unhalted.thread), libpfm4 after ':' */
        base = strcspn(p, ":.");
        for (size_t i = 0; i < ELEMENTSOF(known_kinds); i++) {
                const char *q = p + base;
                bool umask_seen = false;

                if (strlen(known_kinds[i].base) != base || strncasecmp(known_kinds[i].base, p, base) != 0)
                        continue;
                while (*q) {
                        size_t len;

                        q++;
                        len = strcspn(q, ":.");
                        if (!umask_seen && word_in(q, len, known_kinds[i].umasks))
                                umask_seen = true;
                        else if (!privilege_modifier(q, len))
                                return EVENT_KIND_OTHER;
                        q += len;
                }
                return known_kinds[i].kind;
        }
        return EVENT_KIND_OTHER;
}

static const char *kind_role(EventKind k) {
        return k == EVENT_KIND_CYCLES ? "cycles" : k == EVENT_KIND_INSTRUCTIONS ? "instructions" : NULL;
}

int event_list_parse(const char *list, EventSpec ret[EVENT_MAX], size_t *ret_n, char *why, size_t why_size) {
        EventSpec specs[EVENT_MAX] = {};
        const char *p = list;
        size_t n = 0;

        while (*p) {
                size_t len = strcspn(p, ",");
                const char *eq = memchr(p, '=', len);
                EventSpec *e;
                EventKind kind;

                if (n == EVENT_MAX) {
                        snprintf(why, why_size, "at most %d counters (\"%.*s\" is one too many)", EVENT_MAX,
                                 (int) MIN(len, EVENT_NAME_MAX), p);
                        return -E2BIG;
                }
                e = &specs[n];
                if (eq ? !valid_role(p, (size_t) (eq - p)) || !valid_name(eq + 1, len - (size_t) (eq - p) - 1)
                       : !valid_name(p, len)) {
                        snprintf(why, why_size, "EVENT or ROLE=EVENT separated by commas (\"%.*s\" is neither)",
                                 (int) MIN(len, EVENT_NAME_MAX + EVENT_ROLE_MAX), p);
                        return -EINVAL;
                }
                if (eq) {
                        memcpy(e->role, p, (size_t) (eq - p));
                        memcpy(e->name, eq + 1, len - (size_t) (eq - p) - 1);
                } else
                        memcpy(e->name, p, len);
                kind = event_kind(e->name);
                if (eq && kind_role(kind) && (streq(e->role, "cycles") || streq(e->role, "instructions")) &&
                    !streq(e->role, kind_role(kind))) {
                        snprintf(why, why_size, "an event that counts %s in the role %s (%s counts %s: write %s=%s)",
                                 e->role, e->role, e->name, kind_role(kind), kind_role(kind), e->name);
                        return -EINVAL;
                }
                if (!eq) {
                        const char *role = kind_role(kind) ?: e->name;

                        if (!valid_role(role, strlen(role))) {
                                snprintf(why, why_size,
                                         "a role for \"%s\", which is no role name itself: ROLE=%s with a role of "
                                         "1 to %d letters, digits, _ or -", e->name, e->name, EVENT_ROLE_MAX - 1);
                                return -EINVAL;
                        }
                        strcpy(e->role, role);
                }
                for (size_t i = 0; i < n; i++)
                        if (streq(specs[i].role, e->role)) {
                                snprintf(why, why_size,
                                         "each role once (%s and %s both take the role %s: keep one, or give the "
                                         "other a role of its own, NAME=EVENT)", specs[i].name, e->name, e->role);
                                return -EEXIST;
                        }
                n++;
                p += len;
                if (*p == ',') {
                        p++;
                        if (!*p) {
                                snprintf(why, why_size, "EVENT or ROLE=EVENT separated by commas (a trailing comma "
                                         "is neither)");
                                return -EINVAL;
                        }
                }
        }
        memcpy(ret, specs, sizeof(specs));
        *ret_n = n;
        return 0;
}

static void attr_init(struct perf_event_attr *a, uint32_t type, uint64_t config) {
        *a = (struct perf_event_attr) {
                .size = sizeof(*a),
                .type = type,
                .config = config,
                .read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING,
        };
}

static int resolve_pfm(EventSpec *e, const char *native) {
        PfmEncoding enc;
        int r;

        r = pfm_encode(native, &enc, e->detail, sizeof(e->detail));
        if (r < 0)
                return r;
        attr_init(&e->attr, enc.type, enc.config);
        e->attr.config1 = enc.config1;
        e->attr.config2 = enc.config2;
        e->source = "pfm";
        return 0;
}

#if HAVE_PAPI
/* PAPI is opened when a PAPI_* name needs it, not linked (see events-pfm.c:
 * the same resident cost for what most configurations never use). */
static struct {
        void *dl;
        int (*disable_component_by_name)(const char *name);
        int (*library_init)(int version);
        char *(*strerror)(int code);
        int (*event_name_to_code)(const char *in, int *out);
        int (*get_event_info)(int code, PAPI_event_info_t *info);
        void (*shutdown)(void);
} papi;

static int papi_open(EventSpec *e) {
        int r;

        if (papi.dl)
                return 0;
        papi.dl = dlopen(PAPI_SONAME, RTLD_NOW | RTLD_LOCAL);
        if (!papi.dl) {
                snprintf(e->detail, sizeof(e->detail), "PAPI (%s) cannot be loaded: %s", PAPI_SONAME, dlerror());
                return -EOPNOTSUPP;
        }
        papi.disable_component_by_name = (int (*)(const char *)) dlsym(papi.dl, "PAPI_disable_component_by_name");
        papi.library_init = (int (*)(int)) dlsym(papi.dl, "PAPI_library_init");
        papi.strerror = (char *(*)(int)) dlsym(papi.dl, "PAPI_strerror");
        papi.event_name_to_code = (int (*)(const char *, int *)) dlsym(papi.dl, "PAPI_event_name_to_code");
        papi.get_event_info = (int (*)(int, PAPI_event_info_t *)) dlsym(papi.dl, "PAPI_get_event_info");
        papi.shutdown = (void (*)(void)) dlsym(papi.dl, "PAPI_shutdown");
        if (!papi.disable_component_by_name || !papi.library_init || !papi.strerror || !papi.event_name_to_code ||
            !papi.get_event_info || !papi.shutdown) {
                snprintf(e->detail, sizeof(e->detail), "%s lacks the PAPI functions lmkd uses", PAPI_SONAME);
                dlclose(papi.dl);
                papi = (typeof(papi)) {};
                return -EOPNOTSUPP;
        }
        /* Only the CPU components matter here; the GPU ones print noise
         * on machines without GPUs when they initialise. */
        static const char *const gpu[] = { "rocm", "rocm_smi", "cuda", "nvml", "intel_gpu" };
        for (size_t i = 0; i < ELEMENTSOF(gpu); i++)
                (void) papi.disable_component_by_name(gpu[i]);
        r = papi.library_init(PAPI_VER_CURRENT);
        if (r != PAPI_VER_CURRENT) {
                snprintf(e->detail, sizeof(e->detail), "PAPI does not initialise: %s", papi.strerror(r));
                dlclose(papi.dl);
                papi = (typeof(papi)) {};
                return -EOPNOTSUPP;
        }
        return 0;
}

static int resolve_papi(EventSpec *e) {
        PAPI_event_info_t info;
        int code, r;

        r = papi_open(e);
        if (r < 0)
                return r;
        if (papi.event_name_to_code(e->name, &code) != PAPI_OK || papi.get_event_info(code, &info) != PAPI_OK)
                return -ENOENT;
        if (info.count == 0) {
                snprintf(e->detail, sizeof(e->detail), "PAPI knows %s but finds no native event for it on this machine",
                         e->name);
                return -EOPNOTSUPP;
        }
        if (info.count > 1 || !streq(info.derived, "NOT_DERIVED")) {
                snprintf(e->detail, sizeof(e->detail),
                         "%.60s is derived from %u native events (%.32s); configure them by name instead", e->name,
                         info.count, info.derived);
                return -EOPNOTSUPP;
        }
        r = resolve_pfm(e, info.name[0]);
        if (r == -ENOENT) {
                snprintf(e->detail, sizeof(e->detail), "PAPI maps %.60s to %.100s, which libpfm4 cannot encode", e->name,
                         info.name[0]);
                return -EOPNOTSUPP;
        }
        if (r == 0)
                e->source = "papi";
        return r;
}
#else
static int resolve_papi(EventSpec *e) {
        snprintf(e->detail, sizeof(e->detail), "lmkd was built without PAPI");
        return -EOPNOTSUPP;
}
#endif

static int resolve(EventSpec *e) {
        uint64_t raw;
        char *end;

        for (size_t i = 0; i < ELEMENTSOF(perf_names); i++)
                if (streq(perf_names[i].name, e->name)) {
                        attr_init(&e->attr, perf_names[i].type, perf_names[i].config);
                        e->source = "perf";
                        return 0;
                }
        /* raw PMU encodings as perf writes them: r1a8 */
        if (e->name[0] == 'r' && isxdigit((unsigned char) e->name[1])) {
                errno = 0;
                raw = strtoull(e->name + 1, &end, 16);
                if (errno == 0 && *end == '\0') {
                        attr_init(&e->attr, PERF_TYPE_RAW, raw);
                        e->source = "raw";
                        return 0;
                }
        }
        if (strncmp(e->name, "PAPI_", 5) == 0)
                return resolve_papi(e);
        return resolve_pfm(e, e->name);
}

int event_resolve(EventSpec *e) {
        int r;

        e->detail[0] = '\0';
        r = resolve(e);
        e->resolved = r >= 0;
        return r;
}

void event_resolve_done(void) {
#if HAVE_PAPI
        if (papi.dl) {
                papi.shutdown();
                dlclose(papi.dl);
                papi = (typeof(papi)) {};
        }
#endif
        pfm_done();
}
