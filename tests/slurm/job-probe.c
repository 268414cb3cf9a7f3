/* SPDX-License-Identifier: GPL-2.0-or-later */
/* job-probe: what lmk's job parsers make of live processes and of notices,
 * as JSON, for the Slurm integration tests.
 *
 *   job-probe PID...     one line per process: {"pid", "cgroup", "environ",
 *                        "stepd" (root's slurmstepd above it: job_stepd_find())}
 *   job-probe --notice   parses the notice on stdin: {"rc", "event", "info"} */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "job-notify.h"
#include "job-slurm.h"
#include "job-stepd.h"
#include "macro.h"
#include "util.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);

static void add_str(json_object *o, const char *key, const char *v) {
        json_object_object_add(o, key, json_object_new_string(v));
}

static void add_u32(json_object *o, const char *key, uint32_t v) {
        json_object_object_add(o, key, v == JOB_UNSET ? NULL : json_object_new_int64(v));
}

static json_object *info_to_json(const JobInfo *info) {
        json_object *o = json_object_new_object(), *notes = json_object_new_object();
        char id[JOB_ID_SIZE];

        job_info_display_id(info, id);
        add_str(o, "job", info->job);
        add_str(o, "display_id", id);
        add_str(o, "sluid", info->sluid);
        add_str(o, "step", info->step);
        add_u32(o, "array_job", info->array_job);
        add_u32(o, "array_task", info->array_task);
        add_u32(o, "het_job", info->het_job);
        add_u32(o, "het_offset", info->het_offset);
        add_str(o, "user", info->user);
        add_u32(o, "uid", info->uid);
        add_str(o, "account", info->account);
        add_str(o, "partition", info->partition);
        add_str(o, "cluster", info->cluster);
        add_str(o, "name", info->name);
        add_u32(o, "nodes", info->nodes);
        add_u32(o, "tasks", info->tasks);
        for (size_t i = 0; i < info->notes.n; i++)
                add_str(notes, job_notes_key(&info->notes, i), job_notes_value(&info->notes, i));
        json_object_object_add(o, "notes", notes);
        json_object_object_add(o, "notes_rejected", json_object_new_int64(info->notes.rejected));
        json_object_object_add(o, "lmk", job_lmk_to_string(info->lmk) ? json_object_new_string(job_lmk_to_string(info->lmk)) : NULL);
        return o;
}

static int probe_pid(const char *arg) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        json_object *cg = json_object_new_object(), *env = json_object_new_object(),
                *stepd = json_object_new_object();
        JobRef ref;
        JobInfo info;
        int pid, r;

        if (safe_atoi(arg, &pid) < 0 || pid <= 0) {
                fprintf(stderr, "job-probe: not a pid: %s\n", arg);
                return -EINVAL;
        }
        json_object_object_add(o, "pid", json_object_new_int(pid));

        r = job_cgroup_read("/proc", pid, &ref);
        json_object_object_add(cg, "rc", json_object_new_int(r));
        if (r > 0) {
                add_str(cg, "job", ref.job);
                add_str(cg, "sluid", ref.sluid);
                add_str(cg, "step", ref.step);
                add_u32(cg, "uid", ref.uid);
        }
        json_object_object_add(o, "cgroup", cg);

        r = job_environ_read("/proc", pid, &info);
        json_object_object_add(env, "rc", json_object_new_int(r));
        if (r > 0)
                json_object_object_add(env, "info", info_to_json(&info));
        json_object_object_add(o, "environ", env);

        r = job_stepd_find("/proc", (uint32_t) pid, &ref);
        json_object_object_add(stepd, "rc", json_object_new_int(r));
        if (r > 0) {
                add_str(stepd, "job", ref.job);
                add_str(stepd, "step", ref.step);
        }
        json_object_object_add(o, "stepd", stepd);

        puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
        return 0;
}

static int probe_notice(void) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        _cleanup_free_ char *buf = NULL;
        JobNotice notice;
        size_t size;
        int r;

        /* One more byte than a notice may have, so that too long shows. */
        r = read_full_fd(STDIN_FILENO, JOB_NOTICE_MAX + 1, &buf, &size);
        if (r < 0) {
                fprintf(stderr, "job-probe: failed to read the notice: %s\n", strerror(-r));
                return r;
        }
        r = job_notice_parse(buf, size, &notice);
        json_object_object_add(o, "rc", json_object_new_int(r));
        if (r >= 0) {
                add_str(o, "event", job_notice_event_to_string(notice.event));
                json_object_object_add(o, "info", info_to_json(&notice.info));
                json_object_object_add(o, "unknown_fields", json_object_new_int64(notice.unknown_fields));
        }
        puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
        return 0;
}

int main(int argc, char **argv) {
        if (argc == 2 && streq(argv[1], "--notice"))
                return probe_notice() < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        if (argc < 2) {
                fprintf(stderr, "Usage: job-probe PID... | job-probe --notice < MESSAGE\n");
                return 2;
        }
        for (int i = 1; i < argc; i++)
                if (probe_pid(argv[i]) < 0)
                        return EXIT_FAILURE;
        return EXIT_SUCCESS;
}
