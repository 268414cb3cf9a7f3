/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* The batches bench/store/loadgen pushes, made where parse-bench can make
 * the same: a node's rows (jobs x objects x phases, as lmkd aggregates
 * them), their functions (two named and the other functions of each
 * executable's and library's (job, object, phase)) and jobs, fixed until
 * its jobs are replaced. */
typedef struct Node {
        char name[32];
        uint64_t seq;
        char *rows_json; /* the rows array, fixed per node */
        char *jobs_json;
        char *functions_json; /* functions[], fixed per node */
        unsigned n_rows, n_functions;
        unsigned generation; /* jobs are replaced by new ones every --job-rounds pushes */
        unsigned version;    /* the batch format's: 3 names functions' rows by index, 2 repeats their strings */
        bool no_functions; /* pushes carry an empty functions[] (loadgen --no-functions) */
} Node;

/* Node index's rows (about rows of them) and jobs of one generation, its
 * functions[] as batch format version (2 or 3) writes them. */
void build_node(Node *n, unsigned index, unsigned rows, unsigned generation, unsigned version);

/* The body of n's push of the minute from t: a batch as lmkd sends it
 * (malloc()ed, NUL-terminated). Aborts when out of memory. */
char *node_batch(const Node *n, double t);

void node_done(Node *n);
