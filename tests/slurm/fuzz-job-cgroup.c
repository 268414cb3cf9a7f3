/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzzes job_cgroup_parse(): whatever /proc/<pid>/cgroup holds, a job it
 * reports is well-formed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "job-slurm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        JobRef ref;
        int r;

        r = job_cgroup_parse((const char *) data, size, &ref);
        if (r <= 0)
                return 0;
        if (r != 1)
                abort();
        if (ref.job[0] ? !job_id_valid(ref.job, strnlen(ref.job, sizeof(ref.job)))
                       : !job_sluid_valid(ref.sluid, strnlen(ref.sluid, sizeof(ref.sluid))))
                abort();
        if (ref.sluid[0] && !job_sluid_valid(ref.sluid, strnlen(ref.sluid, sizeof(ref.sluid))))
                abort();
        if (ref.step[0] && !job_step_valid(ref.step, strnlen(ref.step, sizeof(ref.step))))
                abort();
        return 0;
}
