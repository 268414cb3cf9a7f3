// SPDX-License-Identifier: GPL-2.0-or-later
/* The sampling program: attached to one time-based perf event per CPU, it
 * records which task was running where, and the task's marker phase, into a
 * ring buffer that lmkd drains on a timer. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "lmk-bpf.h"
#include "shared-maps.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Wake lmkd early only when the ring is this full; otherwise its timer
 * collects the samples (a wakeup per sample costs more than the sample). */
const volatile __u64 wakeup_bytes = 64 * 1024;
/* A sample of a process lmkd does not know yet (not in known_tgids) wakes
 * it, at most once per this many ns on the whole node, so that it reads
 * the process (job, mappings) while it lives; samples of processes it knows
 * wait for its timer. 0: never (the timer drains often enough). */
const volatile __u64 new_process_wake_ns = 0;
/* Counters lmkd opened (roles 0..n_counters-1), and the number of possible
 * CPUs: the counter of role r on CPU c sits at index r * n_cpus + c. */
const volatile __u32 n_counters = 0;
const volatile __u32 n_cpus = 1;
/* Whether the context-switch program runs (lmkd's --exact-counters): then
 * it ends every window at a switch; otherwise a sample checks that its
 * window saw no switch. */
const volatile __u32 exact_counters = 0;
/* A sample starts a burst when a random u32 falls below this: 0 = never. */
const volatile __u32 burst_threshold = 0;
/* Per counter role: the thread's own field that counts the same (enum
 * lmk_thread_field), or LMK_FIELD_NONE. */
const volatile __u8 thread_field[LMK_MAX_COUNTERS] = {};

struct {
        __uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
        __uint(key_size, sizeof(__u32));
        __uint(value_size, sizeof(__u32));
        __uint(max_entries, LMK_MAX_COUNTERS); /* resized by lmkd: roles x CPUs */
} counters SEC(".maps");

/* Each CPU's baselines: where the current sample window and the current
 * task's time slice began. */
struct cpu_state {
        __u64 switch_time;
        __u64 switch_counts[LMK_MAX_COUNTERS];
        __u64 window_time;
        __u64 window_counts[LMK_MAX_COUNTERS];
        __u32 valid;                    /* counters read at the baselines */
        __u32 multiplexed;
        __u32 window_tid;               /* the thread the window began with */
        __u32 _pad0;
        __u64 window_switches;          /* and its context switches then */
        /* a burst in progress: LMK_BURST_SAMPLES more samples of one thread */
        __u64 burst_time;
        __u64 burst_counts[LMK_MAX_COUNTERS];
        __u32 burst_valid;
        __u32 burst_left;
        __u32 burst_tid;
        __u32 _pad;
};

struct {
        __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
        __uint(max_entries, 1);
        __type(key, __u32);
        __type(value, struct cpu_state);
} cpu_states SEC(".maps");

/* tgid → exact totals of the threads that exited since lmkd started; the
 * live threads are read with the task iterator (lmk_tasks). */
struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, 65536); /* resized by lmkd */
        __type(key, __u32);
        __type(value, struct lmk_task_acct);
} task_acct SEC(".maps");

/* Counter totals of each thread, in the thread's own storage: a context
 * switch finds them through the task, with no hash lookup or insert. */
struct thread_counts {
        __u64 counts[LMK_MAX_COUNTERS];
};

struct {
        __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
        __uint(map_flags, BPF_F_NO_PREALLOC);
        __type(key, int);
        __type(value, struct thread_counts);
} thread_counts SEC(".maps");

/* The processes (tgid) lmkd has read: their samples need not wake it.
 * lmkd adds them; exec and the process's end take them out again. */
struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, 65536); /* resized by lmkd */
        __type(key, __u32);
        __type(value, __u8);
} known_tgids SEC(".maps");

/* When a sample of an unknown process may wake lmkd next (ktime ns). Two
 * CPUs may both wake it at the same instant: harmless. */
struct {
        __uint(type, BPF_MAP_TYPE_ARRAY);
        __uint(max_entries, 1);
        __type(key, __u32);
        __type(value, __u64);
} next_wake SEC(".maps");

#define PF_EXITING 0x00000004   /* include/linux/sched.h */

/* Kernel text lives in the upper half of the address space on every 64-bit
 * architecture we support, and user space in the lower half (the x86-64
 * vsyscall page is the one exception, and executing it traps into the
 * kernel anyway). This also avoids reading pt_regs->cs, whose width the
 * verifier's context checks make awkward. */
static __always_inline bool in_kernel(__u64 ip) {
        return (__s64) ip < 0;
}

