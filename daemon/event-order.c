/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "event-order.h"
#include "macro.h"

int event_queue_add(const struct lmk_event_header *e, size_t size, void *queue) {
        EventQueue *q = queue;
        PendingEvent *slot;

        if (((e->type == LMK_EVENT_SAMPLE || e->type == LMK_EVENT_BURST) && size < sizeof(struct lmk_sample)) ||
            ((e->type == LMK_EVENT_REGION || e->type == LMK_EVENT_REGION_OFF) && size < sizeof(struct lmk_region_event)) ||
            (e->type < LMK_EVENT_SAMPLE || e->type > LMK_EVENT_BURST))
                return 0;
        if (q->n == q->alloc) {
                size_t na = MAX(q->alloc * 2, (size_t) 1024);
                PendingEvent *v = realloc(q->v, na * sizeof(*v));

                if (!v)
                        return -ENOMEM;
                q->v = v;
                q->alloc = na;
        }
        slot = &q->v[q->n++];
        memcpy(slot, e, MIN(size, sizeof(*slot)));
        return 0;
}

void event_queue_done(EventQueue *q) {
        free(q->v);
        *q = (EventQueue) {};
}

uint64_t event_order_point(uint64_t now, bool final) {
        if (final)
                return UINT64_MAX;
        return now > ORDER_MARGIN_NS ? now - ORDER_MARGIN_NS : 0;
}

static int event_cmp(const void *a, const void *b) {
        const struct lmk_event_header *x = a, *y = b;

        if (x->time_ns != y->time_ns)
                return CMP(x->time_ns, y->time_ns);
        return (int) x->cpu - (int) y->cpu;
}

static int record_cmp(const void *a, const void *b) {
        const SbRecord *x = a, *y = b;

        if (x->time != y->time)
                return CMP(x->time, y->time);
        return CMP(x->seq, y->seq);
}

/* The ring hands samples over nearly in time order (CPUs interleave only by
 * the moments between reserving a record and stamping it): an insertion
 * sort is linear then, where qsort() paid n log n for every tick. A queue
 * far from order (many adjacent pairs reversed) goes to qsort(). */
static void sort_events(PendingEvent *v, size_t n) {
        size_t reversed = 0;

        for (size_t i = 1; i < n; i++)
                reversed += event_cmp(&v[i - 1], &v[i]) > 0;
        if (reversed == 0)
                return;
        if (reversed > n / 16 + 8) {
                qsort(v, n, sizeof(*v), event_cmp);
                return;
        }
        for (size_t i = 1; i < n; i++) {
                PendingEvent e;
                size_t j = i;

                if (event_cmp(&v[i - 1], &v[i]) <= 0)
                        continue;
                e = v[i];
                while (j > 0 && event_cmp(&v[j - 1], &e) > 0) {
                        v[j] = v[j - 1];
                        j--;
                }
                v[j] = e;
        }
}

int event_order_apply(EventQueue *events, SbRecord *records, size_t *n_records, uint64_t point,
                      const EventOrderHandler *h) {
        size_t i = 0, j = 0, k;
        int r = 0;

        /* qsort() wants a valid pointer even for nothing: the queues start empty and NULL */
        if (events->n > 0)
                sort_events(events->v, events->n);
        if (*n_records > 0)
                qsort(records, *n_records, sizeof(*records), record_cmp);

        for (;;) {
                bool rec_ready = i < *n_records && records[i].time <= point;
                bool evt_ready = j < events->n && events->v[j].h.time_ns <= point;

                if (!rec_ready && !evt_ready)
                        break;
                if (rec_ready && (!evt_ready || records[i].time <= events->v[j].h.time_ns))
                        h->record(h->userdata, &records[i++]);
                else {
                        r = h->event(h->userdata, &events->v[j++]);
                        if (r < 0)
                                break;
                }
        }

        k = *n_records - i;
        if (k > 0 && i > 0)
                memmove(records, records + i, k * sizeof(*records));
        *n_records = k;
        k = events->n - j;
        if (k > 0 && j > 0)
                memmove(events->v, events->v + j, k * sizeof(*events->v));
        events->n = k;
        return r;
}
