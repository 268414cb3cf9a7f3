/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lmkd-metrics.h"
#include "log.h"
#include "output-file.h"

void lmkd_metrics_write(const char *path, Monitor *m, Pushing *p) {
        _cleanup_free_ char *text = NULL;
        const MonitorStats *st = monitor_stats(m);
        SpoolStats ss = {};
        PushStats ps = {};
        int r;

        if (p->spool) {
                spool_stats(p->spool, &ss);
                pusher_stats(p->pusher, &ps);
        }
        r = asprintf(&text,
                     "# HELP lmkd_samples_total Samples attributed.\n# TYPE lmkd_samples_total counter\n"
                     "lmkd_samples_total %" PRIu64 "\n"
                     "# HELP lmkd_samples_lost_total Samples the ring buffer could not take.\n"
                     "# TYPE lmkd_samples_lost_total counter\nlmkd_samples_lost_total %" PRIu64 "\n"
                     "# HELP lmkd_records_lost_total Process records the kernel dropped.\n"
                     "# TYPE lmkd_records_lost_total counter\nlmkd_records_lost_total %" PRIu64 "\n"
                     "# HELP lmkd_batches_total Batches by what became of them.\n# TYPE lmkd_batches_total counter\n"
                     "lmkd_batches_total{state=\"spooled\"} %" PRIu64 "\n"
                     "lmkd_batches_total{state=\"sent\"} %" PRIu64 "\n"
                     "lmkd_batches_total{state=\"rejected\"} %" PRIu64 "\n"
                     "lmkd_batches_total{state=\"dropped\"} %" PRIu64 "\n"
                     "lmkd_batches_total{state=\"corrupt\"} %" PRIu64 "\n"
                     "# HELP lmkd_spool_batches Batches waiting in the spool.\n# TYPE lmkd_spool_batches gauge\n"
                     "lmkd_spool_batches %" PRIu64 "\n"
                     "# HELP lmkd_spool_bytes Bytes waiting in the spool.\n# TYPE lmkd_spool_bytes gauge\n"
                     "lmkd_spool_bytes %" PRIu64 "\n"
                     "# HELP lmkd_push_failures_total Pushes that got no answer or a 5xx.\n"
                     "# TYPE lmkd_push_failures_total counter\nlmkd_push_failures_total %" PRIu64 "\n",
                     st->samples, st->samples_lost, st->sideband_lost, ss.spooled, ss.sent, ss.rejected, ss.dropped,
                     ss.corrupt, ss.queued, ss.queued_bytes, ps.failures);
        if (r < 0)
                return;
        r = write_file_at_user_path(path, text, strlen(text), 0644);
        if (r < 0)
                log_warning_errno(r, "Failed to write metrics to %s: %m", path);
}

