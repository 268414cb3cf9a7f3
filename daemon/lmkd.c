/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>

#include "event-order.h"
#include "interval-json.h"
#include "lmkd-config.h"
#include "log.h"
#include "monitor.h"
#include "notices.h"
#include "lmkd-metrics.h"
#include "metrics-server.h"
#include "push-pipeline.h"
#include "output-file.h"
#include "report.h"
#include "service-notify.h"
#include "util.h"

enum {
        ARG_FORMAT = 0x100,
        ARG_EVENT,
        ARG_JITTER,
        ARG_POLL_MS,
        ARG_QUIET_POLL_MS,
        ARG_READY_FILE,
        ARG_PROC_ROOT,
        ARG_VERSION,
        ARG_STORE,
        ARG_TOKEN_FILE,
        ARG_CA_FILE,
        ARG_PUSH_INTERVAL,
        ARG_SPOOL,
        ARG_NODE_NAME,
        ARG_CLUSTER,
        ARG_METRICS_FILE,
        ARG_METRICS_LISTEN,
        ARG_LIBLMK,
        ARG_FAMILIES,
        ARG_NOTIFY_SOCKET,
        ARG_OPT_OUT,
        ARG_BURST,
        ARG_EXACT_COUNTERS,
        ARG_JOB_COUNTERS,
        ARG_POWERCAP_ROOT,
        ARG_FUNCTIONS,
};

/* Unknown names are configuration errors; known events this machine cannot
 * count are reported once and read as null, and lmkd samples on. */
static int resolve_events(EventSpec *ev, size_t n) {
        char roles[EVENT_MAX * (EVENT_ROLE_MAX + EVENT_NAME_MAX + 3)] = "";

        for (size_t i = 0; i < n; i++)
                snprintf(roles + strlen(roles), sizeof(roles) - strlen(roles), "%s%.31s=%.127s", i ? ", " : "",
                         ev[i].role, ev[i].name);
        if (n > 0)
                log_info("Counters by role: %s.", roles);
        for (size_t i = 0; i < n; i++) {
                int r = event_resolve(&ev[i]);

                if (r == -ENOENT)
                        return log_error_errno(r, "Unknown counter event \"%s\" (role %s): not a perf event name, "
                                               "PAPI preset or native event known to libpfm4.", ev[i].name, ev[i].role);
                if (r < 0)
                        log_debug("Counter %s (%s) cannot be resolved: %s", ev[i].role, ev[i].name, ev[i].detail);
        }
        event_resolve_done();
        return 0;
}

static void report_unavailable_counters(Monitor *m) {
        const CounterState *cs;
        const EventSpec *ev;
        size_t n;

        ev = sampler_events(monitor_sampler(m), &n);
        cs = sampler_counters(monitor_sampler(m), &n);
        for (size_t i = 0; i < n; i++)
                if (!cs[i].available)
                        log_warning("Counter %s (%s) is unavailable on this machine: %s. It is reported as null; "
                                    "sampling goes on.", ev[i].role, ev[i].name,
                                    ev[i].detail[0] ? ev[i].detail : counter_error_text(cs[i].error));
}

static const struct option options[] = {
        { "config", required_argument, NULL, 'c' },
        { "foreground", no_argument, NULL, 'f' },
        { "frequency", required_argument, NULL, 'F' },
        { "duration", required_argument, NULL, 'd' },
        { "output", required_argument, NULL, 'o' },
        { "format", required_argument, NULL, ARG_FORMAT },
        { "event", required_argument, NULL, ARG_EVENT },
        { "events", required_argument, NULL, 'e' },
        { "jitter", required_argument, NULL, ARG_JITTER },
        { "burst", required_argument, NULL, ARG_BURST },
        { "exact-counters", required_argument, NULL, ARG_EXACT_COUNTERS },
        { "job-counters", required_argument, NULL, ARG_JOB_COUNTERS },
        { "functions", required_argument, NULL, ARG_FUNCTIONS },
        { "poll-ms", required_argument, NULL, ARG_POLL_MS },
        { "quiet-poll-ms", required_argument, NULL, ARG_QUIET_POLL_MS },
        { "ready-file", required_argument, NULL, ARG_READY_FILE },
        { "proc-root", required_argument, NULL, ARG_PROC_ROOT },
        { "powercap-root", required_argument, NULL, ARG_POWERCAP_ROOT },
        { "store", required_argument, NULL, ARG_STORE },
        { "token-file", required_argument, NULL, ARG_TOKEN_FILE },
        { "ca-file", required_argument, NULL, ARG_CA_FILE },
        { "push-interval", required_argument, NULL, ARG_PUSH_INTERVAL },
        { "spool", required_argument, NULL, ARG_SPOOL },
        { "node-name", required_argument, NULL, ARG_NODE_NAME },
        { "cluster", required_argument, NULL, ARG_CLUSTER },
        { "metrics-file", required_argument, NULL, ARG_METRICS_FILE },
        { "metrics-listen", required_argument, NULL, ARG_METRICS_LISTEN },
        { "liblmk", required_argument, NULL, ARG_LIBLMK },
        { "families", required_argument, NULL, ARG_FAMILIES },
        { "notify-socket", required_argument, NULL, ARG_NOTIFY_SOCKET },
        { "opt-out", required_argument, NULL, ARG_OPT_OUT },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, ARG_VERSION },
        {}
};
static const char short_options[] = "c:fF:d:o:e:vh";

