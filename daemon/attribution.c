/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <string.h>

#include "attribution.h"
#include "macro.h"

/* A process is re-read from /proc after a miss at most this often. */
#define RESCAN_INTERVAL_NS (UINT64_C(1000000000))

static CodeKind row_kind(const Process *p, const Object *o) {
        switch (o->kind) {
        case OBJECT_FILE:
                return p && p->exe == o ? CODE_EXE : CODE_LIB;
        case OBJECT_VDSO:
                return CODE_LIB;
        case OBJECT_ANON:
                return CODE_ANON;
        case OBJECT_KERNEL:
                return CODE_KERNEL;
        case OBJECT_IDLE:
                return CODE_IDLE;
        default:
                return CODE_UNKNOWN;
        }
}

/* A process we have no entry for (records lost, or it predates us and
 * escaped the scan): read it now, or remember that it is gone. */
static Process *process_for_sample(Attribution *a, const struct lmk_sample *s, uint64_t now) {
        Process *p = process_table_get(a->procs, s->pid);
        char comm[COMM_LEN];

        if (p)
                return p;
        a->rescans++;
        if (process_table_scan(a->procs, s->pid, s->tid, now, &p) >= 0)
                return p;
        memcpy(comm, s->comm, sizeof(comm));
        comm[sizeof(comm) - 1] = '\0';
        return process_table_add_gone(a->procs, s->pid, comm, now);
}

/* The mapping of user address ip in the sample's process. */
static const Mapping *find_mapping(Attribution *a, Process **pp, const struct lmk_sample *s, uint64_t ip,
                                   uint64_t now) {
        Process *p = *pp;
        const Mapping *map = addrmap_find(&p->map, ip);

        if (map || p->exit_time != 0)
                return map;
        if (p->scan_time != 0 && now - p->scan_time < RESCAN_INTERVAL_NS)
                return NULL;
        /* An address we have no record of: mappings were missed (lost
         * records, or a process from before we started). Re-read it. */
        a->rescans++;
        if (process_table_scan(a->procs, s->pid, s->tid, now, pp) < 0) {
                p->scan_time = now;
                return NULL;
        }
        return addrmap_find(&(*pp)->map, ip);
}

/* A sample counts once in its row, and where it ran in a file (in_file:
 * the object of its mapping), at its offset in the file for naming its
 * function; a burst sample adds only its ~1 ms window to the row's burst
 * rates. */
static int add_sample(Histogram *h, const HistKey *key, const struct lmk_sample *s, const Object *in_file,
                      uint64_t offset) {
        HistRow *row = histogram_add(h, key, s->type == LMK_EVENT_SAMPLE ? 1 : 0);

        if (!row)
                return -ENOMEM;
        if (s->type != LMK_EVENT_SAMPLE) {
                histogram_add_burst(row, s);
                return 0;
        }
        histogram_add_window(row, s);
        /* not when the row is one of the overflow rows: its object is not the sample's */
        if (in_file && row->key.obj == in_file)
                return histogram_add_offset(h, row, offset, s);
        return 0;
}

/* Whether a sample in o is communication: o is a library of the "comm"
 * purpose (kernel samples: see kernel_for_comm()). */
static bool is_comm(const Attribution *a, Object *o) {
        if (o->kind != OBJECT_FILE || !a->families)
                return false;
        if (!o->comm_tried) {
                o->comm = lib_families_is(a->families, o->path, "comm");
                o->comm_tried = true;
        }
        return o->comm;
}

/* A rank's kernel sample is communication when the user-space code that
 * entered the kernel (a system call, a fault) is a communication library:
 * single-copy transfers (CMA) and progress loops in MPI spend their time
 * in system calls. */
static bool kernel_for_comm(Attribution *a, Process *p, const struct lmk_sample *s, uint64_t now) {
        const Mapping *map;

        if (!(s->flags & LMK_SAMPLE_KERNEL) || s->user_ip == 0 || (int64_t) s->user_ip < 0)
                return false;
        map = find_mapping(a, &p, s, s->user_ip, now);
        return map && is_comm(a, map->obj);
}

