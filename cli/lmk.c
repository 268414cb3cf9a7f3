/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lmk: ask lmk-store about jobs, libraries and nodes. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "cli.h"
#include "log.h"
#include "util.h"

#define DEFAULT_STORE "http://localhost:8470"

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
        { "login", do_web },
};

static void help(void) {
        printf("lmk [OPTIONS] COMMAND [ARGS]\n\n"
               "Ask lmk-store what jobs ran, where their time went, and what the site runs.\n\n"
               "Commands:\n"
               "  jobs [--user U] [--account A] [--partition P] [--state running|ended]\n"
               "       [--app A] [--name N] [--cluster C] [--node-type TYPE]\n"
               "       [--since T] [--until T]\n"
               "       [--sort last_seen|first_seen|cpu_seconds] [--order asc|desc]\n"
               "       [--limit N] [--offset N]                         List jobs\n"
               "  job ID [--cluster C]                                  Summary of one job\n"
               "  top --libs|--exes|--kind K [--since T] [--until T] [--limit N]\n"
               "                                                        Site-wide time per object\n"
               "  top --families|--packages [--since T] [--account A] [--partition P] [--cluster C]\n"
               "                                                        Site-wide time per library family\n"
               "                                                        or installed package\n"
               "  unused [--since T] [--manager M] [--limit N]          Installed software nobody used\n"
               "  scaling APP [--size S] [--predict P] [--since T]      How an application scales across\n"
               "                                                        its runs, with a prediction\n"
               "  apps [--by app|user|account|partition] [--top N] [--since T] [--until T]\n"
               "       [--user U] [--account A] [--partition P] [--app A] [--weekly]\n"
               "                                                        The site's application mix\n"
               "  nodes                                                 Nodes and their last push\n"
               "  flagged [--since T] [--until T] [--user U] [--cluster C] [--rule R]\n"
               "          [--severity S] [--limit N]                    Jobs that waste their allocation\n"
               "  web [JOB [--cluster C] | --site] [--open]             A link that signs your browser in\n"
               "                                                        to the store's pages (also: login)\n\n"
               "Options (before or after the command):\n"
               "  -j --json              Print the store's JSON answer\n"
               "     --csv               Print a list as CSV (jobs, top, unused, scaling, apps,\n"
               "                         nodes, flagged): a header and a row per entry\n"
               "     --store URL         lmk-store to ask (env LMK_STORE, default %s)\n"
               "     --token-file FILE   File with the admin token (env LMK_TOKEN_FILE); without\n"
               "                         one, lmk proves who you are with MUNGE and the store\n"
               "                         shows your jobs and those of the accounts you lead\n"
               "     --munge-socket PATH munged's socket (env LMK_MUNGE_SOCKET)\n"
               "  -h --help              Show this help\n"
               "     --version           Show the version\n\n"
               "T is Unix seconds or an age: 90m, 24h, 7d, 2w. See lmk(1).\n", DEFAULT_STORE);
}

int cli_error(const Cli *cli, int error, const char *fmt, ...) {
        char msg[1024];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (cli && cli->json) {
                json_object *o = json_object_new_object();

                json_object_object_add(o, "error", json_object_new_string(msg));
                printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
                                                                 JSON_C_TO_STRING_NOSLASHESCAPE));
                json_object_put(o);
        } else
                log_error("%s", msg);
        return error ? -abs(error) : -EINVAL;
}

int cli_common_option(Cli *cli, int opt, const char *arg) {
        switch (opt) {
        case 'j':
                cli->json = true;
                return 1;
        case 'x':
                cli->csv = true;
                return 1;
        case 's':
                cli->store = arg;
                return 1;
        case 'm':
                cli->munge_socket = arg;
                return 1;
        case 'k':
                cli->token_file = arg;
                return 1;
        case 'h':
                help();
                exit(EXIT_SUCCESS);
        }
        return 0;
}

int main(int argc, char **argv) {
        static const struct option options[] = {
                CLI_COMMON_OPTIONS,
                { "version", no_argument, NULL, 'V' },
                {}
        };
        Cli cli = {
                .store = getenv("LMK_STORE") ?: DEFAULT_STORE,
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
                help();
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
