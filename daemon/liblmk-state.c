/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "macro.h"
#include "liblmk-state.h"

MarkerState *markers_of(Process *p, bool create) {
        if (!p->userdata && create)
                p->userdata = calloc(1, sizeof(MarkerState));
        return p->userdata;
}

static void state_free(MarkerState *ms) {
        if (!ms)
                return;
        for (uint32_t i = 0; i < ms->n_names; i++)
                free(ms->names[i]);
        free(ms->names);
        free(ms->off);
        free(ms);
}

void markers_release(Process *p) {
        state_free(p->userdata);
        p->userdata = NULL;
}

static int grow(MarkerState *ms, uint32_t id) {
        uint32_t n = id + 1;
        char **names;
        uint32_t *off;

        if (id == 0 || id > LMK_REGIONS_MAX)
                return -ERANGE;
        if (n <= ms->n_names)
                return 0;
        names = realloc(ms->names, n * sizeof(*names));
        if (!names)
                return -ENOMEM;
        ms->names = names;
        off = realloc(ms->off, n * sizeof(*off));
        if (!off)
                return -ENOMEM;
        ms->off = off;
        memset(ms->names + ms->n_names, 0, (n - ms->n_names) * sizeof(*names));
        memset(ms->off + ms->n_names, 0, (n - ms->n_names) * sizeof(*off));
        ms->n_names = n;
        return 0;
}

void markers_inherit(const Process *parent, Process *child) {
        const MarkerState *from = parent->userdata;
        MarkerState *to;

        if (!from)
                return;
        markers_release(child);
        to = markers_of(child, true);
        if (!to)
                return;
        to->abi_addr = from->abi_addr;
        to->marked = from->marked;
        if (from->n_names > 0 && grow(to, from->n_names - 1) >= 0)
                for (uint32_t i = 1; i < from->n_names; i++) {
                        to->names[i] = from->names[i] ? strdup(from->names[i]) : NULL;
                        to->off[i] = from->off[i];
                }
}

int markers_set_name(MarkerState *ms, uint32_t id, const char *name) {
        char *s;
        int r;

        r = grow(ms, id);
        if (r < 0)
                return r;
        s = strndup(name, LMK_REGION_NAME_LEN - 1);
        if (!s)
                return -ENOMEM;
        /* names travel from the application: keep them printable and free of '/' (the path separator) */
        for (char *c = s; *c; c++)
                if ((unsigned char) *c < ' ' || *c == 127 || *c == '/')
                        *c = '_';
        free(ms->names[id]);
        ms->names[id] = s;
        return 0;
}

int markers_set_off(MarkerState *ms, uint32_t id, uint32_t reason) {
        int r = grow(ms, id);

        if (r < 0)
                return r;
        ms->off[id] |= reason;
        return 0;
}

const char *markers_name(const MarkerState *ms, uint32_t id) {
        return ms && id < ms->n_names ? ms->names[id] : NULL;
}

static int read_remote(pid_t pid, uint64_t addr, void *buf, size_t n) {
        struct iovec local = { buf, n }, remote = { (void *) (uintptr_t) addr, n };
        ssize_t k = process_vm_readv(pid, &local, 1, &remote, 1, 0);

        if (k < 0)
                return errno == ESRCH ? -ESRCH : -errno;
        return (size_t) k == n ? 0 : -EFAULT;
}

int markers_read_abi(pid_t pid, uint64_t addr, struct lmk_abi *ret) {
        struct lmk_abi a;
        int r;

        r = read_remote(pid, addr, &a, sizeof(a));
        if (r < 0)
                return r;
        if (memcmp(a.magic, LMK_ABI_MAGIC, sizeof(a.magic)) != 0 || a.version != LMK_ABI_VERSION ||
            a.thread_size < sizeof(struct lmk_thread) || a.capacity > LMK_REGIONS_MAX ||
            a.n_regions > a.capacity)
                return -EBADMSG;
        *ret = a;
        return 0;
}


int markers_read_regions(MarkerState *ms, pid_t pid, const struct lmk_abi *abi) {
        _cleanup_free_ struct lmk_region *v = NULL;
        uint32_t n = abi->n_regions;
        int r;

        if (n == 0 || abi->regions == 0)
                return 0;
        v = calloc(n, sizeof(*v));
        if (!v)
                return -ENOMEM;
        r = read_remote(pid, abi->regions, v, n * sizeof(*v));
        if (r < 0)
                return r;
        for (uint32_t i = 0; i < n; i++) {
                if (v[i].id != i + 1)
                        continue; /* not (yet) complete */
                v[i].name[sizeof(v[i].name) - 1] = '\0';
                r = markers_set_name(ms, v[i].id, v[i].name);
                if (r < 0)
                        return r;
                if (v[i].flags)
                        (void) markers_set_off(ms, v[i].id, v[i].flags);
        }
        return 0;
}

void markers_path(const MarkerState *ms, const uint32_t *stack, uint32_t depth, char *buf, size_t size) {
        size_t len = 0;

        buf[0] = '\0';
        depth = MIN(depth, (uint32_t) LMK_PHASE_DEPTH);
        for (uint32_t i = 0; i < depth && len + 1 < size; i++) {
                const char *name = markers_name(ms, stack[i]);
                int k;

                if (name)
                        k = snprintf(buf + len, size - len, "%s%s", i ? "/" : "", name);
                else
                        k = snprintf(buf + len, size - len, "%s#%u", i ? "/" : "", stack[i]);
                if (k < 0)
                        break;
                len += (size_t) k;
        }
        if (len >= size)
                buf[size - 1] = '\0';
}

const char *marker_off_reason(uint32_t reason) {
        if (reason & LMK_REGION_OFF_RATE)
                return "off-rate";
        if (reason & LMK_REGION_OFF_ENV)
                return "off-env";
        if (reason & LMK_REGION_OFF_FULL)
                return "off-full";
        return "on";
}
