/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lmk-store: the central store. Receives batches from lmkd on every node and
 * answers queries about jobs, objects and nodes (docs/lmk-store.md). */
#include <arpa/inet.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db/db.h"
#include "db/storage.h"
#include "log.h"
#include "migrate/migrate.h"
#include "retention.h"
#include "server.h"
#include "service-notify.h"
#include "store-config.h"
#include "symbols/debuginfod.h"
#include "util.h"

#define STOP_TIMEOUT_S 10

static void help(void) {
        printf("lmk-store [OPTIONS...]\n"
               "lmk-store migrate --from sqlite:PATH --to postgresql://...\n\n"
               "Central store of lmk: receives batches from lmkd, answers queries.\n\n"
               "  -h --help                     Show this help\n"
               "     --version                  Show the version\n"
               "  -c --config FILE              Read settings from an INI file\n"
               "     --db PATH                  SQLite database (created if missing)\n"
               "     --listen ADDR:PORT         Address to listen on ([::1]:8470, *:8470)\n"
               "     --token-file FILE          Bearer tokens: \"node TOKEN [NODE]\" or \"admin TOKEN\"\n"
               "     --findings FILE            Rules, thresholds and advice of the findings\n"
               "                                (default " LMK_SYSCONF_DIR "/findings.conf if there)\n"
               "     --families FILE            The site's library families (default\n"
               "                                " LMK_SYSCONF_DIR "/families.conf if there)\n"
               "     --leads FILE               Who leads which Slurm account: \"ACCOUNT USER...\"\n"
               "                                (default " LMK_SYSCONF_DIR "/leads.conf if there)\n"
               "     --munge-socket PATH        munged's socket for people's credentials\n"
               "     --user-header NAME         A header naming the user, set by a trusted proxy\n"
               "     --trusted-proxies ADDR...  The proxies' addresses (the header counts only from them)\n"
               "     --admin-users USER,...     People who are admins (see every job) when they\n"
               "                                sign in with MUNGE, a proxy or a session\n"
               "     --session-key FILE         Key that signs browser sessions (32+ secret bytes,\n"
               "                                owner-only; default: random, sessions end at restart)\n"
               "     --session-ttl SEC          How long a browser session lasts (default 28800)\n"
               "     --site-views all|admin     Who sees site-wide time per object and the nodes\n"
               "                                (default all: every authenticated person)\n"
               "     --threads N                HTTP worker threads (default 4)\n"
               "     --writers N                PostgreSQL: connections that store batches side by\n"
               "                                side (default 4; SQLite has one writer)\n"
               "     --connection-timeout SEC   Close idle connections after SEC (default 30)\n"
               "     --header-timeout SEC       Answer 408 to a request whose headers take longer\n"
               "                                (default 10)\n"
               "     --body-timeout SEC         Time a body gets before --body-min-rate applies\n"
               "                                (default 10)\n"
               "     --body-min-rate BYTES      Answer 408 to a body arriving slower, per second\n"
               "                                (default 4K, 0 = no limit)\n"
               "     --max-connections N        Connections at once (default 1024)\n"
               "     --max-connections-per-ip N (default 64, 0 = no limit); at the limit a new\n"
               "                                connection replaces the slowest one still\n"
               "                                sending headers\n"
               "     --max-body BYTES           Largest batch, before and after gzip (default 32M)\n"
               "     --max-buffered BYTES       All bodies being received together (default 512M)\n"
               "     --keep-raw-days DAYS       Keep raw rows this long (default 30; 0: for good)\n"
               "     --keep-rollup-days DAYS    Keep the site-wide rollups this long (default 0:\n"
               "                                for good; at least --keep-raw-days)\n"
               "     --keep-job-days DAYS       Keep jobs and their summaries this long after they\n"
               "                                were last seen (default 0: for good; at least\n"
               "                                --keep-raw-days)\n"
               "     --retention-interval SEC   Time between retention passes (default 3600)\n"
               "     --debuginfod URL...        Name the functions lmkd could not from these\n"
               "                                debuginfod servers, by build-id (default:\n"
               "                                $DEBUGINFOD_URLS; \"\": none)\n"
               "     --debuginfod-cache DIR     Where fetched debug files are kept (default: the\n"
               "                                store's state folder)\n"
               "     --debuginfod-timeout SEC   Give up a query that makes no progress for SEC\n"
               "                                (DEBUGINFOD_TIMEOUT, default 10)\n"
               "     --debuginfod-retry SEC     Ask again for a build not found after (default 3600)\n"
               "     --debuginfod-queue N       Build-ids waiting for a lookup, at most (default 1024)\n"
               "     --db-wait SEC|forever      How long to wait at start for a database server\n"
               "                                that cannot be reached (default forever)\n"
               "\nSee lmk-store(8).\n");
}

