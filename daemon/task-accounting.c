/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Exact totals per process (CPU time, switches, counter counts), for
 * exact-totals.c: the task iterator reports every live thread, the exit
 * program leaves an exited thread's figures in task_acct until lmkd read
 * them. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "sampler-internal.h"
#include "util.h"

/* The thread's own field that counts what a software event counts, for
 * both the kernel's and the user's side (no :u or :k modifier). */
static uint8_t thread_field_of(const EventSpec *e) {
        const struct perf_event_attr *a = &e->attr;

        if (!e->resolved || a->type != PERF_TYPE_SOFTWARE || a->exclude_user || a->exclude_kernel)
                return LMK_FIELD_NONE;
        switch (a->config) {
        case PERF_COUNT_SW_TASK_CLOCK:
        case PERF_COUNT_SW_CPU_CLOCK:
                return LMK_FIELD_CPU_TIME;
        case PERF_COUNT_SW_PAGE_FAULTS:
                return LMK_FIELD_FAULTS;
        case PERF_COUNT_SW_PAGE_FAULTS_MIN:
                return LMK_FIELD_MIN_FAULTS;
        case PERF_COUNT_SW_PAGE_FAULTS_MAJ:
                return LMK_FIELD_MAJ_FAULTS;
        case PERF_COUNT_SW_CONTEXT_SWITCHES:
                return LMK_FIELD_SWITCHES;
        case PERF_COUNT_SW_CPU_MIGRATIONS:
                return LMK_FIELD_MIGRATIONS;
        }
        return LMK_FIELD_NONE;
}

void task_accounting_init(TaskAccounting *a) {
        *a = (TaskAccounting) { .exit_link = -EBADF, .iter_link = -EBADF, .exited_stale = true };
}

void task_accounting_pick_fields(TaskAccounting *a, const EventSpec *events, size_t n_events) {
        /* LMK_THREAD_FIELDS=0 counts them with perf events as hardware
         * counters are: the tests' way to the per-job cgroup events on
         * machines without hardware counters */
        const char *env = getenv("LMK_THREAD_FIELDS");

        for (size_t i = 0; i < n_events && !(env && streq(env, "0")); i++) {
                a->thread_field[i] = thread_field_of(&events[i]);
                if (a->thread_field[i] != LMK_FIELD_NONE)
                        a->thread_counted |= UINT32_C(1) << i;
        }
}

int task_accounting_start(Sampler *s) {
        int r;

        /* exact totals from now on, before any sampling: threads that exit
         * leave their figures in task_acct, the live ones are iterated */
        if ((r = s->acct.exit_link = sampler_link_tracing(s->fds.lmk_exit, false)) < 0 ||
            (r = s->acct.iter_link = sampler_link_tracing(s->fds.lmk_tasks, true)) < 0)
                return r;
        return 0;
}

void task_accounting_done(TaskAccounting *a) {
        free(a->threads);
        free(a->exited_keys);
        free(a->exited_values);
        free(a->stats_buf);
        safe_close(a->exit_link);
        safe_close(a->iter_link);
        task_accounting_init(a);
}

uint32_t sampler_thread_counted(const Sampler *s) {
        return s->acct.thread_counted;
}

/* Reads every live thread's record from the task iterator into s->acct.threads. */
static int read_threads(Sampler *s, size_t *ret_n) {
        /* A bound against a runaway read: far more threads than pid_max allows by default. */
        const size_t max_threads = (size_t) 4 << 20;
        _cleanup_close_ int fd = -EBADF;
        size_t off = 0;

        fd = bpf_iter_create(s->acct.iter_link);
        if (fd < 0)
                return -errno;
        for (;;) {
                size_t room;
                ssize_t k;

                /* room for at least one more record */
                if (s->acct.alloc_threads * sizeof(*s->acct.threads) - off < sizeof(*s->acct.threads)) {
                        size_t na = MAX(s->acct.alloc_threads * 2, (size_t) 1024);
                        void *v;

                        if (na > max_threads)
                                return -E2BIG;
                        v = realloc(s->acct.threads, na * sizeof(*s->acct.threads));
                        if (!v)
                                return -ENOMEM;
                        s->acct.threads = v;
                        s->acct.alloc_threads = na;
                }
                room = s->acct.alloc_threads * sizeof(*s->acct.threads) - off;
                k = loop_read(fd, (char *) s->acct.threads + off, room);
                if (k < 0)
                        return (int) k;
                off += (size_t) k;
                if ((size_t) k < room)
                        break; /* the iterator's end */
        }
        *ret_n = off / sizeof(*s->acct.threads);
        return 0;
}

static int thread_cmp(const void *a, const void *b) {
        const struct lmk_thread_acct *x = a, *y = b;

        return CMP(x->tgid, y->tgid);
}

static int u64_cmp(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

        return CMP(x, y);
}

