/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hashmap.h"
#include "metrics/node-health.h"
#include "util.h"

/* Far beyond any spool (lmkd's is bounded by spool_max_mb, at most 1 TiB). */
#define MAX_SPOOL_BATCHES (INT64_C(1) << 40)
#define MAX_SPOOL_BYTES (INT64_C(1) << 50)

#define NS_PER_S INT64_C(1000000000)
/* Before any push: far enough back to be stale, near enough that an age
 * from it fits an int64 for a century of uptime. */
#define NEVER_NS (INT64_MIN / 2)

typedef struct Node {
        char *name;
        int64_t pushed_ns;  /* CLOCK_MONOTONIC of the last push; seeded ones may lie before its 0 */
        int64_t spool_batches, spool_bytes; /* -1: not said */
        /* for the gauges, worked out when they are written */
        int64_t age, last_push;
} Node;

struct NodeHealth {
        pthread_mutex_t lock;
        Hashmap *nodes; /* name → Node */
        uint64_t untracked; /* pushes of nodes past NODE_HEALTH_MAX_NODES */
        NodeHealthClock clock;
        void *clock_userdata;
};

static NodeHealthNow real_clock(void *userdata) {
        return (NodeHealthNow) { .wall = (int64_t) time(NULL), .mono_ns = (int64_t) now_ns(CLOCK_MONOTONIC) };
}

void node_health_set_clock(NodeHealth *h, NodeHealthClock clock, void *userdata) {
        h->clock = clock;
        h->clock_userdata = userdata;
}

static NodeHealthNow node_health_now(const NodeHealth *h) {
        return h->clock(h->clock_userdata);
}

/* Whole seconds since the push; never less than 0. */
static int64_t age_of(const Node *n, NodeHealthNow now) {
        return MAX(now.mono_ns - n->pushed_ns, INT64_C(0)) / NS_PER_S;
}

/* The stale gauges' thresholds: ten missed pushes at lmkd's default of a
 * minute, an hour, a day. */
static const struct {
        const char *label;
        int64_t seconds;
} stale_after[] = { { "10m", 600 }, { "1h", 3600 }, { "1d", 86400 } };

int node_health_new(NodeHealth **ret) {
        NodeHealth *h = calloc(1, sizeof(*h));

        if (!h)
                return -ENOMEM;
        h->nodes = hashmap_new(&string_hash_ops);
        if (!h->nodes) {
                free(h);
                return -ENOMEM;
        }
        pthread_mutex_init(&h->lock, NULL);
        h->clock = real_clock;
        *ret = h;
        return 0;
}

NodeHealth *node_health_free(NodeHealth *h) {
        Node *n;
        size_t i;

        if (!h)
                return NULL;
        HASHMAP_FOREACH(n, h->nodes, i) {
                free(n->name);
                free(n);
        }
        hashmap_free(h->nodes);
        pthread_mutex_destroy(&h->lock);
        free(h);
        return NULL;
}

/* The node's entry, made when new. NULL: out of memory or past the cap. */
static Node *node_get(NodeHealth *h, const char *name) {
        Node *n = hashmap_get(h->nodes, name);

        if (n)
                return n;
        if (hashmap_size(h->nodes) >= NODE_HEALTH_MAX_NODES) {
                h->untracked++;
                return NULL;
        }
        n = calloc(1, sizeof(*n));
        if (!n || !(n->name = strdup(name)) || hashmap_put(h->nodes, n->name, n) < 0) {
                if (n)
                        free(n->name);
                free(n);
                return NULL;
        }
        n->pushed_ns = NEVER_NS;
        n->spool_batches = n->spool_bytes = -1;
        return n;
}

int node_health_pushed(NodeHealth *h, const char *node, int64_t spool_batches, int64_t spool_bytes) {
        NodeHealthNow now = node_health_now(h);
        Node *n;
        int r = 0;

        pthread_mutex_lock(&h->lock);
        n = node_get(h, node);
        if (n) {
                n->pushed_ns = now.mono_ns;
                n->spool_batches = spool_batches;
                n->spool_bytes = spool_bytes;
        } else if (hashmap_size(h->nodes) < NODE_HEALTH_MAX_NODES)
                r = -ENOMEM;
        pthread_mutex_unlock(&h->lock);
        return r;
}

int node_health_seed(NodeHealth *h, const char *node, int64_t last_push) {
        NodeHealthNow now = node_health_now(h);
        /* a push the wall clock puts ahead of now came from a clock that was
         * ahead then: as recent as can be, not hours into the future */
        int64_t age = MIN(MAX(now.wall - last_push, INT64_C(0)), INT64_MAX / NS_PER_S / 2);
        Node *n;

        pthread_mutex_lock(&h->lock);
        n = node_get(h, node);
        if (n)
                n->pushed_ns = MAX(n->pushed_ns, now.mono_ns - age * NS_PER_S);
        pthread_mutex_unlock(&h->lock);
        return n ? 0 : -ENOMEM;
}

int node_health_age(NodeHealth *h, const char *node, int64_t *ret_seconds) {
        NodeHealthNow now = node_health_now(h);
        Node *n;

        pthread_mutex_lock(&h->lock);
        n = hashmap_get(h->nodes, node);
        if (n)
                *ret_seconds = age_of(n, now);
        pthread_mutex_unlock(&h->lock);
        return n ? 0 : -ENOENT;
}

