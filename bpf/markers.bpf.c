// SPDX-License-Identifier: GPL-2.0-or-later
/* liblmk's USDT probes: a process's TLS offset when liblmk starts, and its
 * region names and switched-off regions as events in the sampler's ring.
 * Attaching a USDT probe takes libbpf's user-space machinery (ELF notes,
 * argument specs), so these programs sit in an object of their own that
 * libbpf loads (bpf/sampler-load.c says why); it needs no kernel BTF (no
 * CO-RE, no BTF attach target). */
/* Without CO-RE: the one kernel type here is struct pt_regs, whose layout
 * is user ABI (ptrace), and a CO-RE relocation would make libbpf read the
 * kernel's BTF (megabytes) to load this object. */
#define BPF_NO_PRESERVE_ACCESS_INDEX
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/usdt.bpf.h>

#include "lmk-bpf.h"
#include "shared-maps.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* liblmk's constructor: the process's TLS offset, before its first marker. */
SEC("usdt")
int BPF_USDT(lmk_init, int pid, void *abi, long tls_offset) {
        /* the kernel's tgid, not the pid the process sees in its namespace */
        __u32 tgid = bpf_get_current_pid_tgid() >> 32;
        __s64 off = tls_offset;

        if (off != 0)
                bpf_map_update_elem(&marked, &tgid, &off, BPF_ANY);
        return 0;
}

static __always_inline int region_event(__u32 type, __u32 id, __u32 reason, const char *name, const char *where) {
        __u32 zero = 0;
        struct lmk_sample_stats *st = bpf_map_lookup_elem(&stats, &zero);
        struct lmk_region_event *e;

        e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
        if (!e) {
                if (st)
                        st->region_lost++;
                return 0;
        }
        e->type = type;
        e->cpu = bpf_get_smp_processor_id();
        e->time_ns = bpf_ktime_get_ns();
        e->pid = bpf_get_current_pid_tgid() >> 32;
        e->id = id;
        e->reason = reason;
        e->_pad = 0;
        e->name[0] = '\0';
        e->where[0] = '\0';
        if (name)
                bpf_probe_read_user_str(e->name, sizeof(e->name), name);
        if (where)
                bpf_probe_read_user_str(e->where, sizeof(e->where), where);
        /* rare events: wake lmkd so names arrive before the samples need them */
        bpf_ringbuf_submit(e, 0);
        return 0;
}

SEC("usdt")
int BPF_USDT(lmk_region, unsigned int id, const char *name, const char *where) {
        return region_event(LMK_EVENT_REGION, id, 0, name, where);
}

SEC("usdt")
int BPF_USDT(lmk_region_off, unsigned int id, unsigned int reason) {
        return region_event(LMK_EVENT_REGION_OFF, id, reason, NULL, NULL);
}