static const struct option options[] = {
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { "config", required_argument, NULL, 'c' },
        { "db", required_argument, NULL, 'd' },
        { "listen", required_argument, NULL, 'l' },
        { "token-file", required_argument, NULL, 't' },
        { "findings", required_argument, NULL, 'f' },
        { "families", required_argument, NULL, 'F' },
        { "leads", required_argument, NULL, 'L' },
        { "munge-socket", required_argument, NULL, 'M' },
        { "site-views", required_argument, NULL, 'v' },
        { "admin-users", required_argument, NULL, 'A' },
        { "session-key", required_argument, NULL, 'K' },
        { "session-ttl", required_argument, NULL, 'S' },
        { "user-header", required_argument, NULL, 'u' },
        { "trusted-proxies", required_argument, NULL, 'P' },
        { "threads", required_argument, NULL, 'T' },
        { "writers", required_argument, NULL, 'w' },
        { "connection-timeout", required_argument, NULL, 'o' },
        { "header-timeout", required_argument, NULL, 'H' },
        { "body-timeout", required_argument, NULL, 'y' },
        { "body-min-rate", required_argument, NULL, 'r' },
        { "max-connections", required_argument, NULL, 'm' },
        { "max-connections-per-ip", required_argument, NULL, 'p' },
        { "max-body", required_argument, NULL, 'b' },
        { "max-buffered", required_argument, NULL, 'B' },
        { "keep-raw-days", required_argument, NULL, 'k' },
        { "retention-interval", required_argument, NULL, 'R' },
        { "db-wait", required_argument, NULL, 'W' },
        { "keep-rollup-days", required_argument, NULL, 'U' },
        { "keep-job-days", required_argument, NULL, 'J' },
        { "debuginfod", required_argument, NULL, 'D' },
        { "debuginfod-cache", required_argument, NULL, 'E' },
        { "debuginfod-timeout", required_argument, NULL, 'X' },
        { "debuginfod-retry", required_argument, NULL, 'Y' },
        { "debuginfod-queue", required_argument, NULL, 'Q' },
        {}
};

