/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>

#if HAVE_PFM
#include <perfmon/pfmlib_perf_event.h>
#endif

#include "events-pfm.h"

#if HAVE_PFM
static bool pfm_ready;

int pfm_encode(const char *name, PfmEncoding *ret, char *detail, size_t detail_size) {
        struct perf_event_attr a = { .size = sizeof(a) };
        pfm_perf_encode_arg_t arg = { .attr = &a, .size = sizeof(arg) };
        int r;

        if (!pfm_ready) {
                r = pfm_initialize();
                if (r != PFM_SUCCESS) {
                        snprintf(detail, detail_size, "libpfm4 does not initialise: %s", pfm_strerror(r));
                        return -EOPNOTSUPP;
                }
                pfm_ready = true;
        }
        r = pfm_get_os_event_encoding(name, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
        if (r == PFM_ERR_NOTFOUND || r == PFM_ERR_ATTR || r == PFM_ERR_ATTR_VAL || r == PFM_ERR_INVAL)
                return -ENOENT;
        if (r != PFM_SUCCESS) {
                snprintf(detail, detail_size, "libpfm4 cannot encode %s: %s", name, pfm_strerror(r));
                return -EOPNOTSUPP;
        }
        *ret = (PfmEncoding) { a.type, a.config, a.config1, a.config2 };
        return 0;
}

void pfm_done(void) {
        if (pfm_ready)
                pfm_terminate();
        pfm_ready = false;
}
#else
int pfm_encode(const char *name, PfmEncoding *ret, char *detail, size_t detail_size) {
        return -ENOENT;
}

void pfm_done(void) {
}
#endif
