/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>

#include "config.h"
#include "log.h"
#include "monitor.h"
#include "report.h"
#include "util.h"

static void help(void) {
        printf("Usage: lmkd [OPTIONS]\n"
               "\n"
               "Samples what every CPU executes and attributes each sample to a process,\n"
               "an executable or shared library, the kernel or idle.\n"
               "\n"
               "  -c, --config FILE         Read settings from FILE (default " LMK_SYSCONF_DIR "/lmkd.conf)\n"
               "  -f, --foreground          Run in the foreground and write one report\n"
               "  -F, --frequency HZ        Samples per second per CPU (default 1)\n"
               "  -d, --duration SECONDS    Stop after this long (default: at SIGINT/SIGTERM)\n"
               "  -o, --output FILE         Write the report to FILE; '-' prints a table\n"
               "      --format json|table   Report format (default: json, table for '-')\n"
               "      --event EVENT         auto, cpu-clock or ref-cycles (default auto:\n"
               "                            unhalted reference cycles where the PMU has them)\n"
               "  -e, --events LIST         Counters read with each sample and context switch:\n"
               "                            perf, PAPI or libpfm4 names, optionally with roles,\n"
               "                            e.g. cycles=task-clock,instructions=page-faults\n"
               "                            (default: cycles,instructions; 'none' for none)\n"
               "      --jitter PERCENT      Vary each CPU's sampling period by up to this much\n"
               "                            so sampling does not lock step with periodic work\n"
               "      --poll-ms MS          How often the rings are drained (default 1000)\n"
               "      --ready-file FILE     Create FILE once sampling has started\n"
               "  -v, --verbose             Log debug messages\n"
               "  -h, --help                Show this help\n"
               "      --version             Show the version\n"
               "\n"
               "See lmkd(8) and lmkd.conf(5).\n");
}

enum {
        ARG_FORMAT = 0x100,
        ARG_EVENT,
        ARG_JITTER,
        ARG_POLL_MS,
        ARG_READY_FILE,
        ARG_PROC_ROOT,
        ARG_VERSION,
};

/* Unknown names are configuration errors; known events this machine cannot
 * count are reported once and read as null, and lmkd samples on. */
