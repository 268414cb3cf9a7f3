/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch/node-types.h"

#define GIB (INT64_C(1) << 30)

int64_t node_memory_gib(int64_t bytes) {
        int64_t gib, step = 1;

        if (bytes <= 0)
                return 0;
        gib = (bytes + GIB - 1) / GIB; /* whole GiB, up */
        while (step * 2 * 16 <= bytes / GIB)
                step *= 2;
        return (gib + step - 1) / step * step;
}

char *node_gpus_text(const BatchNodeType *t) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        if (!f)
                return NULL;
        for (size_t i = 0; i < t->n_gpus; i++) {
                const BatchGpu *g = &t->gpus[i];

                fprintf(f, "%s%" PRId64 " x %s ", i ? ", " : "", g->count, g->vendor);
                if (g->name)
                        fputs(g->name, f);
                else if (g->device_id)
                        fprintf(f, "%s:%s", g->vendor_id, g->device_id);
                else
                        fputs("GPU", f);
        }
        if (t->gpus_other > 0)
                fprintf(f, "%s%" PRId64 " GPUs of other models", t->n_gpus ? ", " : "", t->gpus_other);
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

static void count_or_unknown(FILE *f, int64_t v) {
        if (v == BATCH_NULL)
                fputc('?', f);
        else
                fprintf(f, "%" PRId64, v);
}

char *node_type_name(const BatchNodeType *t) {
        _cleanup_free_ char *gpus = node_gpus_text(t);
        char *buf = NULL;
        size_t size = 0;
        FILE *f;

        if (!gpus)
                return NULL;
        f = open_memstream(&buf, &size);
        if (!f)
                return NULL;
        fprintf(f, "%s, ", t->cpu_model ?: "?");
        count_or_unknown(f, t->sockets);
        fputs(" x ", f);
        if (t->sockets != BATCH_NULL && t->cores != BATCH_NULL && t->cores % t->sockets == 0)
                fprintf(f, "%" PRId64, t->cores / t->sockets);
        else if (t->cores != BATCH_NULL)
                fprintf(f, "(%" PRId64 " in all)", t->cores);
        else
                fputc('?', f);
        fputs(" cores, ", f);
        count_or_unknown(f, t->threads);
        fputs(" threads, ", f);
        if (t->memory_bytes != BATCH_NULL)
                fprintf(f, "%" PRId64 " GiB", node_memory_gib(t->memory_bytes));
        else
                fputs("? GiB", f);
        if (*gpus)
                fprintf(f, ", %s", gpus);
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}
