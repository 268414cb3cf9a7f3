/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "phases.h"
#include "util.h"

/* A process's liblmk memory is re-read after a miss at most this often. */
#define REREAD_INTERVAL_NS (UINT64_C(1000000000))

void phases_init(Phases *ph, ProcessTable *procs, JobTable *jobs, const PhaseHooks *hooks) {
        *ph = (Phases) { .hooks = *hooks, .procs = procs, .jobs = jobs };
}

void phases_done(Phases *ph) {
        free(ph->abi_pending);
        free(ph->off);
        ph->abi_pending = NULL;
        ph->off = NULL;
}

static int attach_probes(Phases *ph, const char *path) {
        return ph->hooks.attach_probes(ph->hooks.userdata, path);
}

static void queue_abi_read(Phases *ph, uint32_t pid);

/* Processes that started before lmkd: their liblmk announced itself to no
 * one, so its descriptor is read from their memory. */
int phases_find_running(Phases *ph, const char *const *liblmk_paths, uint64_t now) {
        Process *p;
        size_t i;
        int n = 0;

        for (const char *const *path = liblmk_paths; path && *path; path++) {
                int r = attach_probes(ph, *path);

                if (r < 0 && r != -ENOENT)
                        log_warning_errno(r, "Failed to attach to the marker probes of %s: %m", *path);
        }
        HASHMAP_FOREACH(p, ph->procs->procs, i)
                for (size_t k = 0; k < p->map.n; k++) {
                        uint64_t addr;

                        if (process_table_abi_address(ph->procs, p, &p->map.v[k], &addr) < 0)
                                continue;
                        if (p->map.v[k].obj->has_probes)
                                (void) attach_probes(ph, p->map.v[k].obj->path);
                        queue_abi_read(ph, p->pid);
                        n++;
                        break;
                }
        if (n > 0)
                log_info("%d running processes use markers.", n);
        phases_tick(ph, now);
        return n;
}

/* Reads liblmk's descriptor of the process (found through its mappings) and
 * with it the TLS offset and region names. Rate-limited per process. */
static int read_markers(Phases *ph, Process *p, uint64_t now) {
        MarkerState *ms = markers_of(p, true);
        struct lmk_abi abi;
        int r;

        if (!ms)
                return -ENOMEM;
        if (ms->last_read != 0 && now - ms->last_read < REREAD_INTERVAL_NS)
                return -EAGAIN;
        ms->last_read = now;
        if (ms->abi_addr == 0)
                for (size_t i = 0; i < p->map.n && ms->abi_addr == 0; i++) {
                        uint64_t addr;

                        if (process_table_abi_address(ph->procs, p, &p->map.v[i], &addr) >= 0)
                                ms->abi_addr = addr;
                }
        if (ms->abi_addr == 0)
                return -ENOENT;
        r = markers_read_abi((pid_t) p->pid, ms->abi_addr, &abi);
        if (r < 0)
                return r;
        if (abi.tls_offset == 0)
                return -EAGAIN; /* its constructor has not run yet */
        if (!ms->marked) {
                r = ph->hooks.set_marked(ph->hooks.userdata, p->pid, abi.tls_offset);
                if (r < 0)
                        return r;
                ms->marked = true;
        }
        return markers_read_regions(ms, (pid_t) p->pid, &abi);
}

static void note_region_off(Phases *ph, Process *p, const char *name, uint32_t uid, uint32_t reason) {
        Job *j = jobs_resolve(ph->jobs, p, uid, (double) now_ns(CLOCK_REALTIME) / 1e9);
        const char *job = j ? j->display : "";
        MarkerOff *x;

        /* its regions' names are the opted-out user's */
        if (job_opted_out(j))
                return;

        for (size_t i = 0; i < ph->n_off; i++) {
                x = &ph->off[i];
                if (streq(x->job, job) && streq(x->comm, p->comm) && streq(x->name, name) && x->reason == reason)
                        return;
        }
        if (ph->n_off == ph->alloc_off) {
                size_t na = MAX(ph->alloc_off * 2, (size_t) 16);

                if (na > 4096) /* a bounded report: one storm of regions is enough to see */
                        return;
                x = realloc(ph->off, na * sizeof(*x));
                if (!x)
                        return;
                ph->off = x;
                ph->alloc_off = na;
        }
        x = &ph->off[ph->n_off++];
        snprintf(x->job, sizeof(x->job), "%s", job);
        snprintf(x->comm, sizeof(x->comm), "%s", p->comm);
        snprintf(x->name, sizeof(x->name), "%s", name);
        x->uid = uid;
        x->reason = reason;
}