/* Two passes: the config file first, then the other options on top of it. */
static int parse_argv(int argc, char **argv, StoreConfig *c) {
        const char *config = NULL;
        int opt, r;

        opterr = 0;
        while ((opt = getopt_long(argc, argv, "hc:", options, NULL)) >= 0)
                switch (opt) {
                case 'h':
                        help();
                        return 0;
                case 'V':
                        printf("lmk-store %s\n", PACKAGE_VERSION);
                        return 0;
                case 'c':
                        config = optarg;
                        break;
                case '?':
                        return log_error_errno(-EINVAL, "Unknown option or missing argument: %s",
                                               argv[optind - 1]);
                }
        if (optind < argc)
                return log_error_errno(-EINVAL, "Unexpected argument: %s", argv[optind]);

        if (config) {
                unsigned line = 0;

                r = store_config_load(c, config, &line);
                if (r == -ENOENT && line > 0)
                        return log_error_errno(r, "%s:%u: unknown setting or section.", config, line);
                if (r < 0 && line > 0)
                        return log_error_errno(r, "%s:%u: invalid setting: %m", config, line);
                if (r < 0)
                        return log_error_errno(r, "Failed to read config file %s: %m", config);
        }

        optind = 0;
        while ((opt = getopt_long(argc, argv, "hc:", options, NULL)) >= 0) {
                const struct option *o;

                if (opt == 'c')
                        continue;
                for (o = options; o->name && o->val != opt; o++)
                        ;
                r = store_config_set(c, o->name, optarg);
                if (r < 0)
                        return log_error_errno(r, "Invalid --%s=%s: %m", o->name, optarg);
        }

        if (c->keep_rollup_days > 0 && (c->keep_raw_days == 0 || c->keep_rollup_days < c->keep_raw_days))
                return log_error_errno(-EINVAL, "--keep-rollup-days %u would delete site-wide rollups of time "
                                       "whose raw rows are still kept (--keep-raw-days %u): it must be at "
                                       "least as long.", c->keep_rollup_days, c->keep_raw_days);
        if (c->keep_job_days > 0 && (c->keep_raw_days == 0 || c->keep_job_days < c->keep_raw_days))
                return log_error_errno(-EINVAL, "--keep-job-days %u would delete jobs whose raw rows are "
                                       "still kept (--keep-raw-days %u): it must be at least as long.",
                                       c->keep_job_days, c->keep_raw_days);
        if (!c->db || !c->listen || !c->token_file)
                return log_error_errno(-EINVAL, "--db, --listen and --token-file are required "
                                                "(on the command line or in --config).");
        return 1;
}

/* The token file gives access to everything: common/token-file.h's policy
 * (mode 0600, owner, size, strict text) refuses one others can read. */
static int load_tokens(const char *path, TokenSet **ret) {
        _cleanup_free_ char *why = NULL;
        int r;

        r = token_set_load_file(path, ret, &why);
        if (r < 0 && why)
                return log_error_errno(r, "%s", why);
        if (r < 0)
                return log_error_errno(r, "Failed to read token file %s: %m", path);
        if (token_set_size(*ret, ROLE_ADMIN) == 0)
                log_warning("%s has no admin token: queries will all be refused.", path);
        if (token_set_size(*ret, ROLE_NODE) == 0)
                log_warning("%s has no node token: ingest will be refused.", path);
        return 0;
}

/* The debuginfod client takes its servers, its cache and its time-out
 * from the environment: set here, before any thread starts. Returns 1
 * when lookups are on. The cache: --debuginfod-cache, else a folder of
 * the store's (systemd's state folder, else the SQLite database's). */
static int setup_debuginfod(const StoreConfig *c, char **ret_cache) {
        const char *urls = c->debuginfod ?: getenv("DEBUGINFOD_URLS"), *state;
        _cleanup_free_ char *cache = NULL;
        char timeout[16];
        int k = 0;

        *ret_cache = NULL;
        if (!urls || !*urls)
                return 0;
        if (!symbols_supported()) {
                if (c->debuginfod)
                        return log_error_errno(-EOPNOTSUPP, "--debuginfod: this lmk-store was built without "
                                               "libdebuginfod.");
                log_warning("DEBUGINFOD_URLS is set, but this lmk-store was built without libdebuginfod: "
                            "unnamed functions stay unnamed.");
                return 0;
        }
        state = getenv("STATE_DIRECTORY");
        if (c->debuginfod_cache)
                k = asprintf(&cache, "%s", c->debuginfod_cache);
        else if (state) /* the first of its folders */
                k = asprintf(&cache, "%.*s/debuginfod", (int) strcspn(state, ":"), state);
        else if (!strstr(c->db, "://")) {
                const char *path = c->db + (strncmp(c->db, "sqlite:", 7) == 0 ? 7 : 0), *slash = strrchr(path, '/');

                k = asprintf(&cache, "%.*s/debuginfod-cache", slash ? (int) (slash - path) : 1, slash ? path : ".");
        }
        if (k < 0)
                return log_oom();
        snprintf(timeout, sizeof(timeout), "%u", c->debuginfod_timeout);
        if (setenv("DEBUGINFOD_URLS", urls, 1) < 0 || (cache && setenv("DEBUGINFOD_CACHE_PATH", cache, 1) < 0) ||
            setenv("DEBUGINFOD_TIMEOUT", timeout, 1) < 0)
                return log_oom();
        *ret_cache = TAKE_PTR(cache);
        return 1;
}

