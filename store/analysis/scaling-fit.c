/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "analysis/scaling-fit.h"

#define MAX_TERMS _COMM_TERM_MAX
/* A longer communication form must cut the leave-one-out error by this
 * much: noise alone lets more terms win by a little. */
#define LONGER_FORM_GAIN 0.9
/* ... and by more than rounding: with runs a form fits exactly, every
 * longer one fits them too, differing in the last digits. */
#define NOISE_FLOOR 1e-9
/* Columns whose QR pivot falls below this share of the largest are
 * linearly dependent: the form is not identifiable from these runs. */
#define RANK_TOLERANCE 1e-10

/* A least-squares fit y ~ X beta of at most MAX_TERMS columns by Householder
 * QR on columns scaled to unit norm (p and p^2 differ by orders of
 * magnitude); r and scale serve the leverage of a new point. */
typedef struct Lsq {
        size_t m;
        double beta[MAX_TERMS];
        double r[MAX_TERMS][MAX_TERMS];
        double scale[MAX_TERMS];
        double sse;
} Lsq;

/* x: n rows of m values, each row and y weighted by sqrt(w). -EDOM when
 * the columns are dependent. */
static int lsq_solve(const double *x, const double *y, const double *w, size_t n, size_t m, Lsq *ret) {
        _cleanup_free_ double *a = NULL, *b = NULL;
        double qtb[MAX_TERMS], rmax = 0;
        Lsq l = { .m = m };

        if (m == 0 || m > MAX_TERMS || n < m)
                return -EDOM;
        a = malloc(n * m * sizeof(double));
        b = malloc(n * sizeof(double));
        if (!a || !b)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                b[i] = y[i] * sqrt(w[i]);
        for (size_t j = 0; j < m; j++) {
                double norm = 0;

                for (size_t i = 0; i < n; i++)
                        norm += x[i * m + j] * x[i * m + j] * w[i];
                norm = sqrt(norm);
                if (!(norm > 0) || !isfinite(norm))
                        return -EDOM;
                l.scale[j] = norm;
                for (size_t i = 0; i < n; i++)
                        a[i * m + j] = x[i * m + j] * sqrt(w[i]) / norm;
        }
        for (size_t k = 0; k < m; k++) {
                double alpha = 0, vnorm = 0;

                for (size_t i = k; i < n; i++)
                        alpha += a[i * m + k] * a[i * m + k];
                alpha = sqrt(alpha);
                if (a[k * m + k] > 0)
                        alpha = -alpha;
                /* v = column k below the diagonal minus alpha e_k, kept in place */
                a[k * m + k] -= alpha;
                for (size_t i = k; i < n; i++)
                        vnorm += a[i * m + k] * a[i * m + k];
                if (vnorm > 0) {
                        for (size_t j = k + 1; j < m; j++) {
                                double d = 0;

                                for (size_t i = k; i < n; i++)
                                        d += a[i * m + k] * a[i * m + j];
                                d = 2 * d / vnorm;
                                for (size_t i = k; i < n; i++)
                                        a[i * m + j] -= d * a[i * m + k];
                        }
                        double d = 0;
                        for (size_t i = k; i < n; i++)
                                d += a[i * m + k] * b[i];
                        d = 2 * d / vnorm;
                        for (size_t i = k; i < n; i++)
                                b[i] -= d * a[i * m + k];
                }
                l.r[k][k] = alpha;
                for (size_t j = k + 1; j < m; j++)
                        l.r[k][j] = a[k * m + j];
                rmax = MAX(rmax, fabs(alpha));
        }
        for (size_t k = 0; k < m; k++)
                if (!(fabs(l.r[k][k]) > RANK_TOLERANCE * rmax))
                        return -EDOM;
        for (size_t k = 0; k < m; k++)
                qtb[k] = b[k];
        for (size_t k = m; k-- > 0;) {
                double s = qtb[k];

                for (size_t j = k + 1; j < m; j++)
                        s -= l.r[k][j] * l.beta[j];
                l.beta[k] = s / l.r[k][k];
        }
        for (size_t i = m; i < n; i++)
                l.sse += b[i] * b[i];
        for (size_t k = 0; k < m; k++) {
                l.beta[k] /= l.scale[k];
                if (!isfinite(l.beta[k]))
                        return -EDOM;
        }
        *ret = l;
        return 0;
}

/* x0' (X'X)^-1 x0 of a new row x0: solve R' z = x0 (scaled), |z|^2. */
static double lsq_leverage(const Lsq *l, const double *x0) {
        double z[MAX_TERMS], h = 0;

        for (size_t k = 0; k < l->m; k++) {
                double s = x0[k] / l->scale[k];

                for (size_t j = 0; j < k; j++)
                        s -= l->r[j][k] * z[j];
                z[k] = s / l->r[k][k];
                h += z[k] * z[k];
        }
        return h;
}

