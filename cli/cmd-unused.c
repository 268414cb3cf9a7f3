/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lmk unused: installed software that no sample touched in a time range,
 * largest first, with where it is installed and when it was last used. */
#include <errno.h>
#include <stdio.h>

#include "cli.h"
#include "util.h"

static const char *fmt_bytes(int64_t n, char *buf, size_t size) {
        if (n >= (INT64_C(1) << 30))
                snprintf(buf, size, "%.1f GiB", (double) n / (double) (INT64_C(1) << 30));
        else if (n >= (1 << 20))
                snprintf(buf, size, "%.1f MiB", (double) n / (double) (1 << 20));
        else
                snprintf(buf, size, "%.0f KiB", (double) n / 1024.0);
        return buf;
}

static int by_size(const void *a, const void *b) {
        int64_t x = jint(*(json_object *const *) a, "size_bytes"), y = jint(*(json_object *const *) b, "size_bytes");

        return CMP(y, x);
}

int do_unused(Cli *cli, int argc, char **argv) {
        const char *limit_arg = NULL;
        const CliOption options[] = {
                { NULL, 0, CLI_FIXED, "unused", "true" },
                { "since", 0, CLI_QUERY, "since", "90d" },
                { "manager", 0, CLI_QUERY, "manager" },
                /* the store lists them all, largest last: the rows shown */
                { NULL, 0, CLI_FIXED, "limit", "100000" },
                { "limit", 'n', CLI_STRING, .string = &limit_arg },
        };
        _cleanup_(json_object_putp) json_object *o = NULL;
        _cleanup_free_ json_object **v = NULL;
        json_object *list;
        size_t n, limit = 50;
        int64_t total = 0;
        char since[32];
        CliQuery query;
        int r;

        r = cli_parse(cli, "unused", options, 0, argc, argv, &query);
        if (r < 0)
                return r;
        if (limit_arg) {
                uint64_t k;

                if (safe_atou64(limit_arg, 10, &k) < 0 || k == 0 || k > SIZE_MAX)
                        return cli_error(cli, EINVAL, "unused: --limit takes a positive number");
                limit = (size_t) k;
        }

        r = cli_get_list(cli, "/api/v1/packages", query.pairs, &o);
        if (r <= 0)
                return r;
        list = jget(o, "packages");
        n = json_object_array_length(list);
        printf("Installed software without a sample since %s (%zu packages)\n",
               fmt_time(jnum(o, "since"), since, sizeof(since)), n);
        if (n == 0)
                return 0;
        v = calloc(n, sizeof(json_object *));
        if (!v)
                return cli_error(cli, ENOMEM, "Out of memory.");
        for (size_t i = 0; i < n; i++) {
                v[i] = json_object_array_get_idx(list, i);
                total += jint(v[i], "size_bytes");
        }
        qsort(v, n, sizeof(json_object *), by_size);
        printf("%10s %5s %-16s %-10s %s\n", "SIZE", "NODES", "LAST USED", "MANAGER", "PACKAGE");
        for (size_t i = 0; i < n && i < limit; i++) {
                char size[32], last[32], name[160];

                snprintf(name, sizeof(name), "%s %s", jstr(v[i], "name") ?: "?", jstr(v[i], "version") ?: "");
                printf("%10s %5" PRId64 " %-16s %-10s %s\n", fmt_bytes(jint(v[i], "size_bytes"), size, sizeof(size)),
                       jint(v[i], "nodes"), jint(v[i], "last_seen") >= 0 ?
                               fmt_time(jnum(v[i], "last_seen"), last, sizeof(last)) : "never",
                       jstr(v[i], "manager") ?: "?", name);
        }
        if (n > limit)
                printf("... and %zu more (--limit)\n", n - limit);
        {
                char t[32];

                printf("Together %s on disk (per node that has them).\n", fmt_bytes(total, t, sizeof(t)));
        }
        return 0;
}
