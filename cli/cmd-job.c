/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lmk job ID: where one job's time went: metadata, time by kind of object,
 * the objects, their top functions and the phases with their shares, CPU
 * time and IPC, and for MPI jobs the POP efficiency metrics; with
 * --functions every function of the job; with --pprof and --folded its
 * profile in a file (docs/profiles.md). */
#include <curl/curl.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "output-file.h"

#define MAX_ROWS 25

/* "  Label       a, b, c" wrapped */
static void print_wrapped(const char *label, const char *text) {
        print_wrapped_from((size_t) printf("  %-11s ", label), 14, text);
}

/* Node type, energy, lmkd's exact figures and the counters' events. */
static void print_measured_header(json_object *j) {
        json_object *e = jget(j, "energy"), *x = jget(j, "exact"), *counters = jget(j, "counters");
        char a[32], b[32], c[32];
        size_t n = json_object_array_length(counters);

        if (json_object_get_boolean(jget(j, "node_types_differ")))
                printf("  Node type   several (lmk --json job %s: nodes[].node_type)\n", jstr(j, "job"));
        else if (jstr(j, "node_type"))
                print_wrapped("Node type", jstr(j, "node_type"));
        if (e && !json_object_is_type(e, json_type_null)) {
                printf("  Energy      %s, mean %s", fmt_si(jnum(e, "joules"), "J", a, sizeof(a)),
                       fmt_si(jnum(e, "mean_watts"), "W", b, sizeof(b)));
                if (jnum(e, "estimated_joules") > 0)
                        printf(" (%s estimated: shared nodes)", fmt_si(jnum(e, "estimated_joules"), "J", c, sizeof(c)));
                printf("\n");
        } else
                printf("  Energy      - (no energy counters on its nodes)\n");
        if (x && !json_object_is_type(x, json_type_null)) {
                printf("  Exact       CPU time %s", fmt_duration(jnum(x, "cpu_time_ns") / 1e9, a, sizeof(a)));
                if (jint(x, "cycles") >= 0 && jint(x, "instructions") >= 0)
                        printf(", IPC %s", fmt_ipc(jget(x, "ipc"), b, sizeof(b)));
                printf(" (lmkd's totals, not from samples)\n");
        }
        if (n > 0) {
                _cleanup_free_ char *list = NULL;
                size_t size = 0;
                FILE *f = open_memstream(&list, &size);

                if (!f)
                        return;
                for (size_t i = 0; i < n; i++) {
                        json_object *k = json_object_array_get_idx(counters, i);
                        const char *role = jstr(k, "role") ?: "?", *event = jstr(k, "event") ?: "?";

                        fprintf(f, "%s%s%s%s%s", i ? ", " : "", streq(role, event) ? "" : role,
                                streq(role, event) ? "" : "=", event,
                                json_object_get_boolean(jget(k, "available")) ? "" : " (unavailable)");
                }
                if (fclose(f) == 0)
                        print_wrapped("Counters", list);
        }
}

static void print_header(json_object *j) {
        char a[32], b[32], el[32], samples[32], cpu[32];
        json_object *nodes = jget(j, "nodes");
        const char *cluster = jstr(j, "cluster");
        int64_t alloc = jint(j, "nodes_allocated");
        size_t n = json_object_array_length(nodes), col;

        printf("Job %s%s%s: %s\n", jstr(j, "job"), cluster ? " on " : "", cluster ?: "",
               jstr(j, "name") ?: "(no name)");
        printf("  User        %s", jstr(j, "user") ?: "-");
        if (jstr(j, "account"))
                printf(", account %s", jstr(j, "account"));
        if (jstr(j, "partition"))
                printf(", partition %s", jstr(j, "partition"));
        printf("\n  Seen        %s to %s (%s), %s\n",
               fmt_time(jnum(j, "first_seen"), a, sizeof(a)), fmt_time(jnum(j, "last_seen"), b, sizeof(b)),
               fmt_duration(jnum(j, "elapsed_seconds"), el, sizeof(el)),
               json_object_get_boolean(jget(j, "ended")) ? "ended" : "running");

        col = (size_t) printf("  Nodes       %zu seen", n);
        if (alloc > 0)
                col += (size_t) printf(" of %" PRId64 " allocated", alloc);
        if (n > 0)
                col += (size_t) printf(":");
        for (size_t i = 0; i < n; i++) {
                const char *name = jstr(json_object_array_get_idx(nodes, i), "node") ?: "?";

                if (col + strlen(name) + 1 > 78) {
                        printf("\n             ");
                        col = 13;
                }
                printf(" %s", name);
                col += strlen(name) + 1;
        }
        printf("\n  Samples     %s, CPU time %s (samples / frequency)\n",
               fmt_count(jint(j, "samples"), samples, sizeof(samples)),
               fmt_duration(jnum(j, "cpu_seconds"), cpu, sizeof(cpu)));
        if (jint(j, "cpu_time_ns") >= 0)
                printf("  CPU time    %s (counted)\n", fmt_duration(jnum(j, "cpu_time_ns") / 1e9, cpu, sizeof(cpu)));
        if (jint(j, "cycles") >= 0 && jint(j, "instructions") >= 0)
                printf("  IPC         %s (%s instructions in %s cycles)\n", fmt_ipc(jget(j, "ipc"), a, sizeof(a)),
                       fmt_count(jint(j, "instructions"), samples, sizeof(samples)),
                       fmt_count(jint(j, "cycles"), b, sizeof(b)));
        else
                printf("  IPC         - (no cycle and instruction counts for this job)\n");
        print_measured_header(j);
        if (json_object_get_boolean(jget(j, "opted_out")))
                printf("  Opted out   by the user (--lmk=off): only CPU time and samples were kept\n");
        if (json_object_get_boolean(jget(j, "counters_released")))
                printf("  Counters    released for the user (--lmk=nocounters): none read while it ran\n");
}