static void format_address(const struct sockaddr_storage *sa, uint16_t port, char *buf, size_t size) {
        char host[INET6_ADDRSTRLEN] = "?";

        if (sa->ss_family == AF_INET6) {
                inet_ntop(AF_INET6, &((const struct sockaddr_in6 *) sa)->sin6_addr, host, sizeof(host));
                snprintf(buf, size, "[%s]:%u", host, port);
        } else {
                inet_ntop(AF_INET, &((const struct sockaddr_in *) sa)->sin_addr, host, sizeof(host));
                snprintf(buf, size, "%s:%u", host, port);
        }
}

static void notify(const char *state) {
        (void) service_notify(state);
}

/* The findings' rules and the library families, from the configured files
 * or, where none was named, the defaults in LMK_SYSCONF_DIR when they
 * exist. A file that cannot be read or parsed is an error: a site that
 * wrote rules must not silently get the built-in ones. */
static int load_findings(const StoreConfig *c, FindingsConfig **ret_findings, LibFamilies **ret_families) {
        _cleanup_free_ FindingsConfig *fc = NULL;
        _cleanup_free_ LibFamilies *lf = NULL;
        _cleanup_free_ char *why = NULL;
        const char *path;
        int r;

        fc = calloc(1, sizeof(*fc));
        lf = calloc(1, sizeof(*lf));
        if (!fc || !lf)
                return log_oom();
        r = findings_config_init(fc);
        if (r < 0)
                return log_oom();
        path = c->findings_file ?: LMK_SYSCONF_DIR "/findings.conf";
        if (c->findings_file || access(path, F_OK) == 0) {
                r = findings_config_load(fc, path, &why);
                if (r < 0) {
                        findings_config_done(fc);
                        return log_error_errno(r, "Failed to load findings: %s", why ?: path);
                }
                log_info("Findings from %s.", path);
        }
        r = lib_families_init(lf);
        if (r < 0) {
                findings_config_done(fc);
                return log_oom();
        }
        path = c->families_file ?: LMK_SYSCONF_DIR "/families.conf";
        if (c->families_file || access(path, F_OK) == 0) {
                r = lib_families_add_file(lf, path, &why);
                if (r < 0) {
                        findings_config_done(fc);
                        lib_families_done(lf);
                        if (why)
                                return log_error_errno(r, "Failed to load library families: %s", why);
                        return log_error_errno(r, "Failed to read library families %s: %m", path);
                }
                log_info("Library families from %s: %zu of the site's own.", path, lf->n_site);
        }
        *ret_findings = TAKE_PTR(fc);
        *ret_families = TAKE_PTR(lf);
        return 0;
}

/* Who leads which account; no file (and none named) is an empty list. */
static int load_leads(const StoreConfig *c, Leads **ret) {
        _cleanup_free_ char *why = NULL;
        const char *path = c->leads_file ?: LMK_SYSCONF_DIR "/leads.conf";
        int r;

        if (!c->leads_file && access(path, F_OK) < 0) {
                *ret = leads_new();
                return *ret ? 0 : log_oom();
        }
        r = leads_load_file(path, ret, &why);
        if (r < 0)
                return log_error_errno(r, "Failed to load the account leads: %s", why ?: path);
        log_info("Account leads from %s.", path);
        return 0;
}