/* Command-line options that are config keys: the same validation applies. */
static const struct {
        int opt;
        const char *section, *key, *name;
} option_keys[] = {
        { 'F', "sampling", "frequency", "--frequency" },
        { ARG_EVENT, "sampling", "event", "--event" },
        { 'e', "sampling", "events", "--events" },
        { ARG_JITTER, "sampling", "jitter", "--jitter" },
        { ARG_BURST, "sampling", "burst", "--burst" },
        { ARG_EXACT_COUNTERS, "sampling", "exact_counters", "--exact-counters" },
        { ARG_JOB_COUNTERS, "sampling", "job_counters", "--job-counters" },
        { ARG_FUNCTIONS, "sampling", "functions", "--functions" },
        { ARG_POLL_MS, "sampling", "poll_ms", "--poll-ms" },
        { ARG_QUIET_POLL_MS, "sampling", "quiet_poll_ms", "--quiet-poll-ms" },
        { 'd', "report", "duration", "--duration" },
        { 'o', "report", "output", "--output" },
        { ARG_FORMAT, "report", "format", "--format" },
        { ARG_READY_FILE, "report", "ready_file", "--ready-file" },
        { ARG_PROC_ROOT, "node", "proc_root", "--proc-root" },
        { ARG_POWERCAP_ROOT, "node", "powercap_root", "--powercap-root" },
        { ARG_STORE, "store", "url", "--store" },
        { ARG_TOKEN_FILE, "store", "token_file", "--token-file" },
        { ARG_CA_FILE, "store", "ca_file", "--ca-file" },
        { ARG_PUSH_INTERVAL, "store", "push_interval", "--push-interval" },
        { ARG_SPOOL, "store", "spool", "--spool" },
        { ARG_NODE_NAME, "node", "name", "--node-name" },
        { ARG_CLUSTER, "node", "cluster", "--cluster" },
        { ARG_METRICS_FILE, "node", "metrics_file", "--metrics-file" },
        { ARG_METRICS_LISTEN, "node", "metrics_listen", "--metrics-listen" },
        { ARG_LIBLMK, "markers", "liblmk", "--liblmk" },
        { ARG_FAMILIES, "families", "file", "--families" },
        { ARG_NOTIFY_SOCKET, "node", "notify_socket", "--notify-socket" },
        { ARG_OPT_OUT, "node", "opt_out", "--opt-out" },
};

static int load_config(int argc, char **argv, LmkdConfig *cfg) {
        _cleanup_free_ char *error = NULL;
        const char *path = NULL;
        bool explicit = false;
        int c, r;

        /* first pass: only --config, which the rest of the command line overrides */
        opterr = 0;
        while ((c = getopt_long(argc, argv, short_options, options, NULL)) >= 0)
                if (c == 'c') {
                        path = optarg;
                        explicit = true;
                }
        optind = 0;
        opterr = 1;
        if (!path)
                path = LMK_SYSCONF_DIR "/lmkd.conf";
        r = config_load_file(cfg, path, &error);
        if (r == -ENOENT && !explicit)
                return 0;
        if (r < 0 && error)
                return log_error_errno(r, "Invalid configuration in %s, %s.", path, error);
        if (r < 0)
                return log_error_errno(r, "Failed to read configuration %s: %m", path);
        return 0;
}

