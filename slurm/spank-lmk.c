/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lmk.so: Slurm SPANK plugin (docs/slurm.md, "The SPANK plugin").
 *
 * Gives sbatch, srun and salloc
 *   --lmk=on|off|nocounters   what lmkd may measure of the job
 *   --lmk-notes=k=v:k=v       the job's LMK_NOTES
 * and, in slurmd (as root), sends lmkd the job's start and end notices
 * with those values, so that a site may use it instead of the
 * lmk-prolog/lmk-epilog scripts. The values reach lmkd only through root's
 * notice: a process's environment never switches measurement off or on.
 *
 * plugstack.conf arguments:
 *   socket=PATH          lmkd's notice socket (default /run/lmk/lmkd.sock)
 *   opt-out=forbidden    refuse --lmk=off (sbatch says so; slurmd sends "on")
 *   required             a notice that cannot be delivered fails the job's
 *                        prolog (Slurm then holds the job and drains the
 *                        node); only on a plugstack line that starts with
 *                        "required": Slurm ignores an optional plugin's errors
 *
 * The plugin never fails a job otherwise: without lmkd it logs and lets
 * the job run. It is loaded into sbatch, srun, salloc, slurmd and
 * slurmstepd; only its SPANK entry points are exported (spank-lmk.sym),
 * so that lmk's own functions never bind to Slurm's of the same name. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <slurm/spank.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "job-notify.h"
#include "macro.h"

SPANK_PLUGIN(lmk, 1);

enum {
        OPT_LMK = 1,
        OPT_NOTES,
};

static const char *socket_path = JOB_NOTICE_SOCKET_DEFAULT;
static bool opt_out_forbidden = false;
static bool required = false;

static int option_cb(int val, const char *optarg, int remote);

static struct spank_option options[] = {
        { (char *) "lmk", (char *) "on|off|nocounters",
          (char *) "lmk, the cluster's always-on profiler: off keeps only the job's CPU time; "
                   "nocounters leaves the CPUs' hardware counters to your own tools",
          1, OPT_LMK, option_cb },
        { (char *) "lmk-notes", (char *) "key=value[:key=value...]",
          (char *) "describe the run for lmk (as LMK_NOTES), e.g. app=lulesh:size=128",
          1, OPT_NOTES, option_cb },
};

/* The arguments of the plugin's line in plugstack.conf. An unknown one is
 * logged, not fatal: a typo there must not stop every job of the site. */
static void parse_args(int ac, char **av) {
        for (int i = 0; i < ac; i++) {
                if (strncmp(av[i], "socket=", 7) == 0 && av[i][7] == '/')
                        socket_path = av[i] + 7;
                else if (streq(av[i], "opt-out=forbidden"))
                        opt_out_forbidden = true;
                else if (streq(av[i], "opt-out=allowed"))
                        opt_out_forbidden = false;
                else if (streq(av[i], "required"))
                        required = true;
                else
                        slurm_error("lmk: unknown argument \"%s\" in plugstack.conf, ignored "
                                    "(socket=/PATH, opt-out=allowed|forbidden, required)", av[i]);
        }
}

/* Checks an option's value where the user typed it (sbatch, srun,
 * salloc), so that a mistake is an error at submit, not a surprise later.
 * In slurmstepd (remote) the job runs whatever the value: it was checked. */
static int option_cb(int val, const char *optarg, int remote) {
        if (remote)
                return 0;
        if (!optarg)
                optarg = "";
        if (val == OPT_LMK) {
                int lmk = job_lmk_from_string(optarg, strlen(optarg));

                if (lmk < 0) {
                        slurm_error("--lmk=%s: expected on, off or nocounters", optarg);
                        return -1;
                }
                if (lmk == JOB_LMK_OFF && opt_out_forbidden) {
                        slurm_error("--lmk=off: this cluster does not allow switching lmk off for a job. "
                                    "Submit without it, or with --lmk=nocounters to keep the hardware "
                                    "counters for your own profiler.");
                        return -1;
                }
                return 0;
        }
        if (val == OPT_NOTES) {
                _cleanup_free_ JobNotes *notes = malloc(sizeof(*notes));

                if (!notes)
                        return -1;
                job_notes_parse(optarg, strlen(optarg), notes);
                if (notes->rejected > 0) {
                        slurm_error("--lmk-notes=%s: %u pair(s) are not key=value or repeat a key (keys of "
                                    "A-Z a-z 0-9 _ . -, at most 64 characters; values printable, no ':'; at "
                                    "most %d pairs, %d bytes in all)",
                                    optarg, notes->rejected, JOB_NOTES_MAX, JOB_NOTES_TEXT_MAX);
                        return -1;
                }
                return 0;
        }
        return -1;
}

int slurm_spank_init(spank_t sp, int ac, char **av) {
        parse_args(ac, av);
        /* every context that parses or forwards options, and slurmd's job
         * prolog/epilog, which read them back with spank_option_getopt() */
        for (size_t i = 0; i < ELEMENTSOF(options); i++) {
                spank_err_t e = spank_option_register(sp, &options[i]);

                if (e != ESPANK_SUCCESS)
                        slurm_error("lmk: failed to register --%s: %s", options[i].name, spank_strerror(e));
        }
        return 0;
}