/* Pings the watchdog while the database answers, so that a wedged store
 * gets restarted by systemd, and while a database server cannot be
 * reached: a restart would not bring it back, and the driver reconnects
 * by itself (meanwhile ingest answers 503 and /healthz says so). */
static void watchdog_ping(Server *s, bool *db_down) {
        int r = s->storage->ops->check(s->storage);
        bool down = r == -ECONNREFUSED || r == -ECONNRESET;

        if (down != *db_down) {
                if (down)
                        log_warning("Database unreachable, reconnecting: %s", db_error_last() ?: strerror(-r));
                else
                        log_info("Database reachable again.");
                notify(down ? "STATUS=Database unreachable, reconnecting" : "STATUS=Serving");
                *db_down = down;
        }
        if (r >= 0 || down)
                notify("WATCHDOG=1");
        else
                log_warning("Database check failed, not pinging the watchdog: %s",
                            db_error_last() ?: strerror(-r));
}

/* How often the main thread looks for batches' site function sums due
 * to be folded (StorageOps.fold_function_sums), for a store that went
 * quiet: its writers fold after groups of batches while they come. */
#define FOLD_CHECK_USEC UINT64_C(1000000)

/* Adds the site function sums that batches left to their tables: what is
 * due, or all. A failure is said once, not every second while the
 * database is away, and so is the recovery. */
static void fold_function_sums(Storage *storage, bool all) {
        static bool failing = false;
        uint64_t n = 0;
        int r = storage->ops->fold_function_sums(storage, all, &n);

        if (r < 0 && !failing)
                log_warning_errno(r, "Could not add batches' sums to the site's function rankings: %m (%s); "
                                  "trying again every second.", db_error_last() ?: "no message");
        else if (r >= 0 && failing)
                log_info("Adding batches' sums to the site's function rankings again.");
        else if (r >= 0 && all && n > 0)
                log_info("Added %" PRIu64 " batches' sums to the site's function rankings.", n);
        failing = r < 0;
}

/* Waits for signals, pinging the watchdog (watchdog_ping()) and folding
 * the site's function sums when due. */
static int run(Server *s, const StoreConfig *c, const sigset_t *mask) {
        uint64_t wd = service_watchdog_usec(), tick = wd > 0 ? MIN(wd / 2, FOLD_CHECK_USEC) : FOLD_CHECK_USEC;
        uint64_t pinged = now_ns(CLOCK_MONOTONIC);
        bool db_down = false;

        for (;;) {
                struct timespec ts = {
                        .tv_sec = (time_t) (tick / 1000000),
                        .tv_nsec = (long) (tick % 1000000) * 1000,
                };
                siginfo_t si;
                int sig;

                sig = sigtimedwait(mask, &si, &ts);
                if (sig < 0) {
                        if (errno == EAGAIN) {
                                uint64_t now = now_ns(CLOCK_MONOTONIC);

                                if (wd > 0 && now - pinged >= wd / 2 * 1000) {
                                        watchdog_ping(s, &db_down);
                                        pinged = now;
                                }
                                fold_function_sums(s->storage, false);
                                continue;
                        }
                        if (errno == EINTR)
                                continue;
                        return log_error_errno(errno, "Failed to wait for signals: %m");
                }
                if (sig == SIGHUP) {
                        FindingsConfig *fc = NULL;
                        LibFamilies *lf = NULL;
                        TokenSet *t = NULL;

                        notify("RELOADING=1");
                        if (load_tokens(c->token_file, &t) >= 0) {
                                auth_set_tokens(&s->auth, t);
                                log_info("Reloaded tokens from %s.", c->token_file);
                        } else
                                log_warning("Keeping the previous tokens.");
                        Leads *leads = NULL;
                        if (load_leads(c, &leads) >= 0)
                                auth_set_leads(&s->auth, leads);
                        else
                                log_warning("Keeping the previous account leads.");
                        if (load_findings(c, &fc, &lf) >= 0)
                                server_set_findings(s, fc, lf);
                        else
                                log_warning("Keeping the previous findings and library families.");
                        notify("READY=1");
                        continue;
                }
                log_info("Received %s, finishing requests in flight.", strsignal(sig));
                return 0;
        }
}

