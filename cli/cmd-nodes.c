/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lmk nodes: every node that ever pushed, and how long ago it last did. */
#include <errno.h>
#include <stdio.h>

#include "cli.h"

static const char *type_name(json_object *node) {
        return jstr(jget(node, "node_type"), "name");
}

/* The nodes of a type (NULL: those that told none) with their kernels. */
static void print_type_nodes(json_object *nodes, const char *name) {
        size_t col = (size_t) printf("   ");

        for (size_t k = 0; k < json_object_array_length(nodes); k++) {
                json_object *x = json_object_array_get_idx(nodes, k);
                const char *t = type_name(x), *kernel = jstr(x, "kernel");
                char item[320];

                if (name ? !t || !streq(t, name) : t != NULL)
                        continue;
                snprintf(item, sizeof(item), " %s%s%s%s", jstr(x, "node") ?: "?", kernel ? " (" : "", kernel ?: "",
                         kernel ? ")" : "");
                if (col > 3 && col + strlen(item) > 78)
                        col = (size_t) printf("\n   ");
                col += (size_t) printf("%s", item);
        }
        printf("\n");
}

/* Each node type (its name, wrapped) with its nodes and their kernels, in
 * the order of each type's first node; nodes that told none last. Nothing
 * when no node told a type (an older lmkd everywhere). */
static void print_node_types(json_object *nodes) {
        size_t n = json_object_array_length(nodes);
        bool any = false, untyped = false;

        for (size_t i = 0; i < n; i++) {
                const char *name = type_name(json_object_array_get_idx(nodes, i));
                bool first = true;

                if (!name) {
                        untyped = true;
                        continue;
                }
                for (size_t k = 0; k < i && first; k++)
                        first = !streq(type_name(json_object_array_get_idx(nodes, k)) ?: "", name);
                if (!first)
                        continue;
                if (!any)
                        printf("\nNode types\n");
                any = true;
                print_wrapped_from((size_t) printf("  "), 2, name);
                print_type_nodes(nodes, name);
        }
        if (any && untyped) {
                printf("  (told none)\n");
                print_type_nodes(nodes, NULL);
        }
}

int do_nodes(Cli *cli, int argc, char **argv) {
        static const CliOption options[] = {};
        _cleanup_(json_object_putp) json_object *o = NULL;
        json_object *nodes;
        CliQuery query;
        int r;

        r = cli_parse(cli, "nodes", options, 0, argc, argv, &query);
        if (r < 0)
                return r;

        r = cli_get_list(cli, "/api/v1/nodes", NULL, &o);
        if (r <= 0)
                return r;

        nodes = jget(o, "nodes");
        if (json_object_array_length(nodes) == 0) {
                printf("No node has pushed yet.\n");
                return 0;
        }
        printf("%-16s %-10s %5s %8s %7s %-16s %10s\n", "NODE", "CLUSTER", "CPUS", "BATCHES", "LOST",
               "LAST INTERVAL", "LAST PUSH");
        for (size_t i = 0; i < json_object_array_length(nodes); i++) {
                json_object *n = json_object_array_get_idx(nodes, i);
                char name[32], cluster[32], batches[32], lost[32], t[32], age[32];

                printf("%-16s %-10s %5" PRId64 " %8s %7s %-16s %6s ago\n",
                       fmt_fit(jstr(n, "node") ?: "?", 16, false, name, sizeof(name)),
                       fmt_fit(jstr(n, "cluster") ?: "-", 10, false, cluster, sizeof(cluster)),
                       jint(n, "cpus"),
                       fmt_count(jint(n, "batches"), batches, sizeof(batches)),
                       fmt_count(jint(n, "samples_lost"), lost, sizeof(lost)),
                       fmt_time(jnum(n, "last_seen"), t, sizeof(t)),
                       fmt_duration(jnum(n, "last_push_age_seconds"), age, sizeof(age)));
        }
        print_node_types(nodes);
        return 0;
}
