/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <getopt.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "macro.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);

/* The lmk command line tool: reads lmk-store's query API. lmk.c parses the
 * global options and dispatches to one file per subcommand (cmd-*.c);
 * options.c reads options, client.c asks the store, output.c prints and
 * reports errors. */

typedef struct Cli {
        const char *store;      /* base URL */
        const char *token_file;
        const char *munge_socket;       /* NULL: munged's default */
        char *token;
        bool json;
        bool csv;               /* --csv: a list command prints the store's CSV */
} Cli;

/* The one error path (output.c): prints {"error": ...} on stdout with
 * --json, else "lmk: ..." on stderr. Returns -abs(error) (or -EINVAL when
 * error is 0). */
_printf_(3, 4)
int cli_error(const Cli *cli, int error, const char *fmt, ...);

/* Options every subcommand accepts as well (--json, --csv, --store, --token-file). */
#define CLI_COMMON_OPTIONS                                              \
        { "json", no_argument, NULL, 'j' },                             \
        { "csv", no_argument, NULL, 'x' },                              \
        { "store", required_argument, NULL, 's' },                      \
        { "token-file", required_argument, NULL, 'k' },                 \
        { "munge-socket", required_argument, NULL, 'm' },               \
        { "help", no_argument, NULL, 'h' }
#define CLI_COMMON_SHORT "+hj"

#define CLI_DEFAULT_STORE "http://localhost:8470"

/* lmk --help (options.c). */
void cli_help(void);
/* Handles a common option; 1 if it was one, 0 if not, <0 on error. */
int cli_common_option(Cli *cli, int opt, const char *arg);

/* A subcommand's own options, one table per command (options.c reads
 * argv with it): each entry an option's name, the query parameter it sets
 * and how. The query's parameters come in the table's order. */
typedef enum CliOptionKind {
        CLI_QUERY,      /* --name VALUE: param=VALUE (value: the default, NULL: none) */
        CLI_QUERY_AS,   /* --name: param=value; options setting one param exclude each other */
        CLI_FLAG,       /* --name: *flag = true */
        CLI_STRING,     /* --name VALUE: *string = VALUE, for the command */
        CLI_FIXED,      /* no option: param=value, or what the command sets (cli_query_set) */
} CliOptionKind;

typedef struct CliOption {
        const char *name;       /* --name; NULL for CLI_FIXED */
        char short_name;        /* -x, or 0 */
        CliOptionKind kind;
        const char *param;
        const char *value;
        bool *flag;
        const char **string;
} CliOption;

#define CLI_OPTIONS_MAX 24

/* The query a command sends: parameter, value pairs ending in NULL, as
 * cli_get() takes them (pairs); a NULL value is left out. */
typedef struct CliQuery {
        const char *pairs[2 * CLI_OPTIONS_MAX + 1];
        size_t n;
} CliQuery;

const char *cli_query_get(const CliQuery *q, const char *param);
/* param must be one of the table's. */
void cli_query_set(CliQuery *q, const char *param, const char *value);

/* Reads argv (argv[0] the command's name) with the table and the common
 * options. Returns the index of the first argument that is no option, or
 * <0 after reporting an unknown option, two that exclude each other, or
 * more than max_args arguments. */
int cli_parse_(Cli *cli, const char *command, const CliOption *options, size_t n, int max_args, int argc,
               char **argv, CliQuery *ret_query);
#define cli_parse(cli, command, options, max_args, argc, argv, ret_query)                                       \
        ({                                                                                                      \
                _Static_assert(ELEMENTSOF(options) <= CLI_OPTIONS_MAX, "more options than CLI_OPTIONS_MAX");   \
                cli_parse_(cli, command, options, ELEMENTSOF(options), max_args, argc, argv, ret_query);        \
        })

/* GET path?query from the store; the answer's JSON on 200, an error
 * (already reported) otherwise. query is a list of key, value pairs ending
 * in NULL; NULL values are left out. */
int cli_get(Cli *cli, const char *path, const char *const *query, json_object **ret);
/* The same with a method and, for POST, a JSON body. */
int cli_request(Cli *cli, const char *method, const char *path, const char *const *query, json_object *body,
                json_object **ret);

/* A list command's answer: with --csv the store's CSV (GET
 * path?query&format=csv) copied to standard output as it came, with --json
 * its JSON printed, and 0; else 1 and the answer in *ret, for the caller's
 * table. Only list commands call it; cli_request() refuses --csv, so a
 * command without a list says so. */
int cli_get_list(Cli *cli, const char *path, const char *const *query, json_object **ret);

/* GET path?query: the answer's bytes as they came on 200 (a profile),
 * an error (already reported) otherwise. */
int cli_get_raw(Cli *cli, const char *path, const char *const *query, char **ret, size_t *ret_size);

/* Prints the store's answer as --json output. */
void cli_print_json(json_object *o);

/* Output helpers for the human tables (output.c). */
const char *fmt_time(double t, char *buf, size_t size);          /* "2026-11-24 10:00" */
const char *fmt_duration(double seconds, char *buf, size_t size); /* "3d4h", "58m40s" */
const char *fmt_count(int64_t n, char *buf, size_t size);         /* "1,234,567" */
const char *fmt_si(double v, const char *unit, char *buf, size_t size); /* "2.50 GJ", "812 W"; "-" for NAN */
/* A share entry of the store's answer (share, share_ci95, share_reliable):
 * fmt_share gives "86.9%", or "~90%" when it rests on too few samples;
 * fmt_interval "(84.1-89.3%)", or "(n=12, too few)" (long_form: "… samples)"). */
const char *fmt_share(json_object *x, char *buf, size_t size);
const char *fmt_interval(json_object *x, bool long_form, char *buf, size_t size);
const char *fmt_ipc(json_object *v, char *buf, size_t size);      /* "1.23" or "-" */
/* s cut to width columns, from the left for paths ("...lib/libm.so"). */
const char *fmt_fit(const char *s, size_t width, bool keep_end, char *buf, size_t size);

/* The answer's fields (output.c). */
const char *jstr(json_object *o, const char *key);   /* NULL when absent or null */
int64_t jint(json_object *o, const char *key);       /* -1 when absent or null */
double jnum(json_object *o, const char *key);        /* NAN when absent or null */
json_object *jget(json_object *o, const char *key);

/* A job's findings, with their advice when asked (cmd-flagged.c). */
void print_findings(json_object *findings, bool advice);
/* text, from column col on, wrapped at ", " to 78 columns with
 * continuation lines indented by indent; ends the line. */
void print_wrapped_from(size_t col, size_t indent, const char *text);

int do_jobs(Cli *cli, int argc, char **argv);
int do_job(Cli *cli, int argc, char **argv);
int do_top(Cli *cli, int argc, char **argv);
int do_nodes(Cli *cli, int argc, char **argv);
int do_flagged(Cli *cli, int argc, char **argv);
int do_web(Cli *cli, int argc, char **argv);
int do_unused(Cli *cli, int argc, char **argv);
int do_scaling(Cli *cli, int argc, char **argv);
int do_apps(Cli *cli, int argc, char **argv);
int do_compare(Cli *cli, int argc, char **argv);
/* cmd-kernels.c: lmk kernels, and lmk top --functions's table */
int do_kernels(Cli *cli, int argc, char **argv);
int top_functions(Cli *cli, const CliQuery *q, const char *family, const char *app, const char *user,
                  bool by_family);
