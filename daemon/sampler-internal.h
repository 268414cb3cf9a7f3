/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "sampler-load.h"
#include "sampler.h"

/* What the sampler's three parts share, for them alone: sampler.c (the
 * per-CPU events, counters and the ring), sampler-usdt.c (liblmk's probes
 * and the processes that use it) and task-accounting.c (exact totals per
 * process from the task iterator and the exit program). sampler.c sets up
 * and tears down the other two; they call only the loader below them
 * (bpf/sampler-load.h), never back. */

typedef struct SamplerCpu {
        int fd;                 /* the sampling event */
        int link_fd;            /* lmk_sample on it */
        int burst_fd, burst_link_fd; /* the 1 kHz burst event, when bursts are on */
        int counter_fd[LMK_MAX_COUNTERS];
        uint64_t counter_base[LMK_MAX_COUNTERS][3]; /* count, enabled, running of closed opens */
        uint64_t enabled_base;  /* enabled ns accumulated by earlier opens */
        uint64_t enabled_last;  /* last reading of the open event */
} SamplerCpu;

typedef struct SamplerUsdt {
        int fork_link, exec_link;       /* children inherit their parent's liblmk state */
        struct {
                char *path;
                struct bpf_link *links[3];
        } *liblmk;
        size_t n_liblmk;
} SamplerUsdt;

typedef struct TaskAccounting {
        int exit_link, iter_link;
        struct lmk_thread_acct *threads; /* the task iterator's last read */
        size_t alloc_threads;
        /* task_acct as last read: walking a hash map costs every bucket,
         * so it is read again only after threads exited or entries went */
        uint32_t *exited_keys;
        struct lmk_task_acct *exited_values;
        size_t n_exited, alloc_exited;
        uint64_t exits_seen;
        bool exited_stale;
        struct lmk_sample_stats *stats_buf;
        uint8_t thread_field[LMK_MAX_COUNTERS]; /* enum lmk_thread_field */
        uint32_t thread_counted;        /* bit i: thread_field[i] is one */
} TaskAccounting;

struct Sampler {
        SamplerObjects *objects;
        SamplerFds fds;         /* owned by objects */
        int switch_link;        /* the context-switch program's link (-EBADF: none) */
        struct ring_buffer *rb;
        SamplerConfig cfg;
        SampleEvent event;      /* resolved: never AUTO */
        /* a job's user has the PMU (sbatch --lmk=nocounters): hardware
         * counters closed, sampling on cpu-clock (sampler_release_pmu()) */
        bool pmu_released;
        unsigned n_cpus;
        SamplerCpu *cpus;
        sampler_cb_t cb;
        void *userdata;
        uint64_t base_period;   /* cpu-clock: ns between samples */
        unsigned rand_state;
        EventSpec events[LMK_MAX_COUNTERS];
        size_t n_events;
        CounterState counters[LMK_MAX_COUNTERS];
        SamplerUsdt usdt;
        TaskAccounting acct;
};

/* sampler-usdt.c: the fork and exec programs, attached before sampling
 * starts; done detaches them and liblmk's probes. */
void sampler_usdt_init(SamplerUsdt *u);
int sampler_usdt_start(Sampler *s);
void sampler_usdt_done(SamplerUsdt *u);

/* task-accounting.c: pick_fields chooses the counters the threads keep
 * themselves (before the programs load: they are told which); start
 * attaches the exit program and the task iterator, before sampling starts. */
void task_accounting_init(TaskAccounting *a);
void task_accounting_pick_fields(TaskAccounting *a, const EventSpec *events, size_t n_events);
int task_accounting_start(Sampler *s);
void task_accounting_done(TaskAccounting *a);
