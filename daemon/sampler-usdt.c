/* SPDX-License-Identifier: GPL-2.0-or-later */
/* liblmk's side of the sampler: the USDT probes of each liblmk copy
 * (attached by path, for every process that maps it), the processes whose
 * TLS offset the sampling program reads the phase at, and the fork and
 * exec programs that carry that through a process's life. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "sampler-internal.h"

void sampler_usdt_init(SamplerUsdt *u) {
        *u = (SamplerUsdt) { .fork_link = -EBADF, .exec_link = -EBADF };
}

int sampler_usdt_start(Sampler *s) {
        int r;

        /* a forked child inherits its parent's liblmk state, an exec drops it */
        if ((r = s->usdt.fork_link = sampler_link_tracing(s->fds.lmk_fork, false)) < 0 ||
            (r = s->usdt.exec_link = sampler_link_tracing(s->fds.lmk_exec, false)) < 0)
                return r;
        return 0;
}

void sampler_usdt_done(SamplerUsdt *u) {
        for (size_t i = 0; i < u->n_liblmk; i++) {
                for (int k = 0; k < 3; k++)
                        bpf_link__destroy(u->liblmk[i].links[k]);
                free(u->liblmk[i].path);
        }
        free(u->liblmk);
        safe_close(u->fork_link);
        safe_close(u->exec_link);
        sampler_usdt_init(u);
}

int sampler_attach_liblmk(Sampler *s, const char *path) {
        static const char *const probes[3] = { "init", "region", "region_off" };
        struct bpf_link *links[3] = {};
        void *v;
        int r;

        for (size_t i = 0; i < s->usdt.n_liblmk; i++)
                if (streq(s->usdt.liblmk[i].path, path))
                        return 0;
        /* libbpf would warn about a file that is not there; the caller
         * decides whether that is news (lmkd.c: check_liblmk_paths()) */
        if (access(path, F_OK) < 0)
                return -errno;
        for (int k = 0; k < 3; k++) {
                links[k] = bpf_program__attach_usdt(sampler_objects_liblmk_probe(s->objects, k), -1, path, "lmk",
                                                    probes[k], NULL);
                if (!links[k]) {
                        r = -errno ?: -EINVAL;
                        for (int j = 0; j < k; j++)
                                bpf_link__destroy(links[j]);
                        return r;
                }
        }
        v = realloc(s->usdt.liblmk, (s->usdt.n_liblmk + 1) * sizeof(*s->usdt.liblmk));
        if (!v)
                goto oom;
        s->usdt.liblmk = v;
        s->usdt.liblmk[s->usdt.n_liblmk].path = strdup(path);
        if (!s->usdt.liblmk[s->usdt.n_liblmk].path)
                goto oom;
        memcpy(s->usdt.liblmk[s->usdt.n_liblmk].links, links, sizeof(links));
        s->usdt.n_liblmk++;
        return 1;
oom:
        for (int k = 0; k < 3; k++)
                bpf_link__destroy(links[k]);
        return -ENOMEM;
}

int sampler_set_marked(Sampler *s, uint32_t pid, int64_t tls_offset) {
        if (bpf_map_update_elem(s->fds.marked, &pid, &tls_offset, BPF_ANY) < 0)
                return -errno;
        return 0;
}

void sampler_forget_marked(Sampler *s, uint32_t pid) {
        (void) bpf_map_delete_elem(s->fds.marked, &pid);
}
