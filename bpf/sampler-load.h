/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "lmk-bpf.h"
#include "macro.h"

/* Loads the sampling programs (sampler.bpf.c) and liblmk's probes
 * (markers.bpf.c), hands over their fds, and attaches a program or reads
 * the programs' counters by fd; lmkd's sampler (daemon/sampler.c) decides
 * what to attach when, and drives them. */

typedef struct SamplerParams {
        uint64_t ring_bytes;    /* the ring buffer: a power of two */
        uint64_t wakeup_bytes;
        uint64_t new_process_wake_ns; /* 0: samples of new processes do not wake lmkd */
        uint32_t n_counters;
        uint32_t n_cpus;        /* possible CPUs */
        uint32_t burst_threshold;
        uint32_t max_tasks;
        uint8_t thread_field[LMK_MAX_COUNTERS]; /* enum lmk_thread_field per counter role */
        bool exact_counters;
        bool use_libbpf;        /* skip the light skeleton */
} SamplerParams;

typedef struct SamplerFds {
        /* programs: no links yet */
        int lmk_switch, lmk_exit, lmk_tasks, lmk_fork, lmk_exec, lmk_sample, lmk_burst;
        /* maps */
        int events, stats, marked, counters, task_acct, known_tgids;
} SamplerFds;

typedef struct SamplerObjects SamplerObjects;

/* The light skeleton first, libbpf's skeleton when the kernel refuses it
 * (or p->use_libbpf). The fds stay valid until sampler_objects_free(). */
int sampler_objects_load(const SamplerParams *p, SamplerObjects **ret, SamplerFds *ret_fds);
SamplerObjects *sampler_objects_free(SamplerObjects *o);
DEFINE_TRIVIAL_CLEANUP_FUNC(SamplerObjects *, sampler_objects_free);

/* 0 if the light skeleton loaded; else why not (negative errno;
 * -ECANCELED: use_libbpf), and libbpf loaded the programs, reading the
 * kernel's BTF to do so. */
int sampler_objects_light_error(const SamplerObjects *o);

/* The probes of liblmk's USDT notes (libbpf attaches them by path). */
struct bpf_program *sampler_objects_liblmk_probe(SamplerObjects *o, int k);

/* Attaches a tp_btf or iter program by its fd (a light skeleton has no
 * bpf_program): returns the link's fd, or -errno. */
int sampler_link_tracing(int prog_fd, bool iter);

/* Reads the programs' counters (the stats map) of each of the n_cpus
 * possible CPUs into ret; -EINVAL when n_cpus is not the kernel's count. */
int sampler_stats_read(int stats_fd, unsigned n_cpus, struct lmk_sample_stats *ret);