extern char **environ;

/* The job as slurmd describes it to its prolog and epilog: the SLURM_*
 * variables of the environment it gives them (read by the same parser as
 * lmk-notify's and lmkd's), and the job id and uid from Slurm itself. */
static int job_from_slurmd(spank_t sp, JobInfo *info) {
        uint32_t id = 0;
        uid_t uid;
        int r;

        r = job_environ_parse_strv(environ, info);
        if (r < 0)
                return r;
        if (r == 0)
                job_info_init(info);
        if (spank_get_item(sp, S_JOB_ID, &id) == ESPANK_SUCCESS && id > 0)
                snprintf(info->job, sizeof(info->job), "%u", id);
        if (!info->job[0])
                return -ENXIO;
        if (spank_get_item(sp, S_JOB_UID, &uid) == ESPANK_SUCCESS)
                info->uid = (uint32_t) uid;
        /* an environment's notes are the job's processes' business (lmkd
         * reads them there); here only the option's count */
        info->notes = (JobNotes) {};
        return 0;
}

/* What the user asked, from the options slurmd forwards with the job. */
static void job_options(spank_t sp, JobInfo *info) {
        char *arg = NULL;

        if (spank_option_getopt(sp, &options[0], &arg) == ESPANK_SUCCESS && arg) {
                int lmk = job_lmk_from_string(arg, strlen(arg));

                if (lmk == JOB_LMK_OFF && opt_out_forbidden) {
                        /* submitted where the plugin allowed it (another
                         * plugstack.conf): this node's word counts */
                        slurm_info("lmk: job %s asked --lmk=off, which this node forbids: measured as usual",
                                   info->job);
                        lmk = JOB_LMK_ON;
                }
                if (lmk > 0)
                        info->lmk = (JobLmk) lmk;
        }
        arg = NULL;
        if (spank_option_getopt(sp, &options[1], &arg) == ESPANK_SUCCESS && arg)
                job_notes_parse(arg, strlen(arg), &info->notes);
}

/* The job's start notice as a file (job_notice_state_dir()), for an lmkd
 * that starts while the job runs; gone at its end. Root's folder, root's
 * files: lmkd believes nothing else there. */
static void keep_notice(JobNoticeEvent event, const char *job, const char *msg, size_t len) {
        char dir[PATH_MAX], path[PATH_MAX], tmp[PATH_MAX];
        _cleanup_close_ int fd = -EBADF;
        char *slash;

        if (job_notice_state_dir(socket_path, dir, sizeof(dir)) < 0 ||
            snprintf(path, sizeof(path), "%s/%s", dir, job) >= (int) sizeof(path) ||
            snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, job) >= (int) sizeof(tmp))
                return;
        if (event == JOB_NOTICE_END) {
                (void) unlink(path);
                return;
        }
        slash = strrchr(dir, '/');
        *slash = '\0';
        (void) mkdir(dir, 0755); /* as lmkd makes it for its socket */
        *slash = '/';
        if (mkdir(dir, 0700) < 0 && errno != EEXIST)
                goto fail;
        (void) unlink(tmp);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 || write(fd, msg, len) != (ssize_t) len || rename(tmp, path) < 0)
                goto fail;
        return;
fail:
        slurm_info("lmk: could not keep the start notice of job %s in %s: %s", job, dir, strerror(errno));
        (void) unlink(tmp);
}

static int notify(spank_t sp, JobNoticeEvent event) {
        _cleanup_free_ JobInfo *info = job_info_new();
        char msg[JOB_NOTICE_MAX + 1];
        int r, len;

        if (!info)
                return required ? -1 : 0;
        r = job_from_slurmd(sp, info);
        if (r < 0) {
                slurm_error("lmk: no job id in the %s's environment or from Slurm, no notice sent",
                            event == JOB_NOTICE_START ? "prolog" : "epilog");
                return required ? -1 : 0;
        }
        job_options(sp, info);
        len = job_notice_format(event, info, msg, sizeof(msg));
        if (len < 0) {
                slurm_error("lmk: failed to format the %s notice of job %s: %s",
                            job_notice_event_to_string(event), info->job, strerror(-len));
                return required ? -1 : 0;
        }
        keep_notice(event, info->job, msg, (size_t) len);
        r = job_notice_send(socket_path, msg, (size_t) len);
        if (r < 0) {
                /* lmkd stopped, not installed, or busy: the job runs unmeasured */
                slurm_info("lmk: could not send the %s notice of job %s to %s: %s%s",
                           job_notice_event_to_string(event), info->job, socket_path, strerror(-r),
                           required ? " (required: failing)" : "");
                return required ? -1 : 0;
        }
        slurm_debug("lmk: sent %s", msg);
        return 0;
}

int slurm_spank_job_prolog(spank_t sp, int ac, char **av) {
        /* slurmd's prolog runs in a process of its own, without slurm_spank_init() */
        parse_args(ac, av);
        return notify(sp, JOB_NOTICE_START);
}

int slurm_spank_job_epilog(spank_t sp, int ac, char **av) {
        /* slurmd's epilog runs in a process of its own, without slurm_spank_init() */
        parse_args(ac, av);
        return notify(sp, JOB_NOTICE_END);
}
