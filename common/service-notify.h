/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>

/* Tells the service manager how lmkd or lmk-store is doing ("READY=1",
 * "STATUS=...", "WATCHDOG=1"): one datagram to the AF_UNIX socket that
 * $NOTIFY_SOCKET names, a path or, after '@', an abstract name (systemd's
 * documented notification protocol, sd_notify(3)). Ours, so that neither
 * links libsystemd and what it loads for these few calls.
 *
 * Returns 0 when $NOTIFY_SOCKET is not set (no manager listens), 1 when the
 * message was sent, or a negative errno. */
int service_notify(const char *state);

/* The watchdog interval the manager asks for ($WATCHDOG_USEC, for this
 * process when $WATCHDOG_PID names one): 0 when none is asked for or the
 * variables make no sense. */
uint64_t service_watchdog_usec(void);
