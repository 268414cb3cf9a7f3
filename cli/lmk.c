/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lmk: ask lmk-store about jobs, libraries and nodes. */
#include <errno.h>
#include <stdio.h>

#include "cli.h"
#include "log.h"

static const struct {
        const char *name;
        int (*func)(Cli *cli, int argc, char **argv);
} commands[] = {
        { "jobs", do_jobs },
        { "job", do_job },
        { "top", do_top },
        { "nodes", do_nodes },
        { "flagged", do_flagged },
        { "web", do_web },
        { "unused", do_unused },
        { "scaling", do_scaling },
        { "apps", do_apps },
        { "compare", do_compare },
        { "kernels", do_kernels },
        { "login", do_web },
};

int main(int argc, char **argv) {
        static const struct option options[] = {
                CLI_COMMON_OPTIONS,
                { "version", no_argument, NULL, 'V' },
                {}
        };
        Cli cli = {
                .store = getenv("LMK_STORE") ?: CLI_DEFAULT_STORE,
                .token_file = getenv("LMK_TOKEN_FILE"),
                .munge_socket = getenv("LMK_MUNGE_SOCKET"),
        };
        int opt, r;

        log_setup("lmk");
        opterr = 0;
        while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORT, options, NULL)) >= 0) {
                if (opt == 'V') {
                        printf("lmk %s\n", PACKAGE_VERSION);
                        return EXIT_SUCCESS;
                }
                if (cli_common_option(&cli, opt, optarg) == 0)
                        return cli_error(&cli, EINVAL, "Unknown option %s, see lmk --help.",
                                         argv[optind - 1]), EXIT_FAILURE;
        }
        if (optind >= argc) {
                cli_help();
                return EXIT_FAILURE;
        }

        for (size_t i = 0; i < ELEMENTSOF(commands); i++)
                if (streq(commands[i].name, argv[optind])) {
                        /* The subcommand sees its name as argv[0]. */
                        argc -= optind;
                        argv += optind;
                        optind = 0;
                        r = commands[i].func(&cli, argc, argv);
                        free(cli.token);
                        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
                }
        return cli_error(&cli, EINVAL, "Unknown command \"%s\", see lmk --help.", argv[optind]), EXIT_FAILURE;
}
