/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* What kind of node this is, so that the store never mixes up runs on
 * different hardware: the CPU model, sockets, cores and threads, memory,
 * the GPUs present and the kernel. lmkd reads it once, at start, from
 * /proc and /sys under a root directory (tests give a fake one), and sends
 * it with every batch as node.type (docs/batch-format.md). */

#define NODE_TYPE_TEXT_MAX 128
#define NODE_TYPE_KERNEL_MAX 65         /* struct utsname's release */
#define NODE_TYPE_MAX_GPUS 8            /* distinct models; more are counted in n_gpus_other */

typedef struct NodeGpu {
        uint16_t vendor_id, device_id;  /* PCI ids; device_id 0: unknown (/dev/nvidia* only) */
        const char *vendor;             /* "NVIDIA", "AMD", "Intel" */
        char name[NODE_TYPE_TEXT_MAX];  /* the model from pci.ids, "" when not known */
        unsigned count;
} NodeGpu;

typedef struct NodeType {
        char cpu_model[NODE_TYPE_TEXT_MAX];     /* "" when not known */
        unsigned sockets, cores, threads;       /* online; 0 when not known */
        uint64_t memory_bytes;                  /* MemTotal; 0 when not known */
        NodeGpu gpus[NODE_TYPE_MAX_GPUS];       /* by vendor and device, in PCI order */
        size_t n_gpus;
        unsigned n_gpus_other;                  /* GPUs of models beyond NODE_TYPE_MAX_GPUS */
        char kernel[NODE_TYPE_KERNEL_MAX];      /* the kernel's release; "" when not known */
} NodeType;

/* Reads the node type from root ("/" or NULL for this machine): CPU model
 * from proc/cpuinfo ("model name"; on Arm the "CPU implementer" and "CPU
 * part", else "Hardware"; on POWER "cpu"), sockets and cores from the
 * online CPUs' sys/devices/system/cpu/cpuN/topology, memory from
 * proc/meminfo, GPUs from sys/bus/pci/devices (display, VGA and 3D
 * controllers of NVIDIA, AMD and Intel; a server's BMC graphics is not a
 * GPU) with /dev/nvidiaN as a hint where sysfs shows none, model names from
 * pci.ids where installed, and the kernel from proc/sys/kernel/osrelease.
 * What cannot be read stays unknown: never an error but -ENOMEM. */
int node_type_read(const char *root, NodeType *ret);

/* For the log: "Intel(R) Xeon(R) Platinum 8480+, 2 sockets, 112 cores,
 * 224 threads, 503.5 GiB, 4 x NVIDIA GH100 [H100 SXM5 80GB], kernel 6.1.0-18-amd64". */
void node_type_describe(const NodeType *t, char *buf, size_t size);
