/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lmkd-metrics.h"
#include "log.h"
#include "output-file.h"

int lmkd_metrics_format(Monitor *m, Pushing *p, double start_time, char **ret) {
        const MonitorStats *st = monitor_stats(m);
        SpoolStats ss = {};
        PushStats ps = {};
        int r;

        if (p->spool) {
                spool_stats(p->spool, &ss);
                pusher_stats(p->pusher, &ps);
        }
        r = asprintf(ret,
                     "# HELP lmkd_build_info lmkd's version.\n# TYPE lmkd_build_info gauge\n"
                     "lmkd_build_info{version=\"" PACKAGE_VERSION "\"} 1\n"
                     "# HELP lmkd_start_time_seconds When lmkd started (Unix time).\n"
                     "# TYPE lmkd_start_time_seconds gauge\nlmkd_start_time_seconds %.3f\n"
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
                     "# HELP lmkd_spool_dropped_for_space_total Batches dropped unsent to make room on the spool's "
                     "full file system (also in state=\"dropped\").\n"
                     "# TYPE lmkd_spool_dropped_for_space_total counter\nlmkd_spool_dropped_for_space_total %" PRIu64 "\n"
                     "# HELP lmkd_intervals_unspooled_total Intervals whose batch could not be written to the spool.\n"
                     "# TYPE lmkd_intervals_unspooled_total counter\nlmkd_intervals_unspooled_total %" PRIu64 "\n"
                     "# HELP lmkd_samples_unspooled_total Samples of the intervals that could not be spooled.\n"
                     "# TYPE lmkd_samples_unspooled_total counter\nlmkd_samples_unspooled_total %" PRIu64 "\n"
                     "# HELP lmkd_clock_steps_total Steps of the wall clock that ended an interval early.\n"
                     "# TYPE lmkd_clock_steps_total counter\nlmkd_clock_steps_total %" PRIu64 "\n"
                     "# HELP lmkd_push_failures_total Pushes that got no answer or a 5xx.\n"
                     "# TYPE lmkd_push_failures_total counter\nlmkd_push_failures_total %" PRIu64 "\n"
                     "# HELP lmkd_batches_conflicting_total Batches the store refused with 409: it holds their key "
                     "with other content (also in state=\"rejected\").\n"
                     "# TYPE lmkd_batches_conflicting_total counter\nlmkd_batches_conflicting_total %" PRIu64 "\n"
                     "# HELP lmkd_job_opt_outs_refused_total Job notices whose --lmk=off lmkd.conf refused "
                     "(opt_out = forbidden): the job is measured as usual.\n"
                     "# TYPE lmkd_job_opt_outs_refused_total counter\nlmkd_job_opt_outs_refused_total %" PRIu64 "\n",
                     start_time, st->samples, st->samples_lost, st->sideband_lost, ss.spooled, ss.sent, ss.rejected, ss.dropped,
                     ss.corrupt, ss.queued, ss.queued_bytes, ss.dropped_for_space, p->intervals_unspooled,
                     p->samples_unspooled, p->clock_steps, ps.failures, ps.conflicts, monitor_jobs(m)->opt_outs_refused);
        return r < 0 ? -ENOMEM : 0;
}

void lmkd_metrics_write(const char *path, const char *text) {
        int r;

        r = write_file_at_user_path(path, text, strlen(text), 0644);
        if (r < 0)
                log_warning_errno(r, "Failed to write metrics to %s: %m", path);
}

