/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The job page, /jobs/{id}: GET /api/v1/jobs/{id} drawn for people. */
#include <math.h>
#include <string.h>

#include "util.h"
#include "web/web.h"

/* Time by kind as a stacked bar, the kinds in the API's order. */
static const char *const kinds[] = { "exe", "lib", "kernel", "anon", "unknown", "idle" };
static const char *const kind_names[] = { "executable", "libraries", "kernel", "anonymous code", "unknown", "idle" };

static void kinds_section(Html *h, json_object *job) {
        json_object *k = jget(job, "kinds");
        double x = 0;

        html_raw(h, "<h2>Time by kind</h2><svg class=\"kinds\" viewBox=\"0 0 1000 30\" "
                    "preserveAspectRatio=\"none\" role=\"img\" aria-label=\"time by kind\">");
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
                double share = jnum(jget(k, kinds[i]), "share");

                if (!isfinite(share) || share <= 0)
                        continue;
                html_rawf(h, "<rect class=\"kind-%s\" x=\"%.2f\" width=\"%.2f\" height=\"30\"><title>%s %.1f%%</title></rect>",
                          kinds[i], x, share * 1000, kind_names[i], share * 100);
                x += share * 1000;
        }
        html_raw(h, "</svg><table><thead><tr><th>Kind</th><th class=\"num\">Share</th><th></th>"
                    "<th class=\"num\">CPU time</th><th class=\"num\">Samples</th><th class=\"num\">IPC</th>"
                    "</tr></thead><tbody>");
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
                json_object *e = jget(k, kinds[i]);

                if (!e)
                        continue;
                html_rawf(h, "<tr><td><span class=\"legend\"><span class=\"kind-%s\">%s</span></span></td>",
                          kinds[i], kind_names[i]);
                web_share_cells(h, e, true);
                html_raw(h, "</tr>");
        }
        html_raw(h, "</tbody></table>");
}

/* Objects or phases: name, share with its interval, CPU time, IPC. */
static void shares_section(Html *h, json_object *job, const char *key, const char *name_key, const char *title,
                           const char *empty) {
        json_object *a = jget(job, key);
        size_t n = a ? json_object_array_length(a) : 0;
        bool objects = streq(key, "objects");

        html_rawf(h, "<h2 id=\"%s\">%s</h2>", key, title);
        if (n == 0) {
                html_rawf(h, "<p class=\"note\">%s</p>", empty);
                return;
        }
        html_rawf(h, "<table class=\"%s\"><thead><tr><th>%s</th>%s<th class=\"num\">Share (95%%)</th><th></th>"
                     "<th class=\"num\">CPU time</th><th class=\"num\">Samples</th><th class=\"num\">IPC</th>"
                     "</tr></thead><tbody>",
                  key, objects ? "Object" : "Phase", objects ? "<th>Kind</th>" : "");
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(a, i);
                const char *name = jstr(e, name_key);

                html_raw(h, "<tr><td class=\"path\">");
                if (!objects && name && !*name)
                        html_raw(h, "<span class=\"muted\">(outside markers)</span>");
                else
                        html_text(h, name);
                html_raw(h, "</td>");
                if (objects) {
                        html_raw(h, "<td>");
                        html_text(h, jstr(e, "kind"));
                        html_raw(h, "</td>");
                }
                web_share_cells(h, e, true);
                html_raw(h, "</tr>");
        }
        html_raw(h, "</tbody></table>");
        if (objects && jbool(job, "objects_truncated"))
                html_raw(h, "<p class=\"note\">Only the objects with the most samples are listed; "
                            "the kinds above count every one.</p>");
}

/* The busiest objects whose functions the page shows, and how many of
 * each object's functions. */
#define FUNCTION_OBJECTS_SHOWN 5
#define FUNCTIONS_SHOWN 10

/* A function of the object: of its path and build, or of its path over
 * several builds (an "other" entry without a build_id). */
static bool same_object(json_object *object, json_object *function) {
        const char *a = jstr(object, "build_id"), *b = jstr(function, "build_id");

        return streq(jstr(object, "object") ?: "", jstr(function, "object") ?: "") && (!b || streq(a ?: "", b));
}

static bool in_phase(json_object *phase, json_object *function) {
        return streq(jstr(function, "phase") ?: "", jstr(phase, "phase") ?: "");
}

/* The table of a group's functions, an object's or (per_phase) a phase's,
 * under its name and share of the job: the first FUNCTIONS_SHOWN of
 * functions that are in it, and how many more. false when none is. */
