/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Packing a batch's raw rows of one job into one value (sample-pack.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "db/sql/sample-pack.h"
#include "db/sql/varint.h"
#include "db/storage.h"

#define HEADER_BYTES 9
/* four ids and counts, the counters byte, three counters */
#define ROW_MAX_BYTES (7 * VARINT_MAX_BYTES + 1)

enum {
        HAS_CPU_TIME_NS = 1 << 0,
        HAS_CYCLES = 1 << 1,
        HAS_INSTRUCTIONS = 1 << 2,
};

static int reserve(SamplePack *p, size_t more) {
        size_t want;
        uint8_t *d;

        if (p->size - p->len >= more)
                return 0;
        want = MAX(p->size * 2, p->len + more + 256);
        d = realloc(p->data, want);
        if (!d)
                return -ENOMEM;
        p->data = d;
        p->size = want;
        return 0;
}

int sample_pack_begin(SamplePack *p, double frequency_hz) {
        uint64_t bits;
        int r;

        sample_pack_reset(p);
        r = reserve(p, HEADER_BYTES);
        if (r < 0)
                return r;
        memcpy(&bits, &frequency_hz, sizeof(bits));
        p->data[p->len++] = SAMPLE_PACK_VERSION;
        for (int i = 0; i < 8; i++)
                p->data[p->len++] = (uint8_t) (bits >> (8 * i));
        return 0;
}

int sample_pack_add(SamplePack *p, const SampleRow *row) {
        uint8_t which = (row->cpu_time_ns != STORAGE_NULL ? HAS_CPU_TIME_NS : 0) |
                        (row->cycles != STORAGE_NULL ? HAS_CYCLES : 0) |
                        (row->instructions != STORAGE_NULL ? HAS_INSTRUCTIONS : 0);
        int r;

        r = reserve(p, ROW_MAX_BYTES);
        if (r < 0)
                return r;
        varint_put(p->data, &p->len, row->object_id);
        varint_put(p->data, &p->len, row->phase_id);
        varint_put(p->data, &p->len, row->task_id);
        varint_put(p->data, &p->len, row->samples);
        p->data[p->len++] = which;
        if (which & HAS_CPU_TIME_NS)
                varint_put(p->data, &p->len, row->cpu_time_ns);
        if (which & HAS_CYCLES)
                varint_put(p->data, &p->len, row->cycles);
        if (which & HAS_INSTRUCTIONS)
                varint_put(p->data, &p->len, row->instructions);
        p->n_rows++;
        p->samples += row->samples;
        return 0;
}

void sample_pack_reset(SamplePack *p) {
        p->len = 0;
        p->n_rows = 0;
        p->samples = 0;
}

void sample_pack_done(SamplePack *p) {
        free(p->data);
        *p = (SamplePack) {};
}

int sample_pack_next(const uint8_t *data, size_t len, size_t *offset, SampleRow *ret) {
        SampleRow row = { .cpu_time_ns = STORAGE_NULL, .cycles = STORAGE_NULL, .instructions = STORAGE_NULL };
        uint64_t bits = 0;
        double hz;
        uint8_t which;
        int r;

        if (len < HEADER_BYTES || data[0] != SAMPLE_PACK_VERSION)
                return -EBADMSG;
        if (*offset == 0)
                *offset = HEADER_BYTES;
        if (*offset == len)
                return 0;
        for (int i = 0; i < 8; i++)
                bits |= (uint64_t) data[1 + i] << (8 * i);
        memcpy(&hz, &bits, sizeof(hz));

        if ((r = varint_get(data, len, offset, &row.object_id)) < 0 ||
            (r = varint_get(data, len, offset, &row.phase_id)) < 0 ||
            (r = varint_get(data, len, offset, &row.task_id)) < 0 ||
            (r = varint_get(data, len, offset, &row.samples)) < 0)
                return r;
        if (*offset >= len)
                return -EBADMSG;
        which = data[(*offset)++];
        if (which & ~(HAS_CPU_TIME_NS | HAS_CYCLES | HAS_INSTRUCTIONS))
                return -EBADMSG;
        if (((which & HAS_CPU_TIME_NS) && (r = varint_get(data, len, offset, &row.cpu_time_ns)) < 0) ||
            ((which & HAS_CYCLES) && (r = varint_get(data, len, offset, &row.cycles)) < 0) ||
            ((which & HAS_INSTRUCTIONS) && (r = varint_get(data, len, offset, &row.instructions)) < 0))
                return r;
        row.cpu_seconds = (double) row.samples * (1.0 / hz);
        *ret = row;
        return 1;
}
