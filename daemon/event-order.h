/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lmk-bpf.h"
#include "sb-record.h"

/* lmkd's two streams in one order: what the sampler's ring holds (samples
 * and liblmk's region events) and the kernel's process records
 * (sb-record.h), merged by time up to an order point, so that a sample is
 * attributed with the mappings, processes and phases of its moment. */

/* Samples and records younger than this stay queued until the next tick: a
 * record of an earlier mmap may still be on its way from another CPU. */
#define ORDER_MARGIN_NS (20 * UINT64_C(1000000))

typedef union PendingEvent {
        struct lmk_event_header h;
        struct lmk_sample s;
        struct lmk_region_event r;
} PendingEvent;

typedef struct EventQueue {
        PendingEvent *v;        /* sorted by time at each apply */
        size_t n, alloc;
} EventQueue;

/* Queues one record drained from the sampler's ring; queue is the
 * EventQueue (the shape of sampler_cb_t). A record of no known type, or
 * shorter than its type, is dropped. -ENOMEM. */
int event_queue_add(const struct lmk_event_header *e, size_t size, void *queue);
void event_queue_done(EventQueue *q);

/* Up to where a tick at now applies what it holds: everything when final,
 * else all but the last ORDER_MARGIN_NS. */
uint64_t event_order_point(uint64_t now, bool final);

typedef struct EventOrderHandler {
        /* the record is the handler's to use and release (sb_record_done()) */
        void (*record)(void *userdata, SbRecord *r);
        int (*event)(void *userdata, const PendingEvent *e);
        void *userdata;
} EventOrderHandler;

/* Sorts both queues and hands every record and event at or before point to
 * the handler, in time order: a record before an event of the same time
 * (the mapping or process it made is the sample's), records of one time in
 * arrival order (seq), events of one time by CPU. What is younger stays
 * queued, in order, for the next call. A negative answer of the event
 * handler stops the walk and is returned; what was handed over is gone
 * from the queues either way. */
int event_order_apply(EventQueue *events, SbRecord *records, size_t *n_records, uint64_t point,
                      const EventOrderHandler *h);
