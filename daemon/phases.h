/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>

#include "job-table.h"
#include "liblmk-state.h"
#include "lmk-bpf.h"
#include "process.h"

/* Phases: which processes use liblmk, the names of their regions, the
 * phase path of a sample, and the regions switched off in an interval.
 * The sampling program is reached through hooks, so this runs (and is
 * tested) without BPF. */

typedef struct PhaseHooks {
        /* attach the lmk:* probes of the ELF file at path: 1 new, 0 known, <0 error */
        int (*attach_probes)(void *userdata, const char *path);
        /* tell the sampling program where liblmk's thread state lies in pid */
        int (*set_marked)(void *userdata, uint32_t pid, int64_t tls_offset);
        void (*forget_marked)(void *userdata, uint32_t pid);
        void *userdata;
} PhaseHooks;

/* A region switched off in this interval, for the report and the batch. */
typedef struct MarkerOff {
        char job[JOB_ID_SIZE];          /* "" outside jobs */
        char comm[COMM_LEN];
        char name[LMK_REGION_NAME_LEN];
        uint32_t uid;
        uint32_t reason;
} MarkerOff;

typedef struct Phases {
        PhaseHooks hooks;
        ProcessTable *procs;
        JobTable *jobs;
        uint32_t *abi_pending;          /* processes whose liblmk descriptor is to be read */
        size_t n_abi_pending, alloc_abi_pending;
        MarkerOff *off;                 /* switched off in this interval */
        size_t n_off, alloc_off;
        uint64_t regions;               /* region names learned from probes */
} Phases;

void phases_init(Phases *ph, ProcessTable *procs, JobTable *jobs, const PhaseHooks *hooks);
void phases_done(Phases *ph);

/* Processes that started before lmkd: their liblmk announced itself to no
 * one, so its descriptor is read from their memory. Attaches the probes of
 * the given liblmk copies first. Returns how many processes use markers. */
int phases_find_running(Phases *ph, const char *const *liblmk_paths, uint64_t now);
/* pid mapped a file executable at addr: if it carries liblmk, attach its
 * probes and read the process's descriptor soon. */
void phases_mapped(Phases *ph, uint32_t pid, uint64_t addr);
/* A region registered or switched off (the lmk:region* probes). */
void phases_apply_region(Phases *ph, const struct lmk_region_event *e, uint64_t now);
/* "outer/inner" for a sample of p with a phase stack, in buf. */
const char *phases_of_sample(Phases *ph, Process *p, const struct lmk_sample *s, uint64_t now, char *buf,
                             size_t size);
/* Reads the descriptors still pending; once a tick. */
void phases_tick(Phases *ph, uint64_t now);
/* p leaves the process table. */
void phases_forget(Phases *ph, Process *p);
void phases_end_interval(Phases *ph);