/* "a, b c" into a NULL-terminated list; NULL for none. */
static char **split_users(const char *s) {
        char **v = NULL;
        size_t n = 0;

        for (const char *p = s; p && *p;) {
                size_t len;
                char **nv;

                p += strspn(p, ", \t");
                len = strcspn(p, ", \t");
                if (len == 0)
                        break;
                nv = realloc(v, (n + 2) * sizeof(char *));
                if (!nv || !(nv[n] = strndup(p, len))) {
                        v = nv ?: v;
                        while (n > 0)
                                free(v[--n]);
                        free(v);
                        return NULL;
                }
                v = nv;
                v[++n] = NULL;
                p += len;
        }
        return v;
}

static void free_users(char **v) {
        for (char **p = v; p && *p; p++)
                free(*p);
        free(v);
}

static int load_session_key(const StoreConfig *c, uint8_t key[static SESSION_KEY_SIZE]) {
        int r;

        if (!c->session_key_file) {
                r = session_key_random(key);
                if (r < 0)
                        return log_error_errno(r, "Failed to draw a session key: %m");
                return 0;
        }
        r = session_key_load(c->session_key_file, key);
        if (r == -EPERM)
                return log_error_errno(r, "Session key %s may be read by others: it must be its owner's "
                                       "only (chmod 600).", c->session_key_file);
        if (r == -EINVAL)
                return log_error_errno(r, "Session key %s is shorter than %d bytes.", c->session_key_file,
                                       SESSION_KEY_SIZE);
        if (r < 0)
                return log_error_errno(r, "Failed to read session key %s: %m", c->session_key_file);
        return 0;
}

/* Opens and migrates the database. A database server that cannot be
 * reached (PostgreSQL starting after the store, on another host, or
 * restarting) is waited for, trying again after 0.1 s, then twice as long
 * each time up to 5 s, for up to wait_s seconds (STORE_DB_WAIT_FOREVER:
 * as long as it takes). systemd hears why the start takes long, and a
 * stop request ends the wait. 1: open, 0: asked to stop, -errno: failed
 * (logged). */
