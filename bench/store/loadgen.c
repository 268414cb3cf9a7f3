/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Load generator for lmk-store.
 *
 *   loadgen ingest URL TOKEN [--nodes N] [--rows R] [--duration S] [--concurrency C] [--gzip]
 *                            [--job-rounds J] [--first-node K] [--no-functions] [--batch-version V]
 *     N simulated nodes push batches of R rows (jobs x objects x phases, as
 *     lmkd aggregates them) as fast as C connections allow, for S seconds;
 *     each push is the next minute, and every J pushes (default 10) a node's
 *     jobs end and new ones start; prints sustained rows/s, pushes/s and push
 *     latency. Nodes are numbered from K (default 0): loadgens with
 *     disjoint ranges may push into stores sharing one database. Batches
 *     carry functions[] (issue 30; their number per batch is printed), or an
 *     empty one with --no-functions: the rows alone, as before issue 30.
 *     Batches are of the format version lmkd writes (LMK_BATCH_VERSION), or
 *     of --batch-version V (2: functions[] entries repeat their rows'
 *     strings, as lmkd did before version 3).
 *   loadgen query URL TOKEN --jobs M [--requests K] [--concurrency C] [--path P]
 *                           [--header "NAME: VALUE"]
 *     GET /api/v1/jobs/{random 1..M}, or GET P each time (a site-wide
 *     query); prints latency p50/p90/p99/max. TOKEN "-" sends none: with
 *     --header naming a person as a trusted proxy would, the person's view.
 *
 * libcurl multi with keep-alive connections, so the store, not connection
 * setup, is what is measured. */
#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <time.h>
#include <zlib.h>

#include "batch-format.h"
#include "batch-gen.h"
#include "macro.h"
#include "util.h"

typedef struct Options {
        const char *mode, *url, *token, *path, *header;
        unsigned nodes, rows, duration, concurrency, requests, job_rounds, first_node;
        uint64_t jobs;
        unsigned batch_version;
        bool gzip, no_functions;
} Options;

typedef struct Slot {
        CURL *easy;
        char *body;
        size_t body_size;
        uint64_t start_ns;
        unsigned rows;
        long answer_bytes;
} Slot;

static double *latencies;
static size_t n_latencies, alloc_latencies;

static void record_latency(double ms) {
        if (n_latencies == alloc_latencies) {
                size_t na = alloc_latencies ? alloc_latencies * 2 : 4096;
                double *p = realloc(latencies, na * sizeof(double));

                if (!p)
                        abort();
                latencies = p;
                alloc_latencies = na;
        }
        latencies[n_latencies++] = ms;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return CMP(x, y);
}

static double percentile(double p) {
        size_t i;

        if (n_latencies == 0)
                return NAN;
        i = (size_t) ceil(p / 100.0 * (double) n_latencies);
        return latencies[i > 0 ? i - 1 : 0];
}

static size_t discard(char *ptr, size_t size, size_t nmemb, void *userdata) {
        *(long *) userdata += (long) (size * nmemb);
        return size * nmemb;
}

static void gzip_body(Slot *s) {
        uLongf n = compressBound(s->body_size) + 32;
        unsigned char *out = malloc(n);
        z_stream z = {};

        if (!out || deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
                abort();
        z.next_in = (unsigned char *) s->body;
        z.avail_in = (uInt) s->body_size;
        z.next_out = out;
        z.avail_out = (uInt) n;
        if (deflate(&z, Z_FINISH) != Z_STREAM_END)
                abort();
        free(s->body);
        s->body = (char *) out;
        s->body_size = n - z.avail_out;
        deflateEnd(&z);
}

static void prepare_push(const Options *o, Slot *s, Node *n, unsigned index, double t) {
        unsigned generation = (unsigned) (n->seq / o->job_rounds);

        if (generation != n->generation) {
                build_node(n, o->first_node + index, o->rows, generation, o->batch_version);
                n->no_functions = o->no_functions;
        }
        free(s->body);
        s->body = node_batch(n, t);
        s->body_size = strlen(s->body);
        if (o->gzip)
                gzip_body(s);
        n->seq++;
        s->rows = n->n_rows;
        curl_easy_setopt(s->easy, CURLOPT_POSTFIELDS, s->body);
        curl_easy_setopt(s->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) s->body_size);
}

static void prepare_query(const Options *o, Slot *s, unsigned *rng) {
        char url[512];

        if (o->path)
                snprintf(url, sizeof(url), "%s%s", o->url, o->path);
        else
                snprintf(url, sizeof(url), "%s/api/v1/jobs/%" PRIu64, o->url, 1 + (uint64_t) rand_r(rng) % o->jobs);
        curl_easy_setopt(s->easy, CURLOPT_URL, url);
}