static bool functions_table(Html *h, json_object *group, json_object *functions, bool per_phase) {
        bool (*in)(json_object *, json_object *) = per_phase ? in_phase : same_object;
        size_t n = json_object_array_length(functions), listed = 0, more = 0;
        const char *phase = jstr(group, "phase") ?: "";

        for (size_t k = 0; k < n; k++)
                more += in(group, json_object_array_get_idx(functions, k));
        if (more == 0)
                return false;
        if (!per_phase) {
                html_raw(h, "<h3 class=\"path\">");
                html_text(h, jstr(group, "object"));
        } else if (*phase) {
                html_raw(h, "<h3>");
                html_text(h, phase);
        } else
                html_raw(h, "<h3><span class=\"muted\">(outside markers)</span>");
        html_raw(h, " <small>");
        web_share(h, group);
        if (per_phase)
                html_raw(h, " of the job</small></h3><table class=\"phase-functions\"><thead><tr><th>Function</th>"
                            "<th>Object</th><th class=\"num\">Share of the phase (95%)</th><th></th>"
                            "<th class=\"num\">CPU time</th><th class=\"num\">Samples</th><th class=\"num\">IPC</th>"
                            "</tr></thead><tbody>");
        else
                html_raw(h, " of the job</small></h3><table class=\"functions\"><thead><tr><th>Function</th>"
                            "<th class=\"num\">Share (95%)</th><th></th><th class=\"num\">CPU time</th>"
                            "<th class=\"num\">Samples</th><th class=\"num\">IPC</th></tr></thead><tbody>");
        for (size_t k = 0; k < n && listed < FUNCTIONS_SHOWN; k++) {
                json_object *f = json_object_array_get_idx(functions, k);
                const char *obj = jstr(f, "object") ?: "", *file = strrchr(obj, '/');

                if (!in(group, f))
                        continue;
                listed++;
                html_raw(h, "<tr>");
                web_function_cell(h, f);
                if (per_phase) {
                        html_raw(h, "<td class=\"path\">");
                        html_text(h, file && file[1] ? file + 1 : obj);
                        html_raw(h, "</td>");
                }
                web_share_cells(h, f, true);
                html_raw(h, "</tr>");
        }
        html_raw(h, "</tbody></table>");
        if (more > listed)
                html_rawf(h, "<p class=\"note\">%zu more functions %s.</p>", more - listed,
                          per_phase ? "in this phase" : "of this object");
        return true;
}

/* The job's profile in format (pprof, folded): GET /api/v1/jobs/ID/profile. */
static void profile_link(Html *h, const char *root, json_object *job, const char *cluster, const char *format) {
        html_raw(h, root);
        html_raw(h, "api/v1/jobs/");
        html_url_part(h, jstr(job, "job"));
        html_rawf(h, "/profile?format=%s", format);
        if (cluster) {
                html_raw(h, "&amp;cluster=");
                html_url_part(h, cluster);
        }
}

/* The top functions of the job's busiest executables and libraries, each
 * object's under its name (from "functions", the most samples first). */
static void functions_section(Html *h, json_object *job, const char *root, const char *cluster) {
        json_object *objects = jget(job, "objects"), *functions = jget(job, "functions");
        size_t n_objects = objects ? json_object_array_length(objects) : 0;
        size_t n = functions ? json_object_array_length(functions) : 0, shown = 0;

        html_raw(h, "<h2 id=\"functions\">Functions</h2>");
        if (n == 0) {
                html_raw(h, "<p class=\"note\">No functions: lmkd sent none for this job (an lmkd before "
                            "functions, or naming switched off).</p>");
                return;
        }
        html_raw(h, "<p class=\"note\">The busiest functions of the busiest executables and libraries, named by "
                    "lmkd from each file's own symbols, or by the store through the site's debuginfod; shares "
                    "are of the job's samples. A function nobody could name shows as file+0xOFFSET (its start, "
                    "or its 4&nbsp;KiB page, in the file). All of them: <a href=\"");
        html_raw(h, root);
        html_raw(h, "api/v1/jobs/");
        html_url_part(h, jstr(job, "job"));
        html_raw(h, "/functions?limit=100000");
        if (cluster) {
                html_raw(h, "&amp;cluster=");
                html_url_part(h, cluster);
        }
        html_raw(h, "\">JSON</a> (<code>lmk job ID --functions</code>, with <code>--csv</code> as CSV); as a "
                    "profile for <a download href=\"");
        profile_link(h, root, job, cluster, "pprof");
        html_raw(h, "\">pprof</a> (<code>go tool pprof -top</code>) or as <a download href=\"");
        profile_link(h, root, job, cluster, "folded");
        html_raw(h, "\">folded stacks</a> for flame graphs (docs/profiles.md).</p>");
        for (size_t i = 0; i < n_objects && shown < FUNCTION_OBJECTS_SHOWN; i++)
                shown += functions_table(h, json_object_array_get_idx(objects, i), functions, false);
        if (jbool(job, "functions_truncated"))
                html_raw(h, "<p class=\"note\">Only the job's functions with the most samples are read here.</p>");
}