static double comm_term(CommTerm t, double p) {
        switch (t) {
        case COMM_CONST:
                return 1;
        case COMM_LOG2:
                return log2(p);
        case COMM_LINEAR:
                return p;
        case COMM_SQUARE:
                return p * p;
        default:
                return 0;
        }
}

double scaling_computation(const ScalingFit *f, double p) {
        return f->a / p + f->b;
}

/* A communication form can dip below zero between or beyond the runs;
 * time cannot. */
double scaling_communication(const ScalingFit *f, double p) {
        double c = 0;

        for (unsigned t = 0; t < f->comm_terms; t++)
                c += f->c[t] * comm_term(t, p);
        return isfinite(c) ? MAX(c, 0.0) : 0;
}

/* The computation's rows for the free parameters (bit 0: 1/p, bit 1: 1). */
static size_t comp_row(unsigned free_, double p, double *row) {
        size_t m = 0;

        if (free_ & 1)
                row[m++] = 1 / p;
        if (free_ & 2)
                row[m++] = 1;
        return m;
}

/* Run-to-run variation is about proportional to a run's time (a node a few
 * percent slower makes every part a few percent longer), so each run
 * counts by its relative residual: weight 1/elapsed^2. A run of no time at
 * all (which the API never passes) gets the weight of the shortest one. */
static void weights(const ScalingPoint *v, size_t n, double *w) {
        double floor_ = INFINITY;

        for (size_t i = 0; i < n; i++) {
                double e = v[i].computation + v[i].communication;

                if (e > 0)
                        floor_ = MIN(floor_, e);
        }
        for (size_t i = 0; i < n; i++) {
                double e = v[i].computation + v[i].communication;

                w[i] = isfinite(floor_) ? 1 / (MAX(e, floor_) * MAX(e, floor_)) : 1;
        }
}

/* The runs at one core count, summed: a weighted least-squares fit of
 * forms in p depends on them only through their weight, weighted means and
 * spread about those means. So the fits work on one level per core count,
 * however many runs there are (a thousand runs took a second before). */
typedef struct Level {
        double p;
        size_t runs;
        double w;                        /* the runs' weights summed */
        double comp, comm;               /* weighted means */
        double within_comp, within_comm; /* sums of w (y - weighted mean)^2 */
        double elapsed, communication;   /* plain means: what a left-out level is held to */
} Level;

typedef struct Levels {
        Level *v;
        size_t n;
        size_t runs;
} Levels;

static int levels_of(const ScalingPoint *v, size_t n, Levels *ret) {
        _cleanup_free_ double *w = malloc(MAX(n, (size_t) 1) * sizeof(double));
        _cleanup_free_ size_t *at = malloc(MAX(n, (size_t) 1) * sizeof(size_t));
        Levels l = { .v = calloc(MAX(n, (size_t) 1), sizeof(Level)), .runs = n };

        if (!w || !at || !l.v) {
                free(l.v);
                return -ENOMEM;
        }
        weights(v, n, w);
        for (size_t i = 0; i < n; i++) {
                size_t k;

                for (k = 0; k < l.n && l.v[k].p != v[i].p; k++)
                        ;
                if (k == l.n)
                        l.v[l.n++].p = v[i].p;
                at[i] = k;
                l.v[k].runs++;
                l.v[k].w += w[i];
                l.v[k].comp += w[i] * v[i].computation;
                l.v[k].comm += w[i] * v[i].communication;
                l.v[k].elapsed += v[i].computation + v[i].communication;
                l.v[k].communication += v[i].communication;
        }
        for (size_t k = 0; k < l.n; k++) {
                l.v[k].comp /= l.v[k].w;
                l.v[k].comm /= l.v[k].w;
                l.v[k].elapsed /= (double) l.v[k].runs;
                l.v[k].communication /= (double) l.v[k].runs;
        }
        for (size_t i = 0; i < n; i++) {
                Level *e = &l.v[at[i]];

                e->within_comp += w[i] * (v[i].computation - e->comp) * (v[i].computation - e->comp);
                e->within_comm += w[i] * (v[i].communication - e->comm) * (v[i].communication - e->comm);
        }
        *ret = l;
        return 0;
}

/* The levels but the k-th, in w (room for l->n). */
static Levels levels_without(const Levels *l, size_t k, Level *w) {
        Levels r = { .v = w, .runs = l->runs - l->v[k].runs };

        for (size_t i = 0; i < l->n; i++)
                if (i != k)
                        w[r.n++] = l->v[i];
        return r;
}