static void print_kinds(json_object *j) {
        static const struct {
                const char *kind, *label;
        } kinds[] = {
                { "exe", "executables" }, { "lib", "libraries" }, { "kernel", "kernel" },
                { "idle", "idle" }, { "anon", "anonymous" }, { "unknown", "unknown" },
        };
        json_object *k = jget(j, "kinds");

        printf("\nTime by kind %s\n", "(share of the job's samples, 95% interval)");
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
                json_object *x = jget(k, kinds[i].kind);
                char share[16], interval[48];

                /* anonymous and unknown only when they happened */
                if (i >= 4 && jint(x, "samples") <= 0)
                        continue;
                printf("  %-12s %6s %s\n", kinds[i].label, fmt_share(x, share, sizeof(share)),
                       fmt_interval(x, true, interval, sizeof(interval)));
        }
}

static void print_objects(json_object *j) {
        json_object *objects = jget(j, "objects");
        size_t n = json_object_array_length(objects);

        printf("\nObjects\n%6s %-15s %9s %5s %-6s %s\n", "SHARE", "95% INTERVAL", "SAMPLES", "IPC", "KIND",
               "OBJECT");
        for (size_t i = 0; i < n && i < MAX_ROWS; i++) {
                json_object *x = json_object_array_get_idx(objects, i);
                char share[16], interval[48], samples[32], ipc[16], path[128];

                printf("%6s %-15s %9s %5s %-6s %s\n",
                       fmt_share(x, share, sizeof(share)),
                       fmt_interval(x, false, interval, sizeof(interval)),
                       fmt_count(jint(x, "samples"), samples, sizeof(samples)),
                       fmt_ipc(jget(x, "ipc"), ipc, sizeof(ipc)),
                       jstr(x, "kind") ?: "?",
                       fmt_fit(jstr(x, "object") ?: "?", 34, true, path, sizeof(path)));
        }
        if (n > MAX_ROWS || json_object_get_boolean(jget(j, "objects_truncated")))
                printf("%6s (more objects: lmk --json job %s)\n", "", jstr(j, "job"));
}

#define FUNCTION_OBJECTS 5
#define FUNCTIONS_PER_OBJECT 5

/* A function of the object: of its path and build, or of its path over
 * several builds (an "other" entry without a build_id). */
static bool same_object(json_object *object, json_object *function) {
        const char *a = jstr(object, "build_id"), *b = jstr(function, "build_id");

        return streq(jstr(object, "object") ?: "", jstr(function, "object") ?: "") && (!b || streq(a ?: "", b));
}

static void print_function(json_object *x, size_t width) {
        char share[16], interval[48], samples[32], ipc[16], name[1100];

        printf("%6s %-15s %9s %5s %s\n", fmt_share(x, share, sizeof(share)),
               fmt_interval(x, false, interval, sizeof(interval)), fmt_count(jint(x, "samples"), samples, sizeof(samples)),
               fmt_ipc(jget(x, "ipc"), ipc, sizeof(ipc)), fmt_fit(jstr(x, "function") ?: "?", width, false, name,
                                                                   sizeof(name)));
}

