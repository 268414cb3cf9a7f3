/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lmk web [JOB]: a link that signs this user's browser in to the store's
 * pages (docs/web.md). The store takes the user's MUNGE credential (or an
 * admin's token) and answers with a login ticket that works once, for two
 * minutes; following it gives the browser a session cookie. */
#include <errno.h>
#include <stdio.h>
#include <sys/wait.h>

#include "cli.h"
#include "util.h"

/* xdg-open where there is a desktop; the link is printed in any case. */
static void open_link(const char *url) {
        pid_t pid;

        if (!getenv("DISPLAY") && !getenv("WAYLAND_DISPLAY")) {
                fprintf(stderr, "lmk: no desktop here (DISPLAY is not set): open the link yourself.\n");
                return;
        }
        pid = fork();
        if (pid == 0) {
                execlp("xdg-open", "xdg-open", url, (char *) NULL);
                _exit(127);
        }
        if (pid > 0)
                (void) waitpid(pid, NULL, 0);
}

int do_web(Cli *cli, int argc, char **argv) {
        static const struct option options[] = {
                CLI_COMMON_OPTIONS,
                { "cluster", required_argument, NULL, 'c' },
                { "site", no_argument, NULL, 'S' },
                { "open", no_argument, NULL, 'o' },
                {}
        };
        _cleanup_(json_object_putp) json_object *body = NULL, *o = NULL;
        _cleanup_free_ char *next = NULL, *url = NULL;
        const char *job = NULL, *cluster = NULL, *login;
        bool site = false, open_it = false;
        size_t n;
        int opt, r;

        while ((opt = getopt_long(argc, argv, "hj", options, NULL)) >= 0)
                switch (opt) {
                case 'c':
                        cluster = optarg;
                        break;
                case 'S':
                        site = true;
                        break;
                case 'o':
                        open_it = true;
                        break;
                default:
                        if (cli_common_option(cli, opt, optarg) == 0)
                                return cli_error(cli, EINVAL, "web: unknown option %s", argv[optind - 1]);
                }
        if (optind < argc)
                job = argv[optind++];
        if (optind < argc)
                return cli_error(cli, EINVAL, "web: unexpected argument %s", argv[optind]);
        if (job && site)
                return cli_error(cli, EINVAL, "web: a job or --site, not both");
        if (cluster && !job)
                return cli_error(cli, EINVAL, "web: --cluster names a job's cluster; name the job too");

        if (job && asprintf(&next, "jobs/%s%s%s", job, cluster ? "?cluster=" : "", cluster ?: "") < 0)
                return cli_error(cli, ENOMEM, "Out of memory.");
        body = json_object_new_object();
        if (!body || (next && json_object_object_add(body, "next", json_object_new_string(next)) < 0) ||
            (site && json_object_object_add(body, "next", json_object_new_string("site")) < 0))
                return cli_error(cli, ENOMEM, "Out of memory.");

        r = cli_request(cli, "POST", "/api/v1/sessions", NULL, body, &o);
        if (r < 0)
                return r;
        login = jstr(o, "login");
        if (!login)
                return cli_error(cli, EBADMSG, "The store's answer holds no login link.");
        n = strlen(cli->store);
        while (n > 0 && cli->store[n - 1] == '/')
                n--;
        if (asprintf(&url, "%.*s/%s", (int) n, cli->store, login) < 0)
                return cli_error(cli, ENOMEM, "Out of memory.");
        if (cli->json) {
                json_object_object_add(o, "url", json_object_new_string(url));
                cli_print_json(o);
                return 0;
        }
        printf("Open this link in your browser; it works once, within %" PRId64 " seconds:\n\n  %s\n\n"
               "It signs the browser in as %s%s for %" PRId64 " hours.\n",
               jint(o, "expires") - (int64_t) time(NULL), url, jstr(o, "user") ?: "?",
               json_object_get_boolean(jget(o, "admin")) ? " (admin)" : "", jint(o, "session_seconds") / 3600);
        if (open_it)
                open_link(url);
        return 0;
}
