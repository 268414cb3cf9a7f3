/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "inventory/inventory.h"
#include "job-notify.h"
#include "lmkd-config.h"
#include "metrics-server.h"
#include "util.h"

const char config_help_text[] =
        "Usage: lmkd [OPTIONS]\n"
        "\n"
        "Samples what every CPU executes and attributes each sample to a process,\n"
        "an executable or shared library, the kernel or idle; writes a report\n"
        "(--output) or pushes batches to lmk-store (--store).\n"
        "\n"
        "  -c, --config FILE         Read settings from FILE (default " LMK_SYSCONF_DIR "/lmkd.conf)\n"
        "  -f, --foreground          Run in the foreground and write one report\n"
        "  -F, --frequency HZ        Samples per second per CPU (default 1)\n"
        "  -d, --duration SECONDS    Stop after this long (default: at SIGINT/SIGTERM)\n"
        "  -o, --output FILE         Write the report to FILE; '-' prints a table\n"
        "      --format json|table   Report format (default: json, table for '-')\n"
        "      --event EVENT         auto, cpu-clock or ref-cycles (default auto:\n"
        "                            unhalted reference cycles where the PMU has them)\n"
        "  -e, --events LIST         Counters read with each sample:\n"
        "                            perf, PAPI or libpfm4 names, each EVENT or ROLE=EVENT,\n"
        "                            e.g. cycles=PAPI_TOT_CYC,instructions=PAPI_TOT_INS,PAPI_L1_DCM;\n"
        "                            without a role an event is cycles or instructions if it\n"
        "                            counts those, else named for itself\n"
        "                            (default: cycles,instructions; 'none' for none)\n"
        "      --job-counters BOOL   Count the counters of each Slurm job exactly in its\n"
        "                            cgroup v2 directory (default no: it costs a little at\n"
        "                            every context switch on the jobs' CPUs)\n"
        "      --functions N         Name the functions samples ran in and send the top N\n"
        "                            of each job, object and phase (default 64; 0: none)\n"
        "      --exact-counters BOOL Also split the counters at every context switch, for\n"
        "                            exact counts per process, and per job in cgroup v1\n"
        "                            (default no: it costs every context switch of every task)\n"
        "      --jitter PERCENT      Vary each CPU's sampling period by up to this much\n"
        "                            so sampling does not lock step with periodic work\n"
        "      --burst FRACTION      After this fraction of samples (0-1, default 0) take\n"
        "                            3 more, 1 ms apart, for rates and IPC at that location\n"
        "      --poll-ms MS          How soon the rings are drained after a process lmkd\n"
        "                            has not read yet is sampled (default 1000)\n"
        "      --quiet-poll-ms MS    How often they are drained while nothing new is\n"
        "                            sampled (default: --poll-ms; 30000 on a quiet node\n"
        "                            saves most of lmkd's CPU at 1 Hz)\n"
        "      --ready-file FILE     Create FILE once sampling has started\n"
        "      --store URL           Push a batch to lmk-store every --push-interval\n"
        "      --token-file FILE     The node's bearer token for the store\n"
        "      --ca-file FILE        Certificates (PEM) trusted for an https:// store\n"
        "                            besides the system's (a site's private CA)\n"
        "      --push-interval SECS  Seconds between batches (default 60)\n"
        "      --spool DIR           Where batches wait for the store (default\n"
        "                            " LMK_STATE_DIR "/spool)\n"
        "      --node-name NAME      This node's name in the store (default: host name)\n"
        "      --cluster NAME        The cluster's name\n"
        "      --metrics-file FILE   Write lmkd's own counters there (Prometheus text)\n"
        "      --metrics-listen ADDR:PORT\n"
        "                            Serve them at http://ADDR:PORT/metrics (a port\n"
        "                            alone: on 127.0.0.1; *:PORT: every address)\n"
        "      --notify-socket PATH  Take Slurm Prolog/Epilog notices there ('none': no\n"
        "                            socket; default with --store: " JOB_NOTICE_SOCKET_DEFAULT ")\n"
        "      --opt-out allowed|forbidden\n"
        "                            Whether a job's sbatch --lmk=off is honoured\n"
        "                            (default allowed; forbidden: measured as usual)\n"
        "      --liblmk PATHS        liblmk copies whose marker probes to watch from the\n"
        "                            start (default " LMK_LIBDIR "/liblmk.so.1; copies\n"
        "                            seen mapped are watched as they appear)\n"
        "      --powercap-root DIR   Where the RAPL energy counters are (default\n"
        "                            /sys/class/powercap)\n"
        "      --families FILE       The site's library families (default\n"
        "                            " LMK_SYSCONF_DIR "/families.conf if it exists)\n"
        "  -v, --verbose             Log debug messages\n"
        "  -h, --help                Show this help\n"
        "      --version             Show the version\n"
        "\n"
        "See lmkd(8) and lmkd.conf(5).\n";