static __always_inline __u64 thread_pointer(void) {
        struct task_struct *t = bpf_get_current_task_btf();
#if defined(__TARGET_ARCH_x86)
        return BPF_CORE_READ(t, thread.fsbase);
#elif defined(__TARGET_ARCH_arm64)
        return BPF_CORE_READ(t, thread.uw.tp_value);
#else
        return 0;
#endif
}

static __always_inline void read_phase(struct lmk_sample *s, struct lmk_sample_stats *st) {
        struct lmk_thread th;           /* liblmk's lmk_tls (lmk-abi.h) */
        __s64 *off;
        __u64 tp;

        off = bpf_map_lookup_elem(&marked, &s->pid);
        if (!off)
                return;
        tp = thread_pointer();
        if (!tp || bpf_probe_read_user(&th, sizeof(th), (void *) (tp + *off)) < 0) {
                s->flags |= LMK_SAMPLE_PHASE_FAULT;
                if (st)
                        st->phase_faults++;
                return;
        }
        s->phase_depth = th.depth;
        __builtin_memcpy(s->phase_stack, th.stack, sizeof(s->phase_stack));
        s->flags |= LMK_SAMPLE_PHASE;
}

/* Reads this CPU's counters; returns the bit mask of those that answered. */
static __always_inline __u32 read_counters(__u64 *out, __u32 *multiplexed) {
        __u32 cpu = bpf_get_smp_processor_id(), valid = 0;

        for (__u32 i = 0; i < LMK_MAX_COUNTERS; i++) {
                struct bpf_perf_event_value v;

                /* every entry written: callers copy all of them */
                out[i] = 0;
                if (i >= n_counters)
                        continue;
                if (bpf_perf_event_read_value(&counters, i * n_cpus + cpu, &v, sizeof(v)) < 0)
                        continue;
                out[i] = v.counter;
                valid |= 1u << i;
                if (v.running < v.enabled)
                        *multiplexed = 1;
        }
        return valid;
}

/* Roles the threads keep themselves (thread_field[]): nothing to split at a
 * switch for them. */
static __always_inline __u32 thread_kept(void) {
        __u32 mask = 0;

        for (__u32 i = 0; i < LMK_MAX_COUNTERS; i++)
                if (thread_field[i] != LMK_FIELD_NONE)
                        mask |= 1u << i;
        return mask;
}

/* Attached only while a counter is open: it splits the counters at every
 * context switch, so that a sample's window never spans two tasks and each
 * thread's counts are exact. CPU time needs no such hook (lmk_tasks). */