/* The top functions of each phase the job marked (from
 * "phase_functions"; shares of the phase's samples), the busiest phases
 * first: where each phase's time went. Time outside markers is phase "". */
static void phase_functions_section(Html *h, json_object *job) {
        json_object *phases = jget(job, "phases"), *functions = jget(job, "phase_functions");
        size_t n_phases = phases ? json_object_array_length(phases) : 0;
        size_t n = functions ? json_object_array_length(functions) : 0, shown = 0;
        bool marked = false;

        for (size_t k = 0; k < n; k++)
                marked = marked || *(jstr(json_object_array_get_idx(functions, k), "phase") ?: "");
        /* a job without markers: the section above says it all */
        if (n == 0 || !marked)
                return;
        html_raw(h, "<h2 id=\"phase-functions\">Functions per phase</h2><p class=\"note\">The busiest functions "
                    "of each phase the application marked; shares are of the phase's samples.</p>");
        for (size_t i = 0; i < n_phases && shown < FUNCTION_OBJECTS_SHOWN; i++)
                shown += functions_table(h, json_object_array_get_idx(phases, i), functions, true);
        if (jbool(job, "phase_functions_truncated"))
                html_raw(h, "<p class=\"note\">Only the job's functions with the most samples are read here.</p>");
}

/* v with an SI prefix and unit: "1.80 MJ", "500 W", "2.50 G/s"; "–" when not known. */
static void si(Html *h, double v, const char *unit) {
        static const char *const prefixes[] = { "", "k", "M", "G", "T", "P", "E" };
        size_t p = 0;

        if (!isfinite(v) || v < 0) {
                html_raw(h, "–");
                return;
        }
        while (v >= 999.5 && p + 1 < ELEMENTSOF(prefixes)) {
                v /= 1000.0;
                p++;
        }
        html_number(h, v, v >= 99.95 || (p == 0 && v == floor(v)) ? 0 : v >= 9.995 ? 1 : 2);
        html_rawf(h, "&nbsp;%s", prefixes[p]);
        html_text(h, unit);
}

/* The node type, energy and counters among the facts. */
static void measured_facts(Html *h, json_object *job) {
        json_object *e = jget(job, "energy"), *counters = jget(job, "counters");
        size_t n = counters ? json_object_array_length(counters) : 0;

        html_raw(h, "<dt>Node type</dt><dd>");
        if (jbool(job, "node_types_differ"))
                html_raw(h, "several: see <a href=\"#nodes\">Nodes</a>");
        else if (jstr(job, "node_type"))
                html_text(h, jstr(job, "node_type"));
        else
                html_raw(h, "<span class=\"muted\">not known</span>");
        html_raw(h, "</dd><dt>Energy</dt><dd>");
        if (e) {
                si(h, jnum(e, "joules"), "J");
                html_raw(h, " <small>(mean ");
                si(h, jnum(e, "mean_watts"), "W");
                html_raw(h, ")</small>");
                if (jnum(e, "estimated_joules") > 0) {
                        html_raw(h, " <small>of which ");
                        si(h, jnum(e, "estimated_joules"), "J");
                        html_raw(h, " estimated from samples on shared nodes</small>");
                }
        } else
                html_raw(h, "<span class=\"muted\">no energy counters on these nodes</span>");
        html_raw(h, "</dd>");
        if (n == 0)
                return;
        html_raw(h, "<dt>Counters</dt><dd>");
        for (size_t i = 0; i < n; i++) {
                json_object *c = json_object_array_get_idx(counters, i);
                const char *role = jstr(c, "role"), *event = jstr(c, "event");

                if (i > 0)
                        html_raw(h, ", ");
                if (role && event && !streq(role, event)) {
                        html_text(h, role);
                        html_raw(h, "=");
                }
                html_text(h, event);
                if (!jbool(c, "available"))
                        html_raw(h, " <span class=\"muted\">(unavailable)</span>");
        }
        html_raw(h, "</dd>");
}

