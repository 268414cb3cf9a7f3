/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <getopt.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "macro.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);

/* The lmk command line tool: reads lmk-store's query API. main.c parses the
 * global options and dispatches to one file per subcommand. */

typedef struct Cli {
        const char *store;      /* base URL */
        const char *token_file;
        const char *munge_socket;       /* NULL: munged's default */
        char *token;
        bool json;
        bool csv;               /* --csv: a list command prints the store's CSV */
} Cli;

/* The one error path: prints {"error": ...} on stdout with --json, else
 * "lmk: ..." on stderr. Returns -abs(error) (or -EINVAL when error is 0). */
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

/* Handles a common option; 1 if it was one, 0 if not, <0 on error. */
int cli_common_option(Cli *cli, int opt, const char *arg);

/* GET path?query from the store; the answer's JSON on 200, an error
 * (already reported) otherwise. query is a list of key, value pairs ending
 * in NULL; NULL values are left out. */
int cli_get(Cli *cli, const char *path, const char *const *query, json_object **ret);
/* The same with a method and, for POST, a JSON body. */
int cli_request(Cli *cli, const char *method, const char *path, const char *const *query, json_object *body,
                json_object **ret);

/* --csv: GET path?query&format=csv and copy the store's CSV to standard
 * output as it came. Only list commands call it; cli_request() refuses
 * --csv, so a command without a list says so. */
int cli_get_csv(Cli *cli, const char *path, const char *const *query);

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
