/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* slurmstepd's process tree: the job of a process Slurm started but did
 * not put into a job cgroup (proctrack/linuxproc or pgid sites). slurmd
 * starts one slurmstepd per step, as root, titled "slurmstepd: [4711.batch]";
 * it forks the step's tasks, which set their uid to the job's user and
 * exec the user's program. A process below such a slurmstepd is the step's.
 *
 * Only root's slurmstepd counts: anyone can call a process slurmstepd
 * (its comm) and give it any title (its argv[0]). A process counts as
 * root's slurmstepd when its real uid is 0 (a setuid program run by a user
 * keeps the user's real uid), its comm is "slurmstepd", and the file it
 * executes is named slurmstepd or slurmstepd-<suffix> (Debian's
 * slurmstepd-wlm; a user's symlink named slurmstepd to a setuid program
 * resolves to the program's own name).
 *
 * Everything here reads /proc, which changes under the reader: an ancestor
 * must have started no later than its descendant, so that a pid reused by
 * a newer process (a slurmstepd started since) is never taken for an
 * ancestor, and the walk is bounded (JOB_STEPD_DEPTH_MAX). The parsers are
 * pure functions over a buffer, bounded and fuzzed. */

#include <stddef.h>
#include <stdint.h>

#include "job-slurm.h"

/* Ancestors looked at, at most: slurmstepd, the batch script, mpirun, a
 * rank, the shells and tools a rank runs are a handful of levels. */
#define JOB_STEPD_DEPTH_MAX 32

/* /proc/<pid>/stat, /proc/<pid>/status, /proc/<pid>/cmdline longer than
 * these are refused, not cut. */
#define JOB_PROC_STAT_MAX 4096U
#define JOB_PROC_STATUS_MAX (64U * 1024U)
#define JOB_PROC_CMDLINE_MAX 4096U

typedef struct JobProcStat {
        char comm[16];          /* as the kernel keeps it: at most 15 bytes; any byte but NUL */
        uint32_t ppid;
        uint64_t start;         /* clock ticks after boot */
} JobProcStat;

/* Parses /proc/<pid>/stat ("pid (comm) S ppid … starttime …"; the comm may
 * hold spaces and parentheses, so the fields after the last ')' count).
 * Returns 0, or -EBADMSG when malformed. */
int job_proc_stat_parse(const char *buf, size_t len, JobProcStat *ret);

/* The real uid from /proc/<pid>/status ("Uid:\t<real>\t<effective>\t…").
 * Returns 0, or -EBADMSG when there is no well-formed Uid line. */
int job_proc_status_uid(const char *buf, size_t len, uint32_t *ret);

/* Parses slurmstepd's process title "slurmstepd: [4711.batch]" (its
 * cmdline; what follows the first NUL is ignored). Returns 1 and fills
 * *ret (job, step; uid unset) when it is one, 0 when it is not, -EBADMSG
 * for a title with a bad job id or step. */
int job_stepd_title_parse(const char *cmdline, size_t len, JobRef *ret);

/* Whether pid (below proc_root, "/proc" or a fake tree in tests) is root's
 * slurmstepd of a job: 1 and its job and step in *ret, 0 when it is not,
 * negative errno when it cannot be read (gone). */
int job_stepd_read(const char *proc_root, uint32_t pid, JobRef *ret);

/* The job of the nearest root's slurmstepd above pid (its parent, the
 * parent's parent, …, at most JOB_STEPD_DEPTH_MAX levels): 1 and its job
 * and step in *ret, 0 when there is none (reached init, a process gone,
 * or the depth limit), negative errno when pid itself cannot be read. */
int job_stepd_find(const char *proc_root, uint32_t pid, JobRef *ret);
