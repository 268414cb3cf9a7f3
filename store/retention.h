/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <pthread.h>
#include <stdbool.h>

#include "metrics/metrics.h"
#include "db/storage.h"

/* Retention (docs/lmk-store.md): a thread that deletes the raw detail older
 * than keep_raw_days and, when keep_rollup_days is set, the site-wide
 * rollups older than that, and when keep_job_days is set, the jobs last
 * seen before that with their summaries, every interval_s seconds, in
 * short steps that leave the writer to ingest in between. */
typedef struct Retention {
        Storage *storage;
        Metrics *metrics;
        unsigned keep_raw_days; /* 0: keep everything */
        unsigned keep_rollup_days; /* 0: keep the rollups for good */
        unsigned keep_job_days; /* 0: keep the jobs and their summaries for good */
        unsigned interval_s;

        pthread_t thread;
        pthread_mutex_t lock;
        pthread_cond_t cond;
        bool started, stopping;
} Retention;

/* Rows one step may delete: a step holds the writer for a few milliseconds. */
#define RETENTION_STEP_ROWS 5000u

/* The rollups' horizon for a window of days: the start of the 28-day
 * period (schema/0012) holding now - days, so that hours, days, weeks and
 * periods all cover the same time afterwards. 0 for days 0 (no window). */
int64_t retention_rollup_horizon(int64_t now, unsigned days);

int retention_start(Retention *r);
void retention_stop(Retention *r);
