/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lmkd's order of events (daemon/event-order.c): the sampler's samples and
 * region events and the kernel's process records are handed on merged by
 * time, a record before a sample of its moment, nothing past the order
 * point, nothing twice, nothing lost, however the two queues arrive. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "event-order.h"
#include "macro.h"
#include "tests.h"

#define MAX_SEEN 20000

/* What the handler saw, in order: time, and 'r'ecord or 'e'vent with its
 * seq or CPU. */
typedef struct Seen {
        struct {
                uint64_t time;
                char kind;
                uint64_t id;
        } v[MAX_SEEN];
        size_t n;
        size_t fail_at;         /* the event handler fails at this event (0: never) */
        size_t events;
} Seen;

static void on_record(void *userdata, SbRecord *r) {
        Seen *s = userdata;

        ASSERT_TRUE(s->n < MAX_SEEN);
        s->v[s->n++] = (typeof(s->v[0])) { r->time, 'r', r->seq };
        sb_record_done(r);
}

static int on_event(void *userdata, const PendingEvent *e) {
        Seen *s = userdata;

        if (s->fail_at && ++s->events == s->fail_at)
                return -ENOMEM;
        ASSERT_TRUE(s->n < MAX_SEEN);
        s->v[s->n++] = (typeof(s->v[0])) { e->h.time_ns, 'e', e->h.cpu };
        return 0;
}

static void add_sample(EventQueue *q, uint64_t time, uint32_t cpu) {
        struct lmk_sample smp = { .type = LMK_EVENT_SAMPLE, .cpu = cpu, .time_ns = time };

        ASSERT_OK(event_queue_add((const struct lmk_event_header *) &smp, sizeof(smp), q));
}

static SbRecord record(uint64_t time, uint64_t seq) {
        return (SbRecord) { .time = time, .seq = seq, .type = SB_COMM, .str = strdup("x") };
}

static int apply(EventQueue *q, SbRecord *recs, size_t *n, uint64_t point, Seen *seen) {
        return event_order_apply(q, recs, n, point, &(const EventOrderHandler) {
                .record = on_record,
                .event = on_event,
                .userdata = seen,
        });
}

TEST(queue) {
        EventQueue q = {};
        struct lmk_sample smp = { .type = LMK_EVENT_SAMPLE, .time_ns = 5 };
        struct lmk_region_event reg = { .type = LMK_EVENT_REGION, .time_ns = 6 };
        struct lmk_event_header unknown = { .type = 99, .time_ns = 7 };

        ASSERT_OK(event_queue_add((const struct lmk_event_header *) &smp, sizeof(smp), &q));
        ASSERT_OK(event_queue_add((const struct lmk_event_header *) &reg, sizeof(reg), &q));
        /* cut short, of no known type: dropped */
        ASSERT_OK(event_queue_add((const struct lmk_event_header *) &smp, sizeof(smp) - 1, &q));
        ASSERT_OK(event_queue_add((const struct lmk_event_header *) &reg, sizeof(reg) - 1, &q));
        ASSERT_OK(event_queue_add(&unknown, sizeof(unknown), &q));
        smp.type = LMK_EVENT_BURST;
        ASSERT_OK(event_queue_add((const struct lmk_event_header *) &smp, sizeof(smp), &q));
        ASSERT_EQ(q.n, 3);
        ASSERT_EQ(q.v[0].h.type, LMK_EVENT_SAMPLE);
        ASSERT_EQ(q.v[1].h.type, LMK_EVENT_REGION);
        ASSERT_EQ(q.v[2].h.type, LMK_EVENT_BURST);
        event_queue_done(&q);
        ASSERT_NULL(q.v);
}

TEST(point) {
        ASSERT_U64_EQ(event_order_point(123, true), UINT64_MAX);
        ASSERT_U64_EQ(event_order_point(ORDER_MARGIN_NS - 1, false), 0);
        ASSERT_U64_EQ(event_order_point(ORDER_MARGIN_NS + 7, false), 7);
}

/* Ties: a record goes before a sample of the same time, records of one time
 * in arrival order, samples of one time by CPU; nothing past the point. */
