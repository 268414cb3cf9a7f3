/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/findings.h"
#include "macro.h"
#include "utf8.h"
#include "util.h"

#define ADVICE_MAX 2048

static const char *const rule_names[_RULE_MAX] = {
        [RULE_IDLE_CORES] = "idle-cores",
        [RULE_SINGLE_THREAD] = "single-thread",
        [RULE_UNBALANCED_NODES] = "unbalanced-nodes",
        [RULE_COMMUNICATION] = "communication",
        [RULE_KERNEL_TIME] = "kernel-time",
        [RULE_LOW_IPC] = "low-ipc",
        [RULE_REFERENCE_BLAS] = "reference-blas",
        [RULE_MARKERS_OFF] = "markers-off",
};

static const char *const severity_names[_SEVERITY_MAX] = {
        [SEVERITY_INFO] = "info",
        [SEVERITY_WARNING] = "warning",
        [SEVERITY_CRITICAL] = "critical",
};

/* The defaults: thresholds a site would start from, and advice a user can
 * act on. docs/findings.md says why each is what it is. */
static const struct {
        double threshold;
        Severity severity;
        const char *advice;
} defaults[_RULE_MAX] = {
        [RULE_IDLE_CORES] = { 0.5, SEVERITY_WARNING,
                "Ask for the cores the job uses (--ntasks, --cpus-per-task), or make it use them: "
                "more threads (OMP_NUM_THREADS, the program's own option) or more MPI ranks." },
        [RULE_SINGLE_THREAD] = { 1.1, SEVERITY_WARNING,
                "The program runs one thread. Ask for one core (--cpus-per-task=1), or run several "
                "independent tasks in the allocation (a job array, GNU parallel, srun --multi-prog), "
                "or enable the program's threading." },
        [RULE_UNBALANCED_NODES] = { 0.7, SEVERITY_WARNING,
                "Some nodes work much less than others. Check the domain decomposition or the "
                "distribution of tasks (--ntasks-per-node, --distribution)." },
        [RULE_COMMUNICATION] = { 0.3, SEVERITY_WARNING,
                "Much of the time goes into communication. Try fewer ranks for this problem size, "
                "overlap communication with computation, or check the job's placement "
                "(--switches, --exclusive)." },
        [RULE_KERNEL_TIME] = { 0.2, SEVERITY_WARNING,
                "Much of the time is spent in the kernel: often small I/O operations, page faults "
                "or busy polling. Use larger I/O buffers, node-local scratch, or huge pages." },
        [RULE_LOW_IPC] = { 0.5, SEVERITY_INFO,
                "Few instructions per cycle: the program waits for memory. Improve data locality "
                "(blocking, contiguous access) or vectorisation." },
        [RULE_REFERENCE_BLAS] = { 0.1, SEVERITY_CRITICAL,
                "The job uses the unoptimised reference BLAS/LAPACK although an optimised one is "
                "installed. Link with it (e.g. -lopenblas) or select it (update-alternatives, "
                "LD_LIBRARY_PATH, the site's module)." },
        [RULE_MARKERS_OFF] = { 0, SEVERITY_INFO,
                "lmk switched off a phase marker that was entered too often to measure cheaply. "
                "Mark a coarser region (around the loop, not inside it)." },
};

const char *finding_rule_to_string(FindingRule r) {
        return r >= 0 && r < _RULE_MAX ? rule_names[r] : NULL;
}

int finding_rule_from_string(const char *s) {
        for (int i = 0; i < _RULE_MAX; i++)
                if (streq(s, rule_names[i]))
                        return i;
        return -EINVAL;
}

const char *severity_to_string(Severity s) {
        return s >= 0 && s < _SEVERITY_MAX ? severity_names[s] : NULL;
}

int severity_from_string(const char *s) {
        for (int i = 0; i < _SEVERITY_MAX; i++)
                if (streq(s, severity_names[i]))
                        return i;
        return -EINVAL;
}

void findings_config_done(FindingsConfig *c) {
        if (!c)
                return;
        for (int i = 0; i < _RULE_MAX; i++)
                free(c->rule[i].advice);
        *c = (FindingsConfig) {};
}

