/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What lmk-store does with an ingest body before it touches the database:
 * gzip (when the input looks like it) with the server's bound, then the batch
 * parser. Nothing here may crash, leak or read out of bounds. */
#include <stdint.h>
#include <stdlib.h>

#include "batch.h"
#include "inflate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *inflated = NULL;
        BatchError err;
        Batch *b = NULL;

        if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
                if (inflate_bounded(data, size, 1 << 20, &inflated, &size) < 0)
                        return 0;
                data = (const uint8_t *) inflated;
        }
        if (batch_parse((const char *) data, size, &b, &err) >= 0) {
                /* Touch what the store would read. */
                for (size_t i = 0; i < b->n_rows; i++)
                        if (b->rows[i].samples < 0 || !b->rows[i].object || !b->rows[i].phase)
                                abort();
                batch_free(b);
        }
        free(inflated);
        return 0;
}
