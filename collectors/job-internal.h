/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the parsers of job-slurm.h (job-cgroup.c, job-environ.c and
 * job-slurm.c's validators) share; not for other files. */

/* A decimal uint32 as Slurm prints one: no sign, no leading zero (so that
 * "job_07" and "job_7" cannot name one job twice). */
bool job_parse_u32(const char *s, size_t len, uint32_t *ret);

/* Copies a validated token (an id, a step) into its field. */
void job_copy_token(char *dst, size_t size, const char *s, size_t len);
