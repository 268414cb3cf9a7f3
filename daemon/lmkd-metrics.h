/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "monitor.h"
#include "push-pipeline.h"

/* lmkd's own health in Prometheus' text format: samples, losses, batches
 * by state, the spool, pushes. The same text goes to a textfile
 * (--metrics-file, for node_exporter's textfile collector) and to GET
 * /metrics (--metrics-listen, metrics-server.h). */
int lmkd_metrics_format(Monitor *m, Pushing *p, double start_time, char **ret);
/* Writes text to path, replacing it atomically; logs a failure. */
void lmkd_metrics_write(const char *path, const char *text);
