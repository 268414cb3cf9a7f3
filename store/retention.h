/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <pthread.h>
#include <stdbool.h>

#include "metrics.h"
#include "storage.h"

/* Retention (docs/lmk-store.md): a thread that deletes the raw detail older
 * than keep_raw_days, every interval_s seconds, in short steps that leave
 * the writer to ingest in between. Summaries and rollups stay for good. */
typedef struct Retention {
        Storage *storage;
        Metrics *metrics;
        unsigned keep_raw_days; /* 0: keep everything */
        unsigned interval_s;

        pthread_t thread;
        pthread_mutex_t lock;
        pthread_cond_t cond;
        bool started, stopping;
} Retention;

/* Rows one step may delete: a step holds the writer for a few milliseconds. */
#define RETENTION_STEP_ROWS 5000u

int retention_start(Retention *r);
void retention_stop(Retention *r);