int findings_config_init(FindingsConfig *c) {
        *c = (FindingsConfig) { .min_elapsed_s = 60, .min_samples = 100 };
        for (int i = 0; i < _RULE_MAX; i++) {
                c->rule[i] = (RuleConfig) {
                        .enabled = true,
                        .threshold = defaults[i].threshold,
                        .severity = defaults[i].severity,
                        .advice = strdup(defaults[i].advice),
                };
                if (!c->rule[i].advice) {
                        findings_config_done(c);
                        return -ENOMEM;
                }
        }
        return 0;
}

typedef struct LoadState {
        FindingsConfig *c;
        int error;
        char why[200];
} LoadState;

static int load_fail(LoadState *st, int error, const char *fmt, ...) {
        va_list ap;

        st->error = error;
        va_start(ap, fmt);
        vsnprintf(st->why, sizeof(st->why), fmt, ap);
        va_end(ap);
        return 0;
}

static int parse_number(const char *value, double min, double max, double *ret) {
        char *end;
        double v;

        errno = 0;
        v = strtod(value, &end);
        if (errno != 0 || end == value || *end != '\0' || !isfinite(v) || v < min || v > max)
                return -ERANGE;
        *ret = v;
        return 0;
}

/* What a rule's threshold may be: shares and ratios 0..1, the single-thread
 * rule a number of cores, IPC up to 10. */
static double threshold_max(FindingRule r) {
        switch (r) {
        case RULE_SINGLE_THREAD:
                return 64;
        case RULE_LOW_IPC:
                return 10;
        default:
                return 1;
        }
}

static int on_ini(void *user, const char *section, const char *name, const char *value) {
        LoadState *st = user;
        FindingsConfig *c = st->c;
        int rule;
        double v;
        int r;

        if (!utf8_is_valid(value, strlen(value)) || string_has_control(value, strlen(value)))
                return load_fail(st, -EILSEQ, "%s: not valid UTF-8 or holds control characters", name);
        if (streq(section, "general")) {
                if (streq(name, "min-elapsed"))
                        r = parse_number(value, 0, 86400 * 365, &c->min_elapsed_s);
                else if (streq(name, "min-samples"))
                        r = parse_number(value, 0, 1e9, &c->min_samples);
                else
                        return load_fail(st, -ENOENT, "unknown setting %s in [general] "
                                         "(min-elapsed, min-samples)", name);
                if (r < 0)
                        return load_fail(st, r, "%s = %s: expected a number of %s", name, value,
                                         streq(name, "min-elapsed") ? "seconds" : "samples");
                return 1;
        }
        rule = finding_rule_from_string(section);
        if (rule < 0)
                return load_fail(st, -ENOENT, "unknown section [%s]: expected [general] or a rule "
                                 "(idle-cores, single-thread, unbalanced-nodes, communication, kernel-time, "
                                 "low-ipc, reference-blas, markers-off)", section);
        RuleConfig *rc = &c->rule[rule];
        if (streq(name, "enabled")) {
                if (streq(value, "yes") || streq(value, "true") || streq(value, "1"))
                        rc->enabled = true;
                else if (streq(value, "no") || streq(value, "false") || streq(value, "0"))
                        rc->enabled = false;
                else
                        return load_fail(st, -EINVAL, "enabled = %s: expected yes or no", value);
        } else if (streq(name, "threshold")) {
                if (parse_number(value, 0, threshold_max(rule), &v) < 0)
                        return load_fail(st, -ERANGE, "threshold = %s: expected a number from 0 to %g", value,
                                         threshold_max(rule));
                rc->threshold = v;
        } else if (streq(name, "min-core-hours")) {
                if (parse_number(value, 0, 1e9, &v) < 0)
                        return load_fail(st, -ERANGE, "min-core-hours = %s: expected a number ≥ 0", value);
                rc->min_core_hours = v;
        } else if (streq(name, "severity")) {
                r = severity_from_string(value);
                if (r < 0)
                        return load_fail(st, -EINVAL, "severity = %s: expected info, warning or critical", value);
                rc->severity = r;
        } else if (streq(name, "advice")) {
                char *p;

                if (strlen(value) == 0 || strlen(value) > ADVICE_MAX)
                        return load_fail(st, -EINVAL, "advice: 1 to %d bytes", ADVICE_MAX);
                p = strdup(value);
                if (!p)
                        return load_fail(st, -ENOMEM, "out of memory");
                free(rc->advice);
                rc->advice = p;
        } else
                return load_fail(st, -ENOENT, "unknown setting %s in [%s] "
                                 "(enabled, threshold, min-core-hours, severity, advice)", name, section);
        return 1;
}

