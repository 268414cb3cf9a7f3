/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* Slurm jobs in the cgroup v2 (unified) hierarchy. Slurm's cgroup/v2
 * plugin gives every job a directory of its own
 * (…/slurmstepd.scope/job_<id>); a perf event opened on that directory
 * (PERF_FLAG_PID_CGROUP) counts exactly the job's tasks, and the kernel
 * switches it only when a CPU passes from one cgroup to another. This file
 * finds the hierarchy and the job directories already there; the kernel's
 * cgroup records tell about new ones (daemon/sideband.c). */

#include <stddef.h>
#include <stdint.h>

#include "job-slurm.h"

/* Opens the root of the unified hierarchy: sys_fs_cgroup itself (normally
 * /sys/fs/cgroup) on a cgroup v2 system, or its "unified" directory on a
 * hybrid one (v1 controllers beside a v2 tree, as systemd mounts it).
 * Returns an fd perf_event_open() accepts for a cgroup (O_RDONLY, not
 * O_PATH), or -ENOMEDIUM when neither is a cgroup2 file system. */
int cgroup2_root_open(const char *sys_fs_cgroup);

/* A job directory found: path relative to the root, with its leading '/'
 * ("/system.slice/slurmstepd.scope/job_4711"), what it names, and its
 * inode (the cgroup's id). */
typedef int (*job_cgroup2_cb_t)(const char *path, const JobRef *ref, uint64_t ino, void *userdata);

/* Walks the hierarchy below root_fd to find Slurm's scopes
 * (slurmstepd.scope, <node>_slurmstepd.scope) at most
 * JOB_CGROUP2_SCAN_DEPTH levels down and calls cb for each job directory in
 * them. Visits at most JOB_CGROUP2_SCAN_DIRS directories. A negative return
 * of cb stops the walk and is returned; else the number of jobs found. */
#define JOB_CGROUP2_SCAN_DEPTH 4
#define JOB_CGROUP2_SCAN_DIRS 4096
int job_cgroup2_scan(int root_fd, job_cgroup2_cb_t cb, void *userdata);