/* The top functions of the busiest executables and libraries, each under
 * its object (the summary's functions, the most samples first). */
static void print_functions(json_object *j) {
        json_object *objects = jget(j, "objects"), *functions = jget(j, "functions");
        size_t n = json_object_array_length(functions), shown = 0;

        if (n == 0)
                return;
        printf("\nFunctions of the busiest objects\n%6s %-15s %9s %5s %s\n", "SHARE", "95% INTERVAL", "SAMPLES", "IPC",
               "FUNCTION");
        for (size_t i = 0; i < json_object_array_length(objects) && shown < FUNCTION_OBJECTS; i++) {
                json_object *o = json_object_array_get_idx(objects, i);
                size_t listed = 0, more = 0;
                char path[128];

                for (size_t k = 0; k < n; k++)
                        more += same_object(o, json_object_array_get_idx(functions, k));
                if (more == 0)
                        continue;
                shown++;
                printf("%6s %s\n", "", fmt_fit(jstr(o, "object") ?: "?", 72, true, path, sizeof(path)));
                for (size_t k = 0; k < n && listed < FUNCTIONS_PER_OBJECT; k++) {
                        json_object *x = json_object_array_get_idx(functions, k);

                        if (!same_object(o, x))
                                continue;
                        listed++;
                        print_function(x, 41);
                }
                if (more > listed)
                        printf("%6s (%zu more functions)\n", "", more - listed);
        }
        printf("%6s (all of them: lmk job %s --functions)\n", "", jstr(j, "job"));
}

/* lmk job ID --functions: every function of the job, over its phases or
 * per phase (shares then of the phase's samples). */
static void print_function_list(json_object *o, bool by_phase) {
        json_object *functions = jget(o, "functions");
        size_t n = json_object_array_length(functions);

        printf("Functions of job %s (share of the %s samples, 95%% interval)\n", jstr(o, "job"),
               by_phase ? "phase's" : "job's");
        if (n == 0) {
                printf("No functions: lmkd sent none for this job (an lmkd before functions, or naming off).\n");
                return;
        }
        printf("%6s %-15s %9s %5s %s\n", "SHARE", "95% INTERVAL", "SAMPLES", "IPC",
               by_phase ? "PHASE: FUNCTION  [OBJECT]" : "FUNCTION  [OBJECT]");
        for (size_t i = 0; i < n; i++) {
                json_object *x = json_object_array_get_idx(functions, i);
                const char *object = jstr(x, "object") ?: "?", *file = strrchr(object, '/');
                char share[16], interval[48], samples[32], ipc[16];

                printf("%6s %-15s %9s %5s ", fmt_share(x, share, sizeof(share)),
                       fmt_interval(x, false, interval, sizeof(interval)),
                       fmt_count(jint(x, "samples"), samples, sizeof(samples)), fmt_ipc(jget(x, "ipc"), ipc, sizeof(ipc)));
                if (by_phase)
                        printf("%s: ", *(jstr(x, "phase") ?: "") ? jstr(x, "phase") : "(outside markers)");
                printf("%s  [%s]\n", jstr(x, "function") ?: "?", file && file[1] ? file + 1 : object);
        }
        if (json_object_get_boolean(jget(o, "truncated")))
                printf("%6s (more functions: lmk --json job %s --functions)\n", "", jstr(o, "job"));
}

static void print_phases(json_object *j) {
        json_object *phases = jget(j, "phases");
        size_t n = json_object_array_length(phases);

        if (n == 0 || (n == 1 && streq(jstr(json_object_array_get_idx(phases, 0), "phase") ?: "", "")))
                return; /* no markers: nothing to add to the objects */
        printf("\nPhases\n%6s %-15s %9s %5s %s\n", "SHARE", "95% INTERVAL", "SAMPLES", "IPC", "PHASE");
        for (size_t i = 0; i < n && i < MAX_ROWS; i++) {
                json_object *x = json_object_array_get_idx(phases, i);
                const char *phase = jstr(x, "phase") ?: "";
                char share[16], interval[48], samples[32], ipc[16], name[128];

                printf("%6s %-15s %9s %5s %s\n",
                       fmt_share(x, share, sizeof(share)),
                       fmt_interval(x, false, interval, sizeof(interval)),
                       fmt_count(jint(x, "samples"), samples, sizeof(samples)),
                       fmt_ipc(jget(x, "ipc"), ipc, sizeof(ipc)),
                       *phase ? fmt_fit(phase, 41, true, name, sizeof(name)) : "(outside markers)");
        }
        if (n > MAX_ROWS)
                printf("%6s (more phases: lmk --json job %s)\n", "", jstr(j, "job"));
}

