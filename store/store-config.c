/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <ini.h>
#include <netdb.h>
#include <netinet/in.h>

#include "auth/identity.h"
#include "auth/session.h"
#include "store-config.h"
#include "symbols/debuginfod.h"
#include "macro.h"
#include "utf8.h"
#include "util.h"

void store_config_init(StoreConfig *c) {
        *c = (StoreConfig) {
                .threads = 4,
                .writers = 4,
                .connection_timeout = 30,
                .header_timeout = 10,
                .body_timeout = 10,
                .body_min_rate = STORE_DEFAULT_BODY_MIN_RATE,
                .max_connections = 1024,
                .max_connections_per_ip = 64,
                .max_body = STORE_DEFAULT_MAX_BODY,
                .max_buffered = UINT64_C(512) << 20,
                .session_ttl = SESSION_DEFAULT_TTL,
                .keep_raw_days = STORE_DEFAULT_KEEP_RAW_DAYS,
                .retention_interval = STORE_DEFAULT_RETENTION_INTERVAL,
                .db_wait = STORE_DB_WAIT_FOREVER,
                .debuginfod_timeout = SYMBOLS_DEFAULT_TIMEOUT_S,
                .debuginfod_retry = SYMBOLS_DEFAULT_RETRY_S,
                .debuginfod_queue = SYMBOLS_DEFAULT_QUEUE_MAX,
        };
}

void store_config_done(StoreConfig *c) {
        free(c->db);
        free(c->listen);
        free(c->token_file);
        free(c->findings_file);
        free(c->families_file);
        free(c->leads_file);
        free(c->munge_socket);
        free(c->user_header);
        free(c->admin_users);
        free(c->session_key_file);
        free(c->trusted_proxies);
        free(c->debuginfod);
        free(c->debuginfod_cache);
        *c = (StoreConfig) {};
}

int parse_size(const char *s, uint64_t *ret) {
        _cleanup_free_ char *num = NULL;
        uint64_t v, mult = 1;
        size_t n = strlen(s);
        int r;

        if (n == 0)
                return -EINVAL;
        switch (s[n - 1]) {
        case 'K':
                mult = UINT64_C(1) << 10;
                break;
        case 'M':
                mult = UINT64_C(1) << 20;
                break;
        case 'G':
                mult = UINT64_C(1) << 30;
                break;
        }
        num = strndup(s, mult > 1 ? n - 1 : n);
        if (!num)
                return -ENOMEM;
        r = safe_atou64(num, 10, &v);
        if (r < 0)
                return r;
        if (v > UINT64_MAX / mult)
                return -ERANGE;
        *ret = v * mult;
        return 0;
}

static int set_uint(const char *value, unsigned min, unsigned max, unsigned *ret) {
        uint32_t v;
        int r;

        r = safe_atou32(value, &v);
        if (r < 0)
                return r;
        if (v < min || v > max)
                return -ERANGE;
        *ret = v;
        return 0;
}

static int set_string(const char *value, char **ret) {
        char *p;

        if (!*value)
                return -EINVAL;
        p = strdup(value);
        if (!p)
                return -ENOMEM;
        free(*ret);
        *ret = p;
        return 0;
}