static int run(const Options *o) {
        bool ingest = streq(o->mode, "ingest");
        _cleanup_free_ char *auth = NULL, *ingest_url = NULL;
        struct curl_slist *headers = NULL;
        Slot *slots = calloc(o->concurrency, sizeof(Slot));
        Node *nodes = NULL;
        CURLM *multi = curl_multi_init();
        uint64_t start, deadline, pushes = 0, rows = 0, errors = 0, done = 0, issued = 0;
        unsigned next_node = 0, rng = 4711;
        double elapsed, t = (double) (time(NULL) - 86400);
        int running;

        if (!slots || !multi || asprintf(&auth, "Authorization: Bearer %s", o->token) < 0 ||
            asprintf(&ingest_url, "%s/api/v1/ingest", o->url) < 0)
                return -ENOMEM;
        if (!streq(o->token, "-"))
                headers = curl_slist_append(headers, auth);
        if (o->header)
                headers = curl_slist_append(headers, o->header);
        if (ingest) {
                headers = curl_slist_append(headers, "Content-Type: application/json");
                headers = curl_slist_append(headers, "Expect:");
                if (o->gzip)
                        headers = curl_slist_append(headers, "Content-Encoding: gzip");
                nodes = calloc(o->nodes, sizeof(Node));
                if (!nodes)
                        return -ENOMEM;
                for (unsigned i = 0; i < o->nodes; i++) {
                        build_node(&nodes[i], o->first_node + i, o->rows, 0, o->batch_version);
                        nodes[i].no_functions = o->no_functions;
                }
        }

        start = now_ns(CLOCK_MONOTONIC);
        deadline = start + (uint64_t) o->duration * UINT64_C(1000000000);
        for (unsigned i = 0; i < o->concurrency; i++) {
                Slot *s = &slots[i];

                s->easy = curl_easy_init();
                curl_easy_setopt(s->easy, CURLOPT_HTTPHEADER, headers);
                curl_easy_setopt(s->easy, CURLOPT_WRITEFUNCTION, discard);
                curl_easy_setopt(s->easy, CURLOPT_WRITEDATA, &s->answer_bytes);
                curl_easy_setopt(s->easy, CURLOPT_PRIVATE, s);
                curl_easy_setopt(s->easy, CURLOPT_TIMEOUT, 120L);
                if (ingest) {
                        curl_easy_setopt(s->easy, CURLOPT_URL, ingest_url);
                        prepare_push(o, s, &nodes[next_node % o->nodes], next_node % o->nodes, t);
                        next_node++;
                } else
                        prepare_query(o, s, &rng);
                s->start_ns = now_ns(CLOCK_MONOTONIC);
                curl_multi_add_handle(multi, s->easy);
                issued++;
        }

        do {
                CURLMsg *m;
                int left;

                curl_multi_perform(multi, &running);
                while ((m = curl_multi_info_read(multi, &left))) {
                        Slot *s;
                        long status = 0;
                        uint64_t now = now_ns(CLOCK_MONOTONIC);

                        if (m->msg != CURLMSG_DONE)
                                continue;
                        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **) &s);
                        curl_easy_getinfo(m->easy_handle, CURLINFO_RESPONSE_CODE, &status);
                        curl_multi_remove_handle(multi, m->easy_handle);
                        done++;
                        if (m->data.result != CURLE_OK || status != 200) {
                                if (errors++ < 5)
                                        fprintf(stderr, "request failed: %s, HTTP %ld\n",
                                                curl_easy_strerror(m->data.result), status);
                        } else {
                                record_latency((double) (now - s->start_ns) / 1e6);
                                if (ingest) {
                                        pushes++;
                                        rows += s->rows;
                                }
                        }
                        if (ingest ? now < deadline : issued < o->requests) {
                                if (ingest) {
                                        /* Each round over the nodes is the next interval. */
                                        unsigned k = next_node++;

                                        prepare_push(o, s, &nodes[k % o->nodes], k % o->nodes,
                                                     t + 60.0 * (double) (k / o->nodes));
                                } else
                                        prepare_query(o, s, &rng);
                                s->start_ns = now_ns(CLOCK_MONOTONIC);
                                curl_multi_add_handle(multi, s->easy);
                                issued++;
                                running = 1;
                        }
                }
                if (running)
                        curl_multi_poll(multi, NULL, 0, 100, NULL);
        } while (running || done < issued);

        elapsed = (double) (now_ns(CLOCK_MONOTONIC) - start) / 1e9;
        qsort(latencies, n_latencies, sizeof(double), cmp_double);
        if (ingest)
                printf("ingest: %u nodes, %u rows and %u functions per batch, %u connections%s, %.1f s\n"
                       "  pushes %" PRIu64 " (%.0f/s), rows %" PRIu64 " (%.0f rows/s), errors %" PRIu64 "\n"
                       "  push latency ms: p50 %.1f  p99 %.1f  max %.1f\n",
                       o->nodes, nodes[0].n_rows, o->no_functions ? 0 : nodes[0].n_functions, o->concurrency,
                       o->gzip ? ", gzip" : "", elapsed,
                       pushes, (double) pushes / elapsed, rows, (double) rows / elapsed, errors,
                       percentile(50), percentile(99), percentile(100));
        else
                printf("query: GET %s over %" PRIu64 " jobs, %u connections, %zu requests "
                       "in %.1f s (%.0f/s), errors %" PRIu64 "\n"
                       "  latency ms: p50 %.2f  p90 %.2f  p99 %.2f  max %.2f\n",
                       o->path ?: "/api/v1/jobs/{id}", o->jobs, o->concurrency, n_latencies, elapsed, (double) n_latencies / elapsed, errors,
                       percentile(50), percentile(90), percentile(99), percentile(100));

        for (unsigned i = 0; i < o->concurrency; i++) {
                curl_easy_cleanup(slots[i].easy);
                free(slots[i].body);
        }
        for (unsigned i = 0; nodes && i < o->nodes; i++) {
                node_done(&nodes[i]);
        }
        free(nodes);
        free(slots);
        curl_slist_free_all(headers);
        curl_multi_cleanup(multi);
        free(latencies);
        return errors > 0 ? -EIO : 0;
}