int node_health_parse_spool(const char *value, int64_t *ret_batches, int64_t *ret_bytes) {
        int64_t batches = -1, bytes = -1;
        const char *p = value;

        while (*p) {
                const char *word = p, *eq;
                size_t len = strcspn(p, " \t");
                char num[24];
                uint64_t v;

                p += len;
                p += strspn(p, " \t");
                eq = memchr(word, '=', len);
                if (!eq || (size_t) (word + len - eq - 1) >= sizeof(num))
                        return -EINVAL;
                memcpy(num, eq + 1, (size_t) (word + len - eq - 1));
                num[word + len - eq - 1] = '\0';
                if (safe_atou64(num, 10, &v) < 0)
                        return -EINVAL;
                if (eq - word == 7 && strncmp(word, "batches", 7) == 0 && v <= (uint64_t) MAX_SPOOL_BATCHES)
                        batches = (int64_t) v;
                else if (eq - word == 5 && strncmp(word, "bytes", 5) == 0 && v <= (uint64_t) MAX_SPOOL_BYTES)
                        bytes = (int64_t) v;
                else
                        return -EINVAL;
        }
        *ret_batches = batches;
        *ret_bytes = bytes;
        return 0;
}

/* A label value in Prometheus' text format. Node names are identifiers
 * (no control characters: store/batch/batch-parse.c), but may hold \ or ". */
static void write_label(FILE *f, const char *s) {
        for (; *s; s++) {
                if (*s == '\\' || *s == '"')
                        fputc('\\', f);
                fputc(*s, f);
        }
}

/* One gauge per node: the int64_t at offset in each Node; a negative value
 * (not said) writes no sample. */
static void write_node_gauge(FILE *f, const char *name, const char *help, Node *const *v, size_t n,
                             size_t offset) {
        fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
        for (size_t i = 0; i < n; i++) {
                int64_t x = *(const int64_t *) ((const char *) v[i] + offset);

                if (x < 0)
                        continue;
                fprintf(f, "%s{node=\"", name);
                write_label(f, v[i]->name);
                fprintf(f, "\"} %" PRId64 "\n", x);
        }
}

static int by_age(const void *a, const void *b) {
        const Node *x = *(const Node *const *) a, *y = *(const Node *const *) b;

        if (x->age != y->age)
                return CMP(x->age, y->age);
        return strcmp(x->name, y->name);
}

int node_health_write_metrics(NodeHealth *h, FILE *f) {
        _cleanup_free_ Node **v = NULL;
        size_t n = 0, listed, i;
        uint64_t stale[ELEMENTSOF(stale_after)] = {}, untracked;
        NodeHealthNow now;
        Node *x;

        pthread_mutex_lock(&h->lock);
        now = node_health_now(h);
        v = malloc(MAX(hashmap_size(h->nodes), (size_t) 1) * sizeof(Node *));
        if (!v) {
                pthread_mutex_unlock(&h->lock);
                return -ENOMEM;
        }
        /* copies: a push may change a node while this writes */
        HASHMAP_FOREACH(x, h->nodes, i) {
                Node *c = malloc(sizeof(*c));

                if (!c || !(c->name = strdup(x->name))) {
                        free(c);
                        break;
                }
                c->age = age_of(x, now);
                c->last_push = now.wall - c->age;
                c->spool_batches = x->spool_batches;
                c->spool_bytes = x->spool_bytes;
                v[n++] = c;
        }
        untracked = h->untracked;
        pthread_mutex_unlock(&h->lock);

        qsort(v, n, sizeof(*v), by_age);
        for (i = 0; i < n; i++)
                for (size_t k = 0; k < ELEMENTSOF(stale_after); k++)
                        if (v[i]->age > stale_after[k].seconds)
                                stale[k]++;
        for (listed = 0; listed < n && listed < NODE_HEALTH_MAX_SERIES; listed++)
                if (v[listed]->age > NODE_HEALTH_SERIES_WINDOW_S)
                        break;

        fprintf(f, "# HELP lmk_store_nodes_known Nodes that ever pushed a batch.\n"
                "# TYPE lmk_store_nodes_known gauge\nlmk_store_nodes_known %zu\n"
                "# HELP lmk_store_nodes_stale Nodes whose last batch came longer ago than \"after\" "
                "(a node that stopped pushing counts in 10m first, in 1d only a day later).\n"
                "# TYPE lmk_store_nodes_stale gauge\n", n);
        for (size_t k = 0; k < ELEMENTSOF(stale_after); k++)
                fprintf(f, "lmk_store_nodes_stale{after=\"%s\"} %" PRIu64 "\n", stale_after[k].label, stale[k]);
        fprintf(f, "# HELP lmk_store_nodes_untracked_pushes_total Batches of nodes beyond the %u this store "
                "tracks for these metrics.\n"
                "# TYPE lmk_store_nodes_untracked_pushes_total counter\n"
                "lmk_store_nodes_untracked_pushes_total %" PRIu64 "\n", NODE_HEALTH_MAX_NODES, untracked);

        write_node_gauge(f, "lmk_store_node_last_push_timestamp_seconds",
                         "When the node's last batch came (Unix time: the store's clock now, less the time "
                         "since, which no step of that clock moves); nodes that pushed within 7 days.", v, listed,
                         offsetof(Node, last_push));
        write_node_gauge(f, "lmk_store_node_spool_batches",
                         "Batches waiting in the node's spool behind the one it last pushed, as it said then.",
                         v, listed, offsetof(Node, spool_batches));
        write_node_gauge(f, "lmk_store_node_spool_bytes",
                         "Bytes waiting in the node's spool behind the batch it last pushed, as it said then.",
                         v, listed, offsetof(Node, spool_bytes));
        for (i = 0; i < n; i++) {
                free(v[i]->name);
                free(v[i]);
        }
        return 0;
}
