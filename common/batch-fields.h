/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* The member names of a batch (docs/batch-format.md, "Fields"): lmkd writes
 * them (daemon/batch-build.c, daemon/interval-json.c) and lmk-store reads
 * them (store/batch/batch-parse.c, store/batch/batch-inventory.c), both
 * from here, so that the two cannot spell one differently.
 * tests/unit/test-batch-contract.c passes lmkd's batch through the store's
 * parser and compares every member.
 *
 * BF_<OBJECT>_<MEMBER>; members that several objects share in one meaning
 * have one name (BF_CPU_TIME_NS: rows[] and jobs[]). What lmkd writes and
 * no store reads (totals[], "lmkd", "ipc", rows' "uid", counters' own
 * totals) is lmkd's alone and not here. */

/* the top level */
#define BF_FORMAT "format"
#define BF_VERSION "version"
#define BF_BATCH "batch"
#define BF_NODE "node"
#define BF_INVENTORY "inventory"
#define BF_INTERVAL "interval"
#define BF_SAMPLING "sampling"
#define BF_ROWS "rows"
#define BF_COUNTERS "counters"
#define BF_MARKERS "markers"
#define BF_JOBS "jobs"
#define BF_ENERGY "energy"
#define BF_RANKS "ranks"
#define BF_FUNCTIONS "functions"

/* batch: the batch's key */
#define BF_BATCH_NODE "node"
#define BF_BATCH_BOOT_ID "boot_id"
#define BF_BATCH_SPOOL "spool"
#define BF_BATCH_SEQ "seq"

/* node */
#define BF_NODE_HOSTNAME "hostname"
#define BF_NODE_CPUS "cpus"
#define BF_NODE_CLUSTER "cluster"
#define BF_NODE_INSTALLED "installed"
#define BF_NODE_TYPE "type"

/* node.installed[] */
#define BF_FAMILY_PURPOSE "purpose"
#define BF_FAMILY_FAMILY "family"

/* node.type */
#define BF_TYPE_CPU_MODEL "cpu_model"
#define BF_TYPE_SOCKETS "sockets"
#define BF_TYPE_CORES "cores"
#define BF_TYPE_THREADS "threads"
#define BF_TYPE_MEMORY_BYTES "memory_bytes"
#define BF_TYPE_GPUS "gpus"
#define BF_TYPE_GPUS_OTHER "gpus_other"
#define BF_TYPE_KERNEL "kernel"

/* node.type.gpus[] */
#define BF_GPU_VENDOR "vendor"
#define BF_GPU_VENDOR_ID "vendor_id"
#define BF_GPU_DEVICE_ID "device_id"
#define BF_GPU_NAME "name"
#define BF_GPU_COUNT "count"

/* interval */
#define BF_INTERVAL_START "start"
#define BF_INTERVAL_END "end"

/* sampling */
#define BF_SAMPLING_EVENT "event"
#define BF_SAMPLING_FREQUENCY_HZ "frequency_hz"
#define BF_SAMPLING_SAMPLES_LOST "samples_lost"
#define BF_SAMPLING_PMU_RELEASED "pmu_released"

/* counters[] */
#define BF_COUNTER_ROLE "role"
#define BF_COUNTER_EVENT "event"
#define BF_COUNTER_SOURCE "source"
#define BF_COUNTER_AVAILABLE "available"
#define BF_COUNTER_ERROR "error"

/* what rows[] and jobs[] count: CPU time, the IPC counters, and the other
 * counters by role in "events" */
#define BF_CPU_TIME_NS "cpu_time_ns"
#define BF_CYCLES "cycles"
#define BF_INSTRUCTIONS "instructions"
#define BF_EVENTS "events"
/* the counter roles (counters[].role) whose counts fill BF_CYCLES and
 * BF_INSTRUCTIONS, and so never a member of BF_EVENTS */
#define BF_ROLE_CYCLES "cycles"
#define BF_ROLE_INSTRUCTIONS "instructions"

/* rows[] */
#define BF_ROW_JOB "job"
#define BF_ROW_STEP "step"
#define BF_ROW_USER "user"
#define BF_ROW_COMM "comm"
#define BF_ROW_OBJECT "object"
#define BF_ROW_KIND "kind"
#define BF_ROW_BUILD_ID "build_id"
#define BF_ROW_PHASE "phase"
#define BF_ROW_SAMPLES "samples"
#define BF_ROW_MULTIPLEXED_SAMPLES "multiplexed_samples"
#define BF_ROW_BURST "burst"