static int parse_uint(const char *s, unsigned *ret) {
        uint32_t v;

        if (safe_atou32(s, &v) < 0 || v == 0) {
                fprintf(stderr, "Invalid number: %s\n", s);
                return -EINVAL;
        }
        *ret = v;
        return 0;
}

int main(int argc, char **argv) {
        static const struct option options[] = {
                { "nodes", required_argument, NULL, 'n' },
                { "rows", required_argument, NULL, 'r' },
                { "duration", required_argument, NULL, 'd' },
                { "concurrency", required_argument, NULL, 'c' },
                { "requests", required_argument, NULL, 'k' },
                { "jobs", required_argument, NULL, 'j' },
                { "gzip", no_argument, NULL, 'z' },
                { "job-rounds", required_argument, NULL, 'J' },
                { "path", required_argument, NULL, 'p' },
                { "first-node", required_argument, NULL, 'F' },
                { "no-functions", no_argument, NULL, 'N' },
                { "batch-version", required_argument, NULL, 'V' },
                { "header", required_argument, NULL, 'H' },
                {}
        };
        Options o = { .nodes = 100, .rows = 300, .duration = 20, .concurrency = 8, .requests = 20000,
                      .job_rounds = 10, .batch_version = LMK_BATCH_VERSION };
        unsigned jobs = 0;
        int opt, r = 0;

        while ((opt = getopt_long(argc, argv, "", options, NULL)) >= 0) {
                switch (opt) {
                case 'n':
                        r = parse_uint(optarg, &o.nodes);
                        break;
                case 'r':
                        r = parse_uint(optarg, &o.rows);
                        break;
                case 'd':
                        r = parse_uint(optarg, &o.duration);
                        break;
                case 'c':
                        r = parse_uint(optarg, &o.concurrency);
                        break;
                case 'k':
                        r = parse_uint(optarg, &o.requests);
                        break;
                case 'j':
                        r = parse_uint(optarg, &jobs);
                        o.jobs = jobs;
                        break;
                case 'z':
                        o.gzip = true;
                        break;
                case 'J':
                        r = parse_uint(optarg, &o.job_rounds);
                        break;
                case 'F':
                        r = parse_uint(optarg, &o.first_node);
                        break;
                case 'N':
                        o.no_functions = true;
                        break;
                case 'V':
                        r = parse_uint(optarg, &o.batch_version);
                        if (r >= 0 && (o.batch_version < 2 || o.batch_version > LMK_BATCH_VERSION))
                                r = -ERANGE;
                        break;
                case 'H':
                        if (!strchr(optarg, ':') || strpbrk(optarg, "\r\n")) {
                                fprintf(stderr, "--header: \"NAME: VALUE\" on one line: %s\n", optarg);
                                return EXIT_FAILURE;
                        }
                        o.header = optarg;
                        break;
                case 'p':
                        if (optarg[0] != '/' || strlen(optarg) > 400) {
                                fprintf(stderr, "--path: a path starting with '/', at most 400 bytes: %s\n", optarg);
                                return EXIT_FAILURE;
                        }
                        o.path = optarg;
                        break;
                default:
                        r = -EINVAL;
                }
                if (r < 0)
                        return EXIT_FAILURE;
        }
        if (argc - optind != 3 || (!streq(argv[optind], "ingest") && !streq(argv[optind], "query")) ||
            (streq(argv[optind], "query") && o.jobs == 0)) {
                fprintf(stderr, "Usage: loadgen ingest|query URL TOKEN [options], see the source.\n");
                return EXIT_FAILURE;
        }
        o.mode = argv[optind];
        o.url = argv[optind + 1];
        o.token = argv[optind + 2];
        if (!streq(o.mode, "ingest"))
                o.concurrency = MIN(o.concurrency, o.requests);
        curl_global_init(CURL_GLOBAL_DEFAULT);
        r = run(&o);
        curl_global_cleanup();
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
