/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

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

int event_list_parse(const char *list, EventSpec ret[EVENT_MAX], size_t *ret_n, const char **ret_bad) {
        static char bad[EVENT_NAME_MAX + EVENT_ROLE_MAX + 2];
        EventSpec specs[EVENT_MAX] = {};
        bool named = strchr(list, '=') != NULL;
        const char *p = list;
        size_t n = 0;

        *ret_bad = NULL;
        while (*p) {
                size_t len = strcspn(p, ",");
                const char *eq = memchr(p, '=', len);
                EventSpec *e;

                snprintf(bad, sizeof(bad), "%.*s", (int) MIN(len, sizeof(bad) - 1), p);
                if (n == EVENT_MAX) {
                        *ret_bad = bad;
                        return -E2BIG;
                }
                e = &specs[n];
                if (eq) {
                        size_t rl = (size_t) (eq - p), nl = len - rl - 1;

                        if (!valid_role(p, rl) || !valid_name(eq + 1, nl)) {
                                *ret_bad = bad;
                                return -EINVAL;
                        }
                        memcpy(e->role, p, rl);
                        memcpy(e->name, eq + 1, nl);
                } else {
                        if (!valid_name(p, len)) {
                                *ret_bad = bad;
                                return -EINVAL;
                        }
                        memcpy(e->name, p, len);
                        /* without explicit roles the first two are cycles and instructions */
                        if (!named && n < 2)
                                strcpy(e->role, n == 0 ? "cycles" : "instructions");
                        else if (valid_role(p, len))
                                memcpy(e->role, p, len);
                        else {
                                *ret_bad = bad;
                                return -EINVAL;
                        }
                }
                for (size_t i = 0; i < n; i++)
                        if (streq(specs[i].role, e->role)) {
                                *ret_bad = bad;
                                return -EEXIST;
                        }
                n++;
                p += len;
                if (*p == ',') {
                        p++;
                        if (!*p) { /* trailing comma */
                                *ret_bad = "";
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
