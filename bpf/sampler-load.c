/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Loading the sampling programs costs the kernel's BTF: their CO-RE
 * relocations and their attach targets (tp_btf, iter/task) are resolved
 * against it. libbpf does that in the loading process, reading
 * /sys/kernel/btf/vmlinux into a buffer and parsing a copy of it: 11 MB of
 * lmkd's memory on Linux 6.18 for a few milliseconds, which made lmkd's
 * peak RSS twice its steady RSS, on every node. The light skeleton's loader
 * program does the same work in the kernel, against the BTF the kernel
 * already holds (in-kernel CO-RE, Linux 5.17). Kernels that refuse it get
 * libbpf's skeleton of the same object, and the memory cost with it.
 *
 * liblmk's USDT probes are an object of their own: attaching them takes
 * libbpf's USDT machinery, which works on libbpf's objects only. They need
 * nothing from the kernel's BTF, and share the sampler's maps. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lmk-bpf.h"
#include "macro.h"
#include "markers_bpf.skel.h"
#include "sampler-load.h"
#include "sampler_libbpf.skel.h"
/* bpftool's light skeleton measures its context with void * arithmetic */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpointer-arith"
#include "sampler_light.skel.h"
#pragma GCC diagnostic pop

struct SamplerObjects {
        struct sampler_light *light;    /* one of these two owns the fds */
        struct sampler_libbpf *full;
        struct markers_bpf *markers;
        int light_error;
};

static int load_light(const SamplerParams *p, struct sampler_light **ret, SamplerFds *ret_fds) {
        struct sampler_light *skel;
        int r;

        skel = sampler_light__open();
        if (!skel)
                return -ENOMEM;
        skel->rodata->wakeup_bytes = p->wakeup_bytes;
        skel->rodata->new_process_wake_ns = p->new_process_wake_ns;
        skel->rodata->n_counters = p->n_counters;
        skel->rodata->n_cpus = p->n_cpus;
        skel->rodata->burst_threshold = p->burst_threshold;
        skel->rodata->exact_counters = p->exact_counters;
        memcpy(skel->rodata->thread_field, p->thread_field, sizeof(p->thread_field));
        skel->maps.events.max_entries = (uint32_t) p->ring_bytes;
        skel->maps.counters.max_entries = LMK_MAX_COUNTERS * p->n_cpus;
        skel->maps.task_acct.max_entries = p->max_tasks;
        skel->maps.known_tgids.max_entries = p->max_tasks;
        r = sampler_light__load(skel);
        if (r < 0) {
                sampler_light__destroy(skel);
                return r;
        }
        *ret_fds = (SamplerFds) {
                .lmk_switch = skel->progs.lmk_switch.prog_fd,
                .lmk_exit = skel->progs.lmk_exit.prog_fd,
                .lmk_tasks = skel->progs.lmk_tasks.prog_fd,
                .lmk_fork = skel->progs.lmk_fork.prog_fd,
                .lmk_exec = skel->progs.lmk_exec.prog_fd,
                .lmk_sample = skel->progs.lmk_sample.prog_fd,
                .lmk_burst = skel->progs.lmk_burst.prog_fd,
                .events = skel->maps.events.map_fd,
                .stats = skel->maps.stats.map_fd,
                .marked = skel->maps.marked.map_fd,
                .counters = skel->maps.counters.map_fd,
                .task_acct = skel->maps.task_acct.map_fd,
                .known_tgids = skel->maps.known_tgids.map_fd,
        };
        *ret = skel;
        return 0;
}

