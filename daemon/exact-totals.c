/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exact-totals.h"
#include "util.h"

/* An exited process stays this long for samples taken during its exit. */
#define EXIT_GRACE_NS (UINT64_C(1000000000))

/* Figures are read every few ticks; a process that left the process table
 * meanwhile leaves its name and job here for them. */
typedef struct GoneIdent {
        char comm[COMM_LEN];
        char job[JOB_ID_SIZE];
        char step[JOB_STEP_SIZE];
        bool opted_out;         /* its job's user asked for privacy (--lmk=off) */
} GoneIdent;

int exact_totals_init(ExactTotals *x, const TotalsSource *source, ProcessTable *procs, JobTable *jobs,
                      Histogram *hist) {
        *x = (ExactTotals) { .source = *source, .procs = procs, .jobs = jobs, .hist = hist };
        x->prev = hashmap_new(&uint64_hash_ops);
        x->gone = hashmap_new(&uint64_hash_ops);
        if (!x->prev || !x->gone) {
                exact_totals_done(x);
                return -ENOMEM;
        }
        return 0;
}

void exact_totals_done(ExactTotals *x) {
        hashmap_free_free(x->prev, NULL);
        hashmap_free_free(x->gone, NULL);
        free(x->forget);
        *x = (ExactTotals) {};
}

void exact_totals_process_gone(ExactTotals *x, const Process *p) {
        GoneIdent *g, *old = NULL;
        Job *j;

        if (hashmap_size(x->gone) >= 65536 || !(g = calloc(1, sizeof(*g))))
                return;
        j = p->job.job[0] ? jobs_get(x->jobs, p->job.job) : NULL;
        memcpy(g->comm, p->comm, sizeof(g->comm));
        if (j) {
                snprintf(g->job, sizeof(g->job), "%s", j->display);
                snprintf(g->step, sizeof(g->step), "%s", p->job.step);
                g->opted_out = job_opted_out(j);
        }
        if (hashmap_replace(x->gone, INT_TO_KEY(p->pid), g, (void **) &old) < 0)
                free(g);
        else
                free(old);
}

static bool pid_alive(uint32_t pid) {
        return kill((pid_t) pid, 0) == 0 || errno != ESRCH;
}

static uint64_t advance(uint64_t *prev, uint64_t cur) {
        uint64_t d = cur > *prev ? cur - *prev : 0;

        /* a figure that dips (a thread between the iterator's view and its
         * exit hook) is not counted again when it comes back */
        *prev = MAX(*prev, cur);
        return d;
}

static void account_task(uint32_t tgid, const TaskTotals *a, void *userdata) {
        ExactTotals *x = userdata;
        TaskTotals *prev = hashmap_get(x->prev, INT_TO_KEY(tgid));
        Process *p = process_table_get(x->procs, tgid);
        const GoneIdent *g = p ? NULL : hashmap_get(x->gone, INT_TO_KEY(tgid));
        uint64_t d[LMK_MAX_COUNTERS], dcpu, dsw;
        char comm[COMM_LEN];
        TotalKey key;
        bool gone;

        /* Born after the order point, a process may not be in the table
         * yet: its fork and exec wait, with the samples, behind it. Then
         * its figures wait for the next reading, which knows its name and
         * job, rather than go to no job now (its start-up, read here
         * before slurmstepd's child was known, went there). The last
         * reading has the order point at its own time. */
        if (!p && !g && a->start_ns > x->order_point)
                return;

        if (!prev) {
                prev = calloc(1, sizeof(*prev));
                if (!prev || hashmap_put(x->prev, INT_TO_KEY(tgid), prev) < 0) {
                        free(prev);
                        return;
                }
                /* A process older than lmkd counts from lmkd's start: its
                 * first reading (taken at the start) is the baseline. */
                if (a->start_ns != 0 && a->start_ns < x->epoch)
                        *prev = *a;
        }
        dcpu = advance(&prev->cpu_time_ns, a->cpu_time_ns);
        dsw = advance(&prev->switches, a->switches);
        for (unsigned i = 0; i < LMK_MAX_COUNTERS; i++)
                d[i] = advance(&prev->counts[i], a->counts[i]);

        if (dcpu || dsw) {
                Job *j = p ? jobs_resolve(x->jobs, p, a->uid, (double) ((int64_t) now_ns(CLOCK_MONOTONIC) + x->real_offset_ns) / 1e9) : NULL;

                memcpy(comm, a->comm, sizeof(comm));
                comm[sizeof(comm) - 1] = '\0';
                key = (TotalKey) { .comm = p && p->comm[0] ? p->comm : g && g->comm[0] ? g->comm : comm,
                                   .uid = a->uid };
                if (job_opted_out(j) || (!j && g && g->job[0] && g->opted_out)) {
                        /* only its CPU time: not which commands ran, nor their counters */
                        key.job = j ? j->display : g->job;
                        key.comm = "";
                        memset(d, 0, sizeof(d));
                } else if (j) {
                        key.job = j->display;
                        key.step = p->job.step[0] ? p->job.step : NULL;
                } else if (g && g->job[0]) {
                        key.job = g->job;
                        key.step = g->step[0] ? g->step : NULL;
                }
                (void) histogram_add_total(x->hist, &key, dcpu, d, dsw);
        }

        /* Forget a process once it is surely done switching: gone from
         * /proc, or its exit lies beyond the grace period. */
        gone = p ? p->exit_time != 0 && p->exit_time + EXIT_GRACE_NS < x->order_point : g || !pid_alive(tgid);
        if (gone && x->n_forget < 4096) {
                if (x->n_forget == x->alloc_forget) {
                        size_t na = MAX(x->alloc_forget * 2, (size_t) 64);
                        uint32_t *v = realloc(x->forget, na * sizeof(*v));

                        if (!v)
                                return;
                        x->forget = v;
                        x->alloc_forget = na;
                }
                x->forget[x->n_forget++] = tgid;
        }
}

void exact_totals_account(ExactTotals *x) {
        x->n_forget = 0;
        (void) x->source.read(x->source.userdata, account_task, x);
        for (size_t i = 0; i < x->n_forget; i++) {
                x->source.forget(x->source.userdata, x->forget[i]);
                free(hashmap_remove(x->prev, INT_TO_KEY(x->forget[i])));
        }
        hashmap_clear_free(x->gone, NULL);
}

