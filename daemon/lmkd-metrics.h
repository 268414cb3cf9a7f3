/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "monitor.h"
#include "push-pipeline.h"

/* lmkd's own health as a Prometheus textfile (node_exporter's textfile
 * collector reads it): samples, losses, batches by state, the spool. */
void lmkd_metrics_write(const char *path, Monitor *m, Pushing *p);