const char *phases_of_sample(Phases *ph, Process *p, const struct lmk_sample *s, uint64_t now, char *buf,
                                size_t size) {
        MarkerState *ms = markers_of(p, true);
        uint32_t depth = MIN(s->phase_depth, (uint32_t) LMK_PHASE_DEPTH);

        if (!ms)
                return "";
        /* an id we never heard of: registered before lmkd started, or its
         * probe event was lost; the process's own table has it */
        for (uint32_t i = 0; i < depth; i++)
                if (!markers_name(ms, s->phase_stack[i]) && p->exit_time == 0) {
                        (void) read_markers(ph, p, now);
                        break;
                }
        markers_path(ms, s->phase_stack, depth, buf, size);
        return buf;
}

void phases_apply_region(Phases *ph, const struct lmk_region_event *e, uint64_t now) {
        Process *p = process_table_get(ph->procs, e->pid);
        MarkerState *ms;
        char name[LMK_REGION_NAME_LEN];

        if (!p || p->exit_time != 0) {
                /* the process's records are lost or not read yet: ask /proc */
                if (process_table_scan(ph->procs, e->pid, 0, now, &p) < 0)
                        return;
        }
        ms = markers_of(p, true);
        if (!ms)
                return;
        /* the probe fired, so the sampling program knows its TLS offset */
        ms->marked = true;
        if (e->type == LMK_EVENT_REGION) {
                memcpy(name, e->name, sizeof(name));
                name[sizeof(name) - 1] = '\0';
                (void) markers_set_name(ms, e->id, name);
                ph->regions++;
        } else {
                const char *n = markers_name(ms, e->id);

                (void) markers_set_off(ms, e->id, e->reason);
                note_region_off(ph, p, n ?: "?", 0, e->reason);
        }
}

static void queue_abi_read(Phases *ph, uint32_t pid) {
        for (size_t i = 0; i < ph->n_abi_pending; i++)
                if (ph->abi_pending[i] == pid)
                        return;
        if (ph->n_abi_pending == ph->alloc_abi_pending) {
                size_t na = MAX(ph->alloc_abi_pending * 2, (size_t) 16);
                uint32_t *v;

                if (na > 65536)
                        return;
                v = realloc(ph->abi_pending, na * sizeof(*v));
                if (!v)
                        return;
                ph->abi_pending = v;
                ph->alloc_abi_pending = na;
        }
        ph->abi_pending[ph->n_abi_pending++] = pid;
}

/* A file was mapped executable: if it carries liblmk (a shared liblmk, or
 * an executable that links it in), attach its probes so every later process
 * announces itself, and read this process's descriptor after its
 * constructor ran (it may have run before the probes were attached). */
void phases_mapped(Phases *ph, uint32_t pid, uint64_t addr) {
        Process *p = process_table_get(ph->procs, pid);
        const Mapping *map;
        uint64_t abi;
        int r;

        if (!p || !(map = addrmap_find(&p->map, addr)) || map->obj->kind != OBJECT_FILE)
                return;
        if (map->obj->abi_tried && map->obj->abi_vaddr == 0)
                return;
        if (process_table_abi_address(ph->procs, p, map, &abi) < 0)
                return;
        if (map->obj->has_probes) {
                r = attach_probes(ph, map->obj->path);
                if (r > 0)
                        log_info("Attached to the marker probes of %s.", map->obj->path);
                else if (r < 0)
                        log_warning_errno(r, "Failed to attach to the marker probes of %s: %m", map->obj->path);
        }
        queue_abi_read(ph, pid);
}

/* Descriptors of processes that mapped liblmk; kept until one is read
 * with a TLS offset or the process is gone. */
void phases_tick(Phases *ph, uint64_t now) {
        size_t k = 0;

        for (size_t i = 0; i < ph->n_abi_pending; i++) {
                Process *p = process_table_get(ph->procs, ph->abi_pending[i]);
                MarkerState *ms = p ? markers_of(p, true) : NULL;
                int r;

                if (!p || !ms || p->exit_time != 0)
                        continue;
                if (ms->marked && ms->n_names > 0)
                        continue;
                ms->last_read = 0;
                r = read_markers(ph, p, now);
                if (r == -EAGAIN || (r >= 0 && !ms->marked))
                        ph->abi_pending[k++] = ph->abi_pending[i];
        }
        ph->n_abi_pending = k;
}


void phases_forget(Phases *ph, Process *p) {
        MarkerState *ms = p->userdata;

        if (ms && ms->marked)
                ph->hooks.forget_marked(ph->hooks.userdata, p->pid);
}

void phases_end_interval(Phases *ph) {
        ph->n_off = 0;
}