void config_init(LmkdConfig *c) {
        *c = (LmkdConfig) {
                .frequency = 1,
                .event = SAMPLE_EVENT_AUTO,
                .job_counters = false,
                .functions = 64,
                .poll_ms = 1000,
                .push_interval = 60,
                .inventory_interval = 86400,
                .spool_max_bytes = 256 * 1024 * 1024,
        };
        (void) config_set(c, "markers", "liblmk", LMK_LIBDIR "/liblmk.so.1", &(const char *) { NULL });
        c->liblmk_explicit = false;
        /* cycles and instructions where the PMU has them; reported unavailable otherwise */
        (void) config_set(c, "sampling", "events", "cycles,instructions", &(const char *) { NULL });
}

void config_done(LmkdConfig *c) {
        free(c->output);
        free(c->format);
        free(c->ready_file);
        free(c->proc_root);
        free(c->powercap_root);
        free(c->node_name);
        free(c->cluster);
        free(c->metrics_file);
        free(c->metrics_listen);
        free(c->notify_socket);
        free(c->families_file);
        for (size_t m = 0; m < ELEMENTSOF(c->inventory_roots); m++) {
                for (char **p = c->inventory_roots[m]; p && *p; p++)
                        free(*p);
                free(c->inventory_roots[m]);
        }
        for (char **p = c->liblmk; p && *p; p++)
                free(*p);
        free(c->liblmk);
        free(c->store_url);
        free(c->token_file);
        free(c->ca_file);
        free(c->spool_dir);
        *c = (LmkdConfig) {};
}

static int set_string(char **field, const char *value) {
        char *s = strdup(value);

        if (!s)
                return -ENOMEM;
        free(*field);
        *field = s;
        return 0;
}

/* "a,b,c" of absolute paths into a NULL-terminated array */
static int set_paths(char ***field, const char *value) {
        char **v = NULL;
        size_t n = 0;

        for (const char *p = value; *p;) {
                size_t len = strcspn(p, ",");
                char **nv;

                if (len == 0 || p[0] != '/' || n >= 64)
                        goto fail;
                nv = realloc(v, (n + 2) * sizeof(*v));
                if (!nv)
                        goto fail;
                v = nv;
                v[n] = strndup(p, len);
                if (!v[n])
                        goto fail;
                v[++n] = NULL;
                p += len;
                if (*p == ',')
                        p++;
        }
        for (char **p = *field; p && *p; p++)
                free(*p);
        free(*field);
        *field = v;
        return 0;
fail:
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
        return -EINVAL;
}

static int set_double(double *field, const char *value, double lo, double hi) {
        double v;

        if (safe_atod(value, &v) < 0 || v < lo || v > hi)
                return -EINVAL;
        *field = v;
        return 0;
}

static int set_bool(bool *field, const char *value) {
        static const char *const yes[] = { "yes", "true", "on", "1" }, *const no[] = { "no", "false", "off", "0" };

        for (size_t i = 0; i < ELEMENTSOF(yes); i++)
                if (strcasecmp(value, yes[i]) == 0 || strcasecmp(value, no[i]) == 0) {
                        *field = strcasecmp(value, yes[i]) == 0;
                        return 0;
                }
        return -EINVAL;
}

static int set_unsigned(unsigned *field, const char *value, unsigned lo, unsigned hi) {
        uint32_t v;

        if (safe_atou32(value, &v) < 0 || v < lo || v > hi)
                return -EINVAL;
        *field = v;
        return 0;
}

static int set_events(LmkdConfig *c, const char *value, const char **ret_why) {
        static char why[512];
        EventSpec ev[EVENT_MAX];
        size_t n;
        int r;

        if (streq(value, "none")) {
                c->n_events = 0;
                return 0;
        }
        r = event_list_parse(value, ev, &n, why, sizeof(why));
        if (r < 0) {
                *ret_why = why;
                return r;
        }
        memcpy(c->events, ev, sizeof(ev));
        c->n_events = n;
        return 0;
}

