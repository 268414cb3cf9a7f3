/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "macro.h"
#include "perf-ring.h"

int perf_event_open_cpu(struct perf_event_attr *attr, int cpu, int group_fd) {
        int fd;

        fd = (int) syscall(__NR_perf_event_open, attr, -1, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

int perf_ring_open(PerfRing *ring, struct perf_event_attr *attr, int cpu, unsigned order) {
        size_t page = (size_t) sysconf(_SC_PAGESIZE);
        size_t data = page << order;
        _cleanup_close_ int fd = -EBADF;
        void *base;

        fd = perf_event_open_cpu(attr, cpu, -1);
        if (fd < 0)
                return fd;
        /* The kernel allocated the ring's pages already: mapping them all
         * now makes lmkd's RSS say so from the start, instead of growing by
         * the ring's size the first time a process storm fills it. */
        base = mmap(NULL, page + data, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
        if (base == MAP_FAILED)
                return -errno;
        *ring = (PerfRing) {
                .cpu = cpu,
                .base = base,
                .data_size = data,
        };
        ring->scratch = malloc(data < 65536 ? data : 65536);
        if (!ring->scratch) {
                munmap(base, page + data);
                return -ENOMEM;
        }
        ring->fd = TAKE_FD(fd);
        return 0;
}

void perf_ring_close(PerfRing *ring) {
        if (ring->base)
                munmap(ring->base, (size_t) sysconf(_SC_PAGESIZE) + ring->data_size);
        safe_close(ring->fd);
        free(ring->scratch);
        *ring = (PerfRing) { .fd = -EBADF };
}

int perf_ring_drain(PerfRing *ring, perf_ring_cb_t cb, void *userdata) {
        struct perf_event_mmap_page *meta = ring->base;
        uint8_t *data = (uint8_t *) ring->base + sysconf(_SC_PAGESIZE);
        uint64_t head, tail, mask = ring->data_size - 1;
        int n = 0, r = 0;

        /* Pairs with the kernel's release store of data_head: records below
         * head are complete once we have seen head. */
        head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
        tail = meta->data_tail;

        while (tail < head) {
                const struct perf_event_header *hdr = (const void *) (data + (tail & mask));
                struct perf_event_header h;
                size_t off = tail & mask;

                /* The header itself can wrap: copy it out byte-safely. */
                if (off + sizeof(h) <= ring->data_size)
                        memcpy(&h, hdr, sizeof(h));
                else {
                        size_t first = ring->data_size - off;
                        memcpy(&h, data + off, first);
                        memcpy((uint8_t *) &h + first, data, sizeof(h) - first);
                }
                if (h.size < sizeof(h) || h.size > head - tail)
                        break; /* corrupt: stop here rather than read garbage */

                if (off + h.size > ring->data_size) {
                        size_t first = ring->data_size - off;

                        if (h.size > ring->data_size) {
                                tail += h.size;
                                continue;
                        }
                        memcpy(ring->scratch, data + off, first);
                        memcpy(ring->scratch + first, data, h.size - first);
                        hdr = (const void *) ring->scratch;
                }
                r = cb(hdr, userdata);
                tail += h.size;
                n++;
                if (r < 0)
                        break;
        }
        __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
        return r < 0 ? r : n;
}
