/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <json-c/json.h>
#include <stdio.h>

#include "monitor.h"

typedef struct ReportInfo {
        const char *host;
        double start;           /* Unix time, seconds */
        double end;
        double duration;        /* seconds the sampling events were enabled, wall clock */
} ReportInfo;

/* The one-shot report: JSON (format "lmk-oneshot", see lmkd(8)) or a table
 * for people. */
int report_write_json(Monitor *m, const ReportInfo *info, FILE *f);
/* Adds the interval's "rows", "totals" and "counters" to root (the shape
 * shared by the report and the batch format). */
int report_add_rows(Monitor *m, Histogram *h, json_object *root);
json_object *report_lmkd_stats(Monitor *m);
int report_write_table(Monitor *m, const ReportInfo *info, FILE *f);

/* Why a counter could not be opened, in the admin's terms. */
const char *counter_error_text(int error);

/* uid → user name, or the number when it has none. Cached. */
const char *user_name(uint32_t uid);
