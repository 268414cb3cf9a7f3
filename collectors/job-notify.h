/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* Job start/end notices: one line that the Slurm Prolog and Epilog
 * (slurm/lmk-prolog, slurm/lmk-epilog through slurm/lmk-notify) send to
 * lmkd's local socket, so that lmkd knows a job and its metadata even when
 * none of its processes carries a Slurm environment. The format is in
 * docs/slurm.md:
 *
 *   LMK1 job-start job=4711 uid=1000 user=alice partition=batch nodes=4 cluster=demo
 *
 * Values are percent-encoded; unknown fields are skipped (newer senders),
 * unknown versions and events refused. */

#include <stddef.h>

#include "job-slurm.h"

#define JOB_NOTICE_SOCKET_DEFAULT "/run/lmk/lmkd.sock"
/* One notice in bytes: a full JobInfo, every byte percent-encoded where
 * that can happen, fits (tested). The socket is SOCK_DGRAM: one notice is
 * one datagram. */
#define JOB_NOTICE_MAX 8192

typedef enum JobNoticeEvent {
        JOB_NOTICE_START,
        JOB_NOTICE_END,
        _JOB_NOTICE_EVENT_MAX,
} JobNoticeEvent;

typedef struct JobNotice {
        JobNoticeEvent event;
        JobInfo info;            /* job is always set */
        unsigned unknown_fields; /* fields this lmkd does not know, skipped */
} JobNotice;

/* Parses one notice (a trailing '\n' is allowed). Returns 0 and fills *ret;
 * -EMSGSIZE when longer than JOB_NOTICE_MAX; -EPROTONOSUPPORT for another
 * version than LMK1; -EOPNOTSUPP for an unknown event; -EBADMSG when
 * malformed (bad encoding, NUL, a field twice, an invalid id or number,
 * no job). */
int job_notice_parse(const char *msg, size_t len, JobNotice *ret);

/* Writes the notice for info into buf (NUL-terminated). Returns its length,
 * -ENOBUFS when it does not fit, -EINVAL without a valid job id. */
int job_notice_format(JobNoticeEvent event, const JobInfo *info, char *buf, size_t size);

const char *job_notice_event_to_string(JobNoticeEvent event);

/* Sends one notice as one datagram to lmkd's socket at path. Never blocks:
 * a missing lmkd (-ENOENT, -ECONNREFUSED) or a full queue (-EAGAIN) fails
 * at once, so that a job never waits for lmkd. Used by lmk-notify and the
 * SPANK plugin (slurm/spank-lmk.c). */
int job_notice_send(const char *path, const char *msg, size_t len);

/* Where the running jobs' start notices are kept as files, beside lmkd's
 * socket at socket_path: "<its folder>/jobs". The SPANK plugin writes
 * "jobs/<job id>" (the notice line) as root at each job's start and
 * removes it at its end, so that an lmkd started while the job runs still
 * learns what its user asked (--lmk=off above all). lmkd reads them at
 * start, only from a folder and files that root owns and only root may
 * write. -ENAMETOOLONG when it does not fit size. */
int job_notice_state_dir(const char *socket_path, char *buf, size_t size);