#define MAX_EVENT_OBJECTS 5

/* Named events: per CPU second while the code ran, per 1,000
 * instructions where instructions were counted too. */
static void print_events(json_object *j) {
        json_object *events = jget(j, "events");
        size_t n = json_object_array_length(events);

        if (n == 0)
                return;
        printf("\nEvents (per CPU second while the code ran; per 1,000 instructions)\n"
               "%-16s %11s %12s %9s  %s\n", "ROLE", "PER CPU-S", "PER 1K INSTR", "SAMPLES", "EVENT / OBJECT");
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(events, i), *objects = jget(e, "objects");
                char rate[32], per_ki[32], samples[32], role[32], path[128];

                snprintf(per_ki, sizeof(per_ki), isnan(jnum(e, "per_1000_instructions")) ? "-" : "%.3f",
                         jnum(e, "per_1000_instructions"));
                printf("%-16s %11s %12s %9s  %s%s\n", fmt_fit(jstr(e, "role") ?: "?", 16, false, role, sizeof(role)),
                       fmt_si(jnum(e, "per_cpu_second"), "/s", rate, sizeof(rate)), per_ki,
                       fmt_count(jint(e, "samples"), samples, sizeof(samples)), jstr(e, "event") ?: "?",
                       json_object_get_boolean(jget(e, "event_differs")) ? " (nodes differ)" : "");
                for (size_t k = 0; k < json_object_array_length(objects) && k < MAX_EVENT_OBJECTS; k++) {
                        json_object *x = json_object_array_get_idx(objects, k);

                        snprintf(per_ki, sizeof(per_ki), isnan(jnum(x, "per_1000_instructions")) ? "-" : "%.3f",
                                 jnum(x, "per_1000_instructions"));
                        printf("%-16s %11s %12s %9s    %s\n", "",
                               fmt_si(jnum(x, "per_cpu_second"), "/s", rate, sizeof(rate)), per_ki,
                               fmt_count(jint(x, "samples"), samples, sizeof(samples)),
                               fmt_fit(jstr(x, "object") ?: "?", 25, true, path, sizeof(path)));
                }
        }
}

/* Burst rates at code locations, with the windows they rest on. */
static void print_bursts(json_object *j) {
        json_object *bursts = jget(j, "bursts");
        size_t n = json_object_array_length(bursts);

        if (n == 0)
                return;
        printf("\nBurst rates (events per second in burst windows, at object [phase])\n%7s %5s  %s\n", "BURSTS",
               "IPC", "RATES / LOCATION");
        for (size_t i = 0; i < n && i < MAX_ROWS; i++) {
                json_object *b = json_object_array_get_idx(bursts, i), *rates = jget(b, "rates");
                const char *phase = jstr(b, "phase") ?: "";
                char ipc[16], rate[32], path[128];
                bool first = true;

                _cleanup_free_ char *list = NULL;
                size_t size = 0;
                FILE *f = open_memstream(&list, &size);

                if (!f)
                        return;
                json_object_object_foreach(rates, role, r) {
                        fprintf(f, "%s%s %s", first ? "" : ", ", role, fmt_si(jnum(r, "per_second"), "/s", rate,
                                                                            sizeof(rate)));
                        first = false;
                }
                if (fclose(f) != 0)
                        return;
                print_wrapped_from((size_t) printf("%7" PRId64 " %5s  ", jint(b, "bursts"),
                                                   fmt_ipc(jget(b, "ipc"), ipc, sizeof(ipc))), 15, list);
                printf("%7s %5s  %s%s%s%s\n", "", "", fmt_fit(jstr(b, "object") ?: "?", 50, true, path, sizeof(path)),
                       *phase ? " [" : "", phase, *phase ? "]" : "");
        }
        if (n > MAX_ROWS || json_object_get_boolean(jget(j, "bursts_truncated")))
                printf("%7s (more locations: lmk --json job %s)\n", "", jstr(j, "job"));
}

static const char *fmt_pct(double v, char *buf, size_t size) {
        if (isnan(v))
                return "-";
        snprintf(buf, size, "%.1f%%", v * 100.0);
        return buf;
}

