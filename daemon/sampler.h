/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "events.h"
#include "exact-totals.h"
#include "interval.h"
#include "lmk-bpf.h"
#include "macro.h"

/* The BPF sampler: one time-based perf event per online CPU with the
 * sampling program attached, and the ring buffer the program fills. */

typedef enum SampleEvent {
        SAMPLE_EVENT_AUTO,      /* ref-cycles where the PMU has them, else cpu-clock */
        SAMPLE_EVENT_CPU_CLOCK,
        SAMPLE_EVENT_REF_CYCLES,
} SampleEvent;

typedef struct SamplerConfig {
        double frequency;       /* per CPU, Hz */
        double jitter;          /* 0..0.5: relative spread of the sampling period */
        SampleEvent event;
        unsigned poll_ms;       /* how often lmkd drains the ring: sizes it */
        /* A sample of a process lmkd has not read (sampler_set_known())
         * wakes it at most once per this many ms; 0: never (lmkd's timer
         * drains every poll_ms anyway). */
        unsigned new_process_wake_ms;
        /* lmkd's timer drains every this many ms when nothing wakes it
         * (0: poll_ms): at low rates the ring holds that long
         * (ring-size.h) */
        unsigned quiet_poll_ms;
        const EventSpec *events; /* counters read with every sample and context switch */
        size_t n_events;
        unsigned max_tasks;     /* processes the exact accounting can track at once */
        double burst;           /* 0..1: fraction of samples followed by a burst */
        bool exact_counters;    /* split counters at context switches (a program on every switch) */
        bool use_libbpf;        /* load with libbpf, not the light skeleton (sampler-load.h) */
} SamplerConfig;

typedef struct Sampler Sampler;

/* Called for every record drained from the ring, in ring order: a sample
 * or a region event (see struct lmk_event_header). */
typedef int (*sampler_cb_t)(const struct lmk_event_header *e, size_t size, void *userdata);

int sampler_new(const SamplerConfig *cfg, unsigned n_possible_cpus, sampler_cb_t cb, void *userdata,
                Sampler **ret);
Sampler *sampler_free(Sampler *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(Sampler *, sampler_free);

/* Starts sampling on cpu (idempotent). -ENODEV: the CPU is offline. */
int sampler_cpu_open(Sampler *s, int cpu);
/* Stops sampling on cpu, keeping its accumulated enabled time. */
void sampler_cpu_close(Sampler *s, int cpu);

/* Drains the ring buffer through the callback. */
int sampler_drain(Sampler *s);
/* The ring buffer's fd: poll it edge-triggered (EPOLLET), so that it
 * reports the program's early wakeups and not merely pending data. */
int sampler_fd(const Sampler *s);

/* Total nanoseconds the CPU's sampling event has been enabled (summed over
 * open/close cycles): the basis of the expected sample count. */
uint64_t sampler_cpu_enabled_ns(Sampler *s, int cpu);
/* Gives the CPUs' hardware counters to a job's user (sbatch
 * --lmk=nocounters, release true) or takes them back: counters that use
 * the PMU are closed on every CPU and sampling goes on with cpu-clock
 * (software events stay open). Returns the first error reopening a CPU. */
int sampler_release_pmu(Sampler *s, bool release);
bool sampler_pmu_released(const Sampler *s);

/* Re-draws each CPU's period for the jitter. */
void sampler_rejitter(Sampler *s);

const char *sampler_event_name(const Sampler *s);
/* 0 if the light skeleton loaded the programs; else why not (negative
 * errno): libbpf loaded them, reading the kernel's BTF into memory. */
int sampler_light_skeleton_error(const Sampler *s);
double sampler_frequency(const Sampler *s);
/* The program's counters of each possible CPU (ret holds n_possible_cpus). */
int sampler_stats(Sampler *s, struct lmk_sample_stats *ret);

const EventSpec *sampler_events(const Sampler *s, size_t *ret_n);
/* Attaches the liblmk probes (lmk:init, lmk:region, lmk:region_off) of the
 * ELF file at path, for every process that maps it. 0 if done before. */
int sampler_attach_liblmk(Sampler *s, const char *path);
/* Tells the sampling program the TLS offset of liblmk's state in pid. */
int sampler_set_marked(Sampler *s, uint32_t pid, int64_t tls_offset);
void sampler_forget_marked(Sampler *s, uint32_t pid);
/* Tells the sampling program that lmkd has read the process tgid: its
 * samples no longer wake lmkd (new_process_wake_ms). An exec or the
 * process's end forgets it in the kernel; forget does it from lmkd. */
int sampler_set_known(Sampler *s, uint32_t tgid);
void sampler_forget_known(Sampler *s, uint32_t tgid);

/* Reads every open counter fd: totals and multiplexing, per role. */
const CounterState *sampler_counters(Sampler *s, size_t *ret_n);

/* Hands each process's exact totals to cb, in the order of tgid. */
int sampler_read_task_acct(Sampler *s, task_totals_cb_t cb, void *userdata);
/* Whether the context-switch program runs: only while a counter is open. */
bool sampler_switch_hook_attached(const Sampler *s);
/* Bit i: counter role i is one the kernel keeps per thread (task-clock,
 * page-faults, context-switches, …): the exact totals count it from the
 * threads themselves, switch program or not. */
uint32_t sampler_thread_counted(const Sampler *s);
void sampler_forget_task(Sampler *s, uint32_t tgid);
