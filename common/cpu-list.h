/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Kernel CPU lists ("0-3,8,10-11\n"), as in /sys/devices/system/cpu/online
 * and a cgroup's cpuset.cpus: CPU numbers and ranges separated by commas,
 * trailing newlines and spaces allowed. Items may overlap or repeat (a
 * cpuset file is written by whoever set it up): a CPU counts once. One
 * parser for every such list, bounded and pure. */

/* Sets the list's CPUs in bits (nbits bits, cleared first) and returns
 * how many there are; an empty list is none. -EINVAL when s is not a CPU
 * list (junk, an empty item, a reversed range), -ERANGE for a CPU at or
 * past nbits. */
int cpu_list_parse(const char *s, size_t len, uint64_t *bits, size_t nbits);

/* How many CPUs the list names. -EINVAL as above and for an empty list,
 * -ERANGE for a CPU number of 2^20 or more, -ENOMEM. */
int cpu_list_count(const char *s, size_t len, unsigned *ret);