static int resolve_events(EventSpec *ev, size_t n) {
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

const char *counter_error_text(int error) {
        switch (-error) {
        case ENOENT:
        case EOPNOTSUPP:
        case ENODEV:
                return "perf_event_open: the CPU's PMU does not count this event here "
                       "(no hardware counters, e.g. in a virtual machine)";
        case EACCES:
        case EPERM:
                return "perf_event_open: permission denied (lmkd needs CAP_PERFMON)";
        case EBUSY:
                return "perf_event_open: the counter is in use by another tool";
        case EINVAL:
                return "perf_event_open: this PMU rejects the event's encoding";
        default:
                return strerror(-error);
        }
}

static void report_unavailable_counters(Monitor *m) {
        const CounterState *cs;
        const EventSpec *ev;
        size_t n;

        ev = monitor_events(m, &n);
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
        { "poll-ms", required_argument, NULL, ARG_POLL_MS },
        { "ready-file", required_argument, NULL, ARG_READY_FILE },
        { "proc-root", required_argument, NULL, ARG_PROC_ROOT },
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
        { ARG_POLL_MS, "sampling", "poll_ms", "--poll-ms" },
        { 'd', "report", "duration", "--duration" },
        { 'o', "report", "output", "--output" },
        { ARG_FORMAT, "report", "format", "--format" },
        { ARG_READY_FILE, "report", "ready_file", "--ready-file" },
        { ARG_PROC_ROOT, "node", "proc_root", "--proc-root" },
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
                        help();
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
        if (!cfg->output)
                return log_error_errno(-EINVAL, "No --output given: lmkd writes its report to a file or, with '-', to the terminal.");
        if (!cfg->format && config_set(cfg, "report", "format", streq(cfg->output, "-") ? "table" : "json", &(const char *) { NULL }) < 0)
                return log_oom();
        r = resolve_events(cfg->events, cfg->n_events);
        if (r < 0)
                return r;
        return 1;
}

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

static double real_time(void) {
        return (double) now_ns(CLOCK_REALTIME) / 1e9;
}

static int write_report(Monitor *m, const LmkdConfig *o, const ReportInfo *info) {
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *tmp = NULL;
        FILE *out = stdout;
        int r;

        if (!streq(o->output, "-")) {
                /* write next to the target and rename: a reader never sees half a report */
                if (asprintf(&tmp, "%s.tmp", o->output) < 0)
                        return log_oom();
                f = fopen(tmp, "we");
                if (!f)
                        return log_error_errno(-errno, "Failed to create %s: %m", tmp);
                out = f;
        }
        r = streq(o->format, "json") ? report_write_json(m, info, out) : report_write_table(m, info, out);
        if (r < 0)
                return log_error_errno(r, "Failed to write the report to %s: %m", o->output);
        if (f) {
                if (fflush(f) != 0 || fsync(fileno(f)) < 0)
                        return log_error_errno(-errno, "Failed to write %s: %m", tmp);
                if (rename(tmp, o->output) < 0)
                        return log_error_errno(-errno, "Failed to rename %s to %s: %m", tmp, o->output);
        } else
                fflush(stdout);
        return 0;
}

static int run(const LmkdConfig *o) {
        _cleanup_(monitor_freep) Monitor *m = NULL;
        _cleanup_close_ int ep = -EBADF, sfd = -EBADF, tick = -EBADF, deadline = -EBADF;
        MonitorConfig cfg = {
                .sampler = {
                        .frequency = o->frequency,
                        .jitter = o->jitter,
                        .event = o->event,
                        .poll_ms = o->poll_ms,
                        .events = o->events,
                        .n_events = o->n_events,
                },
                .proc_root = o->proc_root,
        };
        char host[256] = "localhost";
        ReportInfo info = { .host = host };
        uint64_t t0;
        sigset_t mask;
        int r;

        (void) gethostname(host, sizeof(host) - 1);

        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return log_error_errno(-errno, "Failed to block signals: %m");
        sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sfd < 0)
                return log_error_errno(-errno, "Failed to create signalfd: %m");

        r = monitor_new(&cfg, &m);
        if (r == -EPERM || r == -EACCES)
                return log_error_errno(r, "Failed to load the BPF sampler: %m (lmkd needs root, or CAP_BPF and CAP_PERFMON)");
        if (r < 0)
                return log_error_errno(r, "Failed to set up the BPF sampler: %m");
        r = monitor_start(m);
        if (r < 0)
                return r;
        t0 = now_ns(CLOCK_MONOTONIC);
        info.start = real_time();
        log_info("Sampling %u CPUs at %g Hz with %s.", monitor_online_cpus(m), o->frequency, monitor_event_name(m));
        report_unavailable_counters(m);

        ep = epoll_create1(EPOLL_CLOEXEC);
        if (ep < 0)
                return log_error_errno(-errno, "Failed to create epoll instance: %m");
        tick = timer_fd(o->poll_ms / 1000.0, o->poll_ms / 1000.0);
        if (tick < 0)
                return log_error_errno(tick, "Failed to create timer: %m");
        if (o->duration > 0) {
                deadline = timer_fd(o->duration, 0);
                if (deadline < 0)
                        return log_error_errno(deadline, "Failed to create timer: %m");
                if ((r = epoll_add(ep, deadline)) < 0)
                        return log_error_errno(r, "Failed to watch timer: %m");
        }
        if ((r = epoll_add(ep, sfd)) < 0 || (r = epoll_add(ep, tick)) < 0 || (r = epoll_add(ep, monitor_fd(m))) < 0)
                return log_error_errno(r, "Failed to set up the event loop: %m");

        if (o->ready_file) {
                r = write_file_atomic(o->ready_file, "", 0, 0644);
                if (r < 0)
                        return log_error_errno(r, "Failed to create %s: %m", o->ready_file);
        }

        for (;;) {
                struct epoll_event ev[8];
                bool stop = false, do_tick = false;
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
                                r = monitor_sync_cpus(m);
                                if (r < 0)
                                        return r;
                                do_tick = true;
                        } else {
                                monitor_clear_wakeups(m);
                                do_tick = true;
                        }
                }
                if (stop)
                        break;
                if (do_tick) {
                        r = monitor_tick(m, false);
                        if (r < 0)
                                return r;
                }
        }

        r = monitor_stop(m);
        if (r < 0)
                return r;
        monitor_account_idle(m, true);
        info.end = real_time();
        info.duration = (double) (now_ns(CLOCK_MONOTONIC) - t0) / 1e9;
        return write_report(m, o, &info);
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
        r = run(&cfg);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
