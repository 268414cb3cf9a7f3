/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "analysis/pop.h"

/* A set of ranks' figures into metrics: v[i] are the ranks' sums. */
static void metrics(PopMetrics *m, const PopRank *v, size_t n, double first, double last) {
        double sum_useful = 0, max_useful = 0, elapsed = 0;

        m->ranks = n;
        for (size_t i = 0; i < n; i++) {
                m->samples += v[i].samples;
                m->comm_samples += v[i].comm_samples;
                sum_useful += v[i].useful_seconds;
                m->communication_seconds += v[i].communication_seconds;
                max_useful = MAX(max_useful, v[i].useful_seconds);
                elapsed = MAX(elapsed, v[i].useful_seconds + v[i].communication_seconds);
        }
        m->useful_seconds = sum_useful;
        m->mean_useful_seconds = n > 0 ? sum_useful / (double) n : 0;
        m->max_useful_seconds = max_useful;
        m->elapsed_seconds = elapsed;
        m->wall_seconds = n > 0 ? MAX(last - first, 0.0) : 0;
        if (max_useful > 0) {
                m->load_balance = m->mean_useful_seconds / max_useful;
                m->communication_efficiency = max_useful / elapsed;
                m->parallel_efficiency = m->load_balance * m->communication_efficiency;
        } else
                m->load_balance = m->communication_efficiency = m->parallel_efficiency = NAN;
}

static PopRank rank_of(const RankFigures *f) {
        return (PopRank) {
                .rank = f->rank,
                .samples = f->samples,
                .comm_samples = f->comm_samples,
                .useful_seconds = MAX(f->cpu_seconds - f->comm_seconds, 0.0),
                .communication_seconds = f->comm_seconds,
        };
}

static int rank_cmp(const void *a, const void *b) {
        const PopRank *x = a, *y = b;

        return CMP(x->rank, y->rank);
}

void pop_report_free(PopReport *r) {
        free(r->per_rank);
        free(r->phases);
        *r = (PopReport) {};
}

int pop_compute(const RankFigures *v, size_t n, PopReport *ret) {
        PopReport r = {};
        _cleanup_free_ PopRank *tmp = NULL;
        double first = INFINITY, last = -INFINITY;
        size_t k = 0, n_phases = 0;

        if (n == 0) {
                *ret = r;
                return 0;
        }
        for (size_t i = 0; i < n; i++)
                if (i == 0 || !streq(v[i].phase, v[i - 1].phase))
                        n_phases++;
        tmp = malloc(n * sizeof(PopRank));
        r.per_rank = malloc(n * sizeof(PopRank));
        r.phases = calloc(n_phases, sizeof(PopMetrics));
        if (!tmp || !r.per_rank || !r.phases) {
                pop_report_free(&r);
                return -ENOMEM;
        }

        /* per phase: the rows of one phase are one rank each */
        for (size_t start = 0, end; start < n; start = end) {
                double pf = INFINITY, pl = -INFINITY;

                for (end = start; end < n && streq(v[end].phase, v[start].phase); end++) {
                        tmp[end - start] = rank_of(&v[end]);
                        pf = MIN(pf, v[end].first_seen);
                        pl = MAX(pl, v[end].last_seen);
                }
                r.phases[k].phase = v[start].phase;
                metrics(&r.phases[k++], tmp, end - start, pf, pl);
                first = MIN(first, pf);
                last = MAX(last, pl);
        }
        r.n_phases = k;

        /* the whole job: each rank's phases added up */
        for (size_t i = 0; i < n; i++)
                tmp[i] = rank_of(&v[i]);
        qsort(tmp, n, sizeof(PopRank), rank_cmp);
        for (size_t i = 0; i < n; i++) {
                PopRank *d;

                if (r.n_per_rank > 0 && r.per_rank[r.n_per_rank - 1].rank == tmp[i].rank) {
                        d = &r.per_rank[r.n_per_rank - 1];
                        d->samples += tmp[i].samples;
                        d->comm_samples += tmp[i].comm_samples;
                        d->useful_seconds += tmp[i].useful_seconds;
                        d->communication_seconds += tmp[i].communication_seconds;
                } else
                        r.per_rank[r.n_per_rank++] = tmp[i];
        }
        metrics(&r.job, r.per_rank, r.n_per_rank, first, last);
        *ret = r;
        return 0;
}