static int open_database(const StorageOps *ops, const char *location, const StorageOptions *opts,
                         unsigned wait_s, const sigset_t *mask, Storage **ret, unsigned *ret_version) {
        uint64_t start = now_ns(CLOCK_MONOTONIC), logged = 0, backoff_ms = 0;
        bool waited = false;

        for (;;) {
                Storage *storage = NULL;
                const char *stage = "open";
                unsigned from, to;
                uint64_t now;
                int r;

                r = ops->open(location, opts, &storage);
                if (r >= 0) {
                        stage = "migrate";
                        r = ops->migrate(storage, &from, &to);
                        if (r >= 0) {
                                if (waited)
                                        log_info("Database server reachable after %.1f s.",
                                                 (double) (now_ns(CLOCK_MONOTONIC) - start) / 1e9);
                                if (from != to)
                                        log_info("Migrated database %s from schema version %u to %u.", location,
                                                 from, to);
                                *ret = storage;
                                *ret_version = to;
                                return 1;
                        }
                        ops->close(storage);
                }
                if (r == -EPROTO)
                        return log_error_errno(r, "Database %s has a schema this lmk-store does not know (newer, "
                                               "or from another branch): refusing to touch it.", location);
                if (r != -ECONNREFUSED && r != -ECONNRESET)
                        return log_error_errno(r, "Failed to %s database %s: %s", stage, location,
                                               db_error_last() ?: strerror(-r));

                now = now_ns(CLOCK_MONOTONIC);
                if (wait_s != STORE_DB_WAIT_FOREVER && now - start >= (uint64_t) wait_s * 1000000000)
                        return log_error_errno(r, "Database server unreachable%s, giving up (--db-wait %u): %s",
                                               waited ? " all this time" : "", wait_s,
                                               db_error_last() ?: strerror(-r));
                /* once at first, then once a minute */
                if (!waited || now - logged >= UINT64_C(60) * 1000000000) {
                        log_warning("Database server unreachable, waiting for it: %s", db_error_last() ?: strerror(-r));
                        logged = now;
                }
                waited = true;
                backoff_ms = backoff_ms ? MIN(backoff_ms * 2, UINT64_C(5000)) : 100;
                notify("STATUS=Waiting for the database server");
                {
                        char extend[64];

                        snprintf(extend, sizeof(extend), "EXTEND_TIMEOUT_USEC=%" PRIu64, (backoff_ms + 30000) * 1000);
                        notify(extend);
                }
                struct timespec ts = { .tv_sec = (time_t) (backoff_ms / 1000),
                                       .tv_nsec = (long) (backoff_ms % 1000) * 1000000 };
                siginfo_t si;
                int sig = sigtimedwait(mask, &si, &ts);

                if (sig == SIGHUP)
                        continue;
                if (sig >= 0) {
                        log_info("Received %s while waiting for the database server; stopping.", strsignal(sig));
                        return 0;
                }
        }
}