/* rows[].burst */
#define BF_BURST_SAMPLES "samples"
#define BF_BURST_WINDOW_NS "window_ns"
#define BF_BURST_PER_SECOND "per_second"

/* jobs[] */
#define BF_JOB_JOB "job"
#define BF_JOB_USER "user"
#define BF_JOB_ACCOUNT "account"
#define BF_JOB_PARTITION "partition"
#define BF_JOB_NAME "name"
#define BF_JOB_NODES "nodes"
#define BF_JOB_TASKS "tasks"
#define BF_JOB_CPUS_ALLOCATED "cpus_allocated"
#define BF_JOB_CLUSTER "cluster"
#define BF_JOB_NOTES "notes"
#define BF_JOB_FIRST_SEEN "first_seen"
#define BF_JOB_LAST_SEEN "last_seen"
#define BF_JOB_ENDED "ended"
#define BF_JOB_ENERGY_JOULES "energy_joules"
#define BF_JOB_ENERGY_ALONE_JOULES "energy_alone_joules"
/* sbatch --lmk=off: the job has no rows, only these samples; and
 * --lmk=nocounters (docs/slurm.md, "The SPANK plugin") */
#define BF_JOB_OPTED_OUT "opted_out"
#define BF_JOB_SAMPLES "samples"
#define BF_JOB_COUNTERS_RELEASED "counters_released"

/* energy */
#define BF_ENERGY_SOURCE "source"
#define BF_ENERGY_JOULES "joules"
#define BF_ENERGY_UNATTRIBUTED_JOULES "unattributed_joules"
#define BF_ENERGY_ZONES "zones"

/* energy.zones[] */
#define BF_ZONE_ZONE "zone"
#define BF_ZONE_KIND "kind"
#define BF_ZONE_JOULES "joules"

/* markers[] */
#define BF_MARKER_JOB "job"
#define BF_MARKER_COMM "comm"
#define BF_MARKER_PHASE "phase"
#define BF_MARKER_STATE "state"

/* ranks[] */
#define BF_RANK_JOB "job"
#define BF_RANK_STEP "step"
#define BF_RANK_RANK "rank"
#define BF_RANK_PHASE "phase"
#define BF_RANK_SAMPLES "samples"
#define BF_RANK_COMM_SAMPLES "comm_samples"
#define BF_RANK_FIRST "first"
#define BF_RANK_LAST "last"

/* functions[] (format version 2, docs/batch-format.md "Functions"): one
 * function of one (job, step, object, phase); its counters are those of
 * rows[] (BF_CYCLES, BF_INSTRUCTIONS, BF_EVENTS). Version 3 names the
 * (job, step, object, phase) and build by the index of a rows[] entry
 * (BF_FUNCTION_ROW) instead of the five members. */
#define BF_FUNCTION_ROW "row"
#define BF_FUNCTION_JOB "job"
#define BF_FUNCTION_STEP "step"
#define BF_FUNCTION_OBJECT "object"
#define BF_FUNCTION_BUILD_ID "build_id"
#define BF_FUNCTION_PHASE "phase"
#define BF_FUNCTION_FUNCTION "function"
#define BF_FUNCTION_OFFSET "offset"
/* true: offset is the exact start of the function (from the unwind
 * table), not a 4 KiB page; absent: false */
#define BF_FUNCTION_ENTRY "entry"
#define BF_FUNCTION_OTHER "other"
#define BF_FUNCTION_SAMPLES "samples"

/* inventory (docs/inventory.md): lmkd sends the report of
 * collectors/inventory.c's inventory_to_json() as it is */
#define BF_INVENTORY_FORMAT "format"
#define BF_INVENTORY_VERSION "version"
#define BF_INVENTORY_DIGEST "digest"
#define BF_INVENTORY_PACKAGES "packages"

/* inventory.packages[] */
#define BF_PACKAGE_MANAGER "manager"
#define BF_PACKAGE_NAME "name"
#define BF_PACKAGE_VERSION "version"
#define BF_PACKAGE_ARCH "arch"
#define BF_PACKAGE_HASH "hash"
#define BF_PACKAGE_PREFIX "prefix"
#define BF_PACKAGE_SIZE "size"
#define BF_PACKAGE_FILES "files"
