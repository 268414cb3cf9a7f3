/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

/* How sure is a difference between two runs? Each run's figure (a share,
 * or CPU time as a share of the run's CPU time) comes with its own 95%
 * interval (share-interval.h); the difference b − a and the ratio b / a
 * get theirs by recovering each side's variance from its interval
 * (MOVER: Zou and Donner, Stat. Med. 27:1693, 2008; for the ratio Donner
 * and Zou, Stat. Methods Med. Res. 21:347, 2012). For two shares with
 * Wilson intervals the difference's interval is Newcombe's method 10
 * (Stat. Med. 17:873, 1998). docs/uncertainty.md argues the method. */

/* A figure and its interval, low ≤ value ≤ high. */
typedef struct Estimate {
        double value, low, high;
} Estimate;

/* b − a with its 95% interval, from the two runs' 95% intervals. */
Estimate estimate_difference(Estimate a, Estimate b);

/* b / a with its 95% interval: the ratios r for which b − r·a is within
 * its own interval of 0, so that the ratio's interval holds 1 exactly when
 * the difference's holds 0. NAN for what is unbounded or undefined: the
 * value and the high end when a is 0, the high end when a's interval
 * reaches 0, everything when a's interval is [0, 0]. */
Estimate estimate_ratio(Estimate a, Estimate b);

/* The interval leaves out v: the samples tell the figure apart from v. */
bool estimate_excludes(Estimate e, double v);