int store_config_set(StoreConfig *c, const char *key, const char *value) {
        int r;

        /* Paths and addresses end up in logs and in SQLite's file name:
         * strict UTF-8 (common/utf8.h) without control characters. */
        if (!utf8_is_valid(key, strlen(key)) || !utf8_is_valid(value, strlen(value)) ||
            string_has_control(key, strlen(key)) || string_has_control(value, strlen(value)))
                return -EILSEQ;

        if (streq(key, "db"))
                return set_string(value, &c->db);
        if (streq(key, "listen")) {
                struct sockaddr_storage sa;

                r = parse_listen(value, &sa, NULL);
                if (r < 0)
                        return r;
                return set_string(value, &c->listen);
        }
        if (streq(key, "token-file"))
                return set_string(value, &c->token_file);
        if (streq(key, "findings"))
                return set_string(value, &c->findings_file);
        if (streq(key, "families"))
                return set_string(value, &c->families_file);
        if (streq(key, "leads"))
                return set_string(value, &c->leads_file);
        if (streq(key, "munge-socket"))
                return set_string(value, &c->munge_socket);
        if (streq(key, "user-header")) {
                /* a header name: an HTTP token */
                for (const char *p = value; *p; p++)
                        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_", *p))
                                return -EINVAL;
                return set_string(value, &c->user_header);
        }
        if (streq(key, "trusted-proxies")) {
                TrustedProxies t;

                r = trusted_proxies_parse(value, &t);
                if (r < 0)
                        return r;
                return set_string(value, &c->trusted_proxies);
        }
        if (streq(key, "admin-users")) {
                for (const char *p = value; *p; p++)
                        if (!strchr(", \t", *p) && !identity_user_char(*p))
                                return -EINVAL;
                return set_string(value, &c->admin_users);
        }
        if (streq(key, "session-key"))
                return set_string(value, &c->session_key_file);
        if (streq(key, "session-ttl"))
                return set_uint(value, 1, 30 * 86400, &c->session_ttl);
        if (streq(key, "site-views")) {
                if (streq(value, "all"))
                        c->site_views_admin_only = false;
                else if (streq(value, "admin"))
                        c->site_views_admin_only = true;
                else
                        return -EINVAL;
                return 0;
        }
        if (streq(key, "threads"))
                return set_uint(value, 1, 256, &c->threads);
        if (streq(key, "writers"))
                return set_uint(value, 1, 64, &c->writers);
        if (streq(key, "keep-raw-days"))
                return set_uint(value, 0, 100 * 366, &c->keep_raw_days);
        if (streq(key, "db-wait")) {
                if (streq(value, "forever")) {
                        c->db_wait = STORE_DB_WAIT_FOREVER;
                        return 0;
                }
                return set_uint(value, 0, 366 * 86400, &c->db_wait);
        }
        if (streq(key, "keep-rollup-days"))
                return set_uint(value, 0, 100 * 366, &c->keep_rollup_days);
        if (streq(key, "keep-job-days"))
                return set_uint(value, 0, 100 * 366, &c->keep_job_days);
        if (streq(key, "debuginfod")) {
                /* space-separated URLs, as DEBUGINFOD_URLS; "" for none */
                for (const char *p = value; *p; p++)
                        if ((unsigned char) *p < 0x20 && *p != '\t')
                                return -EINVAL;
                return set_string(value, &c->debuginfod);
        }
        if (streq(key, "debuginfod-cache"))
                return set_string(value, &c->debuginfod_cache);
        if (streq(key, "debuginfod-timeout"))
                return set_uint(value, 1, 3600, &c->debuginfod_timeout);
        if (streq(key, "debuginfod-retry"))
                return set_uint(value, 1, 30 * 86400, &c->debuginfod_retry);
        if (streq(key, "debuginfod-queue"))
                return set_uint(value, 1, 1 << 20, &c->debuginfod_queue);
        if (streq(key, "retention-interval"))
                return set_uint(value, 1, 7 * 86400, &c->retention_interval);
        if (streq(key, "connection-timeout"))
                return set_uint(value, 1, 3600, &c->connection_timeout);
        if (streq(key, "header-timeout"))
                return set_uint(value, 1, 3600, &c->header_timeout);
        if (streq(key, "body-timeout"))
                return set_uint(value, 1, 3600, &c->body_timeout);
        if (streq(key, "body-min-rate")) {
                uint64_t v;

                /* 0 lets a body take as long as it likes. */
                r = parse_size(value, &v);
                if (r < 0)
                        return r;
                if (v > (UINT64_C(1) << 30))
                        return -ERANGE;
                c->body_min_rate = v;
                return 0;
        }
        if (streq(key, "max-connections"))
                return set_uint(value, 1, 65536, &c->max_connections);
        if (streq(key, "max-connections-per-ip"))
                return set_uint(value, 0, 65536, &c->max_connections_per_ip);
        if (streq(key, "max-body") || streq(key, "max-buffered")) {
                uint64_t v;

                r = parse_size(value, &v);
                if (r < 0)
                        return r;
                /* Below 1 KiB not even an empty batch fits; above 1 GiB one
                 * request's parse tree would not fit in memory. */
                if (v < 1024 || v > (UINT64_C(1) << 30) * (streq(key, "max-body") ? 1 : 64))
                        return -ERANGE;
                if (streq(key, "max-body"))
                        c->max_body = v;
                else
                        c->max_buffered = v;
                return 0;
        }
        return -ENOENT;
}

typedef struct LoadState {
        StoreConfig *config;
        int error;
} LoadState;

static int on_ini(void *user, const char *section, const char *name, const char *value) {
        LoadState *st = user;
        int r;

        if (*section && !streq(section, "lmk-store")) {
                st->error = -ENOENT;
                return 0;
        }
        r = store_config_set(st->config, name, value);
        if (r < 0) {
                st->error = r;
                return 0;
        }
        return 1;
}

int store_config_load(StoreConfig *c, const char *path, unsigned *ret_line) {
        _cleanup_fclose_ FILE *f = NULL;
        LoadState st = { .config = c };
        int line;

        f = fopen(path, "re");
        if (!f)
                return -errno;
        line = ini_parse_file(f, on_ini, &st);
        if (line < 0)
                return -ENOMEM;
        if (line > 0) {
                *ret_line = (unsigned) line;
                return st.error < 0 ? st.error : -EINVAL;
        }
        return 0;
}

int parse_listen(const char *s, struct sockaddr_storage *ret, socklen_t *ret_len) {
        _cleanup_free_ char *host = NULL;
        struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
        struct addrinfo *ai = NULL;
        const char *colon, *port;
        uint32_t p;
        int r;

        if (s[0] == '[') {
                const char *close = strchr(s, ']');

                if (!close || close[1] != ':')
                        return -EINVAL;
                host = strndup(s + 1, (size_t) (close - s - 1));
                port = close + 2;
                hints.ai_family = AF_INET6;
        } else {
                colon = strrchr(s, ':');
                if (!colon)
                        return -EINVAL;
                host = strndup(s, (size_t) (colon - s));
                port = colon + 1;
        }
        if (!host)
                return -ENOMEM;
        r = safe_atou32(port, &p);
        if (r < 0 || p > 65535)
                return -EINVAL;
        if (streq(host, "*") || !*host) {
                free(host);
                host = NULL;
                hints.ai_family = AF_INET6; /* [::] takes IPv4 too */
        }

        r = getaddrinfo(host, port, &hints, &ai);
        if (r != 0)
                return r == EAI_MEMORY ? -ENOMEM : -EADDRNOTAVAIL;
        if (ai->ai_addrlen > sizeof(*ret)) {
                freeaddrinfo(ai);
                return -EINVAL;
        }
        memset(ret, 0, sizeof(*ret));
        memcpy(ret, ai->ai_addr, ai->ai_addrlen);
        if (ret_len)
                *ret_len = ai->ai_addrlen;
        freeaddrinfo(ai);
        return 0;
}
