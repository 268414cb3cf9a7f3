/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>

#include "macro.h"
#include "sideband.h"

struct sample_id {
        uint32_t pid, tid;
        uint64_t time;
        uint32_t cpu, res;
};

/* Copies a NUL-padded string field of at most max bytes; the kernel pads
 * to 8 bytes and always terminates, but we check rather than trust. */
static char *dup_field(const uint8_t *p, size_t max) {
        size_t n = strnlen((const char *) p, max);
        char *s = malloc(n + 1);

        if (!s)
                return NULL;
        memcpy(s, p, n);
        s[n] = '\0';
        return s;
}

int sideband_parse(const void *rec, size_t size, SbRecord *ret) {
        const struct perf_event_header *h = rec;
        const uint8_t *p = rec;
        struct sample_id id;
        SbRecord r = {};
        size_t body;

        if (size < sizeof(*h) + sizeof(id) || h->size != size)
                return -EBADMSG;
        memcpy(&id, p + size - sizeof(id), sizeof(id));
        body = size - sizeof(*h) - sizeof(id);
        p += sizeof(*h);
        r.time = id.time;

        switch (h->type) {
        case PERF_RECORD_MMAP2: {
                struct {
                        uint32_t pid, tid;
                        uint64_t addr, len, pgoff;
                        uint32_t maj, min;
                        uint64_t ino, ino_generation;
                        uint32_t prot, flags;
                } m;

                if (body < sizeof(m) + 1)
                        return -EBADMSG;
                memcpy(&m, p, sizeof(m));
                r.type = SB_MMAP;
                r.pid = m.pid;
                r.tid = m.tid;
                r.addr = m.addr;
                r.len = m.len;
                r.pgoff = m.pgoff;
                if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID)
                        return -EBADMSG; /* we never ask for build ids in the record */
                r.maj = m.maj;
                r.min = m.min;
                r.ino = m.ino;
                r.prot = m.prot;
                r.str = dup_field(p + sizeof(m), body - sizeof(m));
                break;
        }
        case PERF_RECORD_COMM: {
                uint32_t pt[2];

                if (body < sizeof(pt) + 1)
                        return -EBADMSG;
                memcpy(pt, p, sizeof(pt));
                r.type = SB_COMM;
                r.pid = pt[0];
                r.tid = pt[1];
                r.exec = !!(h->misc & PERF_RECORD_MISC_COMM_EXEC);
                r.str = dup_field(p + sizeof(pt), MIN(body - sizeof(pt), (size_t) 16));
                break;
        }
        case PERF_RECORD_FORK:
        case PERF_RECORD_EXIT: {
                struct {
                        uint32_t pid, ppid, tid, ptid;
                        uint64_t time;
                } f;

                if (body < sizeof(f))
                        return -EBADMSG;
                memcpy(&f, p, sizeof(f));
                r.type = h->type == PERF_RECORD_FORK ? SB_FORK : SB_EXIT;
                r.pid = f.pid;
                r.ppid = f.ppid;
                r.tid = f.tid;
                return (*ret = r), 1;
        }
        case PERF_RECORD_CGROUP: {
                uint64_t cid;

                if (body < sizeof(cid) + 1)
                        return -EBADMSG;
                memcpy(&cid, p, sizeof(cid));
                r.type = SB_CGROUP;
                r.ino = cid;
                r.str = dup_field(p + sizeof(cid), body - sizeof(cid));
                break;
        }
        case PERF_RECORD_LOST: {
                uint64_t l[2];

                if (body < sizeof(l))
                        return -EBADMSG;
                memcpy(l, p, sizeof(l));
                r.type = SB_LOST;
                r.lost = l[1];
                return (*ret = r), 1;
        }
        default:
                return 0;
        }
        if (!r.str)
                return -ENOMEM;
        *ret = r;
        return 1;
}

