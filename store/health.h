/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "api/api.h"

/* GET /metrics: the counters and the nodes' health (docs/api.md). */
void health_metrics(Server *s, Request *req, Reply *reply);
/* GET /healthz: 200 while the store takes batches, else 503 and why. */
void health_check(Server *s, Request *req, Reply *reply);