static void event_cells(Html *h, json_object *e) {
        html_raw(h, "<td class=\"num\">");
        si(h, jnum(e, "per_cpu_second"), "/s");
        html_raw(h, "</td><td class=\"num\">");
        if (isfinite(jnum(e, "per_1000_instructions")))
                html_number(h, jnum(e, "per_1000_instructions"), 3);
        else
                html_raw(h, "–");
        html_rawf(h, "</td><td class=\"num\">%" PRId64 "</td>", jint(e, "samples", 0));
}

#define EVENT_OBJECTS_SHOWN 10

/* Named events: per CPU second while the code ran, per 1,000
 * instructions, with the objects where they happened. */
static void events_section(Html *h, json_object *job) {
        json_object *a = jget(job, "events");
        size_t n = a ? json_object_array_length(a) : 0;

        if (n == 0)
                return;
        html_raw(h, "<h2 id=\"events\">Counter events</h2><p class=\"note\">Counted in the sample windows and "
                    "scaled to the samples' CPU time: events per CPU second while the code ran, and per 1,000 "
                    "instructions where instructions were counted too.</p><table class=\"events\"><thead><tr>"
                    "<th>Event</th><th class=\"num\">Per CPU second</th><th class=\"num\">Per 1,000 instr.</th>"
                    "<th class=\"num\">Samples</th></tr></thead><tbody>");
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(a, i), *objects = jget(e, "objects");
                const char *role = jstr(e, "role"), *event = jstr(e, "event");

                html_raw(h, "<tr><th scope=\"row\">");
                html_text(h, role);
                if (event && role && !streq(role, event)) {
                        html_raw(h, " <small>(");
                        html_text(h, event);
                        html_raw(h, ")</small>");
                }
                if (jbool(e, "event_differs"))
                        html_raw(h, " <small>(other events on some nodes)</small>");
                html_raw(h, "</th>");
                event_cells(h, e);
                html_raw(h, "</tr>");
                for (size_t k = 0; objects && k < json_object_array_length(objects) && k < EVENT_OBJECTS_SHOWN; k++) {
                        json_object *x = json_object_array_get_idx(objects, k);

                        html_raw(h, "<tr><td class=\"path\">");
                        html_text(h, jstr(x, "object"));
                        html_raw(h, "</td>");
                        event_cells(h, x);
                        html_raw(h, "</tr>");
                }
        }
        html_raw(h, "</tbody></table>");
        if (jbool(job, "events_truncated"))
                html_raw(h, "<p class=\"note\">Only the objects and phases with the most samples are listed.</p>");
}

/* Burst rates at code locations, with the windows they rest on. */
static void bursts_section(Html *h, json_object *job) {
        json_object *a = jget(job, "bursts");
        size_t n = a ? json_object_array_length(a) : 0;

        if (n == 0)
                return;
        html_raw(h, "<h2 id=\"bursts\">Burst rates</h2><p class=\"note\">Events per second in short windows "
                    "right after a sample, at that object and phase; each rate rests on the windows counted.</p>"
                    "<table class=\"bursts\"><thead><tr><th>Object</th><th>Phase</th><th class=\"num\">Windows</th>"
                    "<th class=\"num\">IPC</th><th>Rates</th></tr></thead><tbody>");
        for (size_t i = 0; i < n; i++) {
                json_object *b = json_object_array_get_idx(a, i), *rates = jget(b, "rates");
                bool first = true;

                html_raw(h, "<tr><td class=\"path\">");
                html_text(h, jstr(b, "object"));
                html_raw(h, "</td><td class=\"path\">");
                html_text(h, jstr(b, "phase"));
                html_rawf(h, "</td><td class=\"num\">%" PRId64 "</td><td class=\"num\">", jint(b, "bursts", 0));
                if (isfinite(jnum(b, "ipc")))
                        html_number(h, jnum(b, "ipc"), 2);
                else
                        html_raw(h, "–");
                html_raw(h, "</td><td>");
                if (rates) {
                        json_object_object_foreach(rates, role, r) {
                                if (!first)
                                        html_raw(h, ", ");
                                html_text(h, role);
                                html_raw(h, " ");
                                si(h, jnum(r, "per_second"), "/s");
                                html_rawf(h, " <small>(%" PRId64 ")</small>", jint(r, "bursts", 0));
                                first = false;
                        }
                }
                html_raw(h, "</td></tr>");
        }
        html_raw(h, "</tbody></table>");
        if (jbool(job, "bursts_truncated"))
                html_raw(h, "<p class=\"note\">Only the locations with the most burst windows are listed.</p>");
}

