/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "addrmap.h"
#include "hashmap.h"
#include "job-slurm.h"
#include "object.h"

#define COMM_LEN 16

/* What lmkd knows about one process (thread group): its name and its
 * executable mappings, kept current by the kernel's mmap/comm/fork/exit
 * records and, for processes that were already running, by /proc. */
typedef struct Process {
        uint32_t pid;
        char comm[COMM_LEN];
        AddrMap map;
        Object *exe;            /* the main executable, if known (a reference) */
        uint64_t exit_time;     /* CLOCK_MONOTONIC ns of the leader's exit; 0 while alive */
        uint64_t scan_time;     /* last time the maps were read from /proc; 0 = never */
        bool want_exe;          /* the next file mapping is the new executable (after exec) */
        bool partial;           /* mappings may be missing: read /proc on a miss */
        /* The batch job and step the process belongs to: inherited on fork,
         * read from /proc (cgroup, then environ) while the process lives. */
        JobRef job;             /* job[0] == '\0': outside any job */
        enum {
                JOB_UNRESOLVED,         /* not read from /proc yet (maybe inherited) */
                JOB_RESOLVED,           /* read from /proc, or nothing more to learn */
        } job_state;
        /* Its cgroup was read (job_state, or at its fork): job holds what
         * the cgroup says. Inherited on fork, as the cgroup is, so a
         * process outside jobs that forks often is read once. */
        bool cgroup_read;
        /* The job its environment names while lmkd does not know that
         * job's user to be the process's ("" when none): outside any job
         * until a trusted source says so (jobs_resolve()). Inherited on
         * fork, as the environment is. */
        char claim[JOB_ID_SIZE];
        /* The job that counts it among its live processes (Job.live),
         * "" when none: an exec re-reads its job, and must not count it
         * twice. */
        char live_job[JOB_ID_SIZE];
        /* Its MPI rank in its job (JobInfo.rank), JOB_UNSET if it is none:
         * read from its environment with the job, inherited on fork. */
        uint32_t rank;
        /* lmkd told the sampling program it has read this process: its
         * samples no longer wake lmkd (sampler_set_known()). An exec
         * takes that back, in the kernel and in lmkd (daemon/monitor.c). */
        bool sampler_knows;
        void *userdata;         /* owned by the caller, released via ProcessTable.release */
} Process;

typedef struct ProcessTableStats {
        uint64_t scans;         /* /proc/<pid>/maps reads */
        uint64_t scan_failures;
        uint64_t bad_map_lines; /* malformed /proc/<pid>/maps lines skipped */
        uint64_t evicted;
        uint64_t forks, execs, exits, mmaps;
} ProcessTableStats;

typedef struct ExitedPid {
        uint32_t pid;
        uint64_t exit_time;
} ExitedPid;

typedef struct ProcessTable {
        Hashmap *procs;         /* pid → Process* */
        /* pids in the order their leaders exited, so eviction looks at the
         * oldest few instead of the whole table */
        ExitedPid *exited;
        size_t exited_head, exited_n, exited_alloc;
        ObjectTable *objects;
        char *proc_root;        /* "/proc", or a fake tree in tests */
        void (*release)(Process *p); /* frees userdata (on exit, exec, reuse) and clears it */
        void (*inherit)(const Process *parent, Process *child); /* on fork */
        void (*evict)(void *owner, Process *p); /* before any process is forgotten */
        void *owner;
        /* files found without liblmk's lmk_abi, by a hash of their identity
         * (dev, inode, size, mtime, ctime): an object is forgotten with its
         * last process, and the next exec of the same program would read its
         * symbol tables again */
        Hashmap *no_abi;
        ProcessTableStats stats;
} ProcessTable;

int process_table_init(ProcessTable *pt, ObjectTable *objects, const char *proc_root);
void process_table_done(ProcessTable *pt);

Process *process_table_get(ProcessTable *pt, uint32_t pid);

/* Reads the process (via task tid, or the leader if tid is 0) from /proc,
 * creating or refreshing its entry. -ESRCH if it is gone. */
int process_table_scan(ProcessTable *pt, uint32_t pid, uint32_t tid, uint64_t now, Process **ret);
/* Reads every process in /proc. Returns how many were read. */
int process_table_scan_all(ProcessTable *pt, uint64_t now);

/* The kernel's side-band records, applied in time order. */
int process_table_mmap(ProcessTable *pt, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
                       unsigned maj, unsigned min, uint64_t ino, const char *path);
int process_table_comm(ProcessTable *pt, uint32_t pid, uint32_t tid, const char *comm, bool exec);
int process_table_fork(ProcessTable *pt, uint32_t pid, uint32_t ppid, uint32_t tid);
void process_table_exit(ProcessTable *pt, uint32_t pid, uint32_t tid, uint64_t time);

/* Records that pid is gone (no /proc entry) as of time, with the name a
 * sample gave, so that its remaining samples do not re-read /proc. */
Process *process_table_add_gone(ProcessTable *pt, uint32_t pid, const char *comm, uint64_t time);

/* Forgets processes whose leader exited before 'before'. */
void process_table_evict(ProcessTable *pt, uint64_t before);

/* Reads the build-id of the object behind m (once per object): through
 * /proc/<pid>/map_files while the process lives, else through its path; the
 * file's device and inode must match the mapping's, or no id is recorded. */
void process_table_load_build_id(ProcessTable *pt, const Process *p, const Mapping *m);

/* Opens the file of object o, the one lmkd recorded (its device and inode
 * are checked): through the mapping m of process p while p lives
 * (/proc/<pid>/map_files, which still reaches a file deleted or replaced
 * since), else by its path; by its path alone when p is NULL. -ESTALE
 * when the path names another file now. */
int process_table_open_object(ProcessTable *pt, const Object *o, const Process *p, const Mapping *m);

/* Where the process has liblmk's descriptor lmk_abi, if the object behind m
 * exports it (the ELF lookup is done once per object). -ENOENT if not. */
int process_table_abi_address(ProcessTable *pt, const Process *p, const Mapping *m, uint64_t *ret);