int config_set(LmkdConfig *c, const char *section, const char *key, const char *value, const char **ret_why) {
        int r = -EINVAL;

#define KEY(s, k) (streq(section, s) && streq(key, k))
        *ret_why = NULL;
        if (KEY("sampling", "frequency")) {
                r = set_double(&c->frequency, value, 0.001, 10000);
                *ret_why = "a frequency in Hz, 0 < HZ <= 10000";
        } else if (KEY("sampling", "event")) {
                *ret_why = "auto, cpu-clock or ref-cycles";
                r = 0;
                if (streq(value, "auto"))
                        c->event = SAMPLE_EVENT_AUTO;
                else if (streq(value, "cpu-clock"))
                        c->event = SAMPLE_EVENT_CPU_CLOCK;
                else if (streq(value, "ref-cycles"))
                        c->event = SAMPLE_EVENT_REF_CYCLES;
                else
                        r = -EINVAL;
        } else if (KEY("sampling", "jitter")) {
                r = set_double(&c->jitter, value, 0, 50);
                c->jitter /= r >= 0 ? 100.0 : 1.0;
                *ret_why = "a percentage from 0 to 50";
        } else if (KEY("sampling", "burst")) {
                r = set_double(&c->burst, value, 0, 1);
                *ret_why = "a fraction of samples from 0 to 1";
        } else if (KEY("sampling", "exact_counters")) {
                r = set_bool(&c->exact_counters, value);
                *ret_why = "yes or no";
        } else if (KEY("sampling", "job_counters")) {
                r = set_bool(&c->job_counters, value);
                *ret_why = "yes or no";
        } else if (KEY("sampling", "functions")) {
                r = set_unsigned(&c->functions, value, 0, 10000);
                *ret_why = "a number of functions from 0 (none named) to 10000";
        } else if (KEY("sampling", "poll_ms")) {
                r = set_unsigned(&c->poll_ms, value, 10, 60000);
                *ret_why = "milliseconds from 10 to 60000";
        } else if (KEY("sampling", "quiet_poll_ms")) {
                r = set_unsigned(&c->quiet_poll_ms, value, 0, 60000);
                *ret_why = "milliseconds up to 60000 (0: poll_ms)";
        } else if (KEY("sampling", "events"))
                return set_events(c, value, ret_why);
        else if (KEY("report", "duration")) {
                r = set_double(&c->duration, value, 0.001, 1e7);
                *ret_why = "seconds, more than 0";
        } else if (KEY("report", "output"))
                r = set_string(&c->output, value);
        else if (KEY("report", "format")) {
                *ret_why = "json or table";
                r = streq(value, "json") || streq(value, "table") ? set_string(&c->format, value) : -EINVAL;
        } else if (KEY("report", "ready_file"))
                r = set_string(&c->ready_file, value);
        else if (KEY("node", "proc_root"))
                r = set_string(&c->proc_root, value);
        else if (KEY("node", "powercap_root")) {
                *ret_why = "an absolute path";
                r = value[0] == '/' ? set_string(&c->powercap_root, value) : -EINVAL;
        }
        else if (KEY("node", "name")) {
                *ret_why = "1 to 255 bytes";
                r = *value && strlen(value) < 256 ? set_string(&c->node_name, value) : -EINVAL;
        } else if (KEY("node", "cluster")) {
                *ret_why = "1 to 255 bytes";
                r = *value && strlen(value) < 256 ? set_string(&c->cluster, value) : -EINVAL;
        } else if (KEY("families", "file")) {
                *ret_why = "an absolute path";
                r = value[0] == '/' ? set_string(&c->families_file, value) : -EINVAL;
        } else if (KEY("inventory", "interval")) {
                *ret_why = "seconds from 60 to 2592000, or 0 for no inventory";
                r = set_unsigned(&c->inventory_interval, value, 0, 30 * 86400);
                if (r >= 0 && c->inventory_interval > 0 && c->inventory_interval < 60)
                        r = -ERANGE;
        } else if (section && streq(section, "inventory") && inventory_manager_from_string(key) >= 0) {
                int m = inventory_manager_from_string(key);

                *ret_why = "absolute paths separated by commas, or none";
                c->inventory_off[m] = streq(value, "none");
                r = c->inventory_off[m] ? 0 : *value ? set_paths(&c->inventory_roots[m], value) : -EINVAL;
        } else if (KEY("markers", "liblmk")) {
                *ret_why = "absolute paths separated by commas";
                r = set_paths(&c->liblmk, value);
                c->liblmk_explicit = c->liblmk_explicit || r >= 0;
        } else if (KEY("node", "notify_socket")) {
                *ret_why = "an absolute path, or none";
                if (streq(value, "none")) {
                        free(c->notify_socket);
                        c->notify_socket = NULL;
                        c->notify_socket_none = true;
                        r = 0;
                } else {
                        r = value[0] == '/' ? set_string(&c->notify_socket, value) : -EINVAL;
                        c->notify_socket_none = r < 0 && c->notify_socket_none;
                }
        } else if (KEY("node", "opt_out")) {
                *ret_why = "allowed or forbidden";
                r = streq(value, "allowed") || streq(value, "forbidden") ? 0 : -EINVAL;
                if (r >= 0)
                        c->opt_out_forbidden = streq(value, "forbidden");
        } else if (KEY("node", "metrics_file"))
                r = set_string(&c->metrics_file, value);
        else if (KEY("node", "metrics_listen")) {
                struct sockaddr_storage sa;
                socklen_t len;

                *ret_why = "PORT (on 127.0.0.1), ADDR:PORT, [IPv6]:PORT, localhost:PORT or *:PORT";
                r = metrics_listen_parse(value, &sa, &len);
                if (r >= 0)
                        r = set_string(&c->metrics_listen, value);
        }
        else if (KEY("store", "url")) {
                *ret_why = "an http:// or https:// URL";
                r = strncmp(value, "http://", 7) == 0 || strncmp(value, "https://", 8) == 0
                            ? set_string(&c->store_url, value)
                            : -EINVAL;
        } else if (KEY("store", "token_file"))
                r = set_string(&c->token_file, value);
        else if (KEY("store", "ca_file")) {
                *ret_why = "a file's path";
                r = *value ? set_string(&c->ca_file, value) : -EINVAL;
        }        else if (KEY("store", "spool"))
                r = set_string(&c->spool_dir, value);
        else if (KEY("store", "push_interval")) {
                r = set_unsigned(&c->push_interval, value, 1, 86400);
                *ret_why = "seconds from 1 to 86400";
        } else if (KEY("store", "spool_max_mb")) {
                unsigned mb;

                r = set_unsigned(&mb, value, 1, 1024 * 1024);
                if (r >= 0)
                        c->spool_max_bytes = (size_t) mb * 1024 * 1024;
                *ret_why = "MiB from 1 to 1048576";
        } else {
                *ret_why = "a known key (see lmkd.conf(5))";
                return -ENOKEY;
        }
#undef KEY
        if (r >= 0)
                *ret_why = NULL;
        return r;
}