TEST(merge) {
        static Seen seen;
        EventQueue q = {};
        SbRecord recs[4];
        size_t n = 0;

        add_sample(&q, 30, 1);
        add_sample(&q, 10, 0);
        add_sample(&q, 20, 1);
        add_sample(&q, 20, 0);
        add_sample(&q, 50, 0);
        recs[n++] = record(20, 8);
        recs[n++] = record(20, 7);
        recs[n++] = record(5, 9);
        recs[n++] = record(40, 10);

        ASSERT_OK(apply(&q, recs, &n, 30, &seen));
        ASSERT_EQ(seen.n, 7);
        {
                static const struct {
                        uint64_t time;
                        char kind;
                        uint64_t id;
                } want[] = { { 5, 'r', 9 }, { 10, 'e', 0 }, { 20, 'r', 7 }, { 20, 'r', 8 },
                             { 20, 'e', 0 }, { 20, 'e', 1 }, { 30, 'e', 1 } };

                for (size_t i = 0; i < ELEMENTSOF(want); i++) {
                        ASSERT_U64_EQ(seen.v[i].time, want[i].time);
                        ASSERT_EQ(seen.v[i].kind, want[i].kind);
                        ASSERT_U64_EQ(seen.v[i].id, want[i].id);
                }
        }
        /* the rest waits, in order, for a later point */
        ASSERT_EQ(n, 1);
        ASSERT_U64_EQ(recs[0].time, 40);
        ASSERT_EQ(q.n, 1);
        ASSERT_U64_EQ(q.v[0].h.time_ns, 50);
        ASSERT_OK(apply(&q, recs, &n, UINT64_MAX, &seen));
        ASSERT_EQ(seen.n, 9);
        ASSERT_EQ(seen.v[7].kind, 'r');
        ASSERT_EQ(seen.v[8].kind, 'e');
        ASSERT_EQ(n, 0);
        ASSERT_EQ(q.n, 0);
        event_queue_done(&q);
}

/* Queues as the rings deliver them (nearly sorted) and far from it, over
 * ticks with advancing points: every item once, in time order. */
TEST(shuffled) {
        static Seen seen;
        static SbRecord recs[4000];

        for (int round = 0; round < 2; round++) {
                unsigned seed = 4711 + (unsigned) round;
                EventQueue q = {};
                size_t n = 0, total = 0;
                uint64_t point = 0, seq = 0;

                seen.n = 0;
                for (int tick = 0; tick < 20; tick++) {
                        for (int k = 0; k < 200; k++) {
                                /* after the last point, as the margin makes sure; round 0:
                                 * a few adjacent swaps, round 1: any order */
                                uint64_t t = point + 1 +
                                             (round == 0 ? (uint64_t) k * 10 + (rand_r(&seed) % 20 == 0 ? 15 : 0)
                                                         : (uint64_t) (rand_r(&seed) % 3000));

                                add_sample(&q, t, (uint32_t) (rand_r(&seed) % 4));
                                if (k % 2 == 0) {
                                        ASSERT_TRUE(n < ELEMENTSOF(recs));
                                        recs[n++] = record(point + 1 + (uint64_t) (rand_r(&seed) % 3000), seq++);
                                }
                                total += 1 + (k % 2 == 0);
                        }
                        point += 1000;
                        ASSERT_OK(apply(&q, recs, &n, point, &seen));
                }
                ASSERT_OK(apply(&q, recs, &n, UINT64_MAX, &seen));
                ASSERT_EQ(seen.n, total);
                for (size_t i = 1; i < seen.n; i++) {
                        ASSERT_TRUE(seen.v[i - 1].time <= seen.v[i].time);
                        if (seen.v[i - 1].time == seen.v[i].time && seen.v[i - 1].kind == seen.v[i].kind)
                                ASSERT_TRUE(seen.v[i - 1].id <= seen.v[i].id);
                        if (seen.v[i - 1].time == seen.v[i].time)
                                ASSERT_FALSE(seen.v[i - 1].kind == 'e' && seen.v[i].kind == 'r');
                }
                event_queue_done(&q);
        }
}

/* A failing handler stops the walk; what it was handed is not handed again. */
TEST(failure) {
        static Seen seen;
        EventQueue q = {};
        SbRecord recs[1];
        size_t n = 0;

        for (uint64_t t = 1; t <= 5; t++)
                add_sample(&q, t * 10, 0);
        recs[n++] = record(25, 1);
        seen.fail_at = 3;
        ASSERT_ERROR(apply(&q, recs, &n, UINT64_MAX, &seen), ENOMEM);
        /* 10, 20, the record at 25; the event at 30 failed */
        ASSERT_EQ(seen.n, 3);
        ASSERT_EQ(n, 0);
        ASSERT_EQ(q.n, 2);
        ASSERT_U64_EQ(q.v[0].h.time_ns, 40);
        seen.fail_at = 0;
        ASSERT_OK(apply(&q, recs, &n, UINT64_MAX, &seen));
        ASSERT_EQ(seen.n, 5);
        event_queue_done(&q);
}

int main(void) {
        RUN(queue);
        RUN(point);
        RUN(merge);
        RUN(shuffled);
        RUN(failure);
        return 0;
}
