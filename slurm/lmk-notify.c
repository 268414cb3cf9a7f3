/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lmk-notify: tells lmkd that a Slurm job starts or ends on this node.
 *
 * Run by lmk-prolog and lmk-epilog (slurmd's Prolog/Epilog, as root): reads
 * the job from the SLURM_* variables slurmd sets for them, formats one
 * notice (docs/slurm.md) and sends it as one datagram to lmkd's socket.
 * The send never blocks: a missing or busy lmkd costs the job nothing. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "job-notify.h"
#include "log.h"
#include "macro.h"

extern char **environ;

static void help(void) {
        printf("Usage: lmk-notify [--socket PATH] [--print] job-start|job-end\n\n"
               "Sends a job start/end notice for the Slurm job in the environment\n"
               "(SLURM_JOB_ID, SLURM_JOB_USER, ...) to lmkd.\n\n"
               "  -s, --socket PATH  lmkd's socket (default $LMK_SOCKET or %s)\n"
               "  -p, --print        print the notice instead of sending it\n"
               "  -h, --help         show this help\n",
               JOB_NOTICE_SOCKET_DEFAULT);
}

int main(int argc, char **argv) {
        static const struct option options[] = {
                { "socket", required_argument, NULL, 's' },
                { "print", no_argument, NULL, 'p' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        const char *path = getenv("LMK_SOCKET");
        char msg[JOB_NOTICE_MAX + 1];
        JobNoticeEvent event;
        bool print = false;
        JobInfo info;
        int c, r, len;

        log_setup("lmk-notify");
        while ((c = getopt_long(argc, argv, "s:ph", options, NULL)) >= 0) {
                switch (c) {
                case 's':
                        path = optarg;
                        break;
                case 'p':
                        print = true;
                        break;
                case 'h':
                        help();
                        return EXIT_SUCCESS;
                default:
                        return 2;
                }
        }
        if (optind != argc - 1) {
                log_error("Expected one argument, job-start or job-end (see --help).");
                return 2;
        }
        if (streq(argv[optind], "job-start"))
                event = JOB_NOTICE_START;
        else if (streq(argv[optind], "job-end"))
                event = JOB_NOTICE_END;
        else {
                log_error("Unknown event \"%s\": expected job-start or job-end.", argv[optind]);
                return 2;
        }
        if (!path || !*path)
                path = JOB_NOTICE_SOCKET_DEFAULT;

        r = job_environ_parse_strv(environ, &info);
        if (r < 0) {
                log_oom();
                return EXIT_FAILURE;
        }
        if (r == 0) {
                log_error("No valid SLURM_JOB_ID in the environment: not run by slurmd's Prolog/Epilog?");
                return 2;
        }
        len = job_notice_format(event, &info, msg, sizeof(msg));
        if (len < 0) {
                log_error_errno(len, "Failed to format the %s notice for job %s: %m",
                                argv[optind], info.job);
                return EXIT_FAILURE;
        }
        if (print) {
                puts(msg);
                return EXIT_SUCCESS;
        }
        r = job_notice_send(path, msg, (size_t) len);
        if (r < 0) {
                log_error_errno(r, "Failed to send the %s notice for job %s to %s: %m",
                                argv[optind], info.job, path);
                return EXIT_FAILURE;
        }
        return EXIT_SUCCESS;
}