static int parse_args(int argc, char **argv, LmkdConfig *cfg) {
        int c, r;

        r = load_config(argc, argv, cfg);
        if (r < 0)
                return r;

        while ((c = getopt_long(argc, argv, short_options, options, NULL)) >= 0) {
                bool handled = false;

                for (size_t i = 0; i < ELEMENTSOF(option_keys); i++) {
                        const char *why;

                        if (option_keys[i].opt != c)
                                continue;
                        r = config_set(cfg, option_keys[i].section, option_keys[i].key, optarg, &why);
                        if (r == -ENOMEM)
                                return log_oom();
                        if (r < 0)
                                return log_error_errno(r, "Invalid %s \"%s\": expected %s.", option_keys[i].name, optarg, why);
                        handled = true;
                }
                if (handled)
                        continue;
                switch (c) {
                case 'c':
                case 'f':
                        break;
                case 'v':
                        log_set_max_level(LOG_DEBUG);
                        break;
                case 'h':
                        fputs(config_help_text, stdout);
                        return 0;
                case ARG_VERSION:
                        printf("lmkd " PACKAGE_VERSION "\n");
                        return 0;
                default:
                        return -EINVAL;
                }
        }
        if (optind < argc)
                return log_error_errno(-EINVAL, "Unexpected argument \"%s\"; see lmkd --help.", argv[optind]);
        if (!cfg->output && !cfg->store_url)
                return log_error_errno(-EINVAL, "Nothing to do: give --store URL to push to lmk-store, or --output FILE "
                                       "('-' for the terminal) for a report.");
        if (cfg->output && !cfg->format &&
            config_set(cfg, "report", "format", streq(cfg->output, "-") ? "table" : "json", &(const char *) { NULL }) < 0)
                return log_oom();
        if (cfg->store_url && !cfg->notify_socket && !cfg->notify_socket_none &&
            config_set(cfg, "node", "notify_socket", JOB_NOTICE_SOCKET_DEFAULT, &(const char *) { NULL }) < 0)
                return log_oom();
        r = resolve_events(cfg->events, cfg->n_events);
        if (r < 0)
                return r;
        return 1;
}

_printf_(2, 0)
static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap) {
        static char buf[64 * 1024]; /* verifier logs come in one piece */
        size_t n;

        if (level == LIBBPF_DEBUG && log_get_max_level() < LOG_DEBUG)
                return 0;
        vsnprintf(buf, sizeof(buf), fmt, ap);
        n = strlen(buf);
        if (n > 0 && buf[n - 1] == '\n')
                buf[n - 1] = '\0';
        log_full(level == LIBBPF_WARN ? LOG_WARNING : LOG_DEBUG, "libbpf: %s", buf);
        return 0;
}

/* How often the timer drains the rings while nothing new runs: at least
 * poll_ms, and twice within a service manager's watchdog period, since
 * each tick tells it that lmkd is alive. */
static unsigned quiet_poll_ms(const LmkdConfig *o) {
        uint64_t ms = MAX(o->quiet_poll_ms, o->poll_ms), wd = service_watchdog_usec();

        if (wd > 0)
                ms = MIN(ms, MAX(wd / 2000, (uint64_t) o->poll_ms));
        return (unsigned) ms;
}

/* Arms a one-shot timer ns from now. */
static int arm_once(int fd, uint64_t ns) {
        struct itimerspec its = { .it_value = { .tv_sec = (time_t) (ns / 1000000000),
                                                .tv_nsec = (long) (ns % 1000000000) } };

        return timerfd_settime(fd, 0, &its, NULL) < 0 ? -errno : 0;
}

static int timer_fd(double first_s, double interval_s) {
        struct itimerspec its = {};
        int fd;

        fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
        if (fd < 0)
                return -errno;
        its.it_value.tv_sec = (time_t) first_s;
        its.it_value.tv_nsec = (long) ((first_s - floor(first_s)) * 1e9);
        if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
                its.it_value.tv_nsec = 1;
        its.it_interval.tv_sec = (time_t) interval_s;
        its.it_interval.tv_nsec = (long) ((interval_s - floor(interval_s)) * 1e9);
        if (timerfd_settime(fd, 0, &its, NULL) < 0) {
                int r = -errno;
                close(fd);
                return r;
        }
        return fd;
}