int main(int argc, char **argv) {
        _cleanup_(store_config_done) StoreConfig c;
        const StorageOps *ops;
        const char *location;
        StorageOptions sopts;
        HttpConfig http;
        Server s = {};
        Storage *storage = NULL;
        TokenSet *tokens = NULL;
        unsigned to = 0;
        char addr[INET6_ADDRSTRLEN + 16];
        Retention retention = {};
        _cleanup_free_ char *debuginfod_cache = NULL;
        sigset_t mask;
        int r, debuginfod;

        log_setup("lmk-store");
        /* The database and the -wal and -shm beside it (SQLite gives them
         * the database's mode) hold every user's jobs: its owner's only,
         * as the unit's UMask= has it, also when started by hand. */
        umask(umask(0077) | 0077);
        store_config_init(&c);
        if (argc > 1 && streq(argv[1], "migrate"))
                return migrate_main(argc - 1, argv + 1);
        r = parse_argv(argc, argv, &c);
        if (r <= 0)
                return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        debuginfod = setup_debuginfod(&c, &debuginfod_cache);
        if (debuginfod < 0)
                return EXIT_FAILURE;

        /* Every thread started from here on inherits the mask, so these
         * signals reach only the main thread's sigwait. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        pthread_sigmask(SIG_BLOCK, &mask, NULL);
        signal(SIGPIPE, SIG_IGN);

        server_init(&s);
        http = (HttpConfig) {
                .threads = c.threads,
                .connection_timeout_s = c.connection_timeout,
                .header_timeout_s = c.header_timeout,
                .body_timeout_s = c.body_timeout,
                .body_min_rate = c.body_min_rate,
                .max_connections = c.max_connections,
                .max_connections_per_ip = c.max_connections_per_ip,
                .max_body = c.max_body,
                .max_buffered = c.max_buffered,
        };
        s.max_inflated = c.max_body;
        s.auth.config = (AuthConfig) {
                .munge_socket = c.munge_socket,
                .user_header = c.user_header,
                .site_views_admin_only = c.site_views_admin_only,
                .session_ttl_s = c.session_ttl,
        };
        if (c.admin_users && !(s.auth.config.admin_users = split_users(c.admin_users)))
                return log_oom(), EXIT_FAILURE;
        if (load_session_key(&c, s.auth.config.session_key) < 0)
                return EXIT_FAILURE;
        if (c.trusted_proxies && trusted_proxies_parse(c.trusted_proxies, &s.auth.config.trusted_proxies) < 0)
                return log_error("Invalid --trusted-proxies %s.", c.trusted_proxies), EXIT_FAILURE;
        if (!c.user_header != !c.trusted_proxies)
                return log_error("--user-header and --trusted-proxies go together: the header counts "
                                 "only from the proxies."), EXIT_FAILURE;
        r = parse_listen(c.listen, &http.listen, NULL);
        if (r < 0)
                return log_error_errno(r, "Invalid listen address %s: %m", c.listen), EXIT_FAILURE;

        if (load_tokens(c.token_file, &tokens) < 0)
                return EXIT_FAILURE;
        if (load_findings(&c, &s.findings, &s.families) < 0 || load_leads(&c, &s.auth.leads) < 0) {
                token_set_free(tokens);
                server_stop(&s, 0);
                return EXIT_FAILURE;
        }

        r = storage_ops_for(c.db, &ops, &location);
        if (r < 0) {
                token_set_free(tokens);
                return log_error_errno(r, "Unsupported database %s (this build knows sqlite:PATH).", c.db),
                       EXIT_FAILURE;
        }
        sopts = (StorageOptions) { .readers = c.threads, .writers = c.writers, .busy_timeout_ms = 5000 };
        r = open_database(ops, location, &sopts, c.db_wait, &mask, &storage, &to);
        if (r <= 0) {
                token_set_free(tokens);
                server_stop(&s, 0);
                free_users(s.auth.config.admin_users);
                return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        }
        s.storage = storage;
        s.auth.tokens = TAKE_PTR(tokens);
        /* what a store stopped without its last fold left */
        fold_function_sums(storage, true);
        if (debuginfod > 0) {
                SymbolsConfig sc = {
                        .timeout_s = c.debuginfod_timeout,
                        .retry_s = c.debuginfod_retry,
                        .queue_max = c.debuginfod_queue,
                };

                r = symbols_start(&sc, storage, &s.metrics, &s.symbols);
                if (r < 0) {
                        log_error_errno(r, "Failed to start the debuginfod lookups: %m");
                        goto fail;
                }
                log_info("Naming unnamed functions by build-id from %s (files kept in %s).",
                         getenv("DEBUGINFOD_URLS"), debuginfod_cache ?: "the client's default cache");
        }
        r = server_start(&s, &http);
        if (r < 0) {
                log_error_errno(r, "Failed to listen on %s: %m", c.listen);
                goto fail;
        }
        format_address(&http.listen, server_port(&s), addr, sizeof(addr));
        log_info("Listening on http://%s/ with database %s (%s, schema version %u).",
                 addr, location, ops->name, to);
        retention = (Retention) {
                .storage = storage, .metrics = &s.metrics,
                .keep_raw_days = c.keep_raw_days, .keep_rollup_days = c.keep_rollup_days,
                .keep_job_days = c.keep_job_days,
                .interval_s = c.retention_interval,
        };
        if (retention_start(&retention) < 0)
                goto fail;
        notify("READY=1\nSTATUS=Serving");

        r = run(&s, &c, &mask);

        notify("STOPPING=1");
        retention_stop(&retention);
        server_stop(&s, STOP_TIMEOUT_S);
        symbols_stop(s.symbols);
        /* the batches stored since the last fold: their sums to the
         * tables now, rather than at the next start */
        fold_function_sums(storage, true);
        ops->close(storage);
        free_users(s.auth.config.admin_users);
        explicit_bzero(s.auth.config.session_key, sizeof(s.auth.config.session_key));
        log_info("Stopped.");
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;

fail:
        server_stop(&s, 0);
        symbols_stop(s.symbols);
        free_users(s.auth.config.admin_users);
        ops->close(storage);
        return EXIT_FAILURE;
}
