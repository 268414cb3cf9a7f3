/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <string.h>

#include "interval-json.h"
#include "report.h"
#include "util.h"

int report_write_json(const Interval *iv, const ReportInfo *info, FILE *f) {
        Histogram *h = iv->hist;
        const MonitorStats *st = &iv->stats;
        json_object *root;
        const char *text;
        int r = 0;

        root = json_object_new_object();
        if (!root)
                return -ENOMEM;
        json_member(&r, root, "format", json_object_new_string("lmk-oneshot"));
        json_member(&r, root, "version", json_object_new_int(1));
        json_member(&r, root, "host", json_object_new_string(info->host));
        json_member(&r, root, "event", json_object_new_string(iv->event));
        json_member(&r, root, "frequency_hz", json_object_new_double(iv->frequency_hz));
        json_member(&r, root, "cpus", json_object_new_int((int) iv->cpus));
        if (info->node_type)
                json_member(&r, root, "node_type", node_type_json(info->node_type));
        /* whether every context switch ran lmkd's program: only with counters open */
        json_member(&r, root, "switch_program", json_object_new_boolean(iv->switch_program));
        json_member(&r, root, "start", json_object_new_double(iv->start));
        json_member(&r, root, "end", json_object_new_double(iv->end));
        json_member(&r, root, "duration_s", json_object_new_double(info->duration));
        json_member(&r, root, "samples_total", json_object_new_int64((int64_t) histogram_samples(h)));
        json_member(&r, root, "samples_lost", json_object_new_int64((int64_t) st->samples_lost));
        json_member(&r, root, "samples_idle_synthesized", json_object_new_int64((int64_t) st->idle_synthesized));
        json_member(&r, root, "samples_unknown", json_object_new_int64((int64_t) st->unknown));
        if (r >= 0)
                r = interval_add_rows(iv, root);
        json_member(&r, root, "lmkd", interval_lmkd_stats(iv));
        if (r < 0) {
                json_object_put(root);
                return r;
        }

        text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
        r = !text ? -ENOMEM : fputs(text, f) < 0 || fputc('\n', f) < 0 ? -EIO : 0;
        json_object_put(root);
        return r;
}

int report_write_table(const Interval *iv, const ReportInfo *info, FILE *f) {
        Histogram *h = iv->hist;
        const MonitorStats *st = &iv->stats;
        _cleanup_free_ HistRow **rows = histogram_sorted(h);
        uint64_t total = histogram_samples(h);
        size_t n = histogram_rows(h);

        if (!rows)
                return -ENOMEM;
        fprintf(f, "%s: %.1f s at %g Hz on %u CPUs (%s): %" PRIu64 " samples, %" PRIu64 " lost, %" PRIu64
                   " idle synthesized\n\n",
                info->host, info->duration, iv->frequency_hz, iv->cpus, iv->event,
                total, st->samples_lost, st->idle_synthesized);
        fprintf(f, "%9s %6s  %-7s %-10s %-16s %-16s %s\n", "SAMPLES", "SHARE", "KIND", "USER", "COMM", "PHASE",
                "OBJECT");
        for (size_t i = 0; i < n; i++) {
                const HistRow *row = rows[i];

                fprintf(f, "%9" PRIu64 " %5.1f%%  %-7s %-10.10s %-16s %-16s %s\n", row->samples,
                        total ? 100.0 * (double) row->samples / (double) total : 0.0, code_kind_to_string(row->key.kind),
                        user_name(row->key.uid), row->key.comm, row->key.phase[0] ? row->key.phase : "-",
                        row->key.obj->path);
        }
        return ferror(f) ? -EIO : 0;
}
