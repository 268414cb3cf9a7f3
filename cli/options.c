/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The options: lmk --help, those every command takes, and a subcommand's
 * own from its table (getopt_long's table and short options built from it,
 * each option's value put where its entry says). */
#include <errno.h>
#include <stdio.h>

#include "cli.h"

void cli_help(void) {
        printf("lmk [OPTIONS] COMMAND [ARGS]\n\n"
               "Ask lmk-store what jobs ran, where their time went, and what the site runs.\n\n"
               "Commands:\n"
               "  jobs [--user U] [--account A] [--partition P] [--state running|ended]\n"
               "       [--app A] [--name N] [--cluster C] [--node-type TYPE]\n"
               "       [--since T] [--until T]\n"
               "       [--sort last_seen|first_seen|cpu_seconds] [--order asc|desc]\n"
               "       [--limit N] [--offset N]                         List jobs\n"
               "  job ID [--cluster C]                                  Summary of one job\n"
               "  job ID --functions [--by-phase] [--cluster C]         Every function of the job\n"
               "  job ID [--pprof FILE] [--folded FILE] [--force]       The job's profile for pprof, or\n"
               "                                                        as folded stacks for flame graphs\n"
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
               "  compare A B [--cluster C] [--cluster-a C] [--cluster-b C]\n"
               "                                                        Two runs side by side (also --csv)\n"
               "  web [JOB [--cluster C] | --site] [--open]             A link that signs your browser in\n"
               "                                                        to the store's pages (also: login)\n\n"
               "Options (before or after the command):\n"
               "  -j --json              Print the store's JSON answer\n"
               "     --csv               Print a list as CSV (jobs, job --functions, top, unused,\n"
               "                         scaling, apps, nodes, flagged): a header and a row per entry\n"
               "     --store URL         lmk-store to ask (env LMK_STORE, default %s)\n"
               "     --token-file FILE   File with the admin token (env LMK_TOKEN_FILE); without\n"
               "                         one, lmk proves who you are with MUNGE and the store\n"
               "                         shows your jobs and those of the accounts you lead\n"
               "     --munge-socket PATH munged's socket (env LMK_MUNGE_SOCKET)\n"
               "  -h --help              Show this help\n"
               "     --version           Show the version\n\n"
               "T is Unix seconds or an age: 90m, 24h, 7d, 2w. See lmk(1).\n", CLI_DEFAULT_STORE);
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
                cli_help();
                exit(EXIT_SUCCESS);
        }
        return 0;
}

static const struct option common_options[] = { CLI_COMMON_OPTIONS };

/* getopt_long's value of entry i, when it has no short name */
#define LONG_ONLY 0x100

static ssize_t query_find(const CliQuery *q, const char *param) {
        for (size_t i = 0; i < q->n; i++)
                if (streq(q->pairs[2 * i], param))
                        return (ssize_t) i;
        return -1;
}

const char *cli_query_get(const CliQuery *q, const char *param) {
        ssize_t i = query_find(q, param);

        return i < 0 ? NULL : q->pairs[2 * i + 1];
}

/* The table is at most CLI_OPTIONS_MAX entries (CLI_PARSE checks), each
 * with one parameter at most: there is room. */
static void query_add(CliQuery *q, const char *param, const char *value) {
        q->pairs[2 * q->n] = param;
        q->pairs[2 * q->n + 1] = value;
        q->n++;
        q->pairs[2 * q->n] = NULL;
}

void cli_query_set(CliQuery *q, const char *param, const char *value) {
        ssize_t i = query_find(q, param);

        if (i < 0)
                abort(); /* a parameter of no entry in the command's table */
        q->pairs[2 * i + 1] = value;
}

/* How many options set param, and their names in buf ("--libs, --exes,
 * --kind"). */
static size_t options_of(const CliOption *options, size_t n, const char *param, char *buf, size_t size) {
        size_t count = 0, k = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < n; i++) {
                if (!options[i].name || !options[i].param || !streq(options[i].param, param))
                        continue;
                count++;
                if (k < size)
                        k += (size_t) snprintf(buf + k, size - k, "%s--%s", k ? ", " : "", options[i].name);
        }
        return count;
}

static int apply(Cli *cli, const char *command, const CliOption *options, size_t n, size_t i, const char *arg,
                 CliQuery *q, bool *given) {
        const CliOption *o = &options[i];
        ssize_t p = o->param ? query_find(q, o->param) : -1;

        switch (o->kind) {
        case CLI_FLAG:
                *o->flag = true;
                return 0;
        case CLI_STRING:
                *o->string = arg;
                return 0;
        case CLI_QUERY:
        case CLI_QUERY_AS:
                /* options that set one parameter exclude each other; one
                 * option given twice keeps its last value */
                if (given[p]) {
                        char names[256];

                        if (options_of(options, n, o->param, names, sizeof(names)) > 1)
                                return cli_error(cli, EINVAL, "%s: give one of %s", command, names);
                }
                given[p] = true;
                q->pairs[2 * p + 1] = o->kind == CLI_QUERY ? arg : o->value;
                return 0;
        case CLI_FIXED: /* no option sets it */
                break;
        }
        return 0;
}

int cli_parse_(Cli *cli, const char *command, const CliOption *options, size_t n, int max_args, int argc,
               char **argv, CliQuery *ret_query) {
        struct option long_options[ELEMENTSOF(common_options) + CLI_OPTIONS_MAX + 1] = {};
        char short_options[3 + 2 * CLI_OPTIONS_MAX + 1] = "hj";
        bool given[CLI_OPTIONS_MAX] = {};
        size_t n_long = ELEMENTSOF(common_options), n_short = strlen(short_options);
        CliQuery q = {};
        int opt, r;

        memcpy(long_options, common_options, sizeof(common_options));
        for (size_t i = 0; i < n; i++) {
                const CliOption *o = &options[i];
                bool arg = o->kind == CLI_QUERY || o->kind == CLI_STRING;

                if (o->param && query_find(&q, o->param) < 0)
                        query_add(&q, o->param, o->kind == CLI_QUERY_AS ? NULL : o->value);
                if (!o->name)
                        continue;
                long_options[n_long++] = (struct option) {
                        .name = o->name,
                        .has_arg = arg ? required_argument : no_argument,
                        .val = o->short_name ?: LONG_ONLY + (int) i,
                };
                if (o->short_name) {
                        short_options[n_short++] = o->short_name;
                        if (arg)
                                short_options[n_short++] = ':';
                }
        }

        while ((opt = getopt_long(argc, argv, short_options, long_options, NULL)) >= 0) {
                size_t i = n;

                if (cli_common_option(cli, opt, optarg) != 0)
                        continue;
                if (opt >= LONG_ONLY && opt < LONG_ONLY + (int) n)
                        i = (size_t) (opt - LONG_ONLY);
                else
                        for (size_t k = 0; k < n && opt > 0; k++)
                                if (options[k].name && options[k].short_name == opt)
                                        i = k;
                if (i == n)
                        return cli_error(cli, EINVAL, "%s: unknown option %s", command, argv[optind - 1]);
                r = apply(cli, command, options, n, i, optarg, &q, given);
                if (r < 0)
                        return r;
        }
        if (argc - optind > max_args)
                return cli_error(cli, EINVAL, "%s: unexpected argument %s", command, argv[optind + max_args]);
        *ret_query = q;
        return optind;
}
