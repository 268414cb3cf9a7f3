/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzzes job_cgroup_parse(): whatever /proc/<pid>/cgroup holds, a job it
 * reports is well-formed. And job_cgroup_path_parse() on the same bytes as
 * one path (a kernel cgroup record's): a job's directory it reports is a
 * prefix of the path that ends at a component and parses to the same job. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "job-slurm.h"
#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        JobRef ref;
        int r;

        size_t end;

        r = job_cgroup_path_parse((const char *) data, size, &ref, &end);
        if (r == 1) {
                JobRef again;
                size_t end2;

                if (end == 0 || end > size || (end < size && data[end] != '/'))
                        abort();
                if (job_cgroup_path_parse((const char *) data, end, &again, &end2) != 1 || end2 != end ||
                    !streq(again.job, ref.job) || !streq(again.sluid, ref.sluid))
                        abort();
        } else if (r != 0 && r != -EBADMSG)
                abort();

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
