/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* Tells the service manager how lmkd is doing ("READY=1", "STATUS=...",
 * "WATCHDOG=1"): one datagram to the AF_UNIX socket that $NOTIFY_SOCKET
 * names, a path or, after '@', an abstract name (systemd's documented
 * notification protocol, sd_notify(3)). Ours, so that lmkd does not link
 * libsystemd and what it loads for this one call.
 *
 * Returns 0 when $NOTIFY_SOCKET is not set (no manager listens), 1 when the
 * message was sent, or a negative errno. */
int service_notify(const char *state);
