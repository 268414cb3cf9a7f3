/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The sample ring's size and wakeup fill (daemon/ring-size.h): at 1 Hz a
 * quiet drain's samples fit below the wakeup fill on small and large
 * nodes alike, with room for lmkd to drain; at higher rates, or with the
 * quiet drain off, the ring holds one --poll-ms and wakes at a quarter. */
#include "ring-size.h"
#include "tests.h"

#define KIB ((size_t) 1024)
#define SAMPLE (sizeof(struct lmk_sample) + 8)

static SamplerConfig config(double hz, unsigned quiet_ms) {
        return (SamplerConfig) { .frequency = hz, .poll_ms = 1000, .quiet_poll_ms = quiet_ms };
}

/* a quiet drain's samples, and what the ring keeps beyond its wakeup */
static void assert_holds_quiet_drain(double hz, unsigned cpus, unsigned quiet_ms) {
        SamplerConfig c = config(hz, quiet_ms);
        RingSize r = ring_size(&c, cpus);
        double drain = hz * cpus * SAMPLE * quiet_ms / 1000.0;

        ASSERT_TRUE(r.bytes >= 64 * KIB && (r.bytes & (r.bytes - 1)) == 0);
        ASSERT_EQ(r.wakeup_bytes, r.bytes / 4 * 3);
        ASSERT_TRUE((double) r.wakeup_bytes >= drain);
        /* a third of a drain at least (10 s of 30) left to drain in */
        ASSERT_TRUE((double) (r.bytes - r.wakeup_bytes) >= drain / 3);
        /* no larger than needed */
        ASSERT_TRUE(r.bytes == 64 * KIB || (double) r.bytes / 2 < drain * 4 / 3);
}

TEST(quiet_drain_at_1_hz) {
        SamplerConfig c = config(1, 30000);
        RingSize r;

        assert_holds_quiet_drain(1, 2, 30000);
        assert_holds_quiet_drain(1, 128, 30000);
        assert_holds_quiet_drain(1, 256, 30000);
        assert_holds_quiet_drain(1, 512, 30000);
        assert_holds_quiet_drain(1, 128, 60000);
        /* 128 CPUs: 30 s are 768 KB; a 64 KiB ring's quarter filled every
         * 0.6 s and set the drains */
        r = ring_size(&c, 128);
        ASSERT_EQ(r.bytes, 1024 * KIB);
        ASSERT_EQ(r.wakeup_bytes, 768 * KIB);
        /* 2 CPUs: the smallest ring, woken after minutes */
        r = ring_size(&c, 2);
        ASSERT_EQ(r.bytes, 64 * KIB);
        ASSERT_EQ(r.wakeup_bytes, 48 * KIB);
}

TEST(higher_rates_and_no_quiet_drain) {
        SamplerConfig c = config(1000, 30000);
        RingSize r = ring_size(&c, 2);

        /* 1 kHz: one second of samples, woken at a quarter */
        ASSERT_TRUE((double) r.bytes >= 1000.0 * 2 * SAMPLE && r.bytes < 1000.0 * 2 * SAMPLE * 2);
        ASSERT_EQ(r.wakeup_bytes, r.bytes / 4);
        /* 1 Hz on 1,024 CPUs: 30 s would take 6 MB, past the cap */
        c = config(1, 30000);
        r = ring_size(&c, 1024);
        ASSERT_EQ(r.wakeup_bytes, r.bytes / 4);
        ASSERT_TRUE((double) r.bytes >= 1024.0 * SAMPLE);
        /* --quiet-poll-ms 0: every --poll-ms, as before */
        c = config(1, 0);
        r = ring_size(&c, 128);
        ASSERT_EQ(r.bytes, 64 * KIB);
        ASSERT_EQ(r.wakeup_bytes, 16 * KIB);
}

int main(void) {
        RUN(quiet_drain_at_1_hz);
        RUN(higher_rates_and_no_quiet_drain);
        return 0;
}
