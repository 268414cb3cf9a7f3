/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The maps that the sampling programs (sampler.bpf.c) and liblmk's probes
 * (markers.bpf.c) share. They are two objects because they are loaded two
 * ways (sampler-load.c says why); lmkd creates the maps with the sampler and
 * hands their fds to the probes' object, so each definition is written
 * once, here. */
#pragma once

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
