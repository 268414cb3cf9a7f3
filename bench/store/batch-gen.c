/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "batch-gen.h"
#include "macro.h"

/* The functions lmkd would name in each object (issue 30), the object's
 * index in build_node()'s libs, the executable last; two of them and the
 * "(other functions)" go with each (job, object, phase) of the rows. */
static const char *const functions[][2] = {
        { "__memmove_avx_unaligned_erms", "_int_malloc" },
        { "__exp_fma", "__log_fma" },
        { "dgemm_kernel_HASWELL", "dgemm_itcopy_HASWELL" },
        { "mca_btl_vader_component_progress", "ompi_coll_base_allreduce_intra_recursivedoubling" },
        { "n1fv_32_avx2", "t1fv_8_avx2" },
        { "gomp_barrier_wait_end", "gomp_team_barrier_wait_end" },
        { "operator new(unsigned long)", "std::__detail::_Prime_rehash_policy::_M_next_bkt(unsigned long) const" },
        { "H5D__chunk_lookup", "H5C__protect" },
        { "deflate_slow", "longest_match" },
        { "mkl_blas_avx2_dgemm_kernel_0", "mkl_blas_avx2_dgemm_copyan" },
        { NULL, NULL },
        { NULL, NULL },
        { "PairLJCut::compute(int, int)", "NPairHalfBinNewton::build(NeighList*)" },
};

/* Rows of one node as lmkd would aggregate one interval: a few jobs, each
 * with an executable and its libraries, split over phases, plus system
 * work; and the functions of each (job, object, phase) of them. */
void build_node(Node *n, unsigned index, unsigned rows, unsigned generation, unsigned version) {
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
        FILE *f, *fn;
        size_t size, fsize;
        unsigned jobs = MAX(1u, rows / 100), made = 0, n_functions = 0;
        /* the (job, object, phase) keys that have their functions */
        _cleanup_free_ bool *has = calloc((size_t) jobs * (ELEMENTSOF(libs) + 1) * ELEMENTSOF(phases), sizeof(bool));

        snprintf(n->name, sizeof(n->name), "cn%05u", index);
        free(n->rows_json);
        free(n->jobs_json);
        free(n->functions_json);
        n->generation = generation;
        n->version = version;
        f = open_memstream(&n->rows_json, &size);
        fn = open_memstream(&n->functions_json, &fsize);
        if (!f || !fn || !has)
                abort();
        fputc('[', f);
        fputc('[', fn);
        for (unsigned i = 0; made < rows; i++) {
                unsigned job = i % jobs, obj = (i / jobs) % (ELEMENTSOF(libs) + 1),
                         phase = (i / jobs / (ELEMENTSOF(libs) + 1)) % ELEMENTSOF(phases);
                bool exe = obj == ELEMENTSOF(libs);
                const char *path = exe ? "/apps/solver/bin/solver" : libs[obj];
                const char *kind = exe ? "exe" : path[0] == '[' ? "kernel" : "lib";
                unsigned ph = (phase + i / 97) % ELEMENTSOF(phases), samples = 1 + (i * 7919) % 60;
                size_t key = ((size_t) job * (ELEMENTSOF(libs) + 1) + obj) * ELEMENTSOF(phases) + ph;

                fprintf(f, "%s{\"job\":\"%u.%u.%u\",\"step\":\"0\",\"user\":\"user%u\",\"comm\":\"solver\","
                           "\"object\":\"%s\",\"kind\":\"%s\",\"build_id\":null,\"phase\":\"%s\",\"samples\":%u,"
                           "\"cpu_time_ns\":null,\"cycles\":null,\"instructions\":null}",
                        made ? "," : "", generation, index, job, (index + job) % 97, path, kind, phases[ph], samples);
                made++;
                /* once per (job, object, phase), within this row's samples:
                 * half to the first function, a quarter to the second, the
                 * rest to the other functions */
                if (functions[obj][0] && !has[key]) {
                        unsigned parts[3] = { samples / 2, samples / 4, samples - samples / 2 - samples / 4 };

                        has[key] = true;
                        /* as lmkd writes them: version 3 names the row just
                         * written and leaves out what is null or false */
                        for (unsigned k = 0; k < 3; k++) {
                                if (version >= 3)
                                        fprintf(fn, "%s{\"row\":%u,", n_functions ? "," : "", made - 1);
                                else
                                        fprintf(fn, "%s{\"job\":\"%u.%u.%u\",\"step\":\"0\",\"object\":\"%s\","
                                                    "\"build_id\":null,\"phase\":\"%s\",",
                                                n_functions ? "," : "", generation, index, job, path, phases[ph]);
                                if (k < 2)
                                        fprintf(fn, version >= 3 ? "\"function\":\"%s\","
                                                                 : "\"function\":\"%s\",\"offset\":null,",
                                                functions[obj][k]);
                                else
                                        fputs(version >= 3 ? "\"other\":true," : "\"function\":null,\"offset\":null,\"other\":true,",
                                              fn);
                                fprintf(fn, "\"samples\":%u,\"cycles\":null,\"instructions\":null}", parts[k]);
                                n_functions++;
                        }
                }
        }
        fputc(']', f);
        fclose(f);
        fputc(']', fn);
        fclose(fn);
        n->n_rows = made;
        n->n_functions = n_functions;

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
                     "{\"format\":\"lmk-batch\",\"version\":%u,"
                     "\"batch\":{\"node\":\"%s\",\"boot_id\":\"bench-boot\",\"seq\":%" PRIu64 "},"
                     "\"node\":{\"hostname\":\"%s\",\"cpus\":48,\"cluster\":\"bench\"},"
                     "\"interval\":{\"start\":%.3f,\"end\":%.3f},"
                     "\"sampling\":{\"event\":\"cpu-clock\",\"frequency_hz\":1,\"samples_lost\":0},"
                     "\"jobs\":%s,\"rows\":%s,\"markers\":[],\"functions\":%s}",
                     n->version, n->name, n->seq, n->name, t, t + 60, n->jobs_json, n->rows_json,
                     n->no_functions ? "[]" : n->functions_json) < 0)
                abort();
        return body;
}

void node_done(Node *n) {
        free(n->rows_json);
        free(n->jobs_json);
        free(n->functions_json);
        n->rows_json = n->jobs_json = n->functions_json = NULL;
}
