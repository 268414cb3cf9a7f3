/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzzes what lmkd reads of a process to find root's slurmstepd above it
 * (collectors/job-stepd.c): the same bytes as /proc/<pid>/stat, as
 * /proc/<pid>/status and as a cmdline. What parses is well-formed: a comm
 * the kernel could hold, a job id and step Slurm could write. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "job-stepd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *buf = (const char *) data;
        JobProcStat st;
        JobRef ref;
        uint32_t uid;
        int r;

        if (job_proc_stat_parse(buf, size, &st) == 0) {
                size_t n = strnlen(st.comm, sizeof(st.comm));

                if (n >= sizeof(st.comm) || st.ppid > INT32_MAX)
                        abort();
        }
        if (job_proc_status_uid(buf, size, &uid) == 0 && uid == UINT32_MAX)
                abort();
        r = job_stepd_title_parse(buf, size, &ref);
        if (r < 0 && r != -EBADMSG)
                abort();
        if (r == 1 && (!job_id_valid(ref.job, strnlen(ref.job, sizeof(ref.job))) ||
                       (ref.step[0] && !job_step_valid(ref.step, strnlen(ref.step, sizeof(ref.step)))) ||
                       ref.uid != JOB_UNSET))
                abort();
        return 0;
}