int attribute_sample(Attribution *a, Histogram *h, const struct lmk_sample *s, uint64_t now,
                     int64_t real_offset_ns) {
        HistKey key = { .phase = "" };
        const Mapping *map = NULL;
        const Object *in_file = NULL;
        uint64_t offset = 0, rescans;
        char comm[COMM_LEN], phase[1024];
        Process *p = NULL;
        Job *j = NULL;

        if (s->pid == 0) {
                /* the per-CPU idle tasks are all "swapper/N" */
                key.comm = "swapper";
                key.obj = object_table_get_special(a->objects, OBJECT_IDLE);
                key.kind = CODE_IDLE;
                return add_sample(h, &key, s, NULL, 0);
        }

        p = process_for_sample(a, s, now);
        if (p)
                j = jobs_resolve(a->jobs, p, s->uid, (double) ((int64_t) s->time_ns + real_offset_ns) / 1e9);
        rescans = a->rescans;
        if (job_opted_out(j)) {
                /* its user asked for privacy: the sample is counted, its
                 * code, object, phase and rank are not looked at */
                if (s->type == LMK_EVENT_SAMPLE) {
                        j->samples++;
                        j->private_samples++;
                }
                return 0;
        }
        if (s->flags & LMK_SAMPLE_KERNEL)
                key.obj = object_table_get_special(a->objects, OBJECT_KERNEL);
        else if (p && (map = find_mapping(a, &p, s, s->ip, now))) {
                key.obj = map->obj;
                if (key.obj->kind == OBJECT_FILE)
                        process_table_load_build_id(a->procs, p, map);
                /* taken now: a later re-read of the process's maps moves them */
                if (key.obj->kind == OBJECT_FILE || key.obj->kind == OBJECT_VDSO) {
                        in_file = key.obj;
                        offset = s->ip - map->start + map->pgoff;
                }
        } else {
                key.obj = object_table_get_special(a->objects, OBJECT_UNKNOWN);
                a->unknown++;
        }
        key.kind = row_kind(p, key.obj);

        if (p && p->comm[0])
                key.comm = p->comm;
        else {
                memcpy(comm, s->comm, sizeof(comm));
                comm[sizeof(comm) - 1] = '\0';
                key.comm = comm;
        }
        key.uid = s->uid;
        if ((s->flags & LMK_SAMPLE_PHASE) && s->phase_depth > 0 && p)
                key.phase = phases_of_sample(a->phases, p, s, now, phase, sizeof(phase));
        if (p) {
                /* again only if its maps were re-read above (find_mapping()),
                 * which may have made p anew */
                if (a->rescans != rescans)
                        j = jobs_resolve(a->jobs, p, s->uid,
                                         (double) ((int64_t) s->time_ns + real_offset_ns) / 1e9);
                if (j) {
                        key.job = j->display;
                        key.step = p->job.step[0] ? p->job.step : NULL;
                        /* what its energy is split by (energy.h); bursts are extra samples */
                        if (s->type == LMK_EVENT_SAMPLE)
                                j->samples++;
                }
                if (j && p->rank != JOB_UNSET && s->type == LMK_EVENT_SAMPLE) {
                        double t = (double) ((int64_t) s->time_ns + real_offset_ns) / 1e9;
                        RankKey rk = { .job = key.job, .step = key.step, .phase = key.phase, .rank = p->rank };

                        /* a rank row that cannot be had is counted as overflow, the sample's row still is */
                        bool in_comm = is_comm(a, key.obj) || kernel_for_comm(a, p, s, now);

                        (void) histogram_add_rank(h, &rk, 1, in_comm ? 1 : 0, t, t);
                }
        }
        return add_sample(h, &key, s, in_file, offset);
}