static int epoll_add(int ep, int fd) {
        struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
        return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

/* Why lmk does not write to a path a user named, in the user's terms. */
static int log_output_error(int r, const char *what, const char *path) {
        if (r == -EISDIR)
                return log_error_errno(r, "Failed to write %s to %s: it is a directory; name a file in it.", what, path);
        if (r == -EINVAL)
                return log_error_errno(r, "Failed to write %s to %s: lmkd writes only to a regular file (replaced "
                                       "atomically), a character device or a FIFO.", what, path);
        return log_error_errno(r, "Failed to write %s to %s: %m", what, path);
}

static int write_report(const Interval *iv, const LmkdConfig *o, const ReportInfo *info) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f;
        int r;

        if (streq(o->output, "-")) {
                r = streq(o->format, "json") ? report_write_json(iv, info, stdout) : report_write_table(iv, info, stdout);
                if (r < 0)
                        return log_error_errno(r, "Failed to write the report to standard output: %m");
                fflush(stdout);
                return 0;
        }
        /* The whole report first: a file is replaced atomically, a device or FIFO gets it in one go. */
        f = open_memstream(&buf, &size);
        if (!f)
                return log_oom();
        r = streq(o->format, "json") ? report_write_json(iv, info, f) : report_write_table(iv, info, f);
        if (fclose(f) != 0 && r >= 0)
                r = -ENOMEM;
        if (r < 0)
                return log_error_errno(r, "Failed to format the report: %m");
        r = write_file_at_user_path(o->output, buf, size, 0644);
        if (r < 0)
                return log_output_error(r, "the report", o->output);
        return 0;
}

/* A storm of short processes leaves the heap with megabytes free but not
 * returned (glibc keeps freed pages below live ones): give them back once
 * there is at least a megabyte of it, so lmkd's RSS returns after a storm.
 * Looked at after each batch (building one frees its JSON and gzip
 * buffers) and once a minute, not every tick: mallinfo2() walks every free
 * chunk of every arena, a fifth of lmkd's CPU at 1 Hz when it ran each
 * second, and a third of a quiet drain's (--quiet-poll-ms) when it ran
 * every 10 s. */
#define TRIM_EVERY_NS (UINT64_C(60) * 1000000000)

static void trim_heap(uint64_t now, uint64_t *last, bool batch_built) {
        struct mallinfo2 mi;

        if (!batch_built && now - *last < TRIM_EVERY_NS)
                return;
        *last = now;
        mi = mallinfo2();
        if (mi.fordblks > (size_t) 1 << 20)
                (void) malloc_trim(0);
}

/* Only under a service manager that listens: outside one, each tick
 * would still look at the environment to find that out. */
static void notify(const char *state) {
        static int listening = -1;

        if (listening < 0)
                listening = getenv("NOTIFY_SOCKET") != NULL;
        if (listening)
                (void) service_notify(state);
}

/* The library families that tell a rank's communication from its
 * computation: the built-in table, after the site's file. */
static int load_families(const LmkdConfig *o, LibFamilies *ret) {
        const char *path = o->families_file ?: LMK_SYSCONF_DIR "/families.conf";
        _cleanup_free_ char *error = NULL;
        int r;

        r = lib_families_init(ret);
        if (r < 0)
                return log_oom();
        r = lib_families_add_file(ret, path, &error);
        if (r == -ENOENT && !o->families_file)
                return 0;
        if (r == -EINVAL && error)
                return log_error_errno(r, "Invalid library families, %s.", error);
        if (r < 0)
                return log_error_errno(r, "Failed to read library families %s: %m", path);
        log_info("Library families: %zu of the site's from %s.", ret->n_site, path);
        return 0;
}

/* The metrics' text, to the file and the HTTP endpoint that want it. */
static void publish_metrics(const LmkdConfig *o, Monitor *m, Pushing *push, double start, MetricsServer *ms) {
        _cleanup_free_ char *text = NULL;

        if (!o->metrics_file && !ms)
                return;
        if (lmkd_metrics_format(m, push, start, &text) < 0) {
                log_oom();
                return;
        }
        if (o->metrics_file)
                lmkd_metrics_write(o->metrics_file, text);
        if (ms && metrics_server_publish(ms, text, strlen(text)) < 0)
                log_oom();
}

