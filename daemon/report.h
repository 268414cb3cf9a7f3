/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdio.h>

#include "interval.h"
#include "node-type.h"

typedef struct ReportInfo {
        const char *host;
        double duration;        /* seconds the sampling events were enabled, wall clock */
        const NodeType *node_type; /* NULL: not looked */
} ReportInfo;

/* The one-shot report of an interval: JSON (format "lmk-oneshot", see
 * lmkd(8)) or a table for people. */
int report_write_json(const Interval *iv, const ReportInfo *info, FILE *f);
int report_write_table(const Interval *iv, const ReportInfo *info, FILE *f);