/* POP metrics of the job's MPI ranks (docs/pop.md), when lmkd saw any. */
static void print_pop(json_object *j) {
        json_object *pop = jget(j, "pop"), *phases;
        char pe[16], lb[16], ce[16], a[32], b[32], c[32], d[32];
        size_t n;

        if (!pop || json_object_is_type(pop, json_type_null))
                return;
        printf("\nMPI efficiency (POP, from samples of %" PRId64 " ranks)\n", jint(pop, "ranks"));
        printf("  Parallel    %s = load balance %s x communication %s\n",
               fmt_pct(jnum(pop, "parallel_efficiency"), pe, sizeof(pe)),
               fmt_pct(jnum(pop, "load_balance"), lb, sizeof(lb)),
               fmt_pct(jnum(pop, "communication_efficiency"), ce, sizeof(ce)));
        /* elapsed is the busiest rank's sampled time; a wall time far above
         * it means ranks slept (or waited for a CPU), which samples miss */
        printf("  Useful      mean %s, max %s per rank; elapsed %s, wall %s\n",
               fmt_duration(jnum(pop, "mean_useful_seconds"), a, sizeof(a)),
               fmt_duration(jnum(pop, "max_useful_seconds"), b, sizeof(b)),
               fmt_duration(jnum(pop, "elapsed_seconds"), c, sizeof(c)),
               fmt_duration(jnum(pop, "wall_seconds"), d, sizeof(d)));
        printf("  Samples     %s of ranks, %s in communication (%s)\n",
               fmt_count(jint(pop, "samples"), a, sizeof(a)), fmt_count(jint(pop, "comm_samples"), b, sizeof(b)),
               fmt_duration(jnum(pop, "communication_seconds"), d, sizeof(d)));

        phases = jget(pop, "phases");
        n = json_object_array_length(phases);
        if (n == 0 || (n == 1 && streq(jstr(json_object_array_get_idx(phases, 0), "phase") ?: "", "")))
                return;
        printf("%7s %7s %7s %6s %s\n", "PE", "LB", "CE", "RANKS", "PHASE");
        for (size_t i = 0; i < n && i < MAX_ROWS; i++) {
                json_object *x = json_object_array_get_idx(phases, i);
                const char *phase = jstr(x, "phase") ?: "";
                char name[128];

                printf("%7s %7s %7s %6" PRId64 " %s\n",
                       fmt_pct(jnum(x, "parallel_efficiency"), pe, sizeof(pe)),
                       fmt_pct(jnum(x, "load_balance"), lb, sizeof(lb)),
                       fmt_pct(jnum(x, "communication_efficiency"), ce, sizeof(ce)), jint(x, "ranks"),
                       *phase ? fmt_fit(phase, 50, true, name, sizeof(name)) : "(outside markers)");
        }
        if (n > MAX_ROWS)
                printf("%7s (more phases: lmk --json job %s)\n", "", jstr(j, "job"));
}

static void print_notes_markers(json_object *j) {
        json_object *notes = jget(j, "notes"), *markers = jget(j, "markers_off");

        if (notes && json_object_object_length(notes) > 0) {
                printf("\nNotes\n");
                json_object_object_foreach(notes, key, val)
                        printf("  %s = %s\n", key, json_object_get_string(val));
        }
        if (json_object_array_length(markers) > 0) {
                printf("\nMarkers switched off\n");
                for (size_t i = 0; i < json_object_array_length(markers); i++) {
                        json_object *m = json_object_array_get_idx(markers, i);

                        printf("  %s in %s: %s\n", jstr(m, "phase") ?: "?", jstr(m, "comm") ?: "?",
                               jstr(m, "state") ?: "?");
                }
        }
}

/* A profile's file: never one that is there already, unless forced,
 * and never half of one (common/output-file.h: a regular file is
 * replaced by rename; a FIFO or a device, named on purpose, is written
 * to). Checked before asking the store, and again when writing. */
static int check_profile_path(Cli *cli, const char *file, bool force) {
        struct stat st;
        int r;

        if (!force && stat(file, &st) == 0 && S_ISREG(st.st_mode))
                return cli_error(cli, EEXIST, "job: %s exists; give --force to replace it.", file);
        r = user_path_check(file);
        if (r < 0)
                return cli_error(cli, r, "job: cannot write a profile to %s: %s", file, strerror(-r));
        return 0;
}