/* A form fitted to the levels: rows from row(p, x) of m values, the
 * levels' weighted means of computation (comm false) or communication. */
static int levels_lsq(const Levels *l, size_t m, bool comm, unsigned arg,
                      size_t (*row)(unsigned arg, double p, double *x), Lsq *ret) {
        _cleanup_free_ double *x = malloc(MAX(l->n, (size_t) 1) * MAX_TERMS * sizeof(double));
        _cleanup_free_ double *y = malloc(MAX(l->n, (size_t) 1) * sizeof(double));
        _cleanup_free_ double *w = malloc(MAX(l->n, (size_t) 1) * sizeof(double));
        int r;

        if (!x || !y || !w)
                return -ENOMEM;
        for (size_t i = 0; i < l->n; i++) {
                row(arg, l->v[i].p, x + i * m);
                y[i] = comm ? l->v[i].comm : l->v[i].comp;
                w[i] = l->v[i].w;
        }
        r = lsq_solve(x, y, w, l->n, m, ret);
        for (size_t i = 0; r >= 0 && i < l->n; i++)
                ret->sse += comm ? l->v[i].within_comm : l->v[i].within_comp;
        return r;
}

static size_t comm_row(unsigned terms, double p, double *row) {
        for (unsigned t = 0; t < terms; t++)
                row[t] = comm_term(t, p);
        return terms;
}

static int comp_lsq(const Levels *l, unsigned free_, Lsq *ret) {
        return levels_lsq(l, (free_ & 1) + (free_ >> 1 & 1), false, free_, comp_row, ret);
}

static int comm_lsq(const Levels *l, unsigned terms, Lsq *ret) {
        return levels_lsq(l, terms, true, terms, comm_row, ret);
}

/* T(p) = a/p + b with a, b >= 0. The minimum lies inside the quadrant or
 * on one of its edges (a = 0 or b = 0), each a one-parameter problem with
 * a closed form; the best feasible one wins. With one core count a and b
 * cannot be told apart: all of it is taken as a/p (ideal scaling). */
static int fit_computation(const Levels *l, ScalingFit *f) {
        /* both free first: when that is feasible it is the minimum */
        static const unsigned order[] = { 3, 1, 2 };
        double best = INFINITY;
        int r;

        for (size_t k = 0; k < ELEMENTSOF(order); k++) {
                unsigned free_ = order[k];
                Lsq q;

                if (free_ != 1 && l->n < 2)
                        continue;
                r = comp_lsq(l, free_, &q);
                if (r == -EDOM)
                        continue;
                if (r < 0)
                        return r;
                if (q.beta[0] < 0 || (q.m > 1 && q.beta[1] < 0))
                        continue;
                if (q.sse < best) {
                        best = q.sse;
                        f->a = free_ & 1 ? q.beta[0] : 0;
                        f->b = free_ == 2 ? q.beta[0] : free_ == 3 ? q.beta[1] : 0;
                        f->comp_free = free_;
                        f->dof_computation = (int) l->runs - (int) q.m;
                        f->s_computation = f->dof_computation > 0 ? sqrt(q.sse / f->dof_computation) : NAN;
                }
                if (free_ == 3)
                        break;
        }
        return best < INFINITY ? 0 : -EDOM;
}

static int fit_communication(const Levels *l, unsigned terms, ScalingFit *f) {
        Lsq q;
        int r;

        r = comm_lsq(l, terms, &q);
        if (r < 0)
                return r;
        memset(f->c, 0, sizeof(f->c));
        for (unsigned t = 0; t < terms; t++)
                f->c[t] = q.beta[t];
        f->comm_terms = terms;
        f->dof_communication = (int) l->runs - (int) terms;
        f->s_communication = f->dof_communication > 0 ? sqrt(q.sse / f->dof_communication) : NAN;
        return 0;
}

/* Both forms, communication with a given number of terms. */
static int fit_forms(const Levels *l, unsigned terms, ScalingFit *ret) {
        ScalingFit f = { .n = l->runs, .distinct = l->n, .loo_error = NAN };
        int r;

        r = fit_computation(l, &f);
        if (r >= 0)
                r = fit_communication(l, terms, &f);
        if (r < 0)
                return r;
        *ret = f;
        return 0;
}

/* Leave each core count out in turn, fit the rest with the given terms
 * and predict it: the root mean square error of communication (what == 1)
 * or of elapsed (what == 0), relative to the elapsed time there. NAN when
 * a fit fails. */
