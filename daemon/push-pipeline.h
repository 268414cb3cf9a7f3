/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "interval-clock.h"
#include "inventory-watch.h"
#include "lmkd-config.h"
#include "monitor.h"
#include "node-software.h"
#include "node-type.h"
#include "push-thread.h"
#include "spool.h"

/* The push pipeline: at the end of each interval its batch goes into the
 * on-disk spool, and the push thread sends the spool to lmk-store.
 * Sampling never stops for the spool or the clock: an interval the spool
 * cannot take is counted and said once while the trouble lasts, and a step
 * of the wall clock ends the interval (interval-clock.h). */
typedef struct Pushing {
        Spool *spool;
        Pusher *pusher;
        char *boot_id;
        char node[256];
        IntervalClock clock;            /* the current interval's times */
        NodeSoftware software;          /* library families installed here */
        const NodeType *node_type;      /* what kind of node this is; NULL: not looked */
        InventoryWatch *inventory;      /* the software inventory's watch; NULL: not taken */

        uint64_t intervals_unspooled;   /* batches the spool could not take */
        uint64_t samples_unspooled;     /* the samples of those intervals */
        uint64_t clock_steps;           /* intervals ended by a step of the wall clock */
        /* The spool's trouble since it began, said once: the error of its
         * failing writes (0: none), whether it drops batches for room, and
         * the counts when it began. A batch spooled without either ends it. */
        int spool_error;
        bool spool_dropping;
        uint64_t trouble_intervals, trouble_samples, trouble_dropped;
} Pushing;

/* Reads the token, opens the spool, looks for the library families
 * installed here and starts the push thread. */
int pushing_start(Pushing *p, const LmkdConfig *o, const char *host, const LibFamilies *families);
void pushing_done(Pushing *p);
/* Ends the interval: its batch goes to the spool, and the store is asked.
 * final: the samplers are closed and drained, so the interval is settled up
 * to now (no order-point gap left for the next one). */
void pushing_flush(Pushing *p, Monitor *m, const LmkdConfig *o, bool final);
/* Before a tick: ends the interval when the wall clock stepped. */
int pushing_check_clock(Pushing *p, Monitor *m, const LmkdConfig *o);