void sideband_attr(struct perf_event_attr *attr, size_t ring_bytes) {
        *attr = (struct perf_event_attr) {
                .type = PERF_TYPE_SOFTWARE,
                .config = PERF_COUNT_SW_DUMMY,
                .size = sizeof(*attr),
                .sample_period = 1,
                .sample_type = SIDEBAND_SAMPLE_TYPE,
                .mmap = 1,              /* executable mappings only: data mappings never hold an IP */
                .mmap2 = 1,
                .comm = 1,
                .comm_exec = 1,
                .task = 1,
                .cgroup = 1,
                .sample_id_all = 1,
                .use_clockid = 1,
                .clockid = CLOCK_MONOTONIC,
                /* wake us only when a quarter of the ring is used: the timer
                 * collects everything else */
                .watermark = 1,
                .wakeup_watermark = (uint32_t) (ring_bytes / 4),
        };
}

int sideband_init(Sideband *sb, unsigned n_possible_cpus, unsigned ring_order, int epoll_fd) {
        *sb = (Sideband) { .n_cpus = n_possible_cpus, .ring_order = ring_order, .epoll_fd = epoll_fd };
        sb->rings = calloc(n_possible_cpus, sizeof(*sb->rings));
        if (!sb->rings)
                return -ENOMEM;
        for (unsigned c = 0; c < n_possible_cpus; c++)
                sb->rings[c].fd = -EBADF;
        return 0;
}

void sideband_done(Sideband *sb) {
        for (unsigned c = 0; sb->rings && c < sb->n_cpus; c++)
                sideband_cpu_close(sb, (int) c);
        for (size_t i = 0; i < sb->n_pending; i++)
                sb_record_done(&sb->pending[i]);
        free(sb->pending);
        free(sb->rings);
        *sb = (Sideband) {};
}

int sideband_cpu_open(Sideband *sb, int cpu) {
        struct perf_event_attr attr;
        int r;

        if (cpu < 0 || (unsigned) cpu >= sb->n_cpus)
                return -EINVAL;
        if (sb->rings[cpu].fd >= 0)
                return 0;
        sideband_attr(&attr, (size_t) sysconf(_SC_PAGESIZE) << sb->ring_order);
        /* cgroup records need 5.7; retry without them on older kernels */
        r = perf_ring_open(&sb->rings[cpu], &attr, cpu, sb->ring_order);
        if (r == -EINVAL) {
                attr.cgroup = 0;
                r = perf_ring_open(&sb->rings[cpu], &attr, cpu, sb->ring_order);
        }
        if (r < 0) {
                sb->rings[cpu].fd = -EBADF;
                return r;
        }
        if (sb->epoll_fd >= 0 &&
            epoll_ctl(sb->epoll_fd, EPOLL_CTL_ADD, sb->rings[cpu].fd,
                      &(struct epoll_event) { .events = EPOLLIN | EPOLLET }) < 0) {
                r = -errno;
                perf_ring_close(&sb->rings[cpu]);
                return r;
        }
        return 0;
}

void sideband_cpu_close(Sideband *sb, int cpu) {
        if (sb->rings[cpu].fd >= 0) {
                /* keep what the ring already holds */
                (void) sideband_drain(sb);
                perf_ring_close(&sb->rings[cpu]);
        }
}

static int push_record(const struct perf_event_header *hdr, void *userdata) {
        Sideband *sb = userdata;
        SbRecord r;
        int k;

        k = sideband_parse(hdr, hdr->size, &r);
        if (k == -EBADMSG) {
                sb->malformed++;
                return 0;
        }
        if (k <= 0)
                return k;
        if (r.type == SB_LOST) {
                sb->lost += r.lost;
                return 0;
        }
        if (sb->n_pending == sb->alloc_pending) {
                size_t na = MAX(sb->alloc_pending * 2, (size_t) 256);
                SbRecord *v = realloc(sb->pending, na * sizeof(*v));

                if (!v) {
                        sb_record_done(&r);
                        return -ENOMEM;
                }
                sb->pending = v;
                sb->alloc_pending = na;
        }
        r.seq = sb->seq++;
        sb->pending[sb->n_pending++] = r;
        return 0;
}

int sideband_drain(Sideband *sb) {
        int total = 0;

        for (unsigned c = 0; c < sb->n_cpus; c++) {
                int r;

                if (sb->rings[c].fd < 0)
                        continue;
                r = perf_ring_drain(&sb->rings[c], push_record, sb);
                if (r < 0)
                        return r;
                total += r;
        }
        return total;
}