static int leave_out_error(const Levels *l, unsigned terms, int what, double *ret) {
        _cleanup_free_ Level *w = malloc(MAX(l->n, (size_t) 1) * sizeof(Level));
        double sum = 0;

        if (!w)
                return -ENOMEM;
        for (size_t k = 0; k < l->n; k++) {
                Levels rest = levels_without(l, k, w);
                const Level *e = &l->v[k];
                ScalingFit f;
                double got;
                int r;

                r = fit_forms(&rest, terms, &f);
                if (r == -EDOM) {
                        *ret = NAN;
                        return 0;
                }
                if (r < 0)
                        return r;
                if (what == 1)
                        got = scaling_communication(&f, e->p) - e->communication;
                else
                        got = scaling_computation(&f, e->p) + scaling_communication(&f, e->p) - e->elapsed;
                got = e->elapsed > 0 ? got / e->elapsed : 0;
                sum += got * got;
        }
        *ret = l->n > 0 && isfinite(sum) ? sqrt(sum / (double) l->n) : NAN;
        return 0;
}

static int fit_levels(const Levels *l, ScalingFit *ret) {
        ScalingFit best;
        double best_err = NAN, floor_ = 0;
        unsigned terms = 1, most;
        int r;

        for (size_t k = 0; k < l->n; k++)
                floor_ = MAX(floor_, l->v[k].communication * NOISE_FLOOR);
        /* leaving a core count out must leave as many as the form has terms */
        most = (unsigned) MIN((size_t) MAX_TERMS, l->n > 1 ? l->n - 1 : 1);
        r = fit_forms(l, 1, &best);
        if (r < 0)
                return r;
        if (most > 1 && (r = leave_out_error(l, 1, 1, &best_err)) < 0)
                return r;
        for (unsigned t = 2; t <= most && isfinite(best_err); t++) {
                ScalingFit f;
                double err;

                r = leave_out_error(l, t, 1, &err);
                if (r < 0)
                        return r;
                if (!isfinite(err) || !(err < LONGER_FORM_GAIN * best_err - floor_))
                        continue;
                r = fit_forms(l, t, &f);
                if (r == -EDOM)
                        continue;
                if (r < 0)
                        return r;
                best = f;
                best_err = err;
                terms = t;
        }
        best.loo_error = NAN;
        if (l->n >= 3 && (r = leave_out_error(l, terms, 0, &best.loo_error)) < 0)
                return r;
        *ret = best;
        return 0;
}

int scaling_fit(const ScalingPoint *v, size_t n, ScalingFit *ret) {
        Levels l;
        int r;

        if (n == 0)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (!(v[i].p >= 1) || !isfinite(v[i].p) || !(v[i].computation >= 0) ||
                    !isfinite(v[i].computation) || !(v[i].communication >= 0) || !isfinite(v[i].communication))
                        return -EINVAL;
        r = levels_of(v, n, &l);
        if (r < 0)
                return r;
        r = fit_levels(&l, ret);
        free(l.v);
        return r;
}

/* Two-sided 95% quantiles of Student's t for 1 … 30 degrees of freedom;
 * beyond, 1.96 + 2.5/dof is within 0.002 of the true value. */
double scaling_t95(int dof) {
        static const double t[] = {
                12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
        };

        if (dof < 1)
                return NAN;
        if ((size_t) dof <= ELEMENTSOF(t))
                return t[dof - 1];
        return 1.96 + 2.5 / dof;
}

/* The prediction interval treats the two forms as independent weighted
 * least-squares fits with the chosen terms (and the computation's free
 * parameters) fixed: s^2 (1/w + leverage) each, added, and the smaller of
 * their degrees of freedom. It leaves out the uncertainty of choosing the
 * form: docs/scaling.md shows how it fares against left-out core counts. */
void scaling_predict(const ScalingFit *f, const ScalingPoint *v, size_t n, double p, ScalingPrediction *ret) {
        ScalingPrediction x = { .p = p, .low = NAN, .high = NAN };
        int dof = MIN(f->dof_computation, f->dof_communication);
        double row[MAX_TERMS];
        Levels l = {};
        Lsq lc, lm;

        x.computation = scaling_computation(f, p);
        x.communication = scaling_communication(f, p);
        x.elapsed = x.computation + x.communication;
        if (!isfinite(x.elapsed))
                x.computation = x.communication = x.elapsed = NAN;
        if (isfinite(x.elapsed) && f->distinct >= 2 && dof >= 1 && isfinite(f->s_computation) &&
            isfinite(f->s_communication) && levels_of(v, n, &l) >= 0 && comp_lsq(&l, f->comp_free, &lc) >= 0 &&
            comm_lsq(&l, f->comm_terms, &lm) >= 0) {
                double hc, hm, half;

                comp_row(f->comp_free, p, row);
                hc = lsq_leverage(&lc, row);
                comm_row(f->comm_terms, p, row);
                hm = lsq_leverage(&lm, row);
                /* s is relative (weights 1/elapsed^2): a new run at p
                 * varies by s times its elapsed time */
                half = scaling_t95(dof) * sqrt(f->s_computation * f->s_computation * (x.elapsed * x.elapsed + hc) +
                                               f->s_communication * f->s_communication * (x.elapsed * x.elapsed + hm));
                if (isfinite(half)) {
                        x.low = MAX(x.elapsed - half, 0.0);
                        x.high = x.elapsed + half;
                }
        }
        free(l.v);
        *ret = x;
}