SEC("tp_btf/sched_switch")
int BPF_PROG(lmk_switch, bool preempt, struct task_struct *prev, struct task_struct *next) {
        __u32 zero = 0, valid, both, split, mux = 0;
        struct cpu_state *cs = bpf_map_lookup_elem(&cpu_states, &zero);
        struct lmk_sample_stats *st;
        __u64 now, cur[LMK_MAX_COUNTERS];

        if (!cs)
                return 0;
        now = bpf_ktime_get_ns();
        valid = read_counters(cur, &mux);
        both = valid & cs->valid;
        split = both & ~thread_kept();

        if (cs->switch_time && prev->pid != 0 && split) {
                struct thread_counts *tc;

                tc = bpf_task_storage_get(&thread_counts, prev, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
                if (tc) {
                        for (__u32 i = 0; i < LMK_MAX_COUNTERS; i++)
                                if (split & (1u << i))
                                        tc->counts[i] += cur[i] - cs->switch_counts[i];
                } else if ((st = bpf_map_lookup_elem(&stats, &zero)))
                        st->acct_full++;
        }
        /* the part of the slice after its last sample belongs to no window */
        if (cs->window_time && (st = bpf_map_lookup_elem(&stats, &zero))) {
                st->gap_ns += now - cs->window_time;
                for (__u32 i = 0; i < LMK_MAX_COUNTERS; i++)
                        if (both & (1u << i))
                                st->gap_counts[i] += cur[i] - cs->window_counts[i];
        }
        cs->switch_time = now;
        cs->window_time = now;
        for (__u32 i = 0; i < LMK_MAX_COUNTERS; i++) {
                cs->switch_counts[i] = cur[i];
                cs->window_counts[i] = cur[i];
        }
        cs->valid = valid;
        cs->multiplexed = mux;
        return 0;
}

/* A counter the thread keeps itself (thread_field[i]): its total so far. */
static __always_inline __u64 thread_field_value(const struct task_struct *t, __u32 i) {
        switch (thread_field[i]) {
        case LMK_FIELD_CPU_TIME:
                return t->se.sum_exec_runtime;
        case LMK_FIELD_FAULTS:
                return t->min_flt + t->maj_flt;
        case LMK_FIELD_MIN_FAULTS:
                return t->min_flt;
        case LMK_FIELD_MAJ_FAULTS:
                return t->maj_flt;
        case LMK_FIELD_SWITCHES:
                return t->nvcsw + t->nivcsw;
        case LMK_FIELD_MIGRATIONS:
                return t->se.nr_migrations;
        }
        return 0;
}

/* A thread's last figures, before it leaves the task list: the iterator
 * no longer reports it (it skips exiting threads). Exits are rare next to
 * context switches, so a hash update here costs nothing a job notices. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(lmk_exit, struct task_struct *p, bool group_dead) {
        __u32 tgid = p->tgid, zero = 0;
        struct lmk_task_acct *a;
        struct thread_counts *tc;

        if (tgid == 0)
                return 0;
        if (group_dead)
                bpf_map_delete_elem(&known_tgids, &tgid); /* its pid may be reused */
        a = bpf_map_lookup_elem(&task_acct, &tgid);
        if (!a) {
                struct lmk_task_acct fresh = {};

                fresh.uid = BPF_CORE_READ(p, cred, uid.val);
                BPF_CORE_READ_STR_INTO(&fresh.comm, p, group_leader, comm);
                bpf_map_update_elem(&task_acct, &tgid, &fresh, BPF_NOEXIST);
                a = bpf_map_lookup_elem(&task_acct, &tgid);
        }
        if (!a) {
                struct lmk_sample_stats *st = bpf_map_lookup_elem(&stats, &zero);

                if (st)
                        st->acct_full++;
                return 0;
        }
        /* two threads of one process may exit on two CPUs at once */
        __sync_fetch_and_add(&a->cpu_time_ns, p->se.sum_exec_runtime);
        __sync_fetch_and_add(&a->switches, p->nvcsw + p->nivcsw);
        tc = bpf_task_storage_get(&thread_counts, p, NULL, 0);
        for (__u32 i = 0; i < LMK_MAX_COUNTERS; i++)
                if (thread_field[i] != LMK_FIELD_NONE)
                        __sync_fetch_and_add(&a->counts[i], thread_field_value(p, i));
                else if (tc)
                        __sync_fetch_and_add(&a->counts[i], tc->counts[i]);
        if (n_counters > 0) {
                /* The thread's last slice: its final switch-out comes after
                 * this, too late for these totals. From here on the CPU's
                 * counts belong to whatever runs next. */
                struct cpu_state *cs = bpf_map_lookup_elem(&cpu_states, &zero);
                __u64 cur[LMK_MAX_COUNTERS];
                __u32 mux = 0, both;

                if (cs && cs->switch_time) {
                        both = read_counters(cur, &mux) & cs->valid;
                        for (__u32 i = 0; i < LMK_MAX_COUNTERS; i++)
                                if (both & ~thread_kept() & (1u << i)) {
                                        __sync_fetch_and_add(&a->counts[i], cur[i] - cs->switch_counts[i]);
                                        cs->switch_counts[i] = cur[i];
                                }
                }
        }
        {
                struct lmk_sample_stats *st = bpf_map_lookup_elem(&stats, &zero);

                /* last: lmkd reads task_acct again only when this moved,
                 * so the entry must be complete by then */
                if (st)
                        __sync_fetch_and_add(&st->thread_exits, 1);
        }
        return 0;
}

/* Every live thread's exact figures, read by lmkd a few times a minute:
 * one system call for all of them, and nothing between the reads. */
SEC("iter/task")
int lmk_tasks(struct bpf_iter__task *ctx) {
        struct task_struct *t = ctx->task;
        struct lmk_thread_acct r = {};
        struct thread_counts *tc;

        if (!t || (t->flags & PF_EXITING))
                return 0;
        r.tgid = t->tgid;
        r.uid = BPF_CORE_READ(t, cred, uid.val);
        r.cpu_time_ns = t->se.sum_exec_runtime;
        r.switches = t->nvcsw + t->nivcsw;
        r.start_ns = BPF_CORE_READ(t, group_leader, start_time);
        BPF_CORE_READ_STR_INTO(&r.comm, t, group_leader, comm);
        tc = bpf_task_storage_get(&thread_counts, t, NULL, 0);
        for (__u32 i = 0; i < LMK_MAX_COUNTERS; i++)
                if (thread_field[i] != LMK_FIELD_NONE)
                        r.counts[i] = thread_field_value(t, i);
                else if (tc)
                        r.counts[i] = tc->counts[i];
        bpf_seq_write(ctx->meta->seq, &r, sizeof(r));
        return 0;
}

