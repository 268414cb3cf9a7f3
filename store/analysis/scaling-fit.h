/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* Scaling models fitted to runs of one application at several core counts
 * (docs/scaling.md). Plain numbers in, plain numbers out: no SQL, no HTTP.
 *
 *   computation    T(p) = a/p + b,  a, b >= 0 (non-negative least squares)
 *   communication  C(p) = c4 + c3 log2 p + c1 p + c2 p^2, nested: the terms
 *                  are taken in that order, as many as the distinct core
 *                  counts allow, and a longer form only when it predicts a
 *                  left-out core count better
 *   elapsed        E(p) = T(p) + C(p)
 *
 * Both are weighted least squares, each run by 1/elapsed^2: its relative
 * residual counts. Every number a fit gives is finite; where it cannot say
 * (too few runs), it says so with NAN, which the callers print as null. */

#include <stdbool.h>
#include <stddef.h>

/* One run: its core count and its times in seconds. */
typedef struct ScalingPoint {
        double p;
        double computation, communication;
} ScalingPoint;

/* The communication form's terms, in the order they are added. */
typedef enum CommTerm {
        COMM_CONST,     /* c4 */
        COMM_LOG2,      /* c3 log2 p */
        COMM_LINEAR,    /* c1 p */
        COMM_SQUARE,    /* c2 p^2 */
        _COMM_TERM_MAX,
} CommTerm;

typedef struct ScalingFit {
        size_t n;               /* runs */
        size_t distinct;        /* distinct core counts */
        double a, b;            /* computation */
        double c[_COMM_TERM_MAX]; /* communication, by CommTerm; 0 for terms not used */
        unsigned comm_terms;    /* terms used: 1 … _COMM_TERM_MAX, the first ones */
        /* leave-one-core-count-out root mean square relative error of
         * elapsed time of the chosen form; NAN with fewer than 3 distinct */
        double loo_error;
        /* residual standard deviations, relative to elapsed time, and
         * degrees of freedom */
        double s_computation, s_communication;
        int dof_computation, dof_communication;
        /* what the prediction interval needs: the free computation
         * parameters (bit 0: a, bit 1: b) */
        unsigned comp_free;
} ScalingFit;

typedef struct ScalingPrediction {
        double p;
        double computation, communication, elapsed;
        /* 95% prediction interval of elapsed; NAN when the fit has no
         * degrees of freedom left to estimate its spread */
        double low, high;
} ScalingPrediction;

/* Fits both models to n >= 1 runs (p >= 1, times >= 0 and finite);
 * -EINVAL otherwise, -ENOMEM. */
int scaling_fit(const ScalingPoint *v, size_t n, ScalingFit *ret);
/* The fit's computation, communication and elapsed time at p (>= 1) with
 * the interval, from the runs it was fitted to. */
void scaling_predict(const ScalingFit *f, const ScalingPoint *v, size_t n, double p, ScalingPrediction *ret);
double scaling_computation(const ScalingFit *f, double p);
double scaling_communication(const ScalingFit *f, double p);
/* A run far off the curve: its elapsed time differs from the fit's by more
 * than 25%, or by more than 3 robust standard deviations (1.4826 × the
 * median absolute relative residual) and more than 5%. flags[i] for v[i].
 * -ENOMEM. */
int scaling_off_curve(const ScalingFit *f, const ScalingPoint *v, size_t n, bool *flags);
/* Fits as scaling_fit() does, leaving out runs far off the curve, the
 * farther half of them each round (at least one), while they are at most a
 * quarter of the runs and the rest span two core counts or more: used[i]
 * says whether v[i] is in the fit. A run left out is off the curve; scaling_off_curve() on the runs
 * used tells the others. -EINVAL, -ENOMEM. */
int scaling_fit_robust(const ScalingPoint *v, size_t n, bool *used, ScalingFit *ret);
/* Student's t quantile for a two-sided 95% interval with dof >= 1. */
double scaling_t95(int dof);
