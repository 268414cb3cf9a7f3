// SPDX-License-Identifier: GPL-2.0-or-later
/* The sampling program: attached to one time-based perf event per CPU, it
 * records which task was running where, and the task's marker phase, into a
 * ring buffer that lmkd drains on a timer. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "lmk-bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Wake lmkd early only when the ring is this full; otherwise its timer
 * collects the samples (a wakeup per sample costs more than the sample). */
const volatile __u64 wakeup_bytes = 64 * 1024;

struct {
        __uint(type, BPF_MAP_TYPE_RINGBUF);
        __uint(max_entries, 256 * 1024); /* resized by lmkd before load */
} events SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
        __uint(max_entries, 1);
        __type(key, __u32);
        __type(value, struct lmk_sample_stats);
} stats SEC(".maps");

/* pid → offset of liblmk's thread state from the thread pointer, for
 * processes that use markers (filled by lmkd and the liblmk probes). */
struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, 65536);
        __type(key, __u32);
        __type(value, __s64);
} marked SEC(".maps");

struct lmk_thread_v1 {
        __u32 depth;
        __u32 stack[LMK_PHASE_DEPTH];
};

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
        struct lmk_thread_v1 th;
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

SEC("perf_event")
int lmk_sample(struct bpf_perf_event_data *ctx) {
        __u32 zero = 0;
        struct lmk_sample_stats *st = bpf_map_lookup_elem(&stats, &zero);
        __u64 id = bpf_get_current_pid_tgid();
        struct lmk_sample *s;
        __u64 flags = BPF_RB_NO_WAKEUP;

        s = bpf_ringbuf_reserve(&events, sizeof(*s), 0);
        if (!s) {
                if (st)
                        st->lost++;
                return 0;
        }
        s->type = LMK_EVENT_SAMPLE;
        s->cpu = bpf_get_smp_processor_id();
        s->time_ns = bpf_ktime_get_ns();
        s->ip = PT_REGS_IP(&ctx->regs);
        s->cgroup_id = bpf_get_current_cgroup_id();
        s->pid = id >> 32;
        s->tid = (__u32) id;
        s->uid = (__u32) bpf_get_current_uid_gid();
        s->_pad = 0;
        s->flags = in_kernel(s->ip) ? LMK_SAMPLE_KERNEL : 0;
        s->phase_depth = 0;
        __builtin_memset(s->phase_stack, 0, sizeof(s->phase_stack));
        bpf_get_current_comm(s->comm, sizeof(s->comm));
        if (s->pid != 0)
                read_phase(s, st);

        if (st)
                st->samples++;
        if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
                flags = BPF_RB_FORCE_WAKEUP;
        bpf_ringbuf_submit(s, flags);
        /* 0: the perf event itself writes no sample anywhere */
        return 0;
}