static void facts(Html *h, json_object *job) {
        json_object *notes = jget(job, "notes");
        double ipc = jnum(job, "ipc");

        html_raw(h, "<dl class=\"facts\">");
        html_raw(h, "<dt>State</dt><dd>");
        html_raw(h, jbool(job, "ended") ? "ended" : "<span class=\"state-running\">running</span>");
        html_raw(h, "</dd><dt>User</dt><dd>");
        html_text(h, jstr(job, "user") ?: "–");
        html_raw(h, "</dd><dt>Account</dt><dd>");
        html_text(h, jstr(job, "account") ?: "–");
        html_raw(h, "</dd><dt>Partition</dt><dd>");
        html_text(h, jstr(job, "partition") ?: "–");
        html_raw(h, "</dd><dt>Cluster</dt><dd>");
        html_text(h, jstr(job, "cluster") ?: "–");
        html_raw(h, "</dd><dt>Nodes</dt><dd>");
        html_rawf(h, "%" PRId64 " seen", jint(job, "nodes_seen", 0));
        if (jint(job, "nodes_allocated", -1) >= 0)
                html_rawf(h, " of %" PRId64 " allocated", jint(job, "nodes_allocated", 0));
        html_raw(h, "</dd><dt>First seen</dt><dd>");
        html_time(h, jnum(job, "first_seen"));
        html_raw(h, "</dd><dt>Last seen</dt><dd>");
        html_time(h, jnum(job, "last_seen"));
        html_raw(h, "</dd><dt>Elapsed</dt><dd>");
        html_duration(h, jnum(job, "elapsed_seconds"));
        html_raw(h, "</dd><dt>CPU time</dt><dd>");
        web_cpu_time(h, jnum(job, "cpu_seconds"));
        html_rawf(h, " <small>(%" PRId64 " samples)</small></dd>", jint(job, "samples", 0));
        if (jint(job, "tasks", -1) >= 0)
                html_rawf(h, "<dt>Tasks</dt><dd>%" PRId64 "</dd>", jint(job, "tasks", 0));
        html_raw(h, "<dt>IPC</dt><dd>");
        if (isfinite(ipc))
                html_number(h, ipc, 2);
        else
                html_raw(h, "<span class=\"muted\">no counters on these nodes</span>");
        html_raw(h, "</dd>");
        measured_facts(h, job);
        json_object_object_foreach(notes, key, val) {
                html_raw(h, "<dt>");
                html_text(h, key);
                html_raw(h, "</dt><dd>");
                html_text(h, json_object_get_string(val));
                html_raw(h, "</dd>");
        }
        html_raw(h, "</dl>");
        if (jbool(job, "opted_out"))
                html_raw(h, "<p class=\"note\" id=\"opted-out\">Opted out by the user (<code>--lmk=off</code>): "
                            "lmk kept only this job's CPU time and sample count, not what it ran.</p>");
        if (jbool(job, "counters_released"))
                html_raw(h, "<p class=\"note\" id=\"counters-released\">Counters released for the user "
                            "(<code>--lmk=nocounters</code>): lmk read no hardware counters while the job ran, "
                            "so that the user's own tools had them; sampling went on with cpu-clock.</p>");
        if (jint(job, "metadata_conflicts", 0) > 0)
                html_rawf(h, "<p class=\"note\">%" PRId64 " later reports of this job's metadata differed from "
                             "the first, which is shown.</p>", jint(job, "metadata_conflicts", 0));
}

static void findings_section(Html *h, json_object *job) {
        json_object *a = jget(job, "findings");
        size_t n = a ? json_object_array_length(a) : 0;

        if (n == 0)
                return;
        html_raw(h, "<h2 id=\"findings\">Findings</h2><ul class=\"findings\">");
        for (size_t i = 0; i < n; i++) {
                json_object *f = json_object_array_get_idx(a, i);
                const char *sev = jstr(f, "severity") ?: "low";

                html_raw(h, "<li><span class=\"sev-");
                html_text(h, sev);
                html_raw(h, "\">");
                html_text(h, sev);
                html_raw(h, "</span> ");
                html_text(h, jstr(f, "message"));
                if (jstr(f, "advice")) {
                        html_raw(h, "<br><small>");
                        html_text(h, jstr(f, "advice"));
                        html_raw(h, "</small>");
                }
                html_raw(h, "</li>");
        }
        html_raw(h, "</ul>");
}