int findings_config_load(FindingsConfig *c, const char *path, char **ret_error) {
        _cleanup_fclose_ FILE *f = NULL;
        LoadState st = { .c = c };
        int line;

        f = fopen(path, "re");
        if (!f) {
                int r = -errno;
                if (ret_error && asprintf(ret_error, "%s: %s", path, strerror(-r)) < 0)
                        *ret_error = NULL;
                return r;
        }
        line = ini_parse_file(f, on_ini, &st);
        if (line < 0)
                return -ENOMEM;
        if (line > 0) {
                if (ret_error && asprintf(ret_error, "%s:%d: %s", path, line,
                                          st.error < 0 ? st.why : "not an INI line (name = value, [section])") < 0)
                        *ret_error = NULL;
                return st.error < 0 ? st.error : -EINVAL;
        }
        return 0;
}

void finding_list_done(FindingList *l) {
        if (!l)
                return;
        for (size_t i = 0; i < l->n; i++) {
                free(l->items[i].node);
                free(l->items[i].message);
        }
        free(l->items);
        *l = (FindingList) {};
}

/* what a memo holds for a path of no family */
static const LibFamily family_none;

int family_memo_init(FamilyMemo *m, const LibFamilies *families) {
        *m = (FamilyMemo) { .families = families, .paths = hashmap_new(&string_hash_ops) };
        return m->paths ? 0 : -ENOMEM;
}

void family_memo_done(FamilyMemo *m) {
        const void *key;
        size_t i = 0;

        while (m->paths && hashmap_iterate(m->paths, &i, NULL, &key))
                free((void *) key);
        hashmap_free(m->paths);
        *m = (FamilyMemo) {};
}

/* The family of path, from the memo when there is one. Out of memory, the
 * memo is skipped: the answer is the same, only slower. */
static const LibFamily *family_of(const LibFamilies *families, FamilyMemo *memo, const char *path) {
        const LibFamily *f;
        void *v;
        char *key;

        if (!memo)
                return lib_families_match(families, path);
        v = hashmap_get(memo->paths, path);
        if (v)
                return v == &family_none ? NULL : v;
        f = lib_families_match(families, path);
        key = strdup(path);
        if (key && hashmap_put(memo->paths, key, (void *) (f ?: &family_none)) < 0)
                free(key);
        return f;
}

typedef struct Eval {
        const FindingsConfig *c;
        const LibFamilies *families;
        FamilyMemo *memo;
        const JobSummary *js;
        FindingList out;
        int error;
} Eval;

_printf_(5, 6)
static void add(Eval *e, FindingRule rule, const char *node, double core_hours, const char *fmt, ...) {
        const RuleConfig *rc = &e->c->rule[rule];
        Finding *f, *items;
        va_list ap;
        int r;

        if (e->error < 0 || !(core_hours >= rc->min_core_hours))
                return;
        items = reallocarray(e->out.items, e->out.n + 1, sizeof(*items));
        if (!items) {
                e->error = -ENOMEM;
                return;
        }
        e->out.items = items;
        f = &items[e->out.n];
        *f = (Finding) {
                .rule = rule,
                .severity = rc->severity,
                .core_hours = core_hours,
                .advice = rc->advice,
        };
        va_start(ap, fmt);
        r = vasprintf(&f->message, fmt, ap);
        va_end(ap);
        if (r < 0 || (node && !(f->node = strdup(node)))) {
                if (r >= 0)
                        free(f->message);
                e->error = -ENOMEM;
                return;
        }
        e->out.n++;
}

static bool on(const Eval *e, FindingRule r) {
        return e->c->rule[r].enabled;
}

static double elapsed_of(const Share *n) {
        return isnan(n->first_seen) || isnan(n->last_seen) ? 0 : n->last_seen - n->first_seen;
}

