/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The batch parser alone, on the batches bench/store/loadgen pushes:
 * lmk-store's (store/batch/batch-parse.c on store/batch/json-tree.c) against the json-c
 * DOM parser it replaced (tests/store/batch-parse-jsonc.c), each batch
 * parsed and freed by one then the other, the order swapped every round so
 * that neither always finds the caches warm. Times are this thread's CPU
 * time, so other work on the machine weighs less than on a wall clock;
 * for figures that do not depend on the load at all, count instructions:
 *
 *   parse-bench [--rows R] [--nodes N] [--seconds S] [--parser both|new|old] [--rounds K]
 *
 *   valgrind --tool=callgrind --toggle-collect=batch_parse --toggle-collect=batch_free \
 *            parse-bench --parser new --rounds 1
 *   valgrind --tool=callgrind --toggle-collect=batch_parse_jsonc --toggle-collect=batch_free_jsonc \
 *            parse-bench --parser old --rounds 1
 *
 * and divide callgrind's "Collected" by the rows parsed (printed). */
#include <getopt.h>
#include <stdio.h>
#include <time.h>

#include "batch-gen.h"
#include "batch-parse-jsonc.h"
#include "macro.h"
#include "util.h"

typedef struct Parser {
        const char *name;
        int (*parse)(const char *data, size_t size, Batch **ret, BatchError *err);
        Batch *(*free)(Batch *b);
        double seconds;
        uint64_t rows, bytes;
} Parser;

static int parse_uint(const char *s, unsigned *ret) {
        uint32_t v;

        if (safe_atou32(s, &v) < 0 || v == 0)
                return -EINVAL;
        *ret = v;
        return 0;
}

static double cpu_now(void) {
        struct timespec ts;

        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static void run(Parser *p, const char *body, size_t size) {
        BatchError err;
        Batch *b = NULL;
        double t = cpu_now();
        int r;

        r = p->parse(body, size, &b, &err);
        if (r < 0) {
                fprintf(stderr, "parse-bench: %s refused a batch: %d %s: %s\n", p->name, r, err.field, err.message);
                exit(EXIT_FAILURE);
        }
        p->rows += b->n_rows;
        p->bytes += size;
        p->free(b);
        p->seconds += cpu_now() - t;
}

static void report(const Parser *p) {
        printf("  %-28s %12.0f rows/s %8.1f MB/s %8.3f us/row\n", p->name, (double) p->rows / p->seconds,
               (double) p->bytes / p->seconds / 1e6, p->seconds * 1e6 / (double) p->rows);
}

int main(int argc, char **argv) {
        static const struct option options[] = {
                { "rows", required_argument, NULL, 'r' },
                { "nodes", required_argument, NULL, 'n' },
                { "seconds", required_argument, NULL, 's' },
                { "rounds", required_argument, NULL, 'k' },
                { "parser", required_argument, NULL, 'p' },
                {}
        };
        Parser parsers[] = {
                { "json-c DOM (old)", batch_parse_jsonc, batch_free_jsonc },
                { "json-tree (new)", batch_parse, batch_free },
        };
        unsigned rows = 500, nodes = 20, seconds = 10, rounds = 0;
        bool use[2] = { true, true };
        Node *n;
        char **bodies;
        size_t *sizes, total = 0;
        double start;
        unsigned round;
        int c;

        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0) {
                int r = 0;

                switch (c) {
                case 'r': r = parse_uint(optarg, &rows); break;
                case 'n': r = parse_uint(optarg, &nodes); break;
                case 's': r = parse_uint(optarg, &seconds); break;
                case 'k': r = parse_uint(optarg, &rounds); break;
                case 'p':
                        use[0] = streq(optarg, "both") || streq(optarg, "old");
                        use[1] = streq(optarg, "both") || streq(optarg, "new");
                        r = use[0] || use[1] ? 0 : -EINVAL;
                        break;
                default: r = -EINVAL;
                }
                if (r < 0 || rows == 0 || nodes == 0) {
                        fprintf(stderr, "Usage: parse-bench [--rows R] [--nodes N] [--seconds S] [--rounds K] "
                                        "[--parser both|new|old]\n");
                        return EXIT_FAILURE;
                }
        }

        n = calloc(nodes, sizeof(Node));
        bodies = calloc(nodes, sizeof(char *));
        sizes = calloc(nodes, sizeof(size_t));
        if (!n || !bodies || !sizes)
                abort();
        for (unsigned i = 0; i < nodes; i++) {
                build_node(&n[i], i, rows, 0);
                bodies[i] = node_batch(&n[i], 1795550400.0);
                sizes[i] = strlen(bodies[i]);
                total += sizes[i];
        }

        start = cpu_now();
        for (round = 0; rounds ? round < rounds : cpu_now() - start < seconds; round++)
                for (unsigned i = 0; i < nodes; i++)
                        for (unsigned k = 0; k < 2; k++) {
                                Parser *p = &parsers[(k + round) % 2];

                                if (use[p == &parsers[1]])
                                        run(p, bodies[i], sizes[i]);
                        }

        printf("parse-bench: %u batches of %u rows (%zu bytes each on average), %u rounds, %" PRIu64
               " rows parsed per parser, CPU time of this thread:\n",
               nodes, n[0].n_rows, total / nodes, round, use[1] ? parsers[1].rows : parsers[0].rows);
        for (unsigned k = 0; k < 2; k++)
                if (use[k])
                        report(&parsers[k]);
        if (use[0] && use[1])
                printf("  new/old: %.2fx the rows per CPU second\n",
                       (parsers[1].rows / parsers[1].seconds) / (parsers[0].rows / parsers[0].seconds));

        for (unsigned i = 0; i < nodes; i++) {
                node_done(&n[i]);
                free(bodies[i]);
        }
        free(n);
        free(bodies);
        free(sizes);
        return EXIT_SUCCESS;
}