/* The time line: one row per node, one cell per step, darker the more of
 * the job's CPUs there were busy; a gap where no batch covered the step. */
#define TL_WIDTH 1000.0
#define TL_LABEL 150.0
#define TL_ROW 18.0
/* beyond this many cells, one tooltip per row instead of per cell */
#define TL_MAX_CELL_TITLES 3000

static void timeline_section(Html *h, json_object *job) {
        json_object *t = jget(job, "timeline"), *nodes = jget(t, "nodes");
        size_t n = nodes ? json_object_array_length(nodes) : 0;
        int64_t steps = jint(t, "steps", 0);
        double start = jnum(t, "start"), step = jnum(t, "step_seconds"), cell, height, max_cores = 1e-9;
        bool titles;

        html_raw(h, "<h2 id=\"timeline\">Time line</h2>");
        if (n == 0 || steps <= 0 || !isfinite(step)) {
                html_raw(h, "<p class=\"note\">No time line: the store has no intervals of this job.</p>");
                return;
        }
        /* without a node's allocation, its cells are shaded against the
         * busiest cell of the job */
        for (size_t i = 0; i < n; i++) {
                json_object *cores = jget(json_object_array_get_idx(nodes, i), "busy_cores");

                for (size_t k = 0; cores && k < json_object_array_length(cores); k++)
                        max_cores = MAX(max_cores, json_object_get_double(json_object_array_get_idx(cores, k)));
        }
        cell = (TL_WIDTH - TL_LABEL) / (double) steps;
        height = TL_ROW * (double) n + 24;
        titles = (size_t) steps * n <= TL_MAX_CELL_TITLES;
        html_rawf(h, "<svg class=\"timeline\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
                     "aria-label=\"busy share of the job's CPUs per node over time\">", TL_WIDTH, height);
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(nodes, i);
                json_object *share = jget(e, "busy_share"), *cores = jget(e, "busy_cores");
                int64_t cpus = jint(e, "cpus_allocated", -1);
                double y = TL_ROW * (double) i;

                html_rawf(h, "<g><text x=\"0\" y=\"%.1f\">", y + 13);
                html_text(h, jstr(e, "node"));
                html_raw(h, "</text>");
                if (!titles) {
                        html_raw(h, "<title>");
                        html_text(h, jstr(e, "node"));
                        html_raw(h, "</title>");
                }
                for (int64_t k = 0; k < steps; k++) {
                        json_object *sv = share ? json_object_array_get_idx(share, (size_t) k) : NULL;
                        json_object *cv = cores ? json_object_array_get_idx(cores, (size_t) k) : NULL;
                        double x = TL_LABEL + cell * (double) k;

                        if (!cv) {
                                html_rawf(h, "<rect class=\"gap\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\"/>",
                                          x, y + 2, cell, TL_ROW - 4);
                                continue;
                        }
                        html_rawf(h, "<rect class=\"cell\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
                                     "fill-opacity=\"%.3f\">",
                                  x, y + 2, cell, TL_ROW - 4,
                                  MIN(MAX(sv ? json_object_get_double(sv) : json_object_get_double(cv) / max_cores,
                                          0.03), 1.0));
                        if (titles) {
                                html_raw(h, "<title>");
                                html_number(h, json_object_get_double(cv), 2);
                                if (cpus > 0)
                                        html_rawf(h, " of %" PRId64 " CPUs", cpus);
                                html_raw(h, " busy from ");
                                html_time(h, start + step * (double) k);
                                html_raw(h, "</title>");
                        }
                        html_raw(h, "</rect>");
                }
                html_raw(h, "</g>");
        }
        html_rawf(h, "<line class=\"axis\" x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\"/>",
                  TL_LABEL, TL_WIDTH, TL_ROW * (double) n + 2, TL_ROW * (double) n + 2);
        html_rawf(h, "<text x=\"%.0f\" y=\"%.1f\">", TL_LABEL, height - 4);
        html_time(h, start);
        html_rawf(h, "</text><text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">+", TL_WIDTH, height - 4);
        html_duration(h, step * (double) steps);
        html_raw(h, "</text></svg><p class=\"note\">Each cell is ");
        html_duration(h, step);
        html_raw(h, "; the darker, the more of the job's CPUs on that node were busy. "
                    "Grey: no report from the node for that time.");
        if (jbool(t, "nodes_truncated"))
                html_raw(h, " Only the first nodes by name are drawn.");
        html_raw(h, "</p>");
}