/* Allocation rules, node by node: idle cores, one thread, imbalance. */
static void rules_allocation(Eval *e) {
        const ShareList *nodes = &e->js->nodes;
        double max_used = 0, min_used = INFINITY, behind = 0;
        size_t judged = 0;

        for (size_t i = 0; i < nodes->n; i++) {
                const Share *n = &nodes->items[i];
                double t = elapsed_of(n), used, alloc, stake;

                if (t < e->c->min_elapsed_s || t <= 0)
                        continue;
                used = n->cpu_seconds / t;
                judged++;
                max_used = MAX(max_used, used);
                min_used = MIN(min_used, used);
                if (n->cpus_alloc == STORAGE_NULL || n->cpus_alloc < 1)
                        continue;
                alloc = (double) n->cpus_alloc;
                stake = MAX(alloc - used, 0) * t / 3600;
                if (on(e, RULE_SINGLE_THREAD) && alloc >= 2 && used <= e->c->rule[RULE_SINGLE_THREAD].threshold &&
                    used >= 0.5)
                        add(e, RULE_SINGLE_THREAD, n->name, stake,
                            "runs a single thread on %s: %.1f of %.0f allocated cores busy", n->name, used, alloc);
                else if (on(e, RULE_IDLE_CORES) && used < e->c->rule[RULE_IDLE_CORES].threshold * alloc)
                        add(e, RULE_IDLE_CORES, n->name, stake, "uses %.1f of %.0f allocated cores on %s",
                            used, alloc, n->name);
        }
        if (!on(e, RULE_UNBALANCED_NODES) || judged < 2 || max_used <= 0 ||
            min_used >= e->c->rule[RULE_UNBALANCED_NODES].threshold * max_used)
                return;
        for (size_t i = 0; i < nodes->n; i++) {
                const Share *n = &nodes->items[i];
                double t = elapsed_of(n);

                if (t >= e->c->min_elapsed_s && t > 0)
                        behind += (max_used - n->cpu_seconds / t) * t / 3600;
        }
        add(e, RULE_UNBALANCED_NODES, NULL, behind,
            "busy cores per node range from %.1f to %.1f over %zu nodes", min_used, max_used, judged);
}

static double kind_share(const JobSummary *js, const char *kind) {
        for (size_t i = 0; i < js->kinds.n; i++)
                if (streq(js->kinds.items[i].name, kind))
                        return js->info.samples > 0 ? (double) js->kinds.items[i].samples / (double) js->info.samples : 0;
        return 0;
}

/* The job's samples in objects of one purpose, and the largest of them. */
typedef struct PurposeShare {
        const char *purpose;
        int64_t samples;
        const Share *top;
} PurposeShare;

/* One pass over the job's objects, one family lookup each, for every
 * purpose the rules need. Objects past the summary's limit are not seen:
 * the shares are a lower bound. */
static void purpose_shares(const Eval *e, PurposeShare *v, size_t n) {
        const JobSummary *js = e->js;

        for (size_t i = 0; i < js->objects.n; i++) {
                const Share *o = &js->objects.items[i];
                const LibFamily *f = family_of(e->families, e->memo, o->name);

                for (size_t k = 0; f && k < n; k++)
                        if (streq(f->purpose, v[k].purpose)) {
                                v[k].samples += o->samples;
                                if (!v[k].top || o->samples > v[k].top->samples)
                                        v[k].top = o;
                        }
        }
}

static double share_of_job(const JobSummary *js, int64_t samples) {
        return js->info.samples > 0 ? (double) samples / (double) js->info.samples : 0;
}

static const char *base_name(const char *path) {
        const char *s = strrchr(path, '/');
        return s ? s + 1 : path;
}

/* The family of an optimised BLAS installed on one of the job's nodes. */
static bool optimised_blas_installed(const JobSummary *js, char *ret_family, size_t size, const char **ret_node) {
        for (size_t i = 0; i < js->nodes.n; i++) {
                const char *p = js->nodes.items[i].installed;

                while (p && *p) {
                        size_t len = strcspn(p, " ");

                        if (len > 5 && memcmp(p, "blas:", 5) == 0) {
                                snprintf(ret_family, size, "%.*s", (int) (len - 5), p + 5);
                                *ret_node = js->nodes.items[i].name;
                                return true;
                        }
                        p += len;
                        p += strspn(p, " ");
                }
        }
        return false;
}