static void add_exited(TaskTotals *t, const struct lmk_task_acct *a) {
        t->cpu_time_ns += a->cpu_time_ns;
        t->switches += a->switches;
        for (unsigned i = 0; i < LMK_MAX_COUNTERS; i++)
                t->counts[i] += a->counts[i];
        if (!t->comm[0]) {
                t->uid = a->uid;
                memcpy(t->comm, a->comm, sizeof(t->comm));
        }
}

static int read_exited(Sampler *s) {
        enum { CHUNK = 512 };
        int fd = s->fds.task_acct;
        uint32_t batch = 0, *in = NULL;
        uint64_t exits = 0;
        size_t n = 0;

        if (!s->acct.stats_buf) {
                s->acct.stats_buf = calloc(s->n_cpus, sizeof(*s->acct.stats_buf));
                if (!s->acct.stats_buf)
                        return -ENOMEM;
        }
        /* the count first: an exit during the walk makes the next read walk again */
        if (sampler_stats_read(s->fds.stats, s->n_cpus, s->acct.stats_buf) >= 0) {
                for (unsigned c = 0; c < s->n_cpus; c++)
                        exits += s->acct.stats_buf[c].thread_exits;
                if (!s->acct.exited_stale && exits == s->acct.exits_seen)
                        return 0;
        }
        for (;;) {
                uint32_t k = CHUNK;
                int r;

                if (n + CHUNK > s->acct.alloc_exited) {
                        size_t na = MAX(s->acct.alloc_exited * 2, (size_t) CHUNK);
                        void *v;

                        v = realloc(s->acct.exited_keys, na * sizeof(*s->acct.exited_keys));
                        if (!v)
                                return -ENOMEM;
                        s->acct.exited_keys = v;
                        v = realloc(s->acct.exited_values, na * sizeof(*s->acct.exited_values));
                        if (!v)
                                return -ENOMEM;
                        s->acct.exited_values = v;
                        s->acct.alloc_exited = na;
                }
                r = bpf_map_lookup_batch(fd, in, &batch, s->acct.exited_keys + n, s->acct.exited_values + n, &k, NULL);
                if (r < 0 && errno != ENOENT)
                        return -errno;
                n += k;
                if (r < 0) /* ENOENT: that was the last chunk */
                        break;
                in = &batch;
        }
        s->acct.n_exited = n;
        s->acct.exits_seen = exits;
        s->acct.exited_stale = false;
        return 0;
}

int sampler_read_task_acct(Sampler *s, task_totals_cb_t cb, void *userdata) {
        _cleanup_free_ uint64_t *order = NULL;
        size_t n_threads = 0, n_exited;
        uint32_t *keys;
        struct lmk_task_acct *values;
        int r;

        /* Exited threads first: a thread that exits between the two reads
         * is then missing from both (a dip the caller rides out) rather
         * than counted twice. */
        r = read_exited(s);
        if (r < 0)
                return r;
        keys = s->acct.exited_keys;
        values = s->acct.exited_values;
        n_exited = s->acct.n_exited;
        r = read_threads(s, &n_threads);
        if (r < 0)
                return r;
        qsort(s->acct.threads, n_threads, sizeof(*s->acct.threads), thread_cmp);
        /* the exited entries in tgid order: (tgid, index) pairs packed in a u64 */
        order = calloc(MAX(n_exited, (size_t) 1), sizeof(*order));
        if (!order)
                return -ENOMEM;
        for (size_t i = 0; i < n_exited; i++)
                order[i] = (uint64_t) keys[i] << 32 | i;
        qsort(order, n_exited, sizeof(*order), u64_cmp);

        /* merge the two lists, both in tgid order */
        for (size_t i = 0, e = 0; i < n_threads || e < n_exited;) {
                uint32_t tgid = i < n_threads ? s->acct.threads[i].tgid : UINT32_MAX;
                TaskTotals t = {};

                if (e < n_exited && (uint32_t) (order[e] >> 32) < tgid)
                        tgid = (uint32_t) (order[e] >> 32);
                for (; i < n_threads && s->acct.threads[i].tgid == tgid; i++) {
                        const struct lmk_thread_acct *th = &s->acct.threads[i];

                        if (!t.comm[0]) {
                                t.uid = th->uid;
                                t.start_ns = th->start_ns;
                                memcpy(t.comm, th->comm, sizeof(t.comm));
                        }
                        t.cpu_time_ns += th->cpu_time_ns;
                        t.switches += th->switches;
                        for (unsigned k = 0; k < LMK_MAX_COUNTERS; k++)
                                t.counts[k] += th->counts[k];
                }
                if (e < n_exited && (uint32_t) (order[e] >> 32) == tgid)
                        add_exited(&t, &values[(uint32_t) order[e++]]);
                t.comm[sizeof(t.comm) - 1] = '\0';
                cb(tgid, &t, userdata);
        }
        return 0;
}

void sampler_forget_task(Sampler *s, uint32_t tgid) {
        if (bpf_map_delete_elem(s->fds.task_acct, &tgid) >= 0)
                s->acct.exited_stale = true;
}
