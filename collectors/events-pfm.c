/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>

#if HAVE_PFM
#include <perfmon/pfmlib_perf_event.h>
#endif

#include "events-pfm.h"

#if HAVE_PFM
/* libpfm4 is opened when an event name needs it, not linked: its event
 * tables are megabytes of relocated data that every lmkd would otherwise
 * keep resident, though most configurations name only perf's generic
 * events. */
static struct {
        void *dl;
        int (*initialize)(void);
        int (*encode)(const char *str, int dfl_plm, pfm_os_t os, void *args);
        const char *(*strerror)(int code);
        void (*terminate)(void);
} pfm;

static int pfm_open(char *detail, size_t detail_size) {
        int r;

        if (pfm.dl)
                return 0;
        pfm.dl = dlopen(PFM_SONAME, RTLD_NOW | RTLD_LOCAL);
        if (!pfm.dl) {
                snprintf(detail, detail_size, "libpfm4 (%s) cannot be loaded: %s", PFM_SONAME, dlerror());
                return -EOPNOTSUPP;
        }
        pfm.initialize = (int (*)(void)) dlsym(pfm.dl, "pfm_initialize");
        pfm.encode = (int (*)(const char *, int, pfm_os_t, void *)) dlsym(pfm.dl, "pfm_get_os_event_encoding");
        pfm.strerror = (const char *(*)(int)) dlsym(pfm.dl, "pfm_strerror");
        pfm.terminate = (void (*)(void)) dlsym(pfm.dl, "pfm_terminate");
        if (!pfm.initialize || !pfm.encode || !pfm.strerror || !pfm.terminate) {
                snprintf(detail, detail_size, "%s lacks the libpfm4 functions lmkd uses", PFM_SONAME);
                dlclose(pfm.dl);
                pfm = (typeof(pfm)) {};
                return -EOPNOTSUPP;
        }
        r = pfm.initialize();
        if (r != PFM_SUCCESS) {
                snprintf(detail, detail_size, "libpfm4 does not initialise: %s", pfm.strerror(r));
                dlclose(pfm.dl);
                pfm = (typeof(pfm)) {};
                return -EOPNOTSUPP;
        }
        return 0;
}

int pfm_encode(const char *name, PfmEncoding *ret, char *detail, size_t detail_size) {
        struct perf_event_attr a = { .size = sizeof(a) };
        pfm_perf_encode_arg_t arg = { .attr = &a, .size = sizeof(arg) };
        int r;

        r = pfm_open(detail, detail_size);
        if (r < 0)
                return r;
        r = pfm.encode(name, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
        if (r == PFM_ERR_NOTFOUND || r == PFM_ERR_ATTR || r == PFM_ERR_ATTR_VAL || r == PFM_ERR_INVAL)
                return -ENOENT;
        if (r != PFM_SUCCESS) {
                snprintf(detail, detail_size, "libpfm4 cannot encode %s: %s", name, pfm.strerror(r));
                return -EOPNOTSUPP;
        }
        *ret = (PfmEncoding) { a.type, a.config, a.config1, a.config2 };
        return 0;
}

void pfm_done(void) {
        if (!pfm.dl)
                return;
        pfm.terminate();
        dlclose(pfm.dl);
        pfm = (typeof(pfm)) {};
}
#else
int pfm_encode(const char *name, PfmEncoding *ret, char *detail, size_t detail_size) {
        return -ENOENT;
}

void pfm_done(void) {
}
#endif
