/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "batch-gen.h"
#include "macro.h"

/* Rows of one node as lmkd would aggregate one interval: a few jobs, each
 * with an executable and its libraries, split over phases, plus system work. */
void build_node(Node *n, unsigned index, unsigned rows, unsigned generation) {
        static const char *const libs[] = {
                "/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6",
                "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0",
                "/usr/lib/x86_64-linux-gnu/libmpi.so.40", "/usr/lib/x86_64-linux-gnu/libfftw3.so.3",
                "/usr/lib/x86_64-linux-gnu/libgomp.so.1", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
                "/usr/lib/x86_64-linux-gnu/libhdf5_serial.so.103", "/usr/lib/x86_64-linux-gnu/libz.so.1",
                "/opt/intel/oneapi/mkl/latest/lib/intel64/libmkl_core.so.2", "[kernel]", "[vdso]",
        };
        static const char *const phases[] = { "", "init", "timestep/solve", "timestep/exchange",
                                              "timestep/solve/inner", "io/checkpoint" };
        FILE *f;
        size_t size;
        unsigned jobs = MAX(1u, rows / 100), made = 0;

        snprintf(n->name, sizeof(n->name), "cn%05u", index);
        free(n->rows_json);
        free(n->jobs_json);
        n->generation = generation;
        f = open_memstream(&n->rows_json, &size);
        if (!f)
                abort();
        fputc('[', f);
        for (unsigned i = 0; made < rows; i++) {
                unsigned job = i % jobs, obj = (i / jobs) % (ELEMENTSOF(libs) + 1),
                         phase = (i / jobs / (ELEMENTSOF(libs) + 1)) % ELEMENTSOF(phases);
                bool exe = obj == ELEMENTSOF(libs);
                const char *path = exe ? "/apps/solver/bin/solver" : libs[obj];
                const char *kind = exe ? "exe" : path[0] == '[' ? "kernel" : "lib";

                fprintf(f, "%s{\"job\":\"%u.%u.%u\",\"step\":\"0\",\"user\":\"user%u\",\"comm\":\"solver\","
                           "\"object\":\"%s\",\"kind\":\"%s\",\"build_id\":null,\"phase\":\"%s\",\"samples\":%u,"
                           "\"cpu_time_ns\":null,\"cycles\":null,\"instructions\":null}",
                        made ? "," : "", generation, index, job, (index + job) % 97, path, kind,
                        phases[(phase + i / 97) % ELEMENTSOF(phases)], 1 + (i * 7919) % 60);
                made++;
        }
        fputc(']', f);
        fclose(f);
        n->n_rows = made;

        f = open_memstream(&n->jobs_json, &size);
        if (!f)
                abort();
        fputc('[', f);
        for (unsigned j = 0; j < jobs; j++)
                fprintf(f, "%s{\"job\":\"%u.%u.%u\",\"user\":\"user%u\",\"account\":\"p%u\",\"partition\":\"batch\","
                           "\"name\":\"solver\",\"nodes\":4,\"tasks\":192,\"notes\":{\"app\":\"solver\"},"
                           "\"ended\":false}",
                        j ? "," : "", generation, index, j, (index + j) % 97, j % 13);
        fputc(']', f);
        fclose(f);
}

char *node_batch(const Node *n, double t) {
        char *body;

        if (asprintf(&body,
                     "{\"format\":\"lmk-batch\",\"version\":1,"
                     "\"batch\":{\"node\":\"%s\",\"boot_id\":\"bench-boot\",\"seq\":%" PRIu64 "},"
                     "\"node\":{\"hostname\":\"%s\",\"cpus\":48,\"cluster\":\"bench\"},"
                     "\"interval\":{\"start\":%.3f,\"end\":%.3f},"
                     "\"sampling\":{\"event\":\"cpu-clock\",\"frequency_hz\":1,\"samples_lost\":0},"
                     "\"jobs\":%s,\"rows\":%s,\"markers\":[]}",
                     n->name, n->seq, n->name, t, t + 60, n->jobs_json, n->rows_json) < 0)
                abort();
        return body;
}

void node_done(Node *n) {
        free(n->rows_json);
        free(n->jobs_json);
        n->rows_json = n->jobs_json = NULL;
}
