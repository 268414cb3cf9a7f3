/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The packed raw rows (store/db/sql/sample-pack.h): what goes in comes out,
 * byte for byte as the format says, and what is not a whole pack is
 * refused, never read past its end. */
#include <stdint.h>

#include "db/sql/sample-pack.h"
#include "db/storage.h"
#include "tests.h"

static const SampleRow rows[] = {
        { 1, 1, 1, 60, 0, STORAGE_NULL, 600, 1200 },
        { 127, 128, 16383, 0, 0, STORAGE_NULL, STORAGE_NULL, STORAGE_NULL },
        { 16384, 2, 3, INT64_MAX - 61, 0, INT64_MAX, INT64_MAX, INT64_MAX },
        { 5, 0, 7, 1, 0, 0, STORAGE_NULL, 0 },
};

static SamplePack pack_rows(double hz) {
        SamplePack p = {};

        ASSERT_OK(sample_pack_begin(&p, hz));
        for (size_t i = 0; i < ELEMENTSOF(rows); i++)
                ASSERT_OK(sample_pack_add(&p, &rows[i]));
        return p;
}

TEST(round_trip) {
        SamplePack p = pack_rows(2.5);
        SampleRow got;
        size_t off = 0;

        ASSERT_EQ(p.n_rows, 4);
        ASSERT_EQ(p.samples, INT64_MAX); /* a batch's samples add up to at most that (batch-parse.c) */
        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                ASSERT_EQ(sample_pack_next(p.data, p.len, &off, &got), 1);
                ASSERT_EQ(got.object_id, rows[i].object_id);
                ASSERT_EQ(got.phase_id, rows[i].phase_id);
                ASSERT_EQ(got.task_id, rows[i].task_id);
                ASSERT_EQ(got.samples, rows[i].samples);
                ASSERT_TRUE(got.cpu_seconds == (double) rows[i].samples * (1.0 / 2.5));
                ASSERT_EQ(got.cpu_time_ns, rows[i].cpu_time_ns);
                ASSERT_EQ(got.cycles, rows[i].cycles);
                ASSERT_EQ(got.instructions, rows[i].instructions);
        }
        ASSERT_EQ(sample_pack_next(p.data, p.len, &off, &got), 0);
        ASSERT_EQ(off, p.len);

        /* Reused for the next batch: only its own rows. */
        ASSERT_OK(sample_pack_begin(&p, 1));
        ASSERT_EQ(p.n_rows, 0);
        ASSERT_EQ(p.len, 9);
        off = 0;
        ASSERT_EQ(sample_pack_next(p.data, p.len, &off, &got), 0);
        sample_pack_done(&p);
}

/* The bytes the header of sample-pack.h describes. */
TEST(layout) {
        static const uint8_t want[] = {
                1, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, /* version, 1.0 little-endian */
                1, 1, 1, 60, 6, 0xd8, 0x04, 0xb0, 0x09, /* ids, samples, cycles | instructions, 600, 1200 */
                0xff, 0x7f, 0x80, 0x01, 0xff, 0x7f, 0, 0, /* 16383, 128, 16383, 0 samples, no counters */
        };
        SampleRow two[] = { rows[0], { 16383, 128, 16383, 0, 0, STORAGE_NULL, STORAGE_NULL, STORAGE_NULL } };
        SamplePack p = {};

        ASSERT_OK(sample_pack_begin(&p, 1.0));
        for (size_t i = 0; i < ELEMENTSOF(two); i++)
                ASSERT_OK(sample_pack_add(&p, &two[i]));
        ASSERT_EQ(p.len, sizeof(want));
        ASSERT_TRUE(memcmp(p.data, want, sizeof(want)) == 0);
        sample_pack_done(&p);
}

/* Every prefix of a pack is either whole rows (read to their end) or
 * refused where the cut row begins. */
TEST(cut_short) {
        SamplePack p = pack_rows(1);
        size_t ends[ELEMENTSOF(rows)], off = 0;
        SampleRow got;

        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                ASSERT_EQ(sample_pack_next(p.data, p.len, &off, &got), 1);
                ends[i] = off;
        }
        for (size_t len = 0; len < p.len; len++) {
                size_t whole = 0;
                int r;

                off = 0;
                while ((r = sample_pack_next(p.data, len, &off, &got)) == 1)
                        whole++;
                ASSERT_TRUE(off <= len || len < 9);
                if (len < 9)
                        ASSERT_EQ(r, -EBADMSG);
                else if (len == 9 || (whole > 0 && ends[whole - 1] == len))
                        ASSERT_EQ(r, 0);
                else
                        ASSERT_EQ(r, -EBADMSG);
        }
        sample_pack_done(&p);
}

TEST(refused) {
        SampleRow got;
        size_t off;
        /* another version */
        uint8_t v2[] = { 2, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f };
        /* a counters byte with an unknown bit */
        uint8_t flags[] = { 1, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 1, 1, 1, 1, 8 };
        /* a varint of more than 64 bits */
        uint8_t wide[] = { 1, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                           0x02, 1, 1, 1, 0 };

        off = 0;
        ASSERT_EQ(sample_pack_next(v2, sizeof(v2), &off, &got), -EBADMSG);
        off = 0;
        ASSERT_EQ(sample_pack_next(flags, sizeof(flags), &off, &got), -EBADMSG);
        off = 0;
        ASSERT_EQ(sample_pack_next(wide, sizeof(wide), &off, &got), -EBADMSG);
        wide[18] = 0x01; /* exactly 64 bits: UINT64_MAX, read as -1 */
        off = 0;
        ASSERT_EQ(sample_pack_next(wide, sizeof(wide), &off, &got), 1);
        ASSERT_EQ(got.object_id, -1);
}

int main(void) {
        RUN(round_trip);
        RUN(layout);
        RUN(cut_short);
        RUN(refused);
        return 0;
}
