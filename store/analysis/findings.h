/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "hashmap.h"
#include "lib-families.h"
#include "db/storage.h"

/* Findings: rules that read a job's summary (its samples per node, kind,
 * object and phase, the CPUs it was given, what its nodes have installed)
 * and say where its allocation goes to waste, how much (core-hours at
 * stake) and what to do. docs/findings.md describes every rule; a site sets
 * thresholds, severities and advice in a findings file (INI):
 *
 *     [general]
 *     min-elapsed = 60        # seconds on a node before a job is judged
 *     min-samples = 100       # samples before a job is judged
 *
 *     [idle-cores]
 *     enabled = yes
 *     threshold = 0.5
 *     severity = warning
 *     min-core-hours = 0
 *     advice = Ask for fewer cores ...
 *
 * Evaluation is pure: no database, no I/O; the store calls it when asked
 * for a job or for the site's list. */

typedef enum FindingRule {
        RULE_IDLE_CORES,
        RULE_SINGLE_THREAD,
        RULE_UNBALANCED_NODES,
        RULE_COMMUNICATION,
        RULE_KERNEL_TIME,
        RULE_LOW_IPC,
        RULE_REFERENCE_BLAS,
        RULE_MARKERS_OFF,
        _RULE_MAX,
} FindingRule;

typedef enum Severity {
        SEVERITY_INFO,
        SEVERITY_WARNING,
        SEVERITY_CRITICAL,
        _SEVERITY_MAX,
} Severity;

typedef struct RuleConfig {
        bool enabled;
        double threshold;
        double min_core_hours;  /* findings with less at stake are not reported */
        Severity severity;
        char *advice;
} RuleConfig;

typedef struct FindingsConfig {
        double min_elapsed_s;
        double min_samples;
        RuleConfig rule[_RULE_MAX];
} FindingsConfig;

typedef struct Finding {
        FindingRule rule;
        Severity severity;
        double core_hours;      /* at stake */
        char *node;             /* the node it is about, or NULL for the whole job */
        char *message;          /* "uses 1.2 of 16 allocated cores on cn042" */
        const char *advice;     /* points into the config */
} Finding;

typedef struct FindingList {
        Finding *items;
        size_t n;
} FindingList;

const char *finding_rule_to_string(FindingRule r);
int finding_rule_from_string(const char *s);
const char *severity_to_string(Severity s);
int severity_from_string(const char *s);

/* The built-in defaults (docs/findings.md). -ENOMEM. */
int findings_config_init(FindingsConfig *c);
void findings_config_done(FindingsConfig *c);

/* Reads a findings file over c. On a bad line returns -EINVAL (or the
 * error) and a message naming the line in *ret_error (to free); c may then
 * hold part of the file, so load into a fresh config and swap on success. */
int findings_config_load(FindingsConfig *c, const char *path, char **ret_error);

/* The families of the objects met while judging many jobs (the site's
 * list): each path is matched against the patterns once, not once per job
 * that ran it. One thread's; it holds on to families, which must outlive
 * it. */
typedef struct FamilyMemo {
        const LibFamilies *families;
        Hashmap *paths; /* path (owned) → LibFamily, or &family_none */
} FamilyMemo;

int family_memo_init(FamilyMemo *m, const LibFamilies *families);
void family_memo_done(FamilyMemo *m);

/* The findings for one job, largest stake first. memo, if not NULL, is of
 * the same families. */
int findings_evaluate(const FindingsConfig *c, const LibFamilies *families, FamilyMemo *memo, const JobSummary *js,
                      FindingList *ret);
void finding_list_done(FindingList *l);