static void nodes_section(Html *h, json_object *job) {
        json_object *a = jget(job, "nodes");
        size_t n = a ? json_object_array_length(a) : 0;
        bool types = jbool(job, "node_types_differ"), energy = false;

        for (size_t i = 0; i < n; i++)
                energy = energy || isfinite(jnum(json_object_array_get_idx(a, i), "energy_joules"));
        html_rawf(h, "<h2 id=\"nodes\">Nodes</h2><table class=\"nodes\"><thead><tr><th>Node</th>%s"
                     "<th class=\"num\">CPUs</th><th class=\"num\">Share (95%%)</th><th class=\"num\">CPU time</th>"
                     "<th class=\"num\">Samples</th>%s<th>First seen</th><th>Last seen</th></tr></thead><tbody>",
                  types ? "<th>Type</th>" : "", energy ? "<th class=\"num\">Energy</th>" : "");
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(a, i);

                html_raw(h, "<tr><td>");
                html_text(h, jstr(e, "node"));
                if (types) {
                        html_raw(h, "</td><td>");
                        html_text(h, jstr(e, "node_type") ?: "–");
                }
                html_raw(h, "</td><td class=\"num\">");
                if (jint(e, "cpus_allocated", -1) >= 0)
                        html_rawf(h, "%" PRId64, jint(e, "cpus_allocated", 0));
                else
                        html_raw(h, "–");
                html_raw(h, "</td><td class=\"num\">");
                web_share(h, e);
                html_raw(h, "</td><td class=\"num\">");
                web_cpu_time(h, jnum(e, "cpu_seconds"));
                html_rawf(h, "</td><td class=\"num\">%" PRId64 "</td>", jint(e, "samples", 0));
                if (energy) {
                        html_raw(h, "<td class=\"num\">");
                        si(h, jnum(e, "energy_joules"), "J");
                        html_raw(h, "</td>");
                }
                html_raw(h, "<td>");
                html_time(h, jnum(e, "first_seen"));
                html_raw(h, "</td><td>");
                html_time(h, jnum(e, "last_seen"));
                html_raw(h, "</td></tr>");
        }
        html_raw(h, "</tbody></table>");
}

static void markers_section(Html *h, json_object *job) {
        json_object *a = jget(job, "markers_off");
        size_t n = a ? json_object_array_length(a) : 0;

        if (n == 0)
                return;
        html_raw(h, "<h2 id=\"markers\">Markers switched off</h2><p class=\"note\">liblmk switched these "
                    "markers off because they were entered too often to be cheap; their time counts to the "
                    "phase around them.</p><table><thead><tr><th>Phase</th><th>Program</th><th>State</th>"
                    "<th>First seen</th></tr></thead><tbody>");
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(a, i);

                html_raw(h, "<tr><td class=\"path\">");
                html_text(h, jstr(e, "phase"));
                html_raw(h, "</td><td>");
                html_text(h, jstr(e, "comm"));
                html_raw(h, "</td><td>");
                html_text(h, jstr(e, "state"));
                html_raw(h, "</td><td>");
                html_time(h, jnum(e, "first_seen"));
                html_raw(h, "</td></tr>");
        }
        html_raw(h, "</tbody></table>");
}

static void pop_row(Html *h, json_object *m, const char *label) {
        html_raw(h, "<tr><td>");
        html_text(h, label);
        html_raw(h, "</td>");
        html_rawf(h, "<td class=\"num\">%" PRId64 "</td>", jint(m, "ranks", 0));
        for (const char *const *k = (const char *const[]) { "parallel_efficiency", "load_balance",
                                                             "communication_efficiency", NULL }; *k; k++) {
                html_raw(h, "<td class=\"num\">");
                html_number(h, jnum(m, *k) * 100, 1);
                html_raw(h, "%</td>");
        }
        html_raw(h, "<td class=\"num\">");
        html_duration(h, jnum(m, "useful_seconds"));
        html_raw(h, "</td><td class=\"num\">");
        html_duration(h, jnum(m, "communication_seconds"));
        html_raw(h, "</td></tr>");
}

