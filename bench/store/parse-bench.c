/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The batch parser alone, on the batches bench/store/loadgen pushes:
 * lmk-store's (store/batch/batch-parse.c on store/batch/json-tree.c),
 * parsing and checking every field, against json-c's tokenizer building
 * its DOM of the same text and checking nothing. The second is a floor for
 * any reader on json-c, not a reader: the parser the store had on
 * json-c's DOM before json-tree (retired; git log --
 * tests/store/batch-parse-jsonc.c) took 1.6 times this floor's
 * instructions.
 * Each batch is parsed and freed by one then the other, the order swapped
 * every round so that neither always finds the caches warm. Times are
 * this thread's CPU time, so other work on the machine weighs less than
 * on a wall clock; for figures that do not depend on the load at all,
 * count instructions:
 *
 *   parse-bench [--rows R] [--nodes N] [--seconds S] [--parser both|store|json-c] [--rounds K]
 *
 *   valgrind --tool=callgrind --toggle-collect=batch_parse --toggle-collect=batch_free \
 *            parse-bench --parser store --rounds 1
 *   valgrind --tool=callgrind --toggle-collect=json_c_dom \
 *            parse-bench --parser json-c --rounds 1
 *
 * and divide callgrind's "Collected" by the rows parsed (printed). */
#include <getopt.h>
#include <stdio.h>
#include <time.h>

#include <json-c/json.h>

#include "batch-format.h"
#include "batch-gen.h"
#include "batch/batch-parse.h"
#include "macro.h"
#include "util.h"

typedef struct Parser {
        const char *name;
        /* parses and frees one batch, returns its rows; exits when it cannot */
        size_t (*parse)(const char *data, size_t size);
        double seconds;
        uint64_t rows, bytes;
} Parser;

static size_t store_parse(const char *data, size_t size) {
        _cleanup_(batch_freep) Batch *b = NULL;
        BatchError err;
        int r;

        r = batch_parse(data, size, &b, &err);
        if (r < 0) {
                fprintf(stderr, "parse-bench: the store refused a batch: %d %s: %s\n", r, err.field, err.message);
                exit(EXIT_FAILURE);
        }
        return b->n_rows;
}

/* json-c's DOM of the text, and the rows counted in it: no field read */
static size_t json_c_dom(const char *data, size_t size) {
        json_tokener *tok = json_tokener_new();
        json_object *root, *rows;
        size_t n;

        if (!tok)
                abort();
        root = json_tokener_parse_ex(tok, data, (int) size);
        if (!root || !json_object_object_get_ex(root, "rows", &rows)) {
                fprintf(stderr, "parse-bench: json-c refused a batch: %s\n",
                        json_tokener_error_desc(json_tokener_get_error(tok)));
                exit(EXIT_FAILURE);
        }
        n = json_object_array_length(rows);
        json_object_put(root);
        json_tokener_free(tok);
        return n;
}

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
        double t = cpu_now();

        p->rows += p->parse(body, size);
        p->bytes += size;
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
                { "json-c DOM, no checks", json_c_dom },
                { "store (json-tree, checked)", store_parse },
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
                        use[0] = streq(optarg, "both") || streq(optarg, "json-c");
                        use[1] = streq(optarg, "both") || streq(optarg, "store");
                        r = use[0] || use[1] ? 0 : -EINVAL;
                        break;
                default: r = -EINVAL;
                }
                if (r < 0 || rows == 0 || nodes == 0) {
                        fprintf(stderr, "Usage: parse-bench [--rows R] [--nodes N] [--seconds S] [--rounds K] "
                                        "[--parser both|store|json-c]\n");
                        return EXIT_FAILURE;
                }
        }

        n = calloc(nodes, sizeof(Node));
        bodies = calloc(nodes, sizeof(char *));
        sizes = calloc(nodes, sizeof(size_t));
        if (!n || !bodies || !sizes)
                abort();
        for (unsigned i = 0; i < nodes; i++) {
                build_node(&n[i], i, rows, 0, LMK_BATCH_VERSION);
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
                printf("  store/json-c: %.2fx the rows per CPU second\n",
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