/* lmk job ID --pprof FILE / --folded FILE */
static int save_profile(Cli *cli, const char *job_path, const char *cluster, const char *format, const char *file,
                        bool force) {
        _cleanup_free_ char *path = NULL, *data = NULL;
        const char *q[] = { "cluster", cluster, "format", format, NULL };
        size_t size = 0;
        mode_t um;
        int r;

        r = check_profile_path(cli, file, force);
        if (r < 0)
                return r;
        if (asprintf(&path, "%s/profile", job_path) < 0)
                return cli_error(cli, ENOMEM, "Out of memory.");
        r = cli_get_raw(cli, path, q, &data, &size);
        if (r < 0)
                return r;
        r = check_profile_path(cli, file, force);
        if (r < 0)
                return r;
        /* as any file the user makes: their umask decides who else reads it */
        um = umask(0);
        umask(um);
        r = write_file_at_user_path(file, data ?: "", size, 0666 & ~um);
        if (r < 0)
                return cli_error(cli, r, "job: failed to write %s: %s", file, strerror(-r));
        return 0;
}

int do_job(Cli *cli, int argc, char **argv) {
        bool functions = false, by_phase = false, force = false;
        const char *pprof = NULL, *folded = NULL;
        const CliOption options[] = {
                { "cluster", 0, CLI_QUERY, "cluster" },
                { "functions", 0, CLI_FLAG, .flag = &functions },
                { "by-phase", 0, CLI_FLAG, .flag = &by_phase },
                { "pprof", 0, CLI_STRING, .string = &pprof },
                { "folded", 0, CLI_STRING, .string = &folded },
                { "force", 0, CLI_FLAG, .flag = &force },
        };
        _cleanup_(json_object_putp) json_object *o = NULL;
        _cleanup_free_ char *path = NULL;
        const char *job;
        CliQuery query;
        char *id;
        int r;

        r = cli_parse(cli, "job", options, INT_MAX, argc, argv, &query);
        if (r < 0)
                return r;
        if (r + 1 != argc)
                return cli_error(cli, EINVAL, "job: expected one job id, see lmk --help.");
        if (by_phase && !functions)
                return cli_error(cli, EINVAL, "job: --by-phase lists functions, give --functions too.");
        if ((pprof || folded) && (functions || cli->json || cli->csv))
                return cli_error(cli, EINVAL, "job: --pprof and --folded write a file; they go without --functions, "
                                 "--json and --csv.");
        if (pprof && folded && streq(pprof, folded))
                return cli_error(cli, EINVAL, "job: --pprof and --folded name the same file.");
        if (force && !pprof && !folded)
                return cli_error(cli, EINVAL, "job: --force replaces the file of --pprof or --folded.");
        job = argv[r];
        if (strchr(job, '/') || !*job)
                return cli_error(cli, EINVAL, "job: \"%s\" is not a job id.", job);
        /* Job ids like "4711+1" or "4711_3" travel in the path: escape them. */
        id = curl_easy_escape(NULL, job, 0);
        if (!id || asprintf(&path, "/api/v1/jobs/%s%s", id, functions ? "/functions" : "") < 0) {
                curl_free(id);
                return cli_error(cli, ENOMEM, "Out of memory.");
        }
        curl_free(id);

        if (pprof || folded) {
                const char *cluster = cli_query_get(&query, "cluster");

                if (pprof && (r = save_profile(cli, path, cluster, "pprof", pprof, force)) < 0)
                        return r;
                if (folded && (r = save_profile(cli, path, cluster, "folded", folded, force)) < 0)
                        return r;
                return 0;
        }
        if (functions) {
                /* all of them (the store reads at most 100,000) */
                const char *q[] = { "cluster", cli_query_get(&query, "cluster"), "by", by_phase ? "phase" : NULL,
                                    "limit", "100000", NULL };

                r = cli_get_list(cli, path, q, &o);
                if (r <= 0)
                        return r;
                print_function_list(o, by_phase);
                return 0;
        }
        r = cli_get(cli, path, query.pairs, &o);
        if (r < 0)
                return r;
        if (cli->json) {
                cli_print_json(o);
                return 0;
        }
        print_header(o);
        /* nothing was recorded of what it ran: no empty tables that look measured */
        if (json_object_get_boolean(jget(o, "opted_out")))
                return 0;
        print_kinds(o);
        print_objects(o);
        print_functions(o);
        print_phases(o);
        print_events(o);
        print_bursts(o);
        print_pop(o);
        print_notes_markers(o);
        print_findings(jget(o, "findings"), true);
        return 0;
}