static int double_cmp(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return CMP(x, y);
}

int scaling_off_curve(const ScalingFit *f, const ScalingPoint *v, size_t n, bool *flags) {
        _cleanup_free_ double *rel = malloc(MAX(n, (size_t) 1) * sizeof(double));
        _cleanup_free_ double *sorted = malloc(MAX(n, (size_t) 1) * sizeof(double));
        double sigma;

        if (!rel || !sorted)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                double fit = scaling_computation(f, v[i].p) + scaling_communication(f, v[i].p);
                double r = fabs(v[i].computation + v[i].communication - fit);

                rel[i] = fit > 0 ? r / fit : r > 0 ? INFINITY : 0;
                sorted[i] = rel[i];
        }
        qsort(sorted, n, sizeof(double), double_cmp);
        sigma = n == 0 ? 0 : 1.4826 * (n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2);
        for (size_t i = 0; i < n; i++)
                flags[i] = rel[i] > 0.25 || (n >= 3 && rel[i] > 3 * sigma && rel[i] > 0.05);
        return 0;
}

static size_t count_distinct(const ScalingPoint *v, size_t n) {
        size_t k = 0;

        for (size_t i = 0; i < n; i++) {
                size_t j;

                for (j = 0; j < i && v[j].p != v[i].p; j++)
                        ;
                k += j == i;
        }
        return k;
}

static size_t gather(const ScalingPoint *v, size_t n, const bool *used, ScalingPoint *w) {
        size_t m = 0;

        for (size_t i = 0; i < n; i++)
                if (used[i])
                        w[m++] = v[i];
        return m;
}

typedef struct Candidate {
        size_t i;
        double rel;
} Candidate;

static int candidate_cmp(const void *a, const void *b) {
        const Candidate *x = a, *y = b;

        return CMP(y->rel, x->rel) ?: CMP(x->i, y->i);
}

/* Each round leaves out the farther half of the runs off the curve (at
 * least one): a few rounds even for hundreds of bad runs, where one by one
 * took a second for a thousand runs. */
int scaling_fit_robust(const ScalingPoint *v, size_t n, bool *used, ScalingFit *ret) {
        _cleanup_free_ ScalingPoint *w = calloc(MAX(n, (size_t) 1), sizeof(ScalingPoint));
        _cleanup_free_ Candidate *cand = calloc(MAX(n, (size_t) 1), sizeof(Candidate));
        _cleanup_free_ bool *off = calloc(MAX(n, (size_t) 1), sizeof(bool));
        ScalingFit f = {};
        size_t removed = 0;
        int r;

        if (!w || !off || !cand)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                used[i] = true;
        for (;;) {
                size_t m = gather(v, n, used, w), k = 0, nc = 0, take;

                r = scaling_fit(w, m, &f);
                if (r < 0)
                        return r;
                if (removed >= n / 4)
                        break;
                r = scaling_off_curve(&f, w, m, off);
                if (r < 0)
                        return r;
                for (size_t i = 0; i < n; i++) {
                        double at;

                        if (!used[i] || !off[k++])
                                continue;
                        at = scaling_computation(&f, v[i].p) + scaling_communication(&f, v[i].p);
                        cand[nc++] = (Candidate) {
                                i, fabs(v[i].computation + v[i].communication - at) / MAX(at, 1e-300) };
                }
                if (nc == 0)
                        break;
                qsort(cand, nc, sizeof(Candidate), candidate_cmp);
                take = MIN((nc + 1) / 2, n / 4 - removed);
                for (size_t j = 0; j < take; j++)
                        used[cand[j].i] = false;
                if (count_distinct(w, gather(v, n, used, w)) < 2) {
                        for (size_t j = 0; j < take; j++)
                                used[cand[j].i] = true;
                        break;
                }
                removed += take;
        }
        *ret = f;
        return 0;
}
