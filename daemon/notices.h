/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "monitor.h"

/* The local socket the Slurm Prolog/Epilog scripts (lmk-notify) send job
 * start/end notices to: a datagram socket only root may write to, and
 * notices are accepted only from senders with uid 0 (SCM_CREDENTIALS). */
int notice_socket_open(const char *path, int *ret_fd);
/* Reads every waiting notice and applies it. */
void notice_socket_read(int fd, Monitor *m);