static int load_libbpf(const SamplerParams *p, struct sampler_libbpf **ret, SamplerFds *ret_fds) {
        struct sampler_libbpf *skel;
        int r;

        skel = sampler_libbpf__open();
        if (!skel)
                return -errno ?: -ENOMEM;
        skel->rodata->wakeup_bytes = p->wakeup_bytes;
        skel->rodata->new_process_wake_ns = p->new_process_wake_ns;
        skel->rodata->n_counters = p->n_counters;
        skel->rodata->n_cpus = p->n_cpus;
        skel->rodata->burst_threshold = p->burst_threshold;
        skel->rodata->exact_counters = p->exact_counters;
        memcpy(skel->rodata->thread_field, p->thread_field, sizeof(p->thread_field));
        if ((r = bpf_map__set_max_entries(skel->maps.events, (uint32_t) p->ring_bytes)) < 0 ||
            (r = bpf_map__set_max_entries(skel->maps.counters, LMK_MAX_COUNTERS * p->n_cpus)) < 0 ||
            (r = bpf_map__set_max_entries(skel->maps.task_acct, p->max_tasks)) < 0 ||
            (r = bpf_map__set_max_entries(skel->maps.known_tgids, p->max_tasks)) < 0 ||
            (r = sampler_libbpf__load(skel)) < 0) {
                sampler_libbpf__destroy(skel);
                return r;
        }
        *ret_fds = (SamplerFds) {
                .lmk_switch = bpf_program__fd(skel->progs.lmk_switch),
                .lmk_exit = bpf_program__fd(skel->progs.lmk_exit),
                .lmk_tasks = bpf_program__fd(skel->progs.lmk_tasks),
                .lmk_fork = bpf_program__fd(skel->progs.lmk_fork),
                .lmk_exec = bpf_program__fd(skel->progs.lmk_exec),
                .lmk_sample = bpf_program__fd(skel->progs.lmk_sample),
                .lmk_burst = bpf_program__fd(skel->progs.lmk_burst),
                .events = bpf_map__fd(skel->maps.events),
                .stats = bpf_map__fd(skel->maps.stats),
                .marked = bpf_map__fd(skel->maps.marked),
                .counters = bpf_map__fd(skel->maps.counters),
                .task_acct = bpf_map__fd(skel->maps.task_acct),
                .known_tgids = bpf_map__fd(skel->maps.known_tgids),
        };
        *ret = skel;
        return 0;
}

static int load_markers(const SamplerFds *fds, struct markers_bpf **ret) {
        struct markers_bpf *skel;
        int r;

        skel = markers_bpf__open();
        if (!skel)
                return -errno ?: -ENOMEM;
        if ((r = bpf_map__reuse_fd(skel->maps.events, fds->events)) < 0 ||
            (r = bpf_map__reuse_fd(skel->maps.stats, fds->stats)) < 0 ||
            (r = bpf_map__reuse_fd(skel->maps.marked, fds->marked)) < 0 ||
            (r = markers_bpf__load(skel)) < 0) {
                markers_bpf__destroy(skel);
                return r;
        }
        *ret = skel;
        return 0;
}

int sampler_objects_load(const SamplerParams *p, SamplerObjects **ret, SamplerFds *ret_fds) {
        _cleanup_(sampler_objects_freep) SamplerObjects *o = NULL;
        SamplerFds fds;
        int r;

        o = calloc(1, sizeof(*o));
        if (!o)
                return -ENOMEM;
        o->light_error = p->use_libbpf ? -ECANCELED : load_light(p, &o->light, &fds);
        if (o->light_error < 0) {
                /* libbpf says why, verifier log included, if it fails too */
                r = load_libbpf(p, &o->full, &fds);
                if (r < 0)
                        return r;
        }
        r = load_markers(&fds, &o->markers);
        if (r < 0)
                return r;
        *ret_fds = fds;
        *ret = TAKE_PTR(o);
        return 0;
}

SamplerObjects *sampler_objects_free(SamplerObjects *o) {
        if (!o)
                return NULL;
        markers_bpf__destroy(o->markers);
        sampler_light__destroy(o->light);
        sampler_libbpf__destroy(o->full);
        free(o);
        return NULL;
}

int sampler_objects_light_error(const SamplerObjects *o) {
        return o->light_error;
}

int sampler_link_tracing(int prog_fd, bool iter) {
        int fd = iter ? bpf_link_create(prog_fd, 0, BPF_TRACE_ITER, NULL) : bpf_raw_tracepoint_open(NULL, prog_fd);

        return fd < 0 ? -errno : fd;
}

int sampler_stats_read(int stats_fd, unsigned n_cpus, struct lmk_sample_stats *ret) {
        int n = libbpf_num_possible_cpus();
        uint32_t zero = 0;

        /* the kernel fills one value per possible CPU */
        if (n <= 0 || (unsigned) n != n_cpus)
                return -EINVAL;
        if (bpf_map_lookup_elem(stats_fd, &zero, ret) < 0)
                return -errno;
        return 0;
}

struct bpf_program *sampler_objects_liblmk_probe(SamplerObjects *o, int k) {
        struct bpf_program *progs[3] = { o->markers->progs.lmk_init, o->markers->progs.lmk_region,
                                         o->markers->progs.lmk_region_off };

        return k >= 0 && k < 3 ? progs[k] : NULL;
}