static void rules_time(Eval *e) {
        const JobSummary *js = e->js;
        double cpu_hours = js->info.cpu_seconds / 3600, share;
        PurposeShare purposes[] = { { .purpose = "comm" }, { .purpose = "blas-reference" } };
        const Share *top;

        purpose_shares(e, purposes, ELEMENTSOF(purposes));
        if (on(e, RULE_COMMUNICATION)) {
                share = share_of_job(js, purposes[0].samples);
                if (purposes[0].top && share >= e->c->rule[RULE_COMMUNICATION].threshold)
                        add(e, RULE_COMMUNICATION, NULL, share * cpu_hours,
                            "%.0f%% of its CPU time is in communication libraries (most in %s)", 100 * share,
                            base_name(purposes[0].top->name));
        }
        if (on(e, RULE_KERNEL_TIME)) {
                share = kind_share(js, "kernel");
                if (share >= e->c->rule[RULE_KERNEL_TIME].threshold)
                        add(e, RULE_KERNEL_TIME, NULL, share * cpu_hours, "%.0f%% of its CPU time is in the kernel",
                            100 * share);
        }
        if (on(e, RULE_LOW_IPC) && js->info.cycles > 0 && js->info.instructions != STORAGE_NULL) {
                double ipc = (double) js->info.instructions / (double) js->info.cycles;

                if (ipc < e->c->rule[RULE_LOW_IPC].threshold)
                        add(e, RULE_LOW_IPC, NULL, cpu_hours,
                            "runs at %.2f instructions per cycle (below %.2f)", ipc,
                            e->c->rule[RULE_LOW_IPC].threshold);
        }
        if (on(e, RULE_REFERENCE_BLAS)) {
                char family[LIB_FAMILY_NAME_MAX + 1];
                const char *node;

                share = share_of_job(js, purposes[1].samples);
                top = purposes[1].top;
                if (top && share >= e->c->rule[RULE_REFERENCE_BLAS].threshold &&
                    optimised_blas_installed(js, family, sizeof(family), &node))
                        add(e, RULE_REFERENCE_BLAS, NULL, share * cpu_hours,
                            "%.0f%% of its CPU time is in the reference BLAS/LAPACK (%s) although %s is "
                            "installed on %s", 100 * share, top->name, family, node);
        }
}

static void rule_markers(Eval *e) {
        const JobSummary *js = e->js;

        if (!on(e, RULE_MARKERS_OFF))
                return;
        for (size_t i = 0; i < js->n_markers; i++) {
                const Marker *m = &js->markers[i];
                const char *why = streq(m->state, "off-rate") ? "it was entered too often" :
                                  streq(m->state, "off-full") ? "lmk's table of phases was full" :
                                  streq(m->state, "off-env") ? "the user switched it off (LMK_DISABLE)" :
                                  m->state;

                /* switched off by the user on purpose: nothing to advise */
                if (streq(m->state, "off-env"))
                        continue;
                add(e, RULE_MARKERS_OFF, NULL, 0, "the marker \"%s\" in %s was switched off: %s", m->phase,
                    m->comm, why);
        }
}

static int by_stake(const void *a, const void *b) {
        const Finding *x = a, *y = b;

        if (x->core_hours != y->core_hours)
                return x->core_hours < y->core_hours ? 1 : -1;
        if (x->severity != y->severity)
                return CMP(y->severity, x->severity);
        return (int) x->rule - (int) y->rule;
}

int findings_evaluate(const FindingsConfig *c, const LibFamilies *families, FamilyMemo *memo, const JobSummary *js,
                      FindingList *ret) {
        Eval e = { .c = c, .families = families, .memo = memo, .js = js };

        /* an allocation left idle has no samples at all: only its time on
         * the node counts (min-elapsed, per node) */
        rules_allocation(&e);
        /* an opted-out job (--lmk=off) has samples but no record of where
         * they fell: only its allocation can be judged */
        if ((double) js->info.samples >= c->min_samples && !js->info.opted_out)
                rules_time(&e);
        rule_markers(&e);
        if (e.error < 0) {
                finding_list_done(&e.out);
                return e.error;
        }
        if (e.out.n > 1)
                qsort(e.out.items, e.out.n, sizeof(Finding), by_stake);
        *ret = e.out;
        return 0;
}
