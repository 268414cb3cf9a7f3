/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "monitor.h"

/* The local socket the Slurm Prolog/Epilog scripts (lmk-notify) send job
 * start/end notices to: a datagram socket only root may write to, and
 * notices are accepted only from senders with uid 0 (SCM_CREDENTIALS). */
int notice_socket_open(const char *path, int *ret_fd);
/* Reads every waiting notice and applies it. */
void notice_socket_read(int fd, Monitor *m);
/* Applies the start notices the SPANK plugin keeps for the running jobs
 * beside the socket (job_notice_state_dir()), so that a job that started
 * before this lmkd is known with what its user asked. Only a folder and
 * files owned by root and writable by root alone count. Returns how many
 * were applied, or a negative errno for the folder. */
int notice_state_read(const char *socket_path, Monitor *m);
