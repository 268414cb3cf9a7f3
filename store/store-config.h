/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

/* lmk-store's settings. The config file (INI, read with libinih) uses the
 * same names as the command line options, in a [lmk-store] section or before
 * any section; options on the command line win over the file. */

typedef struct StoreConfig {
        char *db;
        char *listen;
        char *token_file;
        char *findings_file;    /* NULL: LMK_SYSCONF_DIR/findings.conf if it exists */
        char *families_file;    /* NULL: LMK_SYSCONF_DIR/families.conf if it exists */
        char *leads_file;       /* NULL: LMK_SYSCONF_DIR/leads.conf if it exists */
        char *munge_socket;     /* NULL: munged's default socket */
        char *user_header;      /* a trusted proxy's header naming the user */
        char *trusted_proxies;  /* their addresses */
        bool site_views_admin_only;
        char *admin_users;      /* people who are admins: names separated by commas or blanks */
        char *session_key_file; /* NULL: a random key per start */
        unsigned session_ttl;
        unsigned threads;
        unsigned writers;       /* PostgreSQL: connections storing batches side by side */
        unsigned connection_timeout;
        unsigned header_timeout;
        unsigned body_timeout;
        uint64_t body_min_rate;
        unsigned max_connections;
        unsigned max_connections_per_ip;
        uint64_t max_body;
        uint64_t max_buffered;
        unsigned keep_raw_days;         /* retention: 0 keeps raw rows for good */
        unsigned keep_rollup_days;      /* retention of the site-wide rollups: 0 for good */
        unsigned keep_job_days;         /* retention of jobs and their summaries: 0 for good */
        unsigned retention_interval;    /* seconds between retention passes */
        unsigned db_wait;               /* seconds to wait for an unreachable database server at
                                         * start-up; STORE_DB_WAIT_FOREVER */
        /* names of unnamed functions by build-id (store/symbols/) */
        char *debuginfod;               /* the servers' URLs; NULL: $DEBUGINFOD_URLS; "": none */
        char *debuginfod_cache;         /* the client's cache; NULL: a folder of the store's */
        unsigned debuginfod_timeout;    /* seconds one lookup may take */
        unsigned debuginfod_retry;      /* seconds before a build not found is asked for again */
        unsigned debuginfod_queue;      /* build-ids waiting for a lookup, at most */
} StoreConfig;

#define STORE_DB_WAIT_FOREVER UINT32_MAX

#define STORE_DEFAULT_KEEP_RAW_DAYS 30
#define STORE_DEFAULT_RETENTION_INTERVAL 3600

#define STORE_DEFAULT_MAX_BODY (UINT64_C(32) << 20)
/* Far below any link a node pushes over (a 1 Gbit/s link shared by 1,000
 * nodes still gives each 125 KB/s), far above a trickle. */
#define STORE_DEFAULT_BODY_MIN_RATE (UINT64_C(4) << 10)

void store_config_init(StoreConfig *c);
void store_config_done(StoreConfig *c);

/* Sets one setting by name. -ENOENT: no such setting; -EINVAL/-ERANGE: bad value;
 * -EILSEQ: key or value not strict UTF-8, or holding control characters. */
int store_config_set(StoreConfig *c, const char *key, const char *value);

/* Reads a config file. On a syntax error or bad setting, -EINVAL and the line. */
int store_config_load(StoreConfig *c, const char *path, unsigned *ret_line);

/* "ADDR:PORT", "[V6ADDR]:PORT", "*:PORT" or ":PORT" (all addresses), or a
 * host name and port. ret_len may be NULL. */
int parse_listen(const char *s, struct sockaddr_storage *ret, socklen_t *ret_len);

/* A byte count with an optional K, M or G suffix (powers of 1024). */
int parse_size(const char *s, uint64_t *ret);