static void pop_section(Html *h, json_object *job) {
        json_object *p = jget(job, "pop"), *phases;
        size_t n;

        if (!p)
                return;
        phases = jget(p, "phases");
        n = phases ? json_object_array_length(phases) : 0;
        html_raw(h, "<h2 id=\"pop\">MPI efficiency (POP)</h2><table><thead><tr><th>Phase</th>"
                    "<th class=\"num\">Ranks</th><th class=\"num\">Parallel eff.</th><th class=\"num\">Load balance</th>"
                    "<th class=\"num\">Communication eff.</th><th class=\"num\">Useful</th>"
                    "<th class=\"num\">Communication</th></tr></thead><tbody>");
        pop_row(h, p, "whole job");
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(phases, i);
                const char *ph = jstr(e, "phase");

                pop_row(h, e, ph && *ph ? ph : "(outside markers)");
        }
        html_raw(h, "</tbody></table><p class=\"note\">From samples alone: a rank's useful time is its samples "
                    "outside MPI and its transports. Ranks that wait by sleeping look better than they are.</p>");
}

static const char *const page_args[] = { "cluster", NULL };

void web_job(Server *s, Request *req, Reply *reply) {
        _cleanup_(json_object_putp) json_object *job = NULL;
        _cleanup_(html_done) Html h = {};
        const char *root = web_root_prefix(req), *cluster, *name;
        RequestArg args[1];
        size_t n = 0;

        if (!request_check_args(req, page_args, reply))
                return;
        cluster = request_arg(req, "cluster");
        if (cluster)
                args[n++] = (RequestArg) { "cluster", cluster };
        if (!web_api(s, req, api_job, args, n, reply, &job))
                return;

        name = jstr(job, "name");
        {
                char title[160];

                snprintf(title, sizeof(title), "Job %s%s%s", jstr(job, "job") ?: "?", name ? " " : "", name ?: "");
                web_begin(&h, s, req, title);
        }
        html_raw(&h, "<h1>Job ");
        html_text(&h, jstr(job, "job"));
        if (name) {
                html_raw(&h, " <small>");
                html_text(&h, name);
                html_raw(&h, "</small>");
        }
        html_raw(&h, "</h1><p class=\"links\"><a href=\"");
        html_raw(&h, root);
        html_raw(&h, "api/v1/jobs/");
        html_url_part(&h, jstr(job, "job"));
        if (cluster) {
                html_raw(&h, "?cluster=");
                html_url_part(&h, cluster);
        }
        html_rawf(&h, "\">JSON</a><a href=\"%sjobs\">All jobs</a>", root);
        if (jstr(job, "user")) {
                html_rawf(&h, "<a href=\"%sjobs?user=", root);
                html_url_part(&h, jstr(job, "user"));
                html_raw(&h, "\">Jobs of ");
                html_text(&h, jstr(job, "user"));
                html_raw(&h, "</a>");
        }
        /* the choice of B: recent runs of the same application first */
        html_rawf(&h, "<a class=\"compare\" href=\"%scompare?a=", root);
        html_url_part(&h, jstr(job, "job"));
        if (cluster) {
                html_raw(&h, "&amp;cluster_a=");
                html_url_part(&h, cluster);
        }
        if (jstr(job, "app")) {
                html_raw(&h, "&amp;app=");
                html_url_part(&h, jstr(job, "app"));
        }
        html_raw(&h, "\">Compare with another run</a></p>");
        facts(&h, job);
        /* nothing was recorded of what it ran: no empty sections that look measured */
        if (jbool(job, "opted_out")) {
                timeline_section(&h, job);
                nodes_section(&h, job);
                web_end(&h, req);
                web_reply(reply, &h);
                return;
        }
        findings_section(&h, job);
        kinds_section(&h, job);
        shares_section(&h, job, "objects", "object", "Executables and libraries",
                       "No samples in any object yet.");
        shares_section(&h, job, "phases", "phase", "Phases",
                       "No phases: the program marks none (liblmk, docs/markers.md).");
        functions_section(&h, job, root, cluster);
        phase_functions_section(&h, job);
        events_section(&h, job);
        bursts_section(&h, job);
        markers_section(&h, job);
        pop_section(&h, job);
        timeline_section(&h, job);
        nodes_section(&h, job);
        web_end(&h, req);
        web_reply(reply, &h);
}
