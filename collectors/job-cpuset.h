/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* How many CPUs Slurm gave a job on this node, from the cpuset of the job's
 * cgroup (task/cgroup with ConstrainCores): the allocation the findings
 * compare a job's busy samples with. A job's environment says the same in
 * SLURM_CPUS_ON_NODE, but the user can change that; the cgroup they cannot.
 *
 *   cgroup v1  N:cpuset:/slurm_<node>/uid_<u>/job_<id>/step_<s>
 *              → /sys/fs/cgroup/cpuset/slurm_<node>/uid_<u>/job_<id>/cpuset.cpus
 *   cgroup v2  0::/system.slice/slurmstepd.scope/job_<id>/step_<s>/…
 *              → /sys/fs/cgroup/system.slice/slurmstepd.scope/job_<id>/cpuset.cpus.effective
 *
 * The parser is pure and bounded (the list's is common/cpu-list.c);
 * job_cpuset_read() does the I/O. */

#include <stddef.h>
#include <sys/types.h>

/* The file that holds the job's CPU list, from the contents of
 * /proc/<pid>/cgroup. Returns 1 and writes the path to ret (size bytes),
 * 0 when no cpuset hierarchy line names a job_<id> directory, -ENAMETOOLONG,
 * or -EBADMSG for a malformed line. */
int job_cpuset_path(const char *cgroup, size_t len, char *ret, size_t size);

/* The job's CPUs on this node for a process in it. -ENOENT when the
 * process or its cpuset is gone or it is in no job's cpuset. */
int job_cpuset_read(pid_t pid, unsigned *ret);
