/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "scaling-fit.h"

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

static int comp_lsq(const ScalingPoint *v, size_t n, unsigned free_, Lsq *ret) {
        _cleanup_free_ double *x = malloc(n * 2 * sizeof(double)), *y = malloc(n * sizeof(double)),
                              *w = malloc(n * sizeof(double));
        size_t m = (free_ & 1) + (free_ >> 1 & 1);

        if (!x || !y || !w)
                return -ENOMEM;
        weights(v, n, w);
        for (size_t i = 0; i < n; i++) {
                comp_row(free_, v[i].p, x + i * m);
                y[i] = v[i].computation;
        }
        return lsq_solve(x, y, w, n, m, ret);
}

static int comm_lsq(const ScalingPoint *v, size_t n, unsigned terms, Lsq *ret) {
        _cleanup_free_ double *x = malloc(n * terms * sizeof(double)), *y = malloc(n * sizeof(double)),
                              *w = malloc(n * sizeof(double));

        if (!x || !y || !w)
                return -ENOMEM;
        weights(v, n, w);
        for (size_t i = 0; i < n; i++) {
                for (unsigned t = 0; t < terms; t++)
                        x[i * terms + t] = comm_term(t, v[i].p);
                y[i] = v[i].communication;
        }
        return lsq_solve(x, y, w, n, terms, ret);
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

/* T(p) = a/p + b with a, b >= 0. The minimum lies inside the quadrant or
 * on one of its edges (a = 0 or b = 0), each a one-parameter problem with
 * a closed form; the best feasible one wins. With one core count a and b
 * cannot be told apart: all of it is taken as a/p (ideal scaling). */
static int fit_computation(const ScalingPoint *v, size_t n, size_t distinct, ScalingFit *f) {
        /* both free first: when that is feasible it is the minimum */
        static const unsigned order[] = { 3, 1, 2 };
        double best = INFINITY;
        int r;

        for (size_t k = 0; k < ELEMENTSOF(order); k++) {
                unsigned free_ = order[k];
                Lsq l;

                if (free_ != 1 && distinct < 2)
                        continue;
                r = comp_lsq(v, n, free_, &l);
                if (r == -EDOM)
                        continue;
                if (r < 0)
                        return r;
                if (l.beta[0] < 0 || (l.m > 1 && l.beta[1] < 0))
                        continue;
                if (l.sse < best) {
                        best = l.sse;
                        f->a = free_ & 1 ? l.beta[0] : 0;
                        f->b = free_ == 2 ? l.beta[0] : free_ == 3 ? l.beta[1] : 0;
                        f->comp_free = free_;
                        f->dof_computation = (int) n - (int) l.m;
                        f->s_computation = f->dof_computation > 0 ? sqrt(l.sse / f->dof_computation) : NAN;
                }
                if (free_ == 3)
                        break;
        }
        return best < INFINITY ? 0 : -EDOM;
}

static int fit_communication(const ScalingPoint *v, size_t n, unsigned terms, ScalingFit *f) {
        Lsq l;
        int r;

        r = comm_lsq(v, n, terms, &l);
        if (r < 0)
                return r;
        memset(f->c, 0, sizeof(f->c));
        for (unsigned t = 0; t < terms; t++)
                f->c[t] = l.beta[t];
        f->comm_terms = terms;
        f->dof_communication = (int) n - (int) terms;
        f->s_communication = f->dof_communication > 0 ? sqrt(l.sse / f->dof_communication) : NAN;
        return 0;
}

/* Both forms, communication with a given number of terms. */
static int fit_forms(const ScalingPoint *v, size_t n, unsigned terms, ScalingFit *ret) {
        ScalingFit f = { .n = n, .distinct = count_distinct(v, n), .loo_error = NAN };
        int r;

        r = fit_computation(v, n, f.distinct, &f);
        if (r >= 0)
                r = fit_communication(v, n, terms, &f);
        if (r < 0)
                return r;
        *ret = f;
        return 0;
}

/* The runs not at core count p, into w; their count. */
static size_t without(const ScalingPoint *v, size_t n, double p, ScalingPoint *w) {
        size_t k = 0;

        for (size_t i = 0; i < n; i++)
                if (v[i].p != p)
                        w[k++] = v[i];
        return k;
}

/* Mean of the runs at p of elapsed (what = 0) or communication (1). */
static double mean_at(const ScalingPoint *v, size_t n, double p, int what) {
        double s = 0;
        size_t k = 0;

        for (size_t i = 0; i < n; i++)
                if (v[i].p == p) {
                        s += what == 0 ? v[i].computation + v[i].communication : v[i].communication;
                        k++;
                }
        return s / (double) k;
}

/* Leave each core count out in turn, fit the rest with the given terms
 * and predict it: the root mean square error of communication (what == 1)
 * or of elapsed (what == 0), relative to the elapsed time there. NAN when
 * a fit fails. */
static int leave_out_error(const ScalingPoint *v, size_t n, unsigned terms, int what, double *ret) {
        _cleanup_free_ ScalingPoint *w = malloc(n * sizeof(ScalingPoint));
        double sum = 0;
        size_t k = 0;

        if (!w)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                ScalingFit f;
                double want, got, scale;
                size_t j, m;
                int r;

                for (j = 0; j < i && v[j].p != v[i].p; j++)
                        ;
                if (j < i)
                        continue; /* core count seen before */
                m = without(v, n, v[i].p, w);
                r = fit_forms(w, m, terms, &f);
                if (r == -EDOM) {
                        *ret = NAN;
                        return 0;
                }
                if (r < 0)
                        return r;
                want = mean_at(v, n, v[i].p, what);
                scale = mean_at(v, n, v[i].p, 0);
                if (what == 1)
                        got = scaling_communication(&f, v[i].p) - want;
                else
                        got = scaling_computation(&f, v[i].p) + scaling_communication(&f, v[i].p) - want;
                got = scale > 0 ? got / scale : 0;
                sum += got * got;
                k++;
        }
        *ret = k > 0 && isfinite(sum) ? sqrt(sum / (double) k) : NAN;
        return 0;
}

