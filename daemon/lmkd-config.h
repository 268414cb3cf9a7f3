/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "events.h"
#include "inventory/inventory.h"
#include "sampler.h"

/* lmkd's settings: defaults, then the config file (INI, parsed with inih),
 * then the command line, which sets the same keys through config_set(). */
typedef struct LmkdConfig {
        /* [sampling] */
        double frequency;
        SampleEvent event;
        double jitter;                  /* fraction, 0..0.5 */
        double burst;                   /* fraction of samples that start a burst, 0..1 */
        bool exact_counters;            /* split counters at every context switch */
        bool job_counters;              /* count each job in its cgroup v2 directory (job-counters.h) */
        unsigned functions;             /* top functions per (job, step, object, phase); 0: none named */
        unsigned poll_ms;
        unsigned quiet_poll_ms;         /* the timer's drains while nothing new runs (>= poll_ms) */
        EventSpec events[EVENT_MAX];
        size_t n_events;
        /* [report] one-shot mode */
        double duration;                /* 0: until SIGINT/SIGTERM */
        char *output;
        char *format;
        char *ready_file;
        /* [node] */
        char *proc_root;
        char *powercap_root;            /* energy counters; NULL: /sys/class/powercap */
        char *node_name;
        char *cluster;
        char *metrics_file;
        char *metrics_listen;           /* serve GET /metrics there (metrics-server.h); NULL: no */
        char *notify_socket;            /* Prolog/Epilog notices; NULL: none */
        bool notify_socket_none;        /* "none" was given: no default either */
        bool opt_out_forbidden;         /* opt_out = forbidden: sbatch --lmk=off is measured as usual */
        /* [families] */
        char *families_file;            /* NULL: LMK_SYSCONF_DIR/families.conf if it exists */
        /* [inventory] (collectors/inventory/inventory.h): debian, spack, easybuild, opt, rpm, module */
        unsigned inventory_interval;    /* seconds between scans, 0: none */
        char **inventory_roots[_INVENTORY_MANAGER_MAX]; /* NULL: the defaults */
        bool inventory_off[_INVENTORY_MANAGER_MAX]; /* "none": that source not read */
        /* [markers] */
        char **liblmk;                  /* NULL-terminated paths of liblmk copies to watch */
        bool liblmk_explicit;           /* configured, not the default: say when one is missing */
        /* [store] */
        char *store_url;
        char *token_file;
        char *ca_file;                  /* trusted for https:// besides the system's store */
        char *spool_dir;
        unsigned push_interval;         /* seconds */
        size_t spool_max_bytes;
} LmkdConfig;

/* lmkd --help. It lives beside config_init() and states its defaults: a
 * unit test holds the two together. */
extern const char config_help_text[];

void config_init(LmkdConfig *c);
void config_done(LmkdConfig *c);

/* Sets one key. On failure returns negative errno and points *ret_why to
 * a description of what the value should be (static storage). */
int config_set(LmkdConfig *c, const char *section, const char *key, const char *value, const char **ret_why);

/* Reads an INI file. On failure says which line and why in ret_error
 * (malloc'd, caller frees). -ENOENT if the file does not exist. */
int config_load_file(LmkdConfig *c, const char *path, char **ret_error);
int config_load_string(LmkdConfig *c, const char *text, char **ret_error);