static __always_inline __u64 current_switches(void) {
        struct task_struct *t = bpf_get_current_task_btf();

        return t->nvcsw + t->nivcsw;
}

/* Closes the current window at a sample. A window is whole when one thread
 * ran on this CPU for all of it: with the switch program, every switch
 * starts a new window; without it, the sample checks that the thread is
 * the one the window began with and that it did not switch meanwhile. A
 * window that is not whole counts as a gap. */
static __always_inline void close_window(struct lmk_sample *s, struct lmk_sample_stats *st) {
        __u32 zero = 0, valid, mux = 0;
        struct cpu_state *cs = bpf_map_lookup_elem(&cpu_states, &zero);
        __u64 cur[LMK_MAX_COUNTERS], switches;
        bool whole;

        s->window_ns = 0;
        s->counts_valid = 0;
        s->_pad2 = 0;
        for (__u32 i = 0; i < LMK_MAX_COUNTERS; i++)
                s->counts[i] = 0;
        if (!cs)
                return;
        valid = read_counters(cur, &mux);
        switches = current_switches();
        whole = exact_counters || (cs->window_tid == s->tid && cs->window_switches == switches);
        if (cs->window_time && whole) {
                s->window_ns = s->time_ns - cs->window_time;
                s->flags |= LMK_SAMPLE_WINDOW;
                s->counts_valid = valid & cs->valid;
                for (__u32 i = 0; i < LMK_MAX_COUNTERS; i++)
                        if (s->counts_valid & (1u << i))
                                s->counts[i] = cur[i] - cs->window_counts[i];
                if (mux || cs->multiplexed)
                        s->flags |= LMK_SAMPLE_MULTIPLEXED;
                if (st) {
                        st->window_ns += s->window_ns;
                        for (__u32 i = 0; i < LMK_MAX_COUNTERS; i++)
                                st->window_counts[i] += s->counts[i];
                }
        } else if (cs->window_time && st) {
                st->gap_ns += s->time_ns - cs->window_time;
                for (__u32 i = 0; i < LMK_MAX_COUNTERS; i++)
                        if (valid & cs->valid & (1u << i))
                                st->gap_counts[i] += cur[i] - cs->window_counts[i];
        }
        cs->window_time = s->time_ns;
        cs->window_tid = s->tid;
        cs->window_switches = switches;
        for (__u32 i = 0; i < LMK_MAX_COUNTERS; i++)
                cs->window_counts[i] = cur[i];
        cs->valid = valid;
        cs->multiplexed = mux;
}

/* A forked child has its parent's memory, liblmk's state included. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(lmk_fork, struct task_struct *parent, struct task_struct *child) {
        __u32 ptgid = parent->tgid, ctgid = child->tgid;
        __s64 *off;

        if (ptgid == ctgid)
                return 0; /* a thread */
        off = bpf_map_lookup_elem(&marked, &ptgid);
        if (off) {
                __s64 v = *off;
                bpf_map_update_elem(&marked, &ctgid, &v, BPF_ANY);
        }
        return 0;
}

/* exec replaces the image: its liblmk, if any, announces itself anew */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(lmk_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm) {
        __u32 tgid = p->tgid;

        bpf_map_delete_elem(&marked, &tgid);
        bpf_map_delete_elem(&known_tgids, &tgid); /* another program: lmkd reads it again */
        return 0;
}

static __always_inline void fill_sample(struct bpf_perf_event_data *ctx, struct lmk_sample *s, __u32 type,
                                        struct lmk_sample_stats *st) {
        __u64 id = bpf_get_current_pid_tgid();

        s->type = type;
        s->cpu = bpf_get_smp_processor_id();
        s->time_ns = bpf_ktime_get_ns();
        s->ip = PT_REGS_IP(&ctx->regs);
        s->cgroup_id = bpf_get_current_cgroup_id();
        s->pid = id >> 32;
        s->tid = (__u32) id;
        s->uid = (__u32) bpf_get_current_uid_gid();
        s->_pad = 0;
        s->flags = in_kernel(s->ip) ? LMK_SAMPLE_KERNEL : 0;
        s->user_ip = 0;
        if ((s->flags & LMK_SAMPLE_KERNEL) && s->pid != 0) {
                struct pt_regs *regs = (struct pt_regs *) bpf_task_pt_regs(bpf_get_current_task_btf());

                if (regs)
                        s->user_ip = PT_REGS_IP_CORE(regs);
        }
        s->phase_depth = 0;
        __builtin_memset(s->phase_stack, 0, sizeof(s->phase_stack));
        bpf_get_current_comm(s->comm, sizeof(s->comm));
        if (s->pid != 0)
                read_phase(s, st);
}