int scaling_fit(const ScalingPoint *v, size_t n, ScalingFit *ret) {
        ScalingFit best;
        double best_err = NAN, floor_ = 0;
        size_t distinct;
        unsigned terms = 1, most;
        int r;

        if (n == 0)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (!(v[i].p >= 1) || !isfinite(v[i].p) || !(v[i].computation >= 0) ||
                    !isfinite(v[i].computation) || !(v[i].communication >= 0) || !isfinite(v[i].communication))
                        return -EINVAL;
        distinct = count_distinct(v, n);
        for (size_t i = 0; i < n; i++)
                floor_ = MAX(floor_, v[i].communication * NOISE_FLOOR);
        /* leaving a core count out must leave as many as the form has terms */
        most = (unsigned) MIN((size_t) MAX_TERMS, distinct > 1 ? distinct - 1 : 1);
        r = fit_forms(v, n, 1, &best);
        if (r < 0)
                return r;
        if (most > 1 && (r = leave_out_error(v, n, 1, 1, &best_err)) < 0)
                return r;
        for (unsigned t = 2; t <= most && isfinite(best_err); t++) {
                ScalingFit f;
                double err;

                r = leave_out_error(v, n, t, 1, &err);
                if (r < 0)
                        return r;
                if (!isfinite(err) || !(err < LONGER_FORM_GAIN * best_err - floor_))
                        continue;
                r = fit_forms(v, n, t, &f);
                if (r == -EDOM)
                        continue;
                if (r < 0)
                        return r;
                best = f;
                best_err = err;
                terms = t;
        }
        best.loo_error = NAN;
        if (distinct >= 3 && (r = leave_out_error(v, n, terms, 0, &best.loo_error)) < 0)
                return r;
        *ret = best;
        return 0;
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
        Lsq lc, lm;

        x.computation = scaling_computation(f, p);
        x.communication = scaling_communication(f, p);
        x.elapsed = x.computation + x.communication;
        if (!isfinite(x.elapsed))
                x.computation = x.communication = x.elapsed = NAN;
        if (isfinite(x.elapsed) && f->distinct >= 2 && dof >= 1 && isfinite(f->s_computation) &&
            isfinite(f->s_communication) && comp_lsq(v, n, f->comp_free, &lc) >= 0 &&
            comm_lsq(v, n, f->comm_terms, &lm) >= 0) {
                double hc, hm, half;

                comp_row(f->comp_free, p, row);
                hc = lsq_leverage(&lc, row);
                for (unsigned t = 0; t < f->comm_terms; t++)
                        row[t] = comm_term(t, p);
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
        *ret = x;
}

static int double_cmp(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return x < y ? -1 : x > y;
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

static size_t gather(const ScalingPoint *v, size_t n, const bool *used, ScalingPoint *w) {
        size_t m = 0;

        for (size_t i = 0; i < n; i++)
                if (used[i])
                        w[m++] = v[i];
        return m;
}

int scaling_fit_robust(const ScalingPoint *v, size_t n, bool *used, ScalingFit *ret) {
        _cleanup_free_ ScalingPoint *w = calloc(MAX(n, (size_t) 1), sizeof(ScalingPoint));
        _cleanup_free_ bool *off = calloc(MAX(n, (size_t) 1), sizeof(bool));
        ScalingFit f = {};
        size_t removed = 0;
        int r;

        if (!w || !off)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                used[i] = true;
        for (;;) {
                size_t m = gather(v, n, used, w), worst = n, k = 0;
                double worst_rel = 0;

                r = scaling_fit(w, m, &f);
                if (r < 0)
                        return r;
                if (removed + 1 > n / 4)
                        break;
                r = scaling_off_curve(&f, w, m, off);
                if (r < 0)
                        return r;
                for (size_t i = 0; i < n; i++) {
                        double at, rel;

                        if (!used[i])
                                continue;
                        at = scaling_computation(&f, v[i].p) + scaling_communication(&f, v[i].p);
                        rel = fabs(v[i].computation + v[i].communication - at) / MAX(at, 1e-300);
                        if (off[k++] && rel > worst_rel) {
                                worst = i;
                                worst_rel = rel;
                        }
                }
                if (worst == n)
                        break;
                used[worst] = false;
                if (count_distinct(w, gather(v, n, used, w)) < 2) {
                        used[worst] = true;
                        break;
                }
                removed++;
        }
        *ret = f;
        return 0;
}
