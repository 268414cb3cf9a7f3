/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Records the BPF programs hand to lmkd, shared by both sides: fixed-width
 * types only, no pointers, explicit padding. */
#pragma once

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* liblmk's ABI: the per-thread state and region table the programs and
 * lmkd read from applications. By path, so that everything compiled with
 * bpf/ in its include path (the programs, lmkd, its unit tests) finds it. */
#include "../liblmk/lmk-abi.h"

#define LMK_COMM_LEN 16
#define LMK_PHASE_DEPTH LMK_MAX_DEPTH
#define LMK_MAX_CPUS 4096
#define LMK_MAX_COUNTERS 4      /* roles: 0 cycles, 1 instructions, 2-3 extra events */

enum lmk_event_type {
        LMK_EVENT_SAMPLE = 1,
        LMK_EVENT_REGION = 2,           /* liblmk registered a region (USDT lmk:region) */
        LMK_EVENT_REGION_OFF = 3,       /* liblmk switched a region off (USDT lmk:region_off) */
        LMK_EVENT_BURST = 4,            /* a struct lmk_sample of a burst: its window is the
                                           ~1 ms since the sample or burst sample before */
};

#define LMK_BURST_SAMPLES 3             /* taken after a sample that starts a burst */

#define LMK_REGION_NAME_LEN LMK_REGION_NAME_SIZE
#define LMK_REGION_WHERE_LEN LMK_REGION_WHERE_SIZE

/* Every ring record starts like this, so they sort by time together. */
struct lmk_event_header {
        __u32 type;
        __u32 cpu;
        __u64 time_ns;                  /* CLOCK_MONOTONIC */
};

struct lmk_region_event {
        __u32 type;                     /* LMK_EVENT_REGION or LMK_EVENT_REGION_OFF */
        __u32 cpu;
        __u64 time_ns;
        __u32 pid;
        __u32 id;
        __u32 reason;                   /* REGION_OFF: LMK_REGION_OFF_* */
        __u32 _pad;
        char name[LMK_REGION_NAME_LEN];
        char where[LMK_REGION_WHERE_LEN];
};

enum lmk_sample_flags {
        LMK_SAMPLE_KERNEL = 1u << 0,     /* the interrupted context was kernel mode */
        LMK_SAMPLE_PHASE = 1u << 1,      /* phase_depth/phase_stack are valid */
        LMK_SAMPLE_PHASE_FAULT = 1u << 2,/* the process has markers, but reading them failed */
        LMK_SAMPLE_WINDOW = 1u << 3,     /* window_ns/counts are valid */
        LMK_SAMPLE_MULTIPLEXED = 1u << 4,/* a counter did not run the whole window */
};

struct lmk_sample {
        __u32 type;                     /* LMK_EVENT_SAMPLE */
        __u32 cpu;
        __u64 time_ns;                  /* CLOCK_MONOTONIC */
        __u64 ip;
        /* In a kernel sample of a user task, where its user-space code
         * entered the kernel (the user registers' instruction pointer): a
         * system call made by an MPI library is the rank's communication.
         * 0 otherwise. */
        __u64 user_ip;
        __u64 cgroup_id;                /* cgroup v2 id of the task */
        __u32 pid;                      /* thread group id, as the kernel's init namespace sees it */
        __u32 tid;
        __u32 uid;
        __u32 flags;                    /* enum lmk_sample_flags */
        __u32 phase_depth;
        __u32 _pad;
        __u32 phase_stack[LMK_PHASE_DEPTH];
        char comm[LMK_COMM_LEN];        /* the thread's name */
        /* The window this sample closes: since the previous sample or the
         * last context switch on this CPU, whichever came later, so a
         * window never spans two tasks. */
        __u64 window_ns;
        __u64 counts[LMK_MAX_COUNTERS];
        __u32 counts_valid;             /* bit i: counts[i] was read */
        __u32 _pad2;
};

/* Counters the kernel keeps per thread anyway. lmkd's exact totals take
 * them from the thread itself (the task iterator, the exit hook), with no
 * program at context switches and no per-job perf event: nothing runs at
 * a switch for them. */
enum lmk_thread_field {
        LMK_FIELD_NONE = 0,             /* a counter only a perf event counts */
        LMK_FIELD_CPU_TIME,             /* se.sum_exec_runtime: task-clock, cpu-clock (ns) */
        LMK_FIELD_FAULTS,               /* min_flt + maj_flt: page-faults */
        LMK_FIELD_MIN_FAULTS,           /* min_flt: minor-faults */
        LMK_FIELD_MAJ_FAULTS,           /* maj_flt: major-faults */
        LMK_FIELD_SWITCHES,             /* nvcsw + nivcsw: context-switches */
        LMK_FIELD_MIGRATIONS,           /* se.nr_migrations: cpu-migrations */
};

/* Exact per-process totals: CPU time and switches from the scheduler's own
 * per-thread figures, counters from the thread's own fields where it keeps
 * them (enum lmk_thread_field), else from context-switch accounting (only
 * while a counter is open). lmkd sums the live threads (lmk_thread_acct records of
 * the task iterator) and the threads that exited (the task_acct map). */
struct lmk_task_acct {
        __u64 cpu_time_ns;
        __u64 counts[LMK_MAX_COUNTERS];
        __u64 switches;
        __u32 uid;                      /* of the process when first seen */
        __u32 _pad;
        char comm[LMK_COMM_LEN];        /* of its leader when first seen */
};

/* One live thread, as the task iterator reports it. */
struct lmk_thread_acct {
        __u32 tgid;
        __u32 uid;                      /* of the thread */
        __u64 cpu_time_ns;              /* se.sum_exec_runtime */
        __u64 switches;                 /* voluntary + involuntary */
        __u64 start_ns;                 /* the process's start, CLOCK_MONOTONIC */
        __u64 counts[LMK_MAX_COUNTERS]; /* since lmkd opened its counters */
        char comm[LMK_COMM_LEN];        /* of its leader */
};

/* Per-CPU counters of the sampling program. */
struct lmk_sample_stats {
        __u64 samples;                  /* handed to the ring buffer */
        __u64 lost;                     /* ring buffer full */
        __u64 phase_faults;             /* marker state unreadable */
        __u64 region_lost;              /* region events the ring could not take */
        __u64 bursts;                   /* bursts started */
        __u64 bursts_cut;               /* bursts ended early: another task ran */
        __u64 acct_full;                /* task accounting map full */
        __u64 thread_exits;             /* recorded in task_acct */
        /* What no sample window covered: from the last sample to the next
         * context switch. Windows plus gaps add up to the counters' totals. */
        __u64 gap_ns;
        __u64 gap_counts[LMK_MAX_COUNTERS];
        /* What sample windows covered. */
        __u64 window_ns;
        __u64 window_counts[LMK_MAX_COUNTERS];
};