struct load_ctx {
        LmkdConfig *c;
        int line;
        char *error;
};

static int handler(void *user, const char *section, const char *key, const char *value) {
        struct load_ctx *ctx = user;
        const char *why;
        int r;

        r = config_set(ctx->c, section, key, value, &why);
        if (r < 0) {
                if (asprintf(&ctx->error, "[%s] %s = %s: %s%s", section, key, value,
                             r == -ENOKEY ? "unknown key, expected " : "invalid value, expected ",
                             why ?: "a valid value") < 0)
                        ctx->error = NULL;
                return 0;
        }
        return 1;
}

static void setup_inih(void) {
        /* Debian's inih takes its options at run time: one error is enough,
         * values are single lines, and paths and URLs may be long. */
        ini_stop_on_first_error = true;
        ini_allow_multiline = false;
        ini_max_line = 4096;
}

static int finish(struct load_ctx *ctx, int r, char **ret_error) {
        char *msg = NULL;

        if (r == 0)
                return 0;
        if (r > 0 && asprintf(&msg, "line %d: %s", r,
                              ctx->error ?: "malformed (expected [section] or key = value)") < 0)
                msg = NULL;
        free(ctx->error);
        *ret_error = msg;
        return r == -2 ? -ENOMEM : -EINVAL;
}

int config_load_file(LmkdConfig *c, const char *path, char **ret_error) {
        _cleanup_fclose_ FILE *f = NULL;
        struct load_ctx ctx = { .c = c };

        *ret_error = NULL;
        f = fopen(path, "re");
        if (!f)
                return -errno;
        setup_inih();
        return finish(&ctx, ini_parse_file(f, handler, &ctx), ret_error);
}

int config_load_string(LmkdConfig *c, const char *text, char **ret_error) {
        struct load_ctx ctx = { .c = c };

        *ret_error = NULL;
        setup_inih();
        return finish(&ctx, ini_parse_string(text, handler, &ctx), ret_error);
}