/* The copies of liblmk a site named: the default one is watched only when
 * it is installed, and its absence is no news. */
static void check_liblmk_paths(const LmkdConfig *o) {
        if (!o->liblmk_explicit)
                return;
        for (char **p = o->liblmk; p && *p; p++)
                if (access(*p, R_OK) < 0)
                        log_warning_errno(-errno, "liblmk %s (--liblmk, [markers] liblmk) cannot be read: %m; "
                                          "its markers are seen only once a process maps it.", *p);
}

static int start_metrics_server(const LmkdConfig *o, MetricsServer **ret) {
        struct sockaddr_storage sa;
        socklen_t len;
        int r;

        *ret = NULL;
        if (!o->metrics_listen)
                return 0;
        r = metrics_listen_parse(o->metrics_listen, &sa, &len);
        if (r < 0)
                return log_error_errno(r, "Invalid --metrics-listen \"%s\".", o->metrics_listen);
        r = metrics_server_start(&sa, len, ret);
        if (r < 0)
                return log_error_errno(r, "Failed to serve metrics on %s: %m", o->metrics_listen);
        log_info("Serving metrics on http://%s/metrics.", metrics_server_address(*ret, (char[64]) {}, 64));
        return 0;
}

static int run(const LmkdConfig *o) {
        _cleanup_(monitor_freep) Monitor *m = NULL;
        _cleanup_(metrics_server_stopp) MetricsServer *metrics = NULL;
        _cleanup_close_ int ep = -EBADF, sfd = -EBADF, tick = -EBADF, deadline = -EBADF, flush = -EBADF,
                            nfd = -EBADF, soon = -EBADF, follow = -EBADF;
        /* the timer's drains: every poll_ms, or less often while nothing new
         * runs (a wakeup costs an idle node more than its few samples) */
        const unsigned quiet_ms = quiet_poll_ms(o);
        bool soon_armed = false, follow_armed = false;
        _cleanup_(pushing_done) Pushing push = {};
        _cleanup_(lib_families_done) LibFamilies families = {};
        MonitorConfig cfg = {
                .sampler = {
                        .frequency = o->frequency,
                        .jitter = o->jitter,
                        .burst = o->burst,
                        .exact_counters = o->exact_counters,
                        .event = o->event,
                        .poll_ms = o->poll_ms,
                        /* samples of new processes cannot wait for a quiet timer */
                        .new_process_wake_ms = quiet_ms > o->poll_ms ? o->poll_ms : 0,
                        .quiet_poll_ms = quiet_ms,
                        .events = o->events,
                        .n_events = o->n_events,
                        /* for developers: the loader to compare with (docs/lmkd-internals.md) */
                        .use_libbpf = getenv("LMK_BPF_LOADER") && streq(getenv("LMK_BPF_LOADER"), "libbpf"),
                },
                .proc_root = o->proc_root,
                .powercap_root = o->powercap_root,
                .job_counters = o->job_counters,
                .opt_out_forbidden = o->opt_out_forbidden,
                .functions = o->functions,
                .liblmk_paths = (const char *const *) o->liblmk,
                .families = &families,
        };
        char host[256] = "localhost", text[1024];
        NodeType node_type;
        ReportInfo info = { .host = host, .node_type = &node_type };
        IntervalClock run_clock;
        double start, end;
        Interval iv;
        uint64_t t0, trimmed = 0;
        sigset_t mask;
        int r;

        (void) gethostname(host, sizeof(host) - 1);

        /* A shell starts background jobs with SIGINT ignored, and an ignored
         * signal never reaches a signalfd: take the default back first. */
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return log_error_errno(-errno, "Failed to block signals: %m");
        sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sfd < 0)
                return log_error_errno(-errno, "Failed to create signalfd: %m");

        if (o->output && !streq(o->output, "-") && (r = user_path_check(o->output)) < 0)
                return log_output_error(r, "the report", o->output);
        if (o->metrics_file && (r = user_path_check(o->metrics_file)) < 0)
                return log_output_error(r, "metrics", o->metrics_file);

        r = load_families(o, &families);
        if (r < 0)
                return r;
        r = start_metrics_server(o, &metrics);
        if (r < 0)
                return r;
        check_liblmk_paths(o);
        r = node_type_read(NULL, &node_type);
        if (r < 0)
                return log_oom();
        node_type_describe(&node_type, text, sizeof(text));
        log_info("Node type: %s.", text);

        if (o->store_url) {
                r = pushing_start(&push, o, host, &families);
                if (r < 0)
                        return r;
                push.node_type = &node_type;
        }

        r = monitor_new(&cfg, &m);
        if (r == -EPERM || r == -EACCES)
                return log_error_errno(r, "Failed to load the BPF sampler: %m (lmkd needs root, or CAP_BPF and CAP_PERFMON)");
        if (r < 0)
                return log_error_errno(r, "Failed to set up the BPF sampler: %m");
        r = monitor_start(m);
        if (r < 0)
                return r;
        /* pushing and a report: the report covers every pushed interval */
        if (o->store_url && o->output && monitor_keep_cumulative(m) < 0)
                return log_oom();
        t0 = now_ns(CLOCK_MONOTONIC);
        interval_clock_begin(&run_clock, t0, (int64_t) now_ns(CLOCK_REALTIME));
        interval_clock_times(&run_clock, t0, &start, &end);
        log_info("Sampling %u CPUs at %g Hz with %s.", monitor_online_cpus(m), o->frequency, monitor_event_name(m));
        r = sampler_light_skeleton_error(monitor_sampler(m));
        if (r < 0 && r != -ECANCELED)
                (void) log_full_errno(LOG_NOTICE, r, "The kernel refused the BPF programs' light skeleton (%m; it takes "
                                    "Linux 5.17 or later): libbpf loaded them, which reads the kernel's BTF "
                                    "into lmkd's memory at start.");
        report_unavailable_counters(m);
        /* Start-up's buffers (the BPF objects, /proc of every process) are
         * freed by now: give those pages back, lmkd lives on the users' budget. */
        (void) malloc_trim(0);

        ep = epoll_create1(EPOLL_CLOEXEC);
        if (ep < 0)
                return log_error_errno(-errno, "Failed to create epoll instance: %m");
        tick = timer_fd(quiet_ms / 1000.0, quiet_ms / 1000.0);
        if (tick < 0)
                return log_error_errno(tick, "Failed to create timer: %m");
        soon = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
        follow = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
        if (soon < 0 || follow < 0)
                return log_error_errno(-errno, "Failed to create timer: %m");
        if (o->duration > 0) {
                deadline = timer_fd(o->duration, 0);
                if (deadline < 0)
                        return log_error_errno(deadline, "Failed to create timer: %m");
                if ((r = epoll_add(ep, deadline)) < 0)
                        return log_error_errno(r, "Failed to watch timer: %m");
        }
        if (push.spool) {
                flush = timer_fd(o->push_interval, o->push_interval);
                if (flush < 0)
                        return log_error_errno(flush, "Failed to create timer: %m");
                if ((r = epoll_add(ep, flush)) < 0)
                        return log_error_errno(r, "Failed to watch timer: %m");
        }
        if ((r = epoll_add(ep, sfd)) < 0 || (r = epoll_add(ep, tick)) < 0 || (r = epoll_add(ep, soon)) < 0 ||
            (r = epoll_add(ep, follow)) < 0 ||
            (r = epoll_add(ep, monitor_fd(m))) < 0)
                return log_error_errno(r, "Failed to set up the event loop: %m");
        if (o->notify_socket) {
                r = notice_socket_open(o->notify_socket, &nfd);
                if (r == -EADDRINUSE)
                        return log_error_errno(r, "Another lmkd takes job notices on %s; give this one another "
                                               "--notify-socket or 'none'.", o->notify_socket);
                if (r < 0)
                        return log_error_errno(r, "Failed to open the job notice socket %s: %m", o->notify_socket);
                if ((r = epoll_add(ep, nfd)) < 0)
                        return log_error_errno(r, "Failed to watch the job notice socket: %m");
                /* after the socket: a job that starts meanwhile is not missed */
                (void) notice_state_read(o->notify_socket, m);
        }

        if (o->ready_file) {
                r = write_file_at_user_path(o->ready_file, "", 0, 0644);
                if (r < 0)
                        return log_output_error(r, "the ready file", o->ready_file);
        }
        notify("READY=1\nSTATUS=Sampling");

        for (;;) {
                struct epoll_event ev[8];
                bool stop = false, do_tick = false, do_flush = false;
                int n;

                n = epoll_wait(ep, ev, ELEMENTSOF(ev), -1);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return log_error_errno(-errno, "epoll_wait failed: %m");
                }
                for (int i = 0; i < n; i++) {
                        int fd = ev[i].data.fd;
                        uint64_t expirations;

                        if (fd == sfd || fd == deadline)
                                stop = true;
                        else if (fd == tick) {
                                (void) read(tick, &expirations, sizeof(expirations));
                                do_tick = true;
                        } else if (fd == nfd) {
                                /* the samples before a job starts or ends are
                                 * the jobs' before it (energy, counters): drain
                                 * them first, they may wait a quiet poll */
                                r = monitor_tick(m, false);
                                if (r < 0)
                                        return r;
                                notice_socket_read(nfd, m);
                        } else if (fd == flush) {
                                (void) read(flush, &expirations, sizeof(expirations));
                                do_tick = do_flush = true;
                        } else if (fd == soon) {
                                (void) read(soon, &expirations, sizeof(expirations));
                                soon_armed = false;
                                do_tick = true;
                                /* the sampling program wakes lmkd for a new
                                 * process at most once per poll_ms: the samples
                                 * of others it let wait are drained then */
                                if (!follow_armed && quiet_ms > o->poll_ms)
                                        follow_armed = arm_once(follow, o->poll_ms * UINT64_C(1000000)) >= 0;
                        } else if (fd == follow) {
                                (void) read(follow, &expirations, sizeof(expirations));
                                follow_armed = false;
                                do_tick = true;
                        } else {
                                /* a ring filling, or a new process's sample: a
                                 * tick a little later, when the events before
                                 * it are past the tick's ordering margin */
                                monitor_clear_wakeups(m);
                                if (!soon_armed)
                                        soon_armed = arm_once(soon, ORDER_MARGIN_NS + 5 * UINT64_C(1000000)) >= 0;
                                if (!soon_armed)
                                        do_tick = true;
                        }
                }
                if (stop)
                        break;
                if (do_tick) {
                        /* CPUs that came or went since: one pread when none did */
                        r = monitor_sync_cpus(m);
                        if (r < 0)
                                return r;
                        /* before the tick: its samples are stamped with the new time */
                        if (push.spool && (r = pushing_check_clock(&push, m, o)) < 0)
                                return r;
                        r = monitor_tick(m, false);
                        if (r < 0)
                                return r;
                        notify("WATCHDOG=1");
                        publish_metrics(o, m, &push, start, metrics);
                }
                if (do_flush)
                        pushing_flush(&push, m, o, false);
                if (do_tick)
                        trim_heap(now_ns(CLOCK_MONOTONIC), &trimmed, do_flush);
        }

        notify("STOPPING=1");
        r = monitor_stop(m);
        if (r < 0)
                return r;
        if (push.spool) {
                /* the last, partial interval goes to the spool too, and
                 * out to the store if it answers soon; the samplers are
                 * closed, so it is settled in full: the report after adds
                 * nothing the store does not get */
                pushing_flush(&push, m, o, true);
                pusher_drain(push.pusher, 5000);
        }
        if (!o->output)
                return 0;
        /* the report covers the whole run, every pushed interval included */
        interval_clock_times(&run_clock, now_ns(CLOCK_MONOTONIC), &start, &end);
        monitor_close_interval(m, true, true, start, end, &iv);
        info.duration = (double) (now_ns(CLOCK_MONOTONIC) - t0) / 1e9;
        return write_report(&iv, o, &info);
}

/* Per-job counters take an fd per counter and CPU of each job: up to the
 * hard limit, as a program that never uses select() may. */
static void raise_fd_limit(void) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max || rl.rlim_cur >= 65536)
                return;
        rl.rlim_cur = MIN(rl.rlim_max, (rlim_t) 65536);
        (void) setrlimit(RLIMIT_NOFILE, &rl);
}

int main(int argc, char **argv) {
        _cleanup_(config_done) LmkdConfig cfg;
        int r;

        log_setup("lmkd");
        config_init(&cfg);
        r = parse_args(argc, argv, &cfg);
        if (r <= 0)
                return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        libbpf_set_print(libbpf_log);
        raise_fd_limit();
        r = run(&cfg);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