/* Whether a sample should wake lmkd now, not at its timer: it is of a
 * process lmkd has not read, and no such sample woke it lately. */
static __always_inline bool wake_for_new_process(const struct lmk_sample *s) {
        __u32 zero = 0;
        __u64 *next;

        if (new_process_wake_ns == 0 || s->pid == 0 || bpf_map_lookup_elem(&known_tgids, &s->pid))
                return false;
        next = bpf_map_lookup_elem(&next_wake, &zero);
        if (!next || s->time_ns < *next)
                return false;
        *next = s->time_ns + new_process_wake_ns;
        return true;
}

static __always_inline void submit(struct lmk_sample *s, bool may_wake_for_new) {
        __u64 flags = BPF_RB_NO_WAKEUP;

        if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ||
            (may_wake_for_new && wake_for_new_process(s)))
                flags = BPF_RB_FORCE_WAKEUP;
        bpf_ringbuf_submit(s, flags);
}

/* A sample may start a burst: the burst event's next few ticks on this CPU
 * measure rates (IPC, events per second) over ~1 ms windows at this code
 * location. */
static __always_inline void maybe_start_burst(const struct lmk_sample *s, struct lmk_sample_stats *st) {
        __u32 zero = 0, mux = 0;
        struct cpu_state *cs;

        if (burst_threshold == 0 || s->pid == 0 || bpf_get_prandom_u32() >= burst_threshold)
                return;
        cs = bpf_map_lookup_elem(&cpu_states, &zero);
        if (!cs)
                return;
        cs->burst_time = s->time_ns;
        cs->burst_valid = read_counters(cs->burst_counts, &mux);
        cs->burst_left = LMK_BURST_SAMPLES;
        cs->burst_tid = s->tid;
        if (st)
                st->bursts++;
}

SEC("perf_event")
int lmk_sample(struct bpf_perf_event_data *ctx) {
        __u32 zero = 0;
        struct lmk_sample_stats *st = bpf_map_lookup_elem(&stats, &zero);
        struct lmk_sample *s;

        s = bpf_ringbuf_reserve(&events, sizeof(*s), 0);
        if (!s) {
                if (st)
                        st->lost++;
                return 0;
        }
        fill_sample(ctx, s, LMK_EVENT_SAMPLE, st);
        close_window(s, st);
        maybe_start_burst(s, st);
        if (st)
                st->samples++;
        submit(s, true);
        /* 0: the perf event itself writes no sample anywhere */
        return 0;
}

/* Attached to a fast (1 kHz) event only when bursts are configured; all it
 * costs outside a burst is this check. */
SEC("perf_event")
int lmk_burst(struct bpf_perf_event_data *ctx) {
        __u32 zero = 0, mux = 0, valid;
        struct cpu_state *cs = bpf_map_lookup_elem(&cpu_states, &zero);
        struct lmk_sample_stats *st;
        __u64 cur[LMK_MAX_COUNTERS];
        struct lmk_sample *s;

        if (!cs || cs->burst_left == 0)
                return 0;
        st = bpf_map_lookup_elem(&stats, &zero);
        if ((__u32) bpf_get_current_pid_tgid() != cs->burst_tid) {
                /* another task: the window would mix two */
                cs->burst_left = 0;
                if (st)
                        st->bursts_cut++;
                return 0;
        }
        s = bpf_ringbuf_reserve(&events, sizeof(*s), 0);
        if (!s) {
                cs->burst_left = 0;
                if (st)
                        st->lost++;
                return 0;
        }
        fill_sample(ctx, s, LMK_EVENT_BURST, st);
        valid = read_counters(cur, &mux);
        s->window_ns = s->time_ns - cs->burst_time;
        s->counts_valid = valid & cs->burst_valid;
        s->_pad2 = 0;
        for (__u32 i = 0; i < LMK_MAX_COUNTERS; i++) {
                s->counts[i] = s->counts_valid & (1u << i) ? cur[i] - cs->burst_counts[i] : 0;
                cs->burst_counts[i] = cur[i];
        }
        s->flags |= LMK_SAMPLE_WINDOW | (mux ? LMK_SAMPLE_MULTIPLEXED : 0);
        cs->burst_time = s->time_ns;
        cs->burst_valid = valid;
        cs->burst_left--;
        submit(s, false);
        return 0;
}
